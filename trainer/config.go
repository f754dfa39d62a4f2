package trainer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// ErrConfig is wrapped by every error about an invalid Config.
var ErrConfig = errors.New("trainer: invalid config")

// MaxPasses bounds Config.Passes: the Run record keeps two step sizes per
// pass, and a run of more passes than this is almost surely a mistake.
const MaxPasses = 1_000_000

// MaxSteps bounds the SGD steps of a run, passes times ceil(n/b): the
// stability analysis evaluates its growth recursion step by step (about
// 20 ns a step), and a verification of a model file repeats it
// (modelfile.Verify), so a file claiming more steps is refused, and the
// trainer refuses to run them (a larger batch, fewer passes or a
// partitioned fit take fewer): 2^28 steps, about 5 s of analysis, are 27
// million rows at batch 1 and 10 passes.
const MaxSteps = 1 << 28

// ErrData is wrapped by every error about invalid training data.
var ErrData = errors.New("trainer: invalid data")

// Schedule selects how the step size eta_t of step t = 1, 2, ... is chosen.
type Schedule int

const (
	// Constant uses eta_t = Config.Eta.
	Constant Schedule = iota
	// InverseT uses eta_t = 1/(mu t); it needs mu > 0.
	InverseT
	// BoundedInverseT uses eta_t = min(1/beta, 1/(mu t)), beta the smoothness
	// of the per-example objective; it needs mu > 0 (Wu et al. 2017).
	BoundedInverseT
	// Custom uses eta_t = Config.StepFunc(t).
	Custom
)

// String returns the schedule name used in records and on the command line.
func (s Schedule) String() string {
	switch s {
	case Constant:
		return "constant"
	case InverseT:
		return "inverse-t"
	case BoundedInverseT:
		return "bounded-inverse-t"
	case Custom:
		return "custom"
	}
	return fmt.Sprintf("Schedule(%d)", int(s))
}

// schedules lists the schedules in the order of their values.
var schedules = []Schedule{Constant, InverseT, BoundedInverseT, Custom}

// MarshalText implements encoding.TextMarshaler: the schedule's name, as
// String gives it. A value that is not a schedule is an error wrapping
// ErrConfig.
func (s Schedule) MarshalText() ([]byte, error) { return enumText("schedule", s, schedules) }

// UnmarshalText implements encoding.TextUnmarshaler (flag.TextVar,
// encoding/json): it sets s to the schedule named text, as String and
// MarshalText give the names. Unknown text is an error wrapping ErrConfig
// that lists the names, and leaves s as it was.
func (s *Schedule) UnmarshalText(text []byte) error { return parseEnum(s, "schedule", text, schedules) }

// Engine selects how gradients are computed.
type Engine int

const (
	// Native computes gradients of the built-in losses with a fused,
	// allocation-free kernel.
	Native Engine = iota
	// Graph computes gradients with a Gorgonia expression graph: the
	// engine of package graph, which registers itself when imported (see
	// RegisterEngine), for a loss with an expression, and the engine of a
	// UserModel such as graph.Model.
	Graph
)

// String returns the engine name used in records and on the command line.
func (e Engine) String() string {
	switch e {
	case Native:
		return "native"
	case Graph:
		return "graph"
	}
	return fmt.Sprintf("Engine(%d)", int(e))
}

// allEngines lists the engines in the order of their values.
var allEngines = []Engine{Native, Graph}

// MarshalText implements encoding.TextMarshaler: the engine's name, as
// String gives it. A value that is not an engine is an error wrapping
// ErrConfig.
func (e Engine) MarshalText() ([]byte, error) { return enumText("engine", e, allEngines) }

// UnmarshalText implements encoding.TextUnmarshaler (flag.TextVar,
// encoding/json): it sets e to the engine named text, as String and
// MarshalText give the names. Unknown text is an error wrapping ErrConfig
// that lists the names, and leaves e as it was. An engine other than
// Native must still be registered to train (RegisterEngine).
func (e *Engine) UnmarshalText(text []byte) error { return parseEnum(e, "engine", text, allEngines) }

// enum is a typed enumeration of this package with a name for each value.
type enum interface {
	comparable
	String() string
}

