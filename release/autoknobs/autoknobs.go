// Package autoknobs chooses the knobs of a release by output perturbation
// (package release: laplace, gamma, gaussian, gaussian-analytic) from
// public values alone, so that choosing them costs no privacy: Choose
// gives lambda and the clipping norm G for n training rows, the model's
// shape, the mechanism and the budget, with the rule in words;
// GroupScale is the factor on that lambda when the unit of privacy is a
// group of rows (a privacy ID). The release methods' Tuner (Auto) sets
// these knobs, and a verifier recomputes them from a model file's
// published constants. Objective perturbation's automatic lambda is
// package objpert's (AutoLambda).
package autoknobs

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrInput is wrapped by the error of a shape that has no knobs (no rows,
// no input or no output).
var ErrInput = errors.New("autoknobs: invalid input")

// Knobs are the training settings Choose chooses.
type Knobs struct {
	// Lambda is the ridge strength (l1 ratio 0, so mu = Lambda).
	Lambda float64 `json:"lambda"`
	// Clip is the per-example clipping norm G (0: none, for K > 1).
	Clip float64 `json:"clip"`
	// Rule states how the values were derived.
	Rule string `json:"rule"`
}

// The constants of the rule: the clipping norm G of a scalar loss and the
// comparator norm R = R_0 sqrt(n), fixed once on public data (see
// Choose).
const (
	autoClip = 0.1
	autoR0   = 0.57
)

// Choose chooses lambda and the clipping norm G for a release from the
// public quantities alone: n training rows, dim model inputs, K outputs,
// the mechanism and the budget. It reads no data, so using it costs no
// privacy.
//
// Derivation. Clipping every per-example gradient to G makes the loss l_G
// of a GLM G-Lipschitz, and h = l_G/G is 1-Lipschitz (kappa = 1). With
// rho = mu/G the objective is G (mean h + (rho/2)||w||^2), whose minimizer
// depends on rho alone. On the strongly convex SGD route (bounded
// inverse-t steps) the sensitivity is Delta = 2G/(mu n) = 2/(rho n) (Wu et
// al. 2017; docs/DESIGN.md, section 3, route 4). Output perturbation adds noise of expected
// norm nu*Delta, where nu depends only on the mechanism, the dimension
// p = K*dim and (eps, delta): the mechanism's ExpectedNorm at unit
// sensitivity (perturb.Tuning), which is p/eps for the gamma-norm mechanism,
// sqrt(2) p/eps for Laplace (L1 = sqrt(p) L2), and sigma sqrt(p) for the
// Gaussian mechanisms (the last two are sqrt(E||b||^2), an upper bound on
// E||b||). Since h is 1-Lipschitz, the
// noise costs at most nu*Delta = 2 nu/(rho n) in the risk of h, while the
// ridge term biases a comparator of norm R by rho R^2/2 (the excess-risk
// argument of output perturbation, Chaudhuri, Monteleoni & Sarwate 2011,
// Section 4). The sum is smallest at rho* = (2/R) sqrt(nu/n). The norm of
// a good comparator is a property of the data; fitted across data sets it
// grows like sqrt(n), R = R_0 sqrt(n), so
//
//	lambda = mu = G (2/R_0) sqrt(nu)/n.
//
// The rule uses G = 0.1 for scalar losses (a clipped multiclass step is not
// certified, so K > 1 runs unclipped, with G = 1 in the formula) and
// R_0 = 0.57, fitted once on the best fixed lambda (test accuracy, 5 seeds)
// of Adult, the embedded breast cancer data, LastFM and synthetic data
// (docs/RESULTS.md, the fit of the automatic rules), within a factor 3 on
// each; the same for every user's data. (The earlier constant R = 15,
// fitted on the breast cancer data alone, made lambda 10 to 270 times too
// large elsewhere.) A private selection (package selection) searches
// factors of this rule.
func Choose(n, dim, k int, mech dp.Mechanism, b dp.Budget) (Knobs, error) {
	if n < 1 || dim < 1 || k < 1 {
		return Knobs{}, fmt.Errorf("%w: automatic knobs for n = %d, dim = %d, K = %d", ErrInput, n, dim, k)
	}
	p := k * dim
	cal, err := perturb.Calibrate(mech, b.Epsilon, b.Delta, perturb.Sensitivity{L2: 1}, p)
	if err != nil {
		return Knobs{}, fmt.Errorf("%w: %w", dp.ErrBudget, err)
	}
	noise, err := perturb.LookupTuning(mech)
	if err != nil {
		return Knobs{}, fmt.Errorf("%w: %w", dp.ErrBudget, err)
	}
	nu := noise.ExpectedNorm(cal)
	clip, g := autoClip, autoClip
	if k > 1 {
		clip, g = 0, 1
	}
	mu := g * 2 / autoR0 * math.Sqrt(nu) / float64(n)
	rule := fmt.Sprintf("lambda = G (2/R_0) sqrt(nu)/n with G = %g, R_0 = %g, n = %d and nu = %.4g, the expected noise norm per unit sensitivity of %s at eps = %g, delta = %g in dimension %d; l1 ratio 0, bounded inverse-t steps",
		g, autoR0, n, nu, mech, b.Epsilon, b.Delta, p)
	return Knobs{Lambda: mu, Clip: clip, Rule: rule}, nil
}

// GroupScale returns the factor on Choose's lambda when the unit of
// privacy is a group of c >= 1 rows (the rows kept for one privacy ID,
// docs/DESIGN.md sections 7.1 and 12.1): sqrt(c). It is 1 for c <= 1.
//
// Derivation, Choose's argument with the group's sensitivity. Neighbours
// differ in the c rows of one unit, which lie in one partition p*; along
// c replace-one steps the average moves by at most
// c max_p (n_p/n) Delta_p (group stability, the argument of group privacy
// in Dwork & Roth 2014, Theorem 2.2), and on the strongly convex route
// with bounded inverse-t steps Delta_p <= 2G/(mu n_p) (Wu et al. 2017;
// docs/DESIGN.md, section 3, route 4), so the certified
// sensitivity is Delta_c = 2cG/(mu n) = c 2/(rho n), c times one row's at
// the same n (the public c times the number of training IDs). Every
// output mechanism's noise is linear in the sensitivity (gamma's theta =
// Delta/eps, Laplace's b = D1/eps, the Gaussians' sigma, whose exact
// condition reads Delta/sigma alone), so the noise costs at most
// nu Delta_c = 2 (c nu)/(rho n) in the risk of the 1-Lipschitz h: the
// rule's trade-off (Chaudhuri, Monteleoni & Sarwate 2011, Section 4, as in
// Choose) with nu replaced by c nu, which moves nothing else (the
// ridge bias rho R^2/2 of a comparator of norm R = R_0 sqrt(n) is the
// same function of the same n rows). Its minimizer is
// rho* = (2/R) sqrt(c nu/n), so lambda = G (2/R_0) sqrt(c nu)/n = sqrt(c)
// times Choose's lambda, with the same G: the minimizer depends on
// rho = mu/G alone, and the trade-off never involves G. For gamma and
// Laplace, c nu at eps is nu at eps/c (their nu is proportional to 1/eps);
// for the Gaussians it is not (sigma at eps/c grows faster than c), and
// c nu, the sensitivity's factor, is the exact form. Public values only:
// c, and the n, dim, K and budget of Choose.
func GroupScale(c int) float64 {
	if c <= 1 {
		return 1
	}
	return math.Sqrt(float64(c))
}

// Apply sets the knobs in cfg, with l1 ratio 0 and the bounded inverse-t
// schedule (the step of the strongly convex route Choose assumes).
func (k Knobs) Apply(cfg *trainer.Config) {
	cfg.Reg = regularizers.ElasticNet{Lambda: k.Lambda}
	cfg.Clip = k.Clip
	cfg.Schedule, cfg.Eta, cfg.StepFunc = trainer.BoundedInverseT, 0, nil
}
