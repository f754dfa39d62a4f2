package pdp

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrNotPublishable reports an analysis whose per-instance epsilons cannot
// be summarized with a DP guarantee: no data-independent bound on a row's
// contribution (lambda = 0, a loss that is not Lipschitz on the domain, or
// rows whose norm bound is assumed rather than enforced).
var ErrNotPublishable = errors.New("pdp: no DP summary of the per-instance epsilons")

// PublicConstants are the data-independent constants of a release that a
// DP summary of its per-instance epsilons (package pdp/publish) rests on.
// All of them are public: they follow from the settings of the run and
// the enforced row bound, never from the rows (N, the number of training
// rows, is public under the replace-one relation of DP certificates,
// which keeps it fixed).
type PublicConstants struct {
	// N is the number of training rows and Lambda > 0 the ridge strength:
	// J(w) = sum_i l(w, z_i) + (N lambda/2)||w||^2 is N lambda strongly
	// convex.
	N      int     `json:"n"`
	Lambda float64 `json:"lambda"`
	// Lipschitz bounds the gradient of one row's loss in the weights,
	// ||grad_w l(w, z)|| <= L_z kappa (or the clipping norm G), on the
	// region holding every minimizer; Smoothness bounds its variation,
	// ||grad_w l(w, z) - grad_w l(w', z)|| <= S_z kappa^2 ||w - w'||
	// (docs/DESIGN.md, section 1: the loss constants in the weights).
	Lipschitz  float64 `json:"lipschitz"`
	Smoothness float64 `json:"smoothness"`
	// Tolerance is the solver's bound on the gradient of F = J/N at the
	// computed minimizer (Config.Tolerance): the computed weights are within
	// Tolerance/Lambda of the exact minimizer (F is lambda strongly convex).
	Tolerance float64 `json:"solver_tolerance"`
	// Noise is the privacy loss of the release's noise, Dim its number of weights.
	Noise PrivacyLoss `json:"-"`
	Dim   int         `json:"dim"`
	// NotCovered lists what a DP claim about the rows does not cover
	// (preprocessing fitted on the rows, for example).
	NotCovered []string `json:"-"`
	// Binding identifies the published release the constants are of (nil
	// for a simulated release).
	Binding *Binding `json:"-"`
}

// Binding identifies the release of a model file: the SHA-256 of its
// weights (dp.WeightsSHA256) and its certificate's claim. A summary
// carries it so that it can be checked against the model file.
type Binding struct {
	WeightsSHA256  string
	Epsilon, Delta float64
}

// Check validates the constants.
func (c *PublicConstants) Check() error {
	switch {
	case c.N < 1 || c.Dim < 1:
		return fmt.Errorf("%w: n = %d, dim = %d, want >= 1", ErrInput, c.N, c.Dim)
	case !check.Positive(c.Lambda):
		return fmt.Errorf("%w: lambda = %v: a DP summary needs lambda > 0 (a strongly convex objective bounds every row's influence)", ErrNotPublishable, c.Lambda)
	case !check.Positive(c.Lipschitz) || !check.NonNegative(c.Smoothness) || !check.NonNegative(c.Tolerance):
		return fmt.Errorf("%w: Lipschitz %v, smoothness %v, tolerance %v, want finite, > 0, >= 0 and >= 0", ErrInput, c.Lipschitz, c.Smoothness, c.Tolerance)
	}
	_, err := NewPrivacyLoss(c.Noise.Kind, c.Noise.Scale, c.Noise.Delta)
	return err
}

// RemoveOneBound returns B = Lipschitz / (N lambda), the data-independent
// bound on every row's remove-one sensitivity (WorstCaseSensitivity).
func (c *PublicConstants) RemoveOneBound() float64 {
	return c.Lipschitz / (float64(c.N) * c.Lambda)
}

// EpsilonAtSensitivity returns the release's epsilon at an L2 sensitivity
// s (the L1 sensitivity taken as sqrt(Dim) s, its largest value): the
// largest per-instance epsilon of a row whose remove-one sensitivity is at
// most s. It is nondecreasing in s.
func (c *PublicConstants) EpsilonAtSensitivity(s float64) (float64, error) {
	return c.Noise.EpsilonAt(s, math.Sqrt(float64(c.Dim))*s)
}

// Publishable is what a DP summary of the per-instance epsilons of a
// Result needs: the public constants and, for every training row, the
// norm of its loss gradient at the computed minimizer,
// GradNorms[i] = ||grad_w l(w_hat, z_i)||. The gradient norms are
// CONFIDENTIAL: functions of the data.
type Publishable struct {
	Public    PublicConstants
	GradNorms []float64
}

// Publishable returns the public constants of the analysed release and the
// gradient norm of every training row (in the order of r.IDs), or an error
// wrapping ErrNotPublishable when the release has no data-independent
// bound on a row's contribution.
func (r *Result) Publishable() (*Publishable, error) {
	if r.a == nil {
		return nil, fmt.Errorf("%w: the result holds no analysis (build it with Simulate or AnalyzeRelease)", ErrNotPublishable)
	}
	if r.publicErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotPublishable, r.publicErr)
	}
	pc := *r.public
	pc.Tolerance = r.a.p.tol
	if err := pc.Check(); err != nil {
		return nil, err
	}
	return &Publishable{Public: pc, GradNorms: r.a.GradNorms()}, nil
}

