package pdp

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
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
