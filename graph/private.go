package graph

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrNoBound is wrapped by the error that says why a program's graph has
// no proven sensitivity bound, so that its weights have no private release:
// the graph is not declared a linear model (no Margin, several parameter
// nodes, a loss that reads the weights or the input other than through
// the margin), or nothing is declared of its loss, or the loss is declared
// non-convex. Such a graph is still trained (not privately): see
// Trained.Reveal.
var ErrNoBound = errors.New("graph: no proven bound")

// ErrDeclared is wrapped by the error of NewTrainer or Train when the
// graph's loss contradicts what Config declares of it at a point of the
// grid it is checked on, and by the refusal of Trained.Release when it
// does so at a margin the run visited.
var ErrDeclared = errors.New("graph: the loss contradicts its declaration")

// DefaultLossName names a declared loss whose Declared.Name is empty.
const DefaultLossName = "graph-loss"

// Config sets up a Trainer: a program's own Gorgonia graph, what it
// declares of the graph's loss, and the knobs of the SGD run.
type Config struct {
	// Model is the program's graph, as for a Model: the parameter node
	// w, the input node x of one example (a vector of d elements), the
	// label node y (a scalar) and the per-example loss (a scalar).
	// Required. The graph is trained by SGD, and its nodes' values are
	// changed (see Trained).
	Model *Model
	// Margin is the node z = <x, w> of a linear model: gorgonia.Mul(x, w)
	// (or Mul(w, x)) of the input node x and the one parameter node w,
	// two vectors of d elements; w must start at zero (the trainer starts
	// from w = 0). The loss must read x and w only through z: it is then
	// a function l(z, y). Nil means the graph is not declared a linear
	// model, and has no bound (ErrNoBound).
	Margin *gorgonia.Node
	// Declared is what the program declares of its loss l(z, y), which
	// a bound needs. Nil means nothing declared: no bound (ErrNoBound),
	// unless Knobs.Loss names the loss.
	Declared *Declared
	// Knobs are the settings of the SGD run (the step order of
	// trainer.Config): Eta or Schedule, Passes, Batch, Clip, Dropout,
	// Reg (the elastic net), Radius, Average, Kappa, LabelBound and Seed.
	// Knobs.Model must be nil (Model above is trained).
	//
	// Knobs.Loss, when set, is the built-in loss that Model.Loss computes
	// (build it with Expr(Knobs.Loss, Margin, Label); NewTrainer compares
	// the two on the grid of Declared): its constants are known, and the
	// certificate of a release is one that release.Method.Rebuild, the
	// check of model-file verification and `stabpriv certify`, gives back
	// (not so for a declared loss: Rebuild knows the built-in losses
	// only). Knobs.Loss and Declared are not both set.
	//
	// Knobs.Engine is the engine of a built-in loss; with a declared loss
	// it must be Native (this package computes l' in the graph for the
	// native driver). A graph without a bound is trained as a Model by
	// the Graph engine, from its parameters' values, and needs Eta.
	Knobs trainer.Config
}

// Declared is what a program declares of the loss of its graph as a
// function l(z, y) of the margin: its name and the constants (in the
// margin, on the domain set by the knobs: Kappa, Radius, LabelBound) that
// the stability routes take as given. They are checked on a grid of
// margins, for the labels -1 and +1, or -B, 0 and B for regression with
// B = Knobs.LabelBound (1 when zero): NewTrainer checks 1,025 points in
// [-16, 16] (spacing 1/32); Train, before it trains, also checks the whole
// range of margins the run can reach, [-Z, Z] with Z = kappa times the
// public bound on ||w|| (the projection radius Knobs.Radius if set, else
// release.TrainedBound of the run's settings, such as L/mu), by 256 more
// points on each side beyond 16 in a geometric progression to Z. A grid
// can refute the constants but not prove them between its points: the
// certificate of a release lists them, with the grid, among the
// assumptions it does not cover.
type Declared struct {
	// Name names the loss in the run record and the certificate. It must
	// not be the name of a built-in loss (losses.ByName). Empty means
	// DefaultLossName.
	Name string
	// Task is the labels the loss takes: losses.Binary (the zero value,
	// y in {-1, +1}) or losses.Regression (any finite y).
	Task losses.Task
	// Constants are the loss's constants: Lz > 0 bounds |l'|, Sz >= 0
	// bounds |l''| (l' is Sz-Lipschitz), both finite; Convex reports that
	// l(., y) is convex, which every stability route needs (false means
	// no bound). Smooth and C2 are passed on to the run record's loss.
	Constants losses.Constants
}

