package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/losses"
)

// GraphModel is a user-supplied Gorgonia model, the plugin path of the Graph
// engine: a graph holding the trainable parameter nodes, an input node for one
// example, a label node and the scalar per-example loss.
//
// The trainer runs the same SGD as for the built-in losses (the step order of
// Config), with w the concatenation of the values of all Params in order:
// clipping, the elastic net, projection and averaging act on that vector, and
// s-dropout drops coordinates of the input row. Row i of X is bound to Input,
// y[i] to Label.
//
// Train returns a Model with K = 1, D = the total number of parameter
// elements, W their trained values concatenated in the order of Params, and
// Loss "user-graph"; its Task, Margins and Predict do not apply, evaluate the
// graph instead. The trained values (the average of the iterates if
// Config.Average) are also left in the Params' values.
//
// The Run record has UserModel = true and zero loss constants: runs on a user
// model are outside the class of models the stability package certifies.
// Objective and GradNorm are computed with the graph: the mean loss over the
// rows plus R(w), and the minimum-norm subgradient of that objective, so
// Config.Tolerance works as for the built-in losses.
//
// Training adds the gradient nodes of Loss to Graph on first use (they are
// reused by later runs) and changes the Params' values, so a GraphModel must
// not be trained by two goroutines at once. Gorgonia shares some constant
// nodes between all graphs without synchronization: the trainer builds its
// graphs under a lock, but a caller building another graph at the same time
// as a Train call is racing inside Gorgonia.
//
// Gorgonia panics on the calling goroutine (building, differentiating,
// compiling) are returned as errors wrapping ErrGraph. A panic inside an
// operation while the tape runs cannot be recovered: Gorgonia's
// TapeMachine.RunAll executes the tape on a goroutine of its own.
type GraphModel struct {
	// Graph is the expression graph that holds every node below.
	Graph *gorgonia.ExprGraph
	// Params are the trainable parameter nodes: float64 tensors or scalars
	// with initial values bound (for example with gorgonia.WithInit).
	Params []*gorgonia.Node
	// Input is the input node of one example: a float64 node with d
	// elements (a vector of length d, the number of columns of X). The
	// trainer binds its own value to it.
	Input *gorgonia.Node
	// Label is the input node of the label: a float64 scalar.
	Label *gorgonia.Node
	// Loss is the per-example loss: a float64 scalar node.
	Loss *gorgonia.Node

	// grads caches the gradient nodes of gradLoss with respect to
	// gradParams (Loss and Params when they were built), so repeated runs
	// do not grow the graph.
	gradLoss   *gorgonia.Node
	gradParams []*gorgonia.Node
	grads      []*gorgonia.Node
}

// runGraph trains with the Graph engine. For a built-in loss it builds the
// graph z = W x, loss = Loss.Expr(z, y), with W a vector of length d (K = 1)
// or a K x d matrix, and the one-hot label for multiclass losses. Gorgonia
// computes the gradient of one example per run of the tape; clipping,
// dropout, the elastic net, projection and averaging are applied in Go by a
// Solver on the float64 elements, in the step order of Config, with the
// shared sampler and schedule, so a seeded run gives the native engine's
// weights up to rounding (1e-10 in the tests). (Gorgonia's
// own WithClip would clamp the elements of a summed gradient, which is not
// per-example L2 clipping.) Gorgonia panics on this goroutine are returned
// as errors wrapping ErrGraph (see GraphModel for the one kind that cannot be).
//
// One TapeMachine serves the whole run and is closed at its end. Each example
// costs one RunAll, whose goroutine hand-off dominates the step time: the
// graph engine is for checking the native one and for user models, not for
// speed (see BenchmarkGraphStep3600x33).
func runGraph(ctx context.Context, p *problem) (w []float64, err error) {
	defer recoverGraph(&err)
	e, err := buildGraphEngine(p)
	if err != nil {
		return nil, err
	}
	defer e.close()
	return e.train(ctx)
}

