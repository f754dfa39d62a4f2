package graph

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// errNonFinite is wrapped, with ErrGraph, by the error of a non-finite
// gradient.
var errNonFinite = errors.New("non-finite gradient")

// SolverConfig sets up a Solver. Every zero value is documented; NewSolver
// validates the rest.
type SolverConfig struct {
	// Eta is the constant step size, finite and > 0. It may be zero only
	// when StepFunc is set.
	Eta float64
	// StepFunc, when set, gives eta_t for update t = 1, 2, ... in place of
	// Eta. A step that is not finite and positive makes the update fail with
	// an error wrapping trainer.ErrConfig.
	StepFunc func(t int) float64
	// Batch is the minibatch size b: an update is applied at every b-th
	// call of Step. Zero means 1.
	Batch int
	// Clip is the per-example L2 clipping norm G > 0, over all the
	// gradients given to one Step call jointly. Zero means no clipping.
	Clip float64
	// Reg is the elastic-net penalty: its L2 part enters the update as
	// mu*w, its L1 part by the proximal step. The zero value is none.
	Reg regularizers.ElasticNet
	// Radius, when positive, projects the parameters, jointly, onto the
	// ball ||w|| <= Radius after every update. Zero means no projection.
	Radius float64
	// Average keeps the running average of the iterates of all updates;
	// see Averaged and LoadAveraged.
	Average bool
}

// Solver is a gorgonia.Solver that applies the update of trainer.Config
// (the step order documented there) to the parameters of a user-run TapeMachine loop:
//
//	v = w - eta_t * ( (1/b) sum_{i in batch} clip_G(g_i) + mu*w )
//	w = proj_R( prox_{eta_t * lambda * alpha * ||.||_1}(v) )
//
// where w is the concatenation of all the parameter values and g_i the
// concatenation of their gradients for example i.
//
// Each call of Step must be given the gradients of ONE example: the user
// runs the machine once per example (let the input and label, RunAll, Step,
// Reset). Step clips that gradient to L2 norm at most G, jointly over all the
// ValueGrads, and adds it to the minibatch sum; the b-th call applies the
// update to the values in place. This per-example clipping is what the
// stability analysis needs; gorgonia's own WithClip clamps each element of
// the summed gradient to [-G, G], which is neither per example nor in the L2
// norm, and bounds nothing the analysis can use.
//
// Step reads every gradient and then sets it to zero, as Gorgonia's solvers
// do, so a machine created with BindDualValues (which adds each run's
// gradient into the dual value) starts every example from zero.
//
// The update is a trainer.Step, the one the trainer's pass driver makes for
// every engine: given the same per-example gradients in the same order (the
// rows after s-dropout, passes flushed at their ends), a Solver gives the
// weights of the trainer's run of a Model bit for bit. The trainer does not
// use a Solver; a Solver is for a user's own TapeMachine loop.
//
// A Solver is not safe for concurrent use.
type Solver struct {
	cfg   SolverConfig
	step  *trainer.Step
	sizes []int       // element counts of the ValueGrads, fixed by the first Step
	vals  [][]float64 // live elements of the values of the last Step
	vnext [][]float64 // scratch for the values of the next Step
	gnext [][]float64 // scratch for the gradients of the next Step
	g     []float64   // gradient of one example, flattened
	scale float64     // its clip scale (Batch = 1)
	sum   []float64   // sum of the clipped gradients of the current minibatch (Batch > 1)
	w     []float64   // flattened iterate, scratch
	avg   []float64   // running average of the iterates

	pending int // examples in the current minibatch
	steps   int // updates applied
}

// NewSolver validates cfg and returns a Solver. Errors wrap trainer.ErrConfig.
func NewSolver(cfg SolverConfig) (*Solver, error) {
	// The trainer's Config with the Solver's knobs: a StepFunc is the
	// Custom schedule, otherwise the step is the Constant Eta, which must
	// be positive (no smoothness is known to default it from).
	tc := trainer.Config{Eta: cfg.Eta, Batch: cfg.Batch, Clip: cfg.Clip, Reg: cfg.Reg, Radius: cfg.Radius}
	if cfg.StepFunc != nil {
		tc.Schedule, tc.StepFunc = trainer.Custom, cfg.StepFunc
	}
	step, err := trainer.NewStep(tc, 0)
	if err != nil {
		return nil, fmt.Errorf("graph: solver: %w", err)
	}
	cfg.Batch = max(cfg.Batch, 1)
	return &Solver{cfg: cfg, step: step}, nil
}