// Trainer trains a program's Gorgonia graph with the stability knobs and
// analyzes the run. A Trainer trains one graph, not concurrently: training
// sets the values of its nodes.
type Trainer struct {
	cfg     Config
	loss    losses.Loss // the loss trained in margin form; nil: the graph as a Model
	glm     *glmLoss    // the declared graph loss, nil for a built-in
	noBound error       // why no bound, nil when there is one
	labels  []float64   // the labels of the declared loss's check
	checked grid        // the widest grid the declared loss passed
}

// NewTrainer checks cfg and the graph, and returns a Trainer. A graph
// without a bound is not an error (see ErrNoBound). Errors wrap
// trainer.ErrConfig (the graph's nodes, the knobs), ErrDeclared, or
// ErrGraph (a graph that Gorgonia cannot build or run); Gorgonia's panics
// are returned as errors.
func NewTrainer(cfg Config) (_ *Trainer, err error) {
	defer recoverGraph(&err)
	m, k := cfg.Model, cfg.Knobs
	switch {
	case m == nil:
		return nil, fmt.Errorf("%w: graph: no Model", trainer.ErrConfig)
	case k.Model != nil:
		return nil, fmt.Errorf("%w: graph: Knobs.Model is set; the graph to train is Config.Model", trainer.ErrConfig)
	case k.Loss != nil && cfg.Declared != nil:
		return nil, fmt.Errorf("%w: graph: set Declared or Knobs.Loss, not both", trainer.ErrConfig)
	}
	if err := m.validate(nodeSize(m.Input)); err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg}
	t.noBound = checkGLM(m, cfg.Margin)
	if t.noBound == nil && k.Loss == nil && cfg.Declared == nil {
		t.noBound = fmt.Errorf("%w: nothing is declared of the loss; set Config.Declared", ErrNoBound)
	}
	if t.noBound != nil {
		if k.Loss != nil {
			return nil, fmt.Errorf("%w: Knobs.Loss %s, but %w", trainer.ErrConfig, k.Loss.Name(), t.noBound)
		}
		return t, nil
	}
	if err := zeroStart(m.Params[0]); err != nil {
		return nil, err
	}
	name, task, cons := "", losses.Binary, losses.Constants{}
	if k.Loss != nil {
		if k.Loss.Outputs(k.Classes) != 1 {
			return nil, fmt.Errorf("%w: graph: loss %s has several margins; a graph's linear model has one", trainer.ErrConfig, k.Loss.Name())
		}
		name, task = k.Loss.Name(), k.Loss.Task()
	} else {
		if name, err = cfg.Declared.check(k.Engine); err != nil {
			return nil, err
		}
		task, cons = cfg.Declared.Task, cfg.Declared.Constants
	}
	l, err := newGLMLoss(m, cfg.Margin, name, task, cons)
	if err != nil {
		return nil, err
	}
	ref, _ := k.Loss.(losses.Margin) // a scalar built-in loss
	t.labels, t.checked = gridLabels(task, k.LabelBound), newGrid(0)
	if err := checkLoss(l, ref, t.labels, t.checked); err != nil {
		return nil, err
	}
	if k.Loss != nil {
		t.loss = k.Loss
		return t, nil
	}
	t.loss, t.glm = l, l
	if !cons.Convex {
		t.noBound = fmt.Errorf("%w: loss %s is declared non-convex; every stability route needs convexity", ErrNoBound, name)
	}
	return t, nil
}

// check validates d for a run on engine e and returns the loss's name.
func (d *Declared) check(e trainer.Engine) (string, error) {
	c := d.Constants
	if !check.Positive(c.Lz) || !check.NonNegative(c.Sz) {
		return "", fmt.Errorf("%w: graph: declared Lz = %v, Sz = %v, want finite, Lz > 0 and Sz >= 0", trainer.ErrConfig, c.Lz, c.Sz)
	}
	if d.Task != losses.Binary && d.Task != losses.Regression {
		return "", fmt.Errorf("%w: graph: declared task %v, want binary or regression", trainer.ErrConfig, d.Task)
	}
	if e != trainer.Native {
		return "", fmt.Errorf("%w: graph: engine %v for a declared loss, want native (the loss's l' is taken from the graph)", trainer.ErrConfig, e)
	}
	name := d.Name
	if name == "" {
		name = DefaultLossName
	}
	if _, err := losses.ByName(name); err == nil {
		return "", fmt.Errorf("%w: graph: declared loss name %q is a built-in loss's; choose another", trainer.ErrConfig, name)
	}
	return name, nil
}