// enumText returns the name of v, one of all, for MarshalText.
func enumText[T enum](kind string, v T, all []T) ([]byte, error) {
	if !slices.Contains(all, v) {
		return nil, fmt.Errorf("%w: %v is not a %s", ErrConfig, v, kind)
	}
	return []byte(v.String()), nil
}

// parseEnum sets *dst to the value of all named text, for UnmarshalText.
func parseEnum[T enum](dst *T, kind string, text []byte, all []T) error {
	names := make([]string, len(all))
	for i, v := range all {
		if names[i] = v.String(); names[i] == string(text) {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("%w: unknown %s %q, want one of %s", ErrConfig, kind, text, strings.Join(names, ", "))
}

// Config sets up a Trainer. Every zero value is documented and valid where
// stated; New validates the rest.
//
// One step of SGD on the minibatch B_t (DESIGN.md) is
//
//	v     = w - eta_t * ( (1/b) sum_{i in B_t} clip_G( grad l(<w, M_t,i x_i>, y_i) ) + mu*w )
//	w_t+1 = proj_R( prox_{eta_t * lambda * alpha * ||.||_1}(v) )
//
// where M_t,i is the s-dropout mask, clip_G the per-example L2 clipping and
// proj_R the projection onto ||w|| <= R. The sum is always divided by b, also
// for a short last minibatch of a pass (n mod b examples), so that every example
// enters every step with weight at most 1/b. Step (NewStep) makes this update
// for every engine.
type Config struct {
	// Loss is the per-example loss. Required unless Model is set.
	Loss losses.Loss
	// Classes is the number of classes K >= 2 of a multiclass loss; labels
	// must lie in {0, ..., K-1}. Ignored for binary and regression losses.
	Classes int
	// Reg is the elastic-net penalty. The zero value is no regularization.
	Reg regularizers.ElasticNet
	// LabelBound is B in |y| <= B for regression losses whose constants need
	// it (squared loss). A label outside it is an error, never clipped.
	// Zero means unbounded.
	LabelBound float64

	// Kappa bounds the rows: each row x with ||x|| > Kappa is scaled to norm
	// Kappa before training (a per-row map, so it costs no privacy); the Run
	// record counts them. Zero means 1. The caller's matrix is not modified.
	Kappa float64

	// Schedule selects the step sizes; the zero value is Constant.
	Schedule Schedule
	// Eta is the constant step size. Zero means 1/beta, with
	// beta = S_z*Kappa^2 + mu the smoothness of the per-example objective,
	// which satisfies the step conditions of the stability routes.
	Eta float64
	// StepFunc gives eta_t for the Custom schedule; it must return a finite
	// positive step for every t >= 1. For a privacy certificate it must be
	// fixed in advance, independent of the training data: the stability
	// routes take the recorded steps as given.
	StepFunc func(t int) float64

	// Passes is the number of passes k over the data, each in a fresh
	// permutation drawn from Seed. Zero means 10.
	Passes int
	// Batch is the minibatch size b, 1 <= b <= n. Zero means 1.
	Batch int
	// Clip is the per-example L2 gradient clipping norm G > 0. Zero means
	// no clipping. For a GLM it clamps l' to [-G/||x||, G/||x||], which keeps
	// every step a gradient step of a convex (Huberized) loss.
	Clip float64
	// Dropout is s in (0, 1] of s-dropout (the paper's Definition 14): for
	// each example in each step, coordinates of x are dropped at random until
	// ||M x|| <= s ||x||. Zero means 1 (no dropout). With Clip G <= s L
	// the dropout does not lower the sensitivity, G bounds the gradients
	// (release.DropoutWarning).
	Dropout float64
	// Radius, when positive, projects the weights onto ||w|| <= Radius after
	// every step. Zero means no projection.
	Radius float64
	// Average returns the average of the iterates of all steps instead of
	// the last iterate.
	Average bool
	// Tolerance, when positive, stops training after the first pass at whose
	// end the minimum-norm subgradient of the full objective has norm
	// <= Tolerance; Run.Stats says whether it was reached. It is for
	// non-private use: the pass at which it stops, and whether it stops at
	// all, depend on the data, so no route of the stability package
	// certifies a run with a tolerance. For the exact-minimizer route (Remark
	// 8) fix the number of full-batch passes in advance instead, Batch = n
	// and Passes = stability.ProxGDPasses(...). Zero means run all passes.
	// The norm is computed in floating point by the objective pass, whose
	// last bits may differ between versions of this package (its kernels'
	// summation order), so a run whose norm lies at the tolerance itself
	// may stop one pass apart from one version to the next.
	Tolerance float64

	// SkipObjective skips the pass over the data that Train makes after
	// the last SGD pass to compute Run.Stats.Objective and GradNorm,
	// statistics for diagnostics only (no stability route or certificate
	// reads them); the weights are the same either way. Stats.Evaluated
	// reports whether they were computed: they still are when a Tolerance
	// or a Logger at Debug level asks for them after every pass. The zero
	// value computes them, as the command line's non-private output and
	// --diagnostics print them; set it where only the weights matter (a
	// private release, a benchmark).
	SkipObjective bool

	// Seed seeds the permutations and the dropout masks.
	Seed uint64
	// Engine selects the gradient engine; the zero value is Native. Any
	// engine other than Native must be registered (RegisterEngine): Graph
	// is, by importing package graph.
	Engine Engine
	// Model, when set, is a user-supplied model (such as a graph.Model)
	// trained by the Graph engine in place of Loss. Its runs are outside
	// the certified class.
	Model UserModel

	// Logger receives progress per pass at Info level and details at Debug.
	// Nil means silent.
	Logger logrus.FieldLogger
}

// validate checks the settings that do not depend on the data.
func (c *Config) validate() error {
	if c.Loss == nil && c.Model == nil {
		return fmt.Errorf("%w: no loss and no model", ErrConfig)
	}
	if c.Model != nil && c.Engine != Graph {
		return fmt.Errorf("%w: a user graph model needs the graph engine", ErrConfig)
	}
	if c.Model != nil && c.Loss != nil {
		return fmt.Errorf("%w: set Loss or Model, not both (a user graph carries its own loss)", ErrConfig)
	}
	if c.Model != nil && c.Schedule == Constant && c.Eta == 0 {
		return fmt.Errorf("%w: a user graph model has no known smoothness to default the step size from; set Eta", ErrConfig)
	}
	if err := c.validateStep(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"kappa", c.Kappa}, {"dropout", c.Dropout}, {"tolerance", c.Tolerance}, {"label bound", c.LabelBound}} {
		if !check.NonNegative(f.v) {
			return fmt.Errorf("%w: %s = %v, want finite >= 0", ErrConfig, f.name, f.v)
		}
	}
	if c.Dropout > 1 {
		return fmt.Errorf("%w: dropout s = %v, want in (0, 1]", ErrConfig, c.Dropout)
	}
	if c.Passes > MaxPasses {
		return fmt.Errorf("%w: passes = %d, want at most %d", ErrConfig, c.Passes, MaxPasses)
	}
	if c.Passes < 0 || c.Classes < 0 {
		return fmt.Errorf("%w: passes = %d, classes = %d, want >= 0", ErrConfig, c.Passes, c.Classes)
	}
	if c.Loss != nil && c.Loss.Task() == losses.Multiclass && c.Classes < 2 {
		return fmt.Errorf("%w: multiclass loss %s needs Classes >= 2, have %d", ErrConfig, c.Loss.Name(), c.Classes)
	}
	if c.Loss != nil {
		// The loss's own settings and the domain its constants need (the
		// squared loss's radius and label bound) are checked here, not
		// only when Train computes the constants.
		kappa := c.Kappa
		if kappa == 0 {
			kappa = 1
		}
		if _, err := c.Loss.Constants(losses.Domain{Kappa: kappa, Radius: c.Radius, LabelBound: c.LabelBound}); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if !slices.Contains(allEngines, c.Engine) {
		return fmt.Errorf("%w: unknown engine %v", ErrConfig, c.Engine)
	}
	if c.Engine != Native && c.Model == nil {
		if _, err := engineKernel(c.Engine); err != nil {
			return err
		}
	}
	return nil
}

// withDefaults returns a copy with the documented zero-value defaults filled in.
func (c Config) withDefaults() Config {
	if c.Kappa == 0 {
		c.Kappa = 1
	}
	if c.Passes == 0 {
		c.Passes = 10
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Dropout == 0 {
		c.Dropout = 1
	}
	return c
}