// Step clips the gradient of one example, jointly over model, to L2 norm at
// most Clip, adds it to the minibatch sum and sets the gradients to zero.
// At the Batch-th call since the last update it applies the update to the
// values of model in place. Every call must pass the same parameters in the
// same order. Errors wrap ErrGraph (a value or gradient that is not a
// float64 tensor or scalar, a changed parameter list, a non-finite
// gradient, a Gorgonia panic) or trainer.ErrConfig (a bad step size); after an error
// the Solver is unchanged.
func (s *Solver) Step(model []gorgonia.ValueGrad) (err error) {
	defer recoverGraph(&err)
	if len(model) == 0 {
		return fmt.Errorf("%w: solver step with no parameters", ErrGraph)
	}
	if s.sizes != nil && len(model) != len(s.sizes) {
		return fmt.Errorf("%w: solver step with %d parameters, the first step had %d", ErrGraph, len(model), len(s.sizes))
	}
	if cap(s.vnext) < len(model) {
		s.vnext = make([][]float64, len(model))
		s.gnext = make([][]float64, len(model))
	}
	vals, grads := s.vnext[:len(model)], s.gnext[:len(model)]
	for i, vg := range model {
		if vg == nil {
			return fmt.Errorf("%w: solver parameter %d is nil", ErrGraph, i)
		}
		if vals[i], err = floats(vg.Value()); err != nil {
			return fmt.Errorf("%w: value of solver parameter %d: %w", ErrGraph, i, err)
		}
		gv, gerr := vg.Grad()
		if gerr != nil {
			return fmt.Errorf("%w: gradient of solver parameter %d: %w", ErrGraph, i, gerr)
		}
		if grads[i], err = floats(gv); err != nil {
			return fmt.Errorf("%w: gradient of solver parameter %d: %w", ErrGraph, i, err)
		}
		if len(grads[i]) != len(vals[i]) {
			return fmt.Errorf("%w: solver parameter %d has %d values but %d gradients", ErrGraph, i, len(vals[i]), len(grads[i]))
		}
		if s.sizes != nil && len(vals[i]) != s.sizes[i] {
			return fmt.Errorf("%w: solver parameter %d has %d values, the first step had %d", ErrGraph, i, len(vals[i]), s.sizes[i])
		}
	}
	if s.sizes == nil {
		s.init(vals)
	}
	var eta float64
	full := s.pending+1 == s.cfg.Batch
	if full {
		if eta, err = s.step.Eta(s.steps + 1); err != nil {
			return err
		}
	}
	if err := s.accumulate(grads); err != nil {
		return err
	}
	for _, g := range grads {
		clear(g)
	}
	s.vals, s.vnext = vals, s.vals
	if full {
		s.update(eta)
	}
	return nil
}

// init fixes the parameter sizes and allocates the buffers.
func (s *Solver) init(vals [][]float64) {
	s.sizes = make([]int, len(vals))
	dim := 0
	for i, v := range vals {
		s.sizes[i] = len(v)
		dim += len(v)
	}
	s.g = make([]float64, dim)
	if s.cfg.Batch > 1 {
		s.sum = make([]float64, dim)
	}
	s.w = make([]float64, dim)
	if s.cfg.Average {
		s.avg = make([]float64, dim)
	}
}

// accumulate clips the gradient of one example and adds it to the sum; at
// Batch = 1 it keeps the gradient and its clip scale for the update, as the
// trainer does (trainer.Step.UpdateOne).
func (s *Solver) accumulate(grads [][]float64) error {
	gather(s.g, grads)
	c, norm := s.step.Clip(s.g)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return fmt.Errorf("%w: %w: norm %v", ErrGraph, errNonFinite, norm)
	}
	if s.sum == nil {
		s.scale = c
	} else {
		s.step.Add(s.sum, c, s.g)
	}
	s.pending++
	return nil
}

// update applies the step of size eta to the values of the last Step call.
func (s *Solver) update(eta float64) {
	t := s.steps + 1
	gather(s.w, s.vals)
	if s.sum == nil {
		s.step.UpdateOne(s.w, eta, s.scale, s.g)
	} else {
		s.step.Update(s.w, eta, s.sum)
		clear(s.sum)
	}
	scatter(s.vals, s.w)
	s.steps = t
	if s.cfg.Average {
		s.step.Average(s.avg, s.w, t)
	}
	s.pending = 0
}

// Flush applies the update for a partial minibatch, if any example is
// pending; the sum is still divided by Batch (Config). Call it at the end of
// a pass whose length is not a multiple of Batch.
func (s *Solver) Flush() (err error) {
	defer recoverGraph(&err)
	if s.pending == 0 {
		return nil
	}
	eta, err := s.step.Eta(s.steps + 1)
	if err != nil {
		return err
	}
	s.update(eta)
	return nil
}

// Steps returns the number of updates applied.
func (s *Solver) Steps() int { return s.steps }

// Pending returns the number of examples accumulated since the last update.
func (s *Solver) Pending() int { return s.pending }

// Averaged returns a copy of the running average of the iterates of all
// updates, flattened in the order of the parameters passed to Step. It
// returns nil if Average is off or no update was applied.
func (s *Solver) Averaged() []float64 {
	if !s.cfg.Average || s.steps == 0 {
		return nil
	}
	return append([]float64(nil), s.avg...)
}

// LoadAveraged writes the running average of the iterates into the values
// passed to the last Step, for example before evaluating the model. It is a
// no-op if Average is off or no update was applied.
func (s *Solver) LoadAveraged() error {
	if !s.cfg.Average || s.steps == 0 {
		return nil
	}
	scatter(s.vals, s.avg)
	return nil
}

// gather concatenates parts into dst, which must have their total length.
func gather(dst []float64, parts [][]float64) {
	off := 0
	for _, p := range parts {
		off += copy(dst[off:], p)
	}
}

// scatter copies src into parts, in order.
func scatter(parts [][]float64, src []float64) {
	off := 0
	for _, p := range parts {
		off += copy(p, src[off:])
	}
}

// floats returns the live float64 elements of a Gorgonia value: writing to
// the slice writes to the value. It accepts dense float64 tensors that are
// not views, and float64 scalars.
func floats(v gorgonia.Value) ([]float64, error) {
	switch v := v.(type) {
	case nil:
		return nil, errors.New("no value")
	case *gorgonia.F64:
		// F64's underlying type is float64.
		return unsafe.Slice((*float64)(v), 1), nil
	case *tensor.Dense:
		if v.Dtype() != tensor.Float64 {
			return nil, fmt.Errorf("dtype %v, want float64", v.Dtype())
		}
		if v.IsView() {
			return nil, errors.New("a tensor view, want a materialized tensor")
		}
		return v.Float64s(), nil
	}
	return nil, fmt.Errorf("value of type %T, want a float64 *tensor.Dense or *gorgonia.F64", v)
}

// Solver is a gorgonia.Solver.
var _ gorgonia.Solver = (*Solver)(nil)