// NoBound returns nil when the graph has a proven bound, given its
// declarations, or the error wrapping ErrNoBound that says why not. The
// knobs may still leave a run of a declared loss without a bound (see
// Train).
func (t *Trainer) NoBound() error { return t.noBound }

// checkReach checks the declared loss on the range of margins that a run
// on n rows can reach, before it trains, and returns the grid that covers
// that range; the Trainer keeps the widest grid the loss passed. The error
// wraps ErrNoBound when the knobs bound no norm of the weights, ErrDeclared
// when the loss contradicts its declaration on the grid.
func (t *Trainer) checkReach(n int) (grid, error) {
	c := t.glm.cons
	reach, err := marginReach(t.cfg.Knobs, c.Lz, c.Sz, n)
	switch {
	case err != nil:
		return grid{}, err
	case math.IsInf(reach, 1) || math.IsNaN(reach):
		return grid{}, fmt.Errorf("%w: the steps (eta > 2/mu) and no Knobs.Radius bound no ||w||, so no range of margins; set Radius", ErrNoBound)
	case reach <= t.checked.end:
		return t.checked, nil
	}
	g := newGrid(reach)
	if err := checkLoss(t.glm, nil, t.labels, g); err != nil {
		return grid{}, err
	}
	t.checked = g
	return g, nil
}

// Train trains the graph on the rows X and labels y with the knobs, and
// analyzes the run's stability when the graph has a bound. The rows are
// clipped to norm Knobs.Kappa (1 when zero) first, as the trainer does.
//
// With a declared loss, Train first checks the declaration on the range of
// margins the run can reach (see Declared), from public values alone (the
// knobs and the number of rows): a contradiction is an error wrapping
// ErrDeclared, and knobs that bound no norm of the weights (a step
// eta > 2/mu and no Knobs.Radius) leave the run without a bound (its
// Release is refused with an error wrapping ErrNoBound). During the run
// it watches the margins the loss is evaluated at (see Trained.Release).
//
// Errors are the trainer's (X must have as many columns as the input node
// has elements), or wrap ErrGraph for a run of the graph that failed; after
// such a failure every later Train of the Trainer fails with it too.
func (t *Trainer) Train(ctx context.Context, X mat.Matrix, y []float64) (_ *Trained, err error) {
	defer recoverGraph(&err)
	in := t.cfg.Model.Input
	if X == nil {
		return nil, fmt.Errorf("%w: graph: nil X", trainer.ErrData)
	}
	if _, c := X.Dims(); c != nodeSize(in) {
		return nil, fmt.Errorf("%w: graph: X has %d columns, input %s has %d elements", trainer.ErrData, c, in.Name(), nodeSize(in))
	}
	cfg := t.cfg.Knobs
	if t.loss == nil {
		cfg.Model, cfg.Engine = t.cfg.Model, trainer.Graph
	} else {
		cfg.Loss = t.loss
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		return nil, err
	}
	noBound, notes := t.noBound, []string(nil)
	if t.glm != nil && noBound == nil {
		r, _ := X.Dims()
		g, err := t.checkReach(r)
		switch {
		case errors.Is(err, ErrNoBound):
			noBound = err
		case err != nil:
			return nil, err
		default:
			c := t.glm.cons
			notes = []string{fmt.Sprintf("the constants of loss %s (Lz = %g, Sz = %g, convex) are declared by the program: checked on %s, not proved between grid points", t.glm.name, c.Lz, c.Sz, g)}
			t.glm.watch(g.end)
		}
	}
	m, run, err := tr.Train(ctx, X, y)
	var breach error
	if t.glm != nil {
		breach = t.glm.unwatch()
		if ferr := t.glm.err(); ferr != nil {
			return nil, ferr
		}
	}
	if err != nil {
		return nil, err
	}
	out := &Trained{noBound: noBound, breach: breach, run: *run, model: m}
	if t.loss != nil {
		out.w = t.cfg.Model.Params[0]
	}
	if noBound != nil {
		return out, nil
	}
	if out.rel, err = release.NewTrained(m, run, notes); err != nil {
		return nil, err
	}
	out.model = nil
	return out, nil
}

// Trained is a trained graph. With a bound, its weights are behind the
// privacy boundary (a release.Trained): they leave it by Release, noised
// and certified, at most once, or in the clear by Reveal, after which a
// Release is refused. Without a bound, Release is refused with an error
// wrapping ErrNoBound, and Reveal returns the weights; the graph's
// parameter nodes then already hold them.
type Trained struct {
	w       *gorgonia.Node // the weight node of a linear model, nil for a graph trained as a Model
	noBound error
	breach  error // a declared loss's breach of its declaration in the run
	run     trainer.Run
	model   *trainer.Model   // the weights of a graph without a bound
	rel     *release.Trained // the weights of a graph with a bound
}