// GradNorms returns ||grad_w l(w_hat, z_i)|| = ||l'(W x_i, y_i)|| ||x_i||
// for every row, the margin derivative clamped as Config.Clip says.
func (a *Analysis) GradNorms() []float64 {
	p := a.p
	out := make([]float64, p.n)
	z := make([]float64, p.k)
	g := make([]float64, p.k)
	for i := range p.n {
		x := p.x.RawRowView(i)
		p.obj.Margins(z, a.sol.W, x)
		p.obj.MarginGrad(g, z, x, p.y[i])
		out[i] = norm2(g) * norm2(x)
	}
	return out
}

// labelDomain returns the domain of the loss constants for rows bounded by
// kappa and, with labelBound > 0, regression labels clipped into
// [-labelBound, labelBound]: then the minimizers of J satisfy
// (n lambda/2)||w_hat||^2 <= J(w_hat) <= J(0) <= n B^2/2 for a loss bounded
// by its label bound at w = 0 (the squared loss), for Z and every
// neighbour: ||w_hat|| <= B/sqrt(lambda).
func labelDomain(kappa, labelBound, lambda float64, classes int) losses.Domain {
	dom := losses.Domain{Kappa: kappa, Classes: classes}
	if labelBound > 0 && lambda > 0 {
		dom.Radius, dom.LabelBound = labelBound/math.Sqrt(lambda), labelBound
	}
	return dom
}

// newPublicConstants returns the public constants of a release of the
// minimizer of J with the loss on the domain dom (its row bound enforced
// by clipping), per-example clipping at clip > 0 (0: none), on n rows.
func newPublicConstants(loss losses.Loss, dom losses.Domain, clip, lambda float64, n, dim int, m PrivacyLoss) (*PublicConstants, error) {
	c, err := loss.Constants(dom)
	if err != nil {
		return nil, fmt.Errorf("the %s loss has no Lipschitz constant on this domain (a squared loss needs a label bound): %w", loss.Name(), err)
	}
	lip := c.Lz * dom.Kappa
	if clip > 0 {
		// The clamped derivative is still S_z-Lipschitz in the margin.
		lip = math.Min(lip, clip)
	}
	pc := &PublicConstants{N: n, Lambda: lambda, Lipschitz: lip, Smoothness: c.Sz * dom.Kappa * dom.Kappa, Noise: m, Dim: dim}
	return pc, pc.Check()
}

// publicConstants returns the public constants of a simulated release on
// n rows bounded by kappa, or why there are none.
func (sim *Simulation) publicConstants(kappa float64, classes, n, dim int, m PrivacyLoss) (*PublicConstants, error) {
	if !sim.Bias && !sim.Standardize {
		return nil, fmt.Errorf("the rows are kept as they are (no standardization, no bias): their bound kappa = %g is assumed, not enforced by clipping, so one row's influence has no data-independent bound", kappa)
	}
	pc, err := newPublicConstants(sim.Loss, labelDomain(kappa, sim.LabelBound, sim.Lambda, classes), 0, sim.Lambda, n, dim, m)
	if err != nil {
		return nil, err
	}
	if sim.Standardize {
		pc.NotCovered = append(pc.NotCovered, standardizedNote)
	}
	return pc, nil
}

// standardizedNote is what a summary's claim does not cover when the
// features were standardized with statistics of the training rows.
const standardizedNote = "the features were standardized with statistics of the training rows: replacing a row changes them, and so every row, which the claim does not cover (it holds for the standardized rows)"

// bindingOf returns the binding of a model file's release.
func bindingOf(c *release.Certificate) *Binding {
	return &Binding{WeightsSHA256: c.WeightsSHA256, Epsilon: c.Epsilon, Delta: c.Delta}
}

// ModelConstants returns the public constants of the release of a model
// file from the file alone (no rows), bound to it (Binding): what a
// summary of its per-instance epsilons must state, but the solver's
// tolerance, which is the analysis's (zero here). It is an error wrapping
// ErrNotPublishable when the release has no data-independent bound on a
// row's contribution, ErrInput when the objective cannot be rebuilt.
func ModelConstants(r *modelfile.Released) (*PublicConstants, error) {
	if r == nil || r.Certificate == nil || r.Certificate.Run == nil {
		return nil, fmt.Errorf("%w: a model file without a certificate or run record", ErrInput)
	}
	c := r.Certificate
	cfg, _, _, err := releaseObjective(r)
	if err != nil {
		return nil, err
	}
	m, err := NewPrivacyLoss(c.Mechanism, c.NoiseScale, c.Delta)
	if err != nil {
		return nil, err
	}
	pc, err := releasePublicConstants(cfg, c.Run, c.Run.N, c.Dim, m, r.Preprocessing.Mode.Inside())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotPublishable, err)
	}
	pc.Binding = bindingOf(c)
	return pc, nil
}

// releasePublicConstants returns the public constants of the release of a
// model file: the objective cfg the run optimized (releaseObjective), its
// run record, and whether the preprocessing was fitted inside the
// privacy boundary (inside) or on the training rows.
func releasePublicConstants(cfg Config, run *trainer.Run, n, dim int, m PrivacyLoss, inside bool) (*PublicConstants, error) {
	dom := labelDomain(run.Kappa, run.LabelBound, run.Lambda, cfg.Classes)
	pc, err := newPublicConstants(cfg.Loss, dom, cfg.Clip, run.Lambda, n, dim, m)
	if err != nil {
		return nil, err
	}
	if !inside {
		pc.NotCovered = append(pc.NotCovered, standardizedNote)
	}
	return pc, nil
}
