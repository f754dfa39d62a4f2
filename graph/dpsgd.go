package graph

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/clip"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/dpsgd"
	"github.com/stabpriv/stabpriv/trainer"
)

// The defaults of DPSGD's zero fields: those of the dp-sgd release
// method's automatic knobs.
const (
	dpsgdDefaultClip   = 1
	dpsgdDefaultPasses = 5
)

// DPSGD sets up DP-SGD (TrainDPSGD) on a program's own Gorgonia graph: any
// differentiable per-example loss of any parameters, convex or not (a
// multilayer perceptron, for example).
type DPSGD struct {
	// Model is the program's graph: the parameter nodes (any shapes, with
	// the initial values the program chose, without reading the rows), the
	// input node of one example (d elements, the columns of X), the label
	// node (a scalar) and the example's loss (a scalar). Required. Its
	// parameter nodes hold the trained values after TrainDPSGD.
	Model *Model
	// Epsilon and Delta are the budget, for replace-one neighbours:
	// Epsilon > 0 and 0 < Delta < 1, well below 1/n.
	Epsilon, Delta float64
	// Clip is the clipping norm C > 0 of every example's gradient (in
	// all the parameters together, in L2). Zero means 1.
	Clip float64
	// Batch is the expected batch b, 1 <= b <= n: every row is in a step's
	// batch with probability q = b/n (trainer.PoissonRate: rounded down to
	// a multiple of 2^-64). Zero means ceil(sqrt(n)).
	Batch int
	// Passes sets the number of steps T = Passes ceil(n/b). Zero means 5.
	Passes int
	// Eta is the constant step size, finite and > 0. Required.
	Eta float64
	// Noise is the source of the Gaussian noise, and through
	// dpsgd.Coins of the sampling coins. Nil means perturb.Secure(),
	// the only private choice; perturb.Seeded gives reproducible runs, not
	// for release.
	Noise perturb.Source
	// Notes are added to what the certificate's claim does not cover (how
	// the rows were prepared, for example).
	Notes []string
}

// DPSGDResult is what TrainDPSGD returns.
type DPSGDResult struct {
	// Model holds the trained parameters: K = 1, D the number of parameter
	// elements, W their values concatenated in the order of Model.Params,
	// Loss "user-graph" (evaluate the graph to predict). The graph's
	// parameter nodes hold the same values.
	Model *trainer.Model
	// Certificate is the claim (mechanism dp-sgd, the budget, the noise
	// multiplier, q, T, C, the accountant, Poisson sampling, replace-one
	// by group privacy of two) and the run record, with what it does not
	// cover: dpsgd.Certificate's list and this package's notes
	// (DPSGDNotes).
	Certificate *release.Certificate
	// Stats are statistics of the data measured by the run, outside the
	// claim: for diagnostics only, never to be published.
	Stats DPSGDStats
}

// DPSGDStats are what a DP-SGD run of a graph measured on its rows.
type DPSGDStats struct {
	// Examples counts the per-example gradients computed over all steps.
	Examples int
	// Clipped counts those scaled down to norm C.
	Clipped int
	// NonFinite counts those with a NaN or infinite element, which count
	// as zero in their step's sum.
	NonFinite int
	// Failed counts the examples whose run of the graph failed (an error
	// or a recovered panic), which count as zero in their step's sum.
	Failed int
	// Duration is the time of the run.
	Duration time.Duration
}

// DPSGDNotes returns what a DP-SGD certificate of a graph adds to the
// list of what its claim does not cover, for a probe of m rows
// (dpsgd.GraphNotes).
func DPSGDNotes(m int) []string { return dpsgd.GraphNotes(m) }

// TrainDPSGD trains the program's graph by DP-SGD (Abadi et al. 2016,
// Algorithm 1) on the rows of X with labels y, and returns the trained
// parameters and the certificate of their release. The noise multiplier
// sigma is dpsgd.Calibrate's for (Epsilon, Delta), n, b and
// Passes, as for the dp-sgd release method. Each of the T steps
//
//   - draws its batch by Poisson sampling (trainer.PoissonSampler, with the
//     coins of dpsgd.Coins): each row with probability q =
//     trainer.PoissonRate(n, b), b/n rounded down to a multiple of 2^-64;
//   - runs the graph once per example of the batch, its row bound to the
//     input node and its label to the label node, for the gradient of its
//     loss in all the parameters, flattened in the order of Params, and
//     scales it to L2 norm at most C (a gradient with a non-finite
//     element, or whose run of the graph fails, counts as zero);
//   - adds N(0, (sigma C)^2) to every coordinate of the sum;
//   - moves the parameters by -Eta times the noisy sum divided by the
//     expected batch b = qn (never the realized batch size).
//
// Given the parameters of the step, the sum moves by at most C when a
// row is added or removed and by 2C when one is replaced, whatever the
// graph: no convexity is needed. Before it trains, TrainDPSGD checks on a
// public probe of synthetic rows that the graph carries no state from
// one example to the next (DPSGDNotes); a graph that fails the check, or
// fails to run on those rows, is refused with an error wrapping ErrGraph.
// Once training has started, a run of the graph that fails on a training
// row is not an error: whether and where it fails depends on the row, so
// the example counts as zero (DPSGDStats.Failed) and its error, which may
// quote the row, is dropped.
//
// Errors wrap trainer.ErrConfig (the settings, a malformed graph),
// trainer.ErrData (the rows), dp.ErrBudget, release.ErrConfig or ErrGraph
// (a Gorgonia panic or failed run on the probe, recovered); no parameters
// are set then unless the run had started (a cancelled run leaves the
// parameter nodes at the values of its last step).
func TrainDPSGD(ctx context.Context, cfg DPSGD, X mat.Matrix, y []float64) (*DPSGDResult, error) {
	return trainDPSGD(ctx, cfg, X, y, nil)
}