// Run returns the run record: the constants of the run (the declared or
// built-in loss constants, the knobs, the steps), and in Stats the
// statistics of the data, which are not to be published.
func (t *Trained) Run() trainer.Run {
	if t.rel != nil {
		return t.rel.Run()
	}
	return t.run
}

// Report returns the stability analysis of the run: every route with its
// beta and Delta, and the chosen one. It is computed from the constants of
// the run alone and may be published. It is nil without a bound.
func (t *Trained) Report() *stability.Report {
	if t.rel == nil {
		return nil
	}
	return t.rel.Report()
}

// Release adds the noise of the output-perturbation mechanism mech (one of
// perturb.Mechanisms), calibrated to (eps, delta) and the sensitivity Delta
// of the chosen stability route, to the trained weights, and returns the
// released model and its certificate (release.Trained.Release: its
// mechanism, the replace-one neighbouring relation, the claim and its
// citation). src nil means perturb.Secure(); only a secure release is
// private. extraNotes are added to what the certificate lists as not
// covered by its claim (how the rows were prepared, for example). The
// released weights are also set as the value of the graph's weight node.
// The weights are released once: a second Release is an error wrapping
// release.ErrReleased. Without a bound the error wraps ErrNoBound, and
// says why.
//
// The run of a declared loss is not releasable, and Release returns an
// error wrapping ErrDeclared, when the loss was evaluated at a margin
// beyond the checked range or had |l'| > Lz at a margin of the run. This
// check reads the data, so the refusal itself depends on the data: it is a
// safety net for a wrong declaration (one that fails between the points
// of the grid), not part of the proof. A declaration that holds on the
// checked range never lets it fire: the public bound on ||w|| then holds
// at every step, and with it the range of the margins.
func (t *Trained) Release(mech dp.Mechanism, eps, delta float64, src perturb.Source, extraNotes ...string) (*trainer.Model, *release.Certificate, error) {
	if t.rel == nil {
		return nil, nil, t.noBound
	}
	if t.breach != nil {
		return nil, nil, t.breach
	}
	m, cert, err := t.rel.Release(mech, eps, delta, src, extraNotes...)
	if err != nil {
		return nil, nil, err
	}
	if err := setNode(t.w, m.W); err != nil {
		return nil, nil, err
	}
	return m, cert, nil
}

// Reveal returns a copy of the trained weights in the clear, not private,
// and sets them as the value of the weight node of a linear model (a graph
// trained as a Model holds its trained values already). With a bound,
// Release is refused from then on (release.Trained.Reveal).
func (t *Trained) Reveal() (*trainer.Model, error) {
	var m *trainer.Model
	if t.rel == nil {
		cp := *t.model
		cp.W = append([]float64(nil), t.model.W...)
		m = &cp
	} else {
		var err error
		if m, err = t.rel.Reveal(); err != nil {
			return nil, err
		}
	}
	if err := setNode(t.w, m.W); err != nil {
		return nil, err
	}
	return m, nil
}

// nodeSize returns the number of elements of n, 0 for nil.
func nodeSize(n *gorgonia.Node) int {
	if n == nil {
		return 0
	}
	return n.Shape().TotalSize()
}

// zeroStart returns an error wrapping trainer.ErrConfig unless the value
// of the weight node w is zero: the trainer's run of a linear model
// starts from w = 0.
func zeroStart(w *gorgonia.Node) error {
	v, err := floats(w.Value())
	if err != nil {
		return fmt.Errorf("%w: graph: weights %s: %w", trainer.ErrConfig, w.Name(), err)
	}
	for _, x := range v {
		if x != 0 {
			return fmt.Errorf("%w: graph: weights %s start nonzero; the trainer starts at 0 (gorgonia.Zeroes())", trainer.ErrConfig, w.Name())
		}
	}
	return nil
}

// setNode copies w into the value of the node n; nothing for a nil n.
func setNode(n *gorgonia.Node, w []float64) error {
	if n == nil {
		return nil
	}
	v, err := floats(n.Value())
	if err != nil || len(v) != len(w) {
		return fmt.Errorf("%w: weights %s: %d elements for %d weights (%v)", ErrGraph, n.Name(), len(v), len(w), err)
	}
	copy(v, w)
	return nil
}