// graphBuild serializes the building of graphs. Gorgonia shares some
// constant nodes between all graphs and caches their hash lazily, without
// synchronization, so two graphs must not be built (or differentiated) at
// once; running compiled machines concurrently is fine.
var graphBuild sync.Mutex

// buildGraphEngine is newGraphEngine under graphBuild.
func buildGraphEngine(p *problem) (*graphEngine, error) {
	graphBuild.Lock()
	defer graphBuild.Unlock()
	return newGraphEngine(p)
}

// graphEngine holds one compiled graph and its TapeMachine, reused for every
// example of a run.
type graphEngine struct {
	p        *problem
	vm       gorgonia.VM
	loss     *gorgonia.Node
	vg       []gorgonia.ValueGrad // the params paired with their gradient nodes
	vals     [][]float64          // live elements of the param values
	xbuf     []float64            // live elements of the input value
	setLabel func(y float64)
	dim      int // total number of parameter elements
}

// paramGrad is a parameter node paired with its gradient node.
type paramGrad struct{ param, grad *gorgonia.Node }

func (v paramGrad) Value() gorgonia.Value         { return v.param.Value() }
func (v paramGrad) Grad() (gorgonia.Value, error) { return v.grad.Value(), nil }

// newGraphEngine builds the graph of a built-in loss, or validates the user
// model, and compiles it.
func newGraphEngine(p *problem) (*graphEngine, error) {
	m := p.cfg.Model
	multiclass := false
	if m == nil {
		var err error
		if m, err = builtinModel(p); err != nil {
			return nil, err
		}
		multiclass = p.loss.Task() == losses.Multiclass
	} else if err := m.validate(p.d); err != nil {
		return nil, err
	}
	grads, err := m.gradients()
	if err != nil {
		return nil, err
	}
	e := &graphEngine{p: p, loss: m.Loss}
	for i, n := range m.Params {
		e.vg = append(e.vg, paramGrad{n, grads[i]})
		v, err := floats(n.Value())
		if err != nil {
			return nil, fmt.Errorf("%w: param %d (%s): %w", ErrConfig, i, n.Name(), err)
		}
		e.vals = append(e.vals, v)
		e.dim += len(v)
	}
	e.xbuf = make([]float64, p.d)
	if err := gorgonia.Let(m.Input, tensor.New(tensor.WithShape(m.Input.Shape().Clone()...), tensor.WithBacking(e.xbuf))); err != nil {
		return nil, fmt.Errorf("%w: input node: %w", ErrConfig, err)
	}
	if multiclass {
		ybuf := make([]float64, p.k)
		if err := gorgonia.Let(m.Label, tensor.New(tensor.WithShape(p.k), tensor.WithBacking(ybuf))); err != nil {
			return nil, fmt.Errorf("%w: label node: %w", ErrGraph, err)
		}
		e.setLabel = func(y float64) {
			clear(ybuf)
			ybuf[int(y)] = 1
		}
	} else {
		yv := gorgonia.NewF64(0)
		if err := gorgonia.Let(m.Label, yv); err != nil {
			return nil, fmt.Errorf("%w: label node: %w", ErrConfig, err)
		}
		e.setLabel = func(y float64) { *yv = gorgonia.F64(y) }
	}
	if err := newMachine(e, m.Graph); err != nil {
		return nil, err
	}
	return e, nil
}

// newMachine compiles g into a TapeMachine, turning a compile panic into an
// error wrapping ErrGraph.
func newMachine(e *graphEngine, g *gorgonia.ExprGraph) (err error) {
	defer recoverGraph(&err)
	e.vm = gorgonia.NewTapeMachine(g)
	return nil
}

// close releases the machine.
func (e *graphEngine) close() {
	if e.vm != nil {
		e.vm.Close()
		e.vm = nil
	}
}