// dpsgdHook is a test-only hook, called after the clipped sum of step t
// and before its noise, with the run (its parameters s.w, sum s.sum) and
// the batch, all read only.
type dpsgdHook func(t int, s *graphSGD, batch []int)

func trainDPSGD(ctx context.Context, cfg DPSGD, X mat.Matrix, y []float64, hook dpsgdHook) (_ *DPSGDResult, err error) {
	defer recoverGraph(&err)
	start := time.Now()
	if cfg.Model == nil {
		return nil, fmt.Errorf("%w: graph: DP-SGD without a Model", trainer.ErrConfig)
	}
	rows, labels, n, d, err := dpsgdRows(X, y)
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.withDefaults(n)
	if err != nil {
		return nil, err
	}
	budget := dp.Budget{Epsilon: cfg.Epsilon, Delta: cfg.Delta}
	if err := budget.CheckRows(n, "row"); err != nil {
		return nil, err
	}
	noise, err := dpsgd.Calibrate(budget, n, cfg.Batch, cfg.Passes)
	if err != nil {
		return nil, err
	}
	src := cfg.Noise
	if src == nil {
		src = perturb.Secure()
	}
	coins, err := dpsgd.Coins(src)
	if err != nil {
		return nil, err
	}
	kern, err := cfg.Model.Kernel(d)
	if err != nil {
		return nil, err
	}
	defer kern.Close()
	s := newGraphSGD(kern, cfg.Clip, rows, labels, d)
	if err := kern.Init(s.w); err != nil {
		return nil, err
	}
	if err := probeIndependence(kern, s.w, d); err != nil {
		return nil, err
	}
	sampler := trainer.NewPoissonSampler(coins, n, cfg.Batch)
	std := noise.NoiseMultiplier * cfg.Clip
	move := cfg.Eta / float64(cfg.Batch)
	var batch []int
	for step := 1; step <= noise.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch = sampler.Sample(batch)
		s.clippedSum(batch)
		if hook != nil {
			hook(step, s, batch)
		}
		if err := src.AddGaussian(s.sum, std); err != nil {
			return nil, fmt.Errorf("graph: the noise of DP-SGD step %d: %w", step, err)
		}
		for i, v := range s.sum {
			s.w[i] -= float64(move * v)
		}
	}
	dp.PositiveZeros(s.w)
	if err := kern.Finish(s.w); err != nil {
		return nil, err
	}
	cert, err := dpsgdCertificate(cfg, budget, noise, n, len(s.w), src)
	if err != nil {
		return nil, err
	}
	w := slices.Clone(s.w)
	cert.NoiseSeed = perturb.NoiseSeed(src)
	cert.WeightsSHA256 = dp.WeightsSHA256(w)
	s.stats.Duration = time.Since(start)
	model := &trainer.Model{Loss: cert.Run.Loss, K: 1, D: len(w), W: w}
	return &DPSGDResult{Model: model, Certificate: cert, Stats: s.stats}, nil
}

// withDefaults returns cfg with its zero fields set for n rows, or an
// error wrapping trainer.ErrConfig for a setting out of range.
func (cfg DPSGD) withDefaults(n int) (DPSGD, error) {
	if cfg.Clip == 0 {
		cfg.Clip = dpsgdDefaultClip
	}
	if cfg.Batch == 0 {
		cfg.Batch = min(n, int(math.Ceil(math.Sqrt(float64(n)))))
	}
	if cfg.Passes == 0 {
		cfg.Passes = dpsgdDefaultPasses
	}
	switch {
	case !check.Positive(cfg.Clip):
		return cfg, fmt.Errorf("%w: graph: DP-SGD clipping norm C = %v, want finite > 0", trainer.ErrConfig, cfg.Clip)
	case !check.Positive(cfg.Eta):
		return cfg, fmt.Errorf("%w: graph: DP-SGD step Eta = %v, want finite > 0", trainer.ErrConfig, cfg.Eta)
	case cfg.Batch < 1 || cfg.Batch > n:
		return cfg, fmt.Errorf("%w: graph: DP-SGD expected batch %d of %d rows, want 1 <= b <= n", trainer.ErrConfig, cfg.Batch, n)
	case cfg.Passes < 1:
		return cfg, fmt.Errorf("%w: graph: DP-SGD passes %d, want >= 1", trainer.ErrConfig, cfg.Passes)
	}
	return cfg, nil
}