// builtinModel builds the graph of a built-in loss with zero weights.
func builtinModel(p *problem) (*GraphModel, error) {
	g := gorgonia.NewGraph()
	var W, y *gorgonia.Node
	if p.k == 1 {
		W = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p.d), gorgonia.WithName("W"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(p.d), tensor.WithBacking(make([]float64, p.d)))))
	} else {
		W = gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(p.k, p.d), gorgonia.WithName("W"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(p.k, p.d), tensor.WithBacking(make([]float64, p.k*p.d)))))
	}
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p.d), gorgonia.WithName("x"))
	if p.loss.Task() == losses.Multiclass {
		y = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p.k), gorgonia.WithName("y"))
	} else {
		y = gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	}
	z, err := gorgonia.Mul(W, x)
	if err != nil {
		return nil, fmt.Errorf("%w: margin W x: %w", ErrGraph, err)
	}
	loss, err := graph.Expr(p.loss, z, y)
	if err != nil {
		return nil, fmt.Errorf("%w: %s expression: %w", ErrGraph, p.loss.Name(), err)
	}
	if !loss.IsScalar() || loss.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("%w: %s expression is %v of shape %v, want a float64 scalar", ErrGraph, p.loss.Name(), loss.Dtype(), loss.Shape())
	}
	return &GraphModel{Graph: g, Params: []*gorgonia.Node{W}, Input: x, Label: y, Loss: loss}, nil
}

// validate checks a user model for data with d features. Errors wrap
// ErrConfig.
func (m *GraphModel) validate(d int) error {
	if m.Graph == nil {
		return fmt.Errorf("%w: graph model without a graph", ErrConfig)
	}
	if len(m.Params) == 0 {
		return fmt.Errorf("%w: graph model without parameters", ErrConfig)
	}
	nodes := []struct {
		name string
		n    *gorgonia.Node
	}{{"input", m.Input}, {"label", m.Label}, {"loss", m.Loss}}
	for i, n := range m.Params {
		nodes = append(nodes, struct {
			name string
			n    *gorgonia.Node
		}{fmt.Sprintf("param %d", i), n})
	}
	seen := make(map[*gorgonia.Node]string, len(nodes))
	for _, n := range nodes {
		if n.n == nil {
			return fmt.Errorf("%w: graph model %s node is nil", ErrConfig, n.name)
		}
		if n.n.Graph() != m.Graph {
			return fmt.Errorf("%w: graph model %s node %s is not in the model's graph", ErrConfig, n.name, n.n.Name())
		}
		if n.n.Dtype() != tensor.Float64 {
			return fmt.Errorf("%w: graph model %s node %s has dtype %v, want float64", ErrConfig, n.name, n.n.Name(), n.n.Dtype())
		}
		if prev, ok := seen[n.n]; ok {
			return fmt.Errorf("%w: graph model %s and %s are the same node %s", ErrConfig, prev, n.name, n.n.Name())
		}
		seen[n.n] = n.name
	}
	if got := m.Input.Shape().TotalSize(); m.Input.IsScalar() || got != d {
		return fmt.Errorf("%w: graph model input %s has shape %v, want %d elements (the columns of X)", ErrConfig, m.Input.Name(), m.Input.Shape(), d)
	}
	if m.Input.Op() != nil || m.Label.Op() != nil {
		return fmt.Errorf("%w: graph model input and label must be input nodes, not results of operations", ErrConfig)
	}
	if !m.Label.IsScalar() {
		return fmt.Errorf("%w: graph model label %s has shape %v, want a scalar", ErrConfig, m.Label.Name(), m.Label.Shape())
	}
	if !m.Loss.IsScalar() {
		return fmt.Errorf("%w: graph model loss %s has shape %v, want a scalar", ErrConfig, m.Loss.Name(), m.Loss.Shape())
	}
	for i, n := range m.Params {
		if n.Op() != nil {
			return fmt.Errorf("%w: graph model param %d (%s) is the result of an operation, want an input node", ErrConfig, i, n.Name())
		}
		if _, err := floats(n.Value()); err != nil {
			return fmt.Errorf("%w: graph model param %d (%s): %w", ErrConfig, i, n.Name(), err)
		}
	}
	return nil
}