// dpsgdRows returns the rows of X (row-major) and a copy of y, or an error
// wrapping trainer.ErrData for no rows, a label count that differs or a
// non-finite value.
func dpsgdRows(X mat.Matrix, y []float64) (rows, labels []float64, n, d int, err error) {
	if X == nil {
		return nil, nil, 0, 0, fmt.Errorf("%w: graph: nil X", trainer.ErrData)
	}
	n, d = X.Dims()
	if n < 1 || len(y) != n {
		return nil, nil, 0, 0, fmt.Errorf("%w: graph: %d rows and %d labels", trainer.ErrData, n, len(y))
	}
	rows = make([]float64, 0, n*d)
	for i := range n {
		for j := range d {
			rows = append(rows, X.At(i, j))
		}
	}
	if i := check.FirstNonFinite(rows); i >= 0 {
		return nil, nil, 0, 0, fmt.Errorf("%w: graph: X[%d][%d] = %v, want finite", trainer.ErrData, i/d, i%d, rows[i])
	}
	if i := check.FirstNonFinite(y); i >= 0 {
		return nil, nil, 0, 0, fmt.Errorf("%w: graph: label %d is %v, want finite", trainer.ErrData, i, y[i])
	}
	return rows, slices.Clone(y), n, d, nil
}

// dpsgdCertificate returns the certificate of a DP-SGD run of a graph
// with cfg on n rows and dim parameters, without the weights' hash and the
// noise seed: dpsgd.GraphRun's run record, dpsgd.GraphNotes
// and the program's notes, what dpsgd.RebuildGraph rebuilds.
func dpsgdCertificate(cfg DPSGD, b dp.Budget, noise dpsgd.Noise, n, dim int, src perturb.Source) (*release.Certificate, error) {
	run, err := dpsgd.GraphRun(n, dim, cfg.Batch, cfg.Passes, cfg.Eta, cfg.Clip, noise)
	if err != nil {
		return nil, err
	}
	notes := append(DPSGDNotes(probeRows), cfg.Notes...)
	return dpsgd.Certificate(b, noise, run, perturb.SourceName(src), notes)
}

// userGraphLoss is the loss name of a user model's run record
// (trainer.Train's for a Model).
const userGraphLoss = dpsgd.GraphLoss

// graphSGD is the state of a DP-SGD run of a graph.
type graphSGD struct {
	kern   trainer.ExampleKernel
	clip   float64   // C
	rows   []float64 // n x d, row-major
	labels []float64
	d      int
	w      []float64 // the parameters
	bound  clip.Bound
	g      []float64 // one example's gradient
	cg     []float64 // g clipped
	sum    []float64 // the step's sum of clipped gradients
	stats  DPSGDStats
}

func newGraphSGD(kern trainer.ExampleKernel, c float64, rows, labels []float64, d int) *graphSGD {
	p := kern.Dim()
	return &graphSGD{
		kern: kern, clip: c, bound: clip.New(c, p), rows: rows, labels: labels, d: d,
		w: make([]float64, p), g: make([]float64, p), cg: make([]float64, p), sum: make([]float64, p),
	}
}

// exampleGrad sets s.g to the gradient of example i's loss at s.w.
func (s *graphSGD) exampleGrad(i int) error {
	_, err := s.kern.ExampleGrad(s.g, s.w, s.rows[i*s.d:(i+1)*s.d], s.labels[i])
	return err
}

// clippedSum sets s.sum to the sum over the batch of the examples'
// gradients at s.w, each clipped to norm C (clip), in the order of the
// batch. An example whose run of the graph fails counts as zero.
func (s *graphSGD) clippedSum(batch []int) {
	clear(s.sum)
	for _, i := range batch {
		s.stats.Examples++
		if err := s.exampleGrad(i); err != nil {
			s.stats.Failed++
			continue
		}
		if s.clipped() {
			gfloats.Add(s.sum, s.cg)
		}
	}
}

// clipped sets s.cg to s.g scaled to L2 norm at most C, exactly for the
// rounded products c g_j: c = 1 when they are within C, else the scale of
// clip.Bound.Scale (C/||g|| lowered until a bound on the exact norm of
// the products holds). It returns false, and counts the gradient as zero,
// when g has a non-finite element.
func (s *graphSGD) clipped() bool {
	if check.FirstNonFinite(s.g) >= 0 {
		s.stats.NonFinite++
		return false
	}
	c := [1]float64{1}
	if s.bound.Scale(c[:], s.g) {
		s.stats.Clipped++
	}
	gfloats.ScaleTo(s.cg, c[0], s.g)
	return true
}