// gradients returns the gradient nodes of Loss with respect to Params,
// adding them to the graph on first use. Errors wrap ErrConfig.
func (m *GraphModel) gradients() (grads []*gorgonia.Node, err error) {
	if m.gradLoss == m.Loss && len(m.gradParams) == len(m.Params) {
		same := true
		for i, n := range m.Params {
			same = same && m.gradParams[i] == n
		}
		if same {
			return m.grads, nil
		}
	}
	defer func() {
		if r := recover(); r != nil {
			grads, err = nil, fmt.Errorf("%w: %w: gradient of the loss: %v", ErrConfig, ErrGraph, r)
		}
	}()
	if grads, err = gorgonia.Grad(m.Loss, m.Params...); err != nil {
		return nil, fmt.Errorf("%w: gradient of the loss: %w", ErrConfig, err)
	}
	if len(grads) != len(m.Params) {
		return nil, fmt.Errorf("%w: %d gradients for %d params", ErrGraph, len(grads), len(m.Params))
	}
	m.gradLoss, m.gradParams, m.grads = m.Loss, append([]*gorgonia.Node(nil), m.Params...), grads
	return grads, nil
}

// forward runs the tape once on the example already bound and resets it.
func (e *graphEngine) forward() error {
	defer e.vm.Reset()
	if err := e.vm.RunAll(); err != nil {
		return fmt.Errorf("%w: %w", ErrGraph, err)
	}
	return nil
}

// exampleGrad writes into dst the gradient of the loss of the example (x, y)
// at the current parameter values, flattened, and returns the loss.
func (e *graphEngine) exampleGrad(dst, x []float64, y float64) (float64, error) {
	copy(e.xbuf, x)
	e.setLabel(y)
	if err := e.forward(); err != nil {
		return 0, err
	}
	off := 0
	for i, vg := range e.vg {
		gv, _ := vg.Grad()
		g, err := floats(gv)
		if err != nil || len(g) != len(e.vals[i]) {
			return 0, fmt.Errorf("%w: gradient of param %d: %v", ErrGraph, i, err)
		}
		off += copy(dst[off:], g)
	}
	lv, err := floats(e.loss.Value())
	if err != nil || len(lv) != 1 {
		return 0, fmt.Errorf("%w: loss value: %v", ErrGraph, err)
	}
	return lv[0], nil
}

// train runs the SGD loop of Config and returns the weights, filling the
// pass records, the objective and the gradient norm of the Run as the native
// engine does.
func (e *graphEngine) train(ctx context.Context) ([]float64, error) {
	p := e.p
	run := p.run
	var lo, hi float64
	sol, err := e.newSolver(func(eta float64) { lo, hi = math.Min(lo, eta), math.Max(hi, eta) })
	if err != nil {
		return nil, err
	}
	var (
		start       = time.Now()
		info        = levelEnabled(p.log, logrus.InfoLevel)
		debug       = levelEnabled(p.log, logrus.DebugLevel)
		smp         = newSampler(p)
		w           = make([]float64, e.dim)
		done        bool
		f, gradNorm float64
	)
	for j := 0; j < p.cfg.Passes; j++ {
		lo, hi = math.Inf(1), 0
		for pos, i := range smp.pass(j) {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("trainer: stopped at step %d: %w", sol.Steps()+1, err)
			}
			if err := e.example(sol, smp, i, j, pos); err != nil {
				return nil, err
			}
		}
		if err := sol.Flush(); err != nil {
			return nil, err
		}
		run.PassMaxStep = append(run.PassMaxStep, hi)
		run.PassMinStep = append(run.PassMinStep, lo)
		run.Stats.PassesDone = j + 1
		if info {
			p.log.WithFields(logrus.Fields{
				"pass": j + 1, "steps": sol.Steps(), "eta_max": hi, "eta_min": lo, "elapsed": time.Since(start),
			}).Info("trainer: pass done")
		}
		done = false
		if p.cfg.Tolerance > 0 || debug {
			e.current(w, sol)
			if f, gradNorm, err = e.objective(w); err != nil {
				return nil, err
			}
			done = true
			p.log.WithFields(logrus.Fields{"pass": j + 1, "objective": f, "grad_norm": gradNorm}).Debug("trainer: objective")
			if p.cfg.Tolerance > 0 && gradNorm <= p.cfg.Tolerance {
				break
			}
		}
	}
	e.current(w, sol)
	scatter(e.vals, w)
	if !done {
		if f, gradNorm, err = e.objective(w); err != nil {
			return nil, err
		}
	}
	run.Stats.Objective, run.Stats.GradNorm = f, gradNorm
	run.Stats.Converged = p.cfg.Tolerance > 0 && gradNorm <= p.cfg.Tolerance
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: the objective diverged to %v; lower the step size", ErrConfig, f)
	}
	return w, nil
}

// newSolver returns the Solver of the run: the knobs of Config, and the
// steps of the shared schedule, each passed to onStep.
func (e *graphEngine) newSolver(onStep func(eta float64)) (*Solver, error) {
	p := e.p
	sol, err := NewSolver(SolverConfig{
		Eta: 1, Batch: p.cfg.Batch, Clip: p.cfg.Clip, Reg: p.cfg.Reg,
		Radius: p.cfg.Radius, Average: p.cfg.Average,
	})
	if err != nil {
		return nil, err
	}
	sol.eta = func(t int) (float64, error) {
		eta, err := p.step(t)
		if err == nil {
			onStep(eta)
		}
		return eta, err
	}
	return sol, nil
}

// example feeds example i, at position pos of the order of pass j, to the
// solver: its row after s-dropout and its label, one run of the tape, and
// the Step that clips and accumulates its gradient.
func (e *graphEngine) example(sol *Solver, smp *sampler, i, j, pos int) error {
	p := e.p
	smp.dropout(e.xbuf, p.x[i*p.d:(i+1)*p.d], p.norm[i], p.cfg.Dropout, j, pos)
	e.setLabel(p.y[i])
	if err := e.forward(); err != nil {
		return err
	}
	return diverged(sol.Step(e.vg))
}

// diverged turns the non-finite gradient error of a Solver, which in
// training means the iterates diverged, into a configuration error as the
// native engine reports it.
func diverged(err error) error {
	if errors.Is(err, errNonFinite) {
		return fmt.Errorf("%w: the iterates diverged (%w); lower the step size", ErrConfig, err)
	}
	return err
}

// current writes into w the weights training would return now: the average
// of the iterates if averaging, else the last iterate.
func (e *graphEngine) current(w []float64, sol *Solver) {
	if avg := sol.Averaged(); avg != nil {
		copy(w, avg)
		return
	}
	gather(w, e.vals)
}

// objective returns F_S(w) and the norm of the minimum-norm subgradient of
// F_S at w: with the built-in loss through the shared helper, with a user
// model through the graph (the mean loss over the rows, without dropout,
// plus R(w)). The parameter values are restored afterwards.
func (e *graphEngine) objective(w []float64) (f, gnorm float64, err error) {
	p := e.p
	if p.cfg.Model == nil {
		grad := make([]float64, p.k*p.d)
		z, gz := make([]float64, p.k), make([]float64, p.k)
		f, gnorm = p.objective(w, grad, z, gz)
		return f, gnorm, nil
	}
	saved := make([]float64, e.dim)
	gather(saved, e.vals)
	defer scatter(e.vals, saved)
	scatter(e.vals, w)
	grad := make([]float64, e.dim)
	g := make([]float64, e.dim)
	for i := 0; i < p.n; i++ {
		l, err := e.exampleGrad(g, p.x[i*p.d:(i+1)*p.d], p.y[i])
		if err != nil {
			return 0, 0, err
		}
		f += l
		for j, v := range g {
			grad[j] += v
		}
	}
	inv := 1 / float64(p.n)
	f *= inv
	for j := range grad {
		grad[j] *= inv
	}
	f += p.cfg.Reg.Value(w)
	gnorm = p.cfg.Reg.MinNormSubgrad(grad, grad, w)
	return f, gnorm, nil
}
