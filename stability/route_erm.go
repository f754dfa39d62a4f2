package stability

import (
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/trainer"
)

// RouteERM is route 1: the exact minimizer of a mu-strongly convex
// objective, 2L/(n mu), plus the Remark 8 term 2 delta_conv(k) for the
// k-th iterate of full-batch proximal gradient descent. See ERMDelta,
// ProxGDConvergence and Remark8Delta.
const RouteERM RouteID = 1

// ermRoute is the table entry of route 1.
var ermRoute = route{
	ID:          RouteERM,
	Name:        "erm",
	Citation:    citeERM,
	Formula:     "(1 + slack) (2L/(n mu) + 2 delta_conv(k)), delta_conv(k) = (1 - eta mu)^k L/mu, L = min(G, L); full-batch prox-GD, k fixed passes",
	Assumptions: []string{remark8Assumption},
	Evaluate:    (*checked).erm,
}

const (
	citeERM = "Chaudhuri, Monteleoni & Sarwate 2011 (Corollary 8); Bousquet & Elisseeff 2002; Remark 8 of Watson, Rozemberczki & Sarkar"
	// remark8Assumption is what routes 1 and 2 take for granted.
	remark8Assumption = "Remark 8: the weights are the last iterate of a number of full-batch proximal gradient passes fixed in advance, whose distance to the minimizer is bounded from the settings alone ((1 - eta mu)^k L/mu); the release does not depend on whether the run converged"
)

// ERMDelta returns the L2 sensitivity 2L/(n mu) of the exact minimizer of
//
//	F_S(w) = (1/n) sum_i l(<w, x_i>, y_i) + lambda*((1-alpha)/2 ||w||^2 + alpha ||w||_1)
//
// under replace-one neighbours, where l is convex and L-Lipschitz in w and
// F_S is mu-strongly convex, mu = lambda*(1-alpha) (the L1 part is convex and
// may be present). Citation: Chaudhuri, Monteleoni & Sarwate 2011,
// "Differentially private empirical risk minimization", Corollary 8;
// Bousquet & Elisseeff 2002, "Stability and generalization", Theorem 22. The
// uniform stability of the minimizer in the loss l is beta = L*Delta =
// 2L^2/(n mu).
//
// Proof sketch: F_S and F_S' differ by (1/n)(l(., z) - l(., z')); adding the
// two strong-convexity inequalities at the minimizers w and w' gives
// mu ||w - w'||^2 <= (1/n) <g - g', w - w'> with ||g - g'|| <= 2L.
//
// With a projection onto ||w|| <= R the same argument holds for the
// minimizer over the ball (the normal cone of the ball is monotone), with L
// bounding the gradients on the ball. It applies to an exact minimizer only;
// for the iterate of a fixed number of full-batch passes add
// 2*ProxGDConvergence (Remark8Delta). Errors wrap ErrInvalid (L < 0,
// n < 1, NaN or Inf) or ErrNotApplicable (mu = 0).
func ERMDelta(L, mu float64, n int) (float64, error) {
	if err := checkNonNeg([]string{"L", "mu"}, L, mu); err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, invalid("n = %d, want >= 1", n)
	}
	if mu == 0 {
		return 0, notApplicable(RouteERM, "mu = lambda*(1-l1 ratio) = 0: the objective is not strongly convex")
	}
	return 2 * L / (float64(n) * mu), nil
}

// Remark8Delta returns delta + 2*deltaConv: Remark 8 of Watson,
// Rozemberczki & Sarkar. If an algorithm returns, on every data set, a point
// within deltaConv of the exact minimizer of a mu-strongly convex objective,
// its sensitivity is at most the minimizer's sensitivity delta plus
// 2*deltaConv (the triangle inequality, once on each neighbour), under the
// neighbouring relation of delta.
//
// deltaConv must hold for every data set and be fixed before seeing the
// data: a distance read off the run (a gradient norm reached, a stopping
// pass chosen by a tolerance) is a statistic of the data, and a noise scale
// or a decision to release chosen from it is not differentially private.
// ProxGDConvergence gives such a bound for full-batch proximal gradient
// descent run for a fixed number of passes. Errors wrap ErrInvalid (a
// negative, NaN or infinite input).
func Remark8Delta(delta, deltaConv float64) (float64, error) {
	if err := checkNonNeg([]string{"delta", "delta_conv"}, delta, deltaConv); err != nil {
		return 0, err
	}
	return delta + 2*deltaConv, nil
}

// ProxGDConvergence returns delta_conv(k) = (1 - eta mu)^k * L/mu: a bound,
// fixed before seeing the data, on the distance ||w_k - w*|| from the k-th
// iterate w_k of full-batch proximal gradient descent started at w_0 = 0 to
// the minimizer w* of
//
//	F(w) = f(w) + g(w),  f(w) = (1/n) sum_i l_i(w) + (mu/2) ||w||^2,
//	                     g(w) = lambda*alpha ||w||_1 (+ the indicator of ||w|| <= R),
//
// where each l_i is convex and betaS-smooth with gradients of norm at most L
// (on the ball ||w|| <= R when there is one), mu > 0 and
// 0 < eta <= 1/(betaS + mu). k = 0 gives L/mu.
//
// Proof.
//
//  1. The step. With b = n the trainer runs one minibatch per pass
//     (ceil(n/n) = 1 step, no short last minibatch, the sum divided by
//     b = n), and pass j + 1 is w_{j+1} = T(w_j),
//     T(w) = proj_R(soft_{eta lambda alpha}(w - eta (grad h(w) + mu w))),
//     h = (1/n) sum_i l_i, in both engines (the native engine writes the
//     decay as (1 - eta mu) w, the graph engine's Solver as w - eta mu w).
//     Soft thresholding followed by the projection onto a ball centred at 0
//     is the prox of eta*g: the optimality conditions of that prox give
//     w = soft(v)/(1 + nu), nu >= 0 the multiplier of the ball, and scaling
//     by a positive factor keeps the sign pattern, hence the subgradient, of
//     soft(v). So T(w) = prox_{eta g}(w - eta grad f(w)).
//  2. Contraction. w - eta grad f(w) = (1 - eta mu)(w - eta' grad h(w)) with
//     eta' = eta/(1 - eta mu). h is convex and betaS-smooth, so its gradient
//     is (1/betaS)-co-coercive and the step w -> w - eta' grad h(w) is
//     non-expansive for eta' <= 2/betaS; eta <= 1/(betaS + mu) gives
//     eta' <= 1/betaS. A prox map is non-expansive. So T is
//     (1 - eta mu)-Lipschitz, with 1 - eta mu >= betaS/(betaS + mu) >= 0
//     (the factor of a mu-strongly convex, (betaS + mu)-smooth f). The
//     contraction holds up to eta <= 2/(betaS + 2 mu), as route 4 uses;
//     the route keeps the limit 1/(betaS + mu), the trainer's default step,
//     so that ProxGDPasses and a default Config agree.
//  3. Fixed point. w* minimizes F iff -grad f(w*) is a subgradient of g at
//     w*, iff w* = T(w*). So ||w_k - w*|| = ||T(w_{k-1}) - T(w*)|| <=
//     (1 - eta mu)^k ||w_0 - w*|| = (1 - eta mu)^k ||w*||.
//  4. The minimizer's norm. 0 = grad h(w*) + mu w* + s with s a subgradient
//     of g at w*. The inner product with w* gives mu ||w*||^2 =
//     -<grad h(w*), w*> - <s, w*> <= L ||w*||, because <s, w*> >=
//     g(w*) - g(0) >= 0 (g is convex and smallest at 0, g(0) = 0). So
//     ||w*|| <= L/mu.
//
// Only settings enter (L, betaS, mu, eta, k): no statistic of the data.
// Per-example clipping to G of a GLM loss (K = 1) keeps each l_i convex and
// betaS-smooth (it clamps l', which stays nondecreasing) with gradients of
// norm at most min(G, L): pass that as L, and w* is then the minimizer of the
// clipped objective. s-dropout draws a new mask in every pass, so the passes
// do not iterate one map T and there is no fixed w*; iterate averaging
// returns a mean of iterates that this bound does not cover (its distance
// decays only like 1/k): the route refuses both.
//
// Errors wrap ErrInvalid (a negative, NaN or infinite constant, eta = 0,
// k < 0) or ErrNotApplicable (mu = 0, eta > 1/(betaS + mu)).
func ProxGDConvergence(L, betaS, mu, eta float64, k int) (float64, error) {
	if err := checkNonNeg([]string{"L", "smoothness", "mu", "eta"}, L, betaS, mu, eta); err != nil {
		return 0, err
	}
	if eta == 0 || k < 0 {
		return 0, invalid("eta = %v, passes = %d, want eta > 0 and passes >= 0", eta, k)
	}
	if mu == 0 {
		return 0, notApplicable(RouteERM, "mu = lambda*(1-l1 ratio) = 0: the iterates need not contract")
	}
	if limit := 1 / (betaS + mu); eta > limit*(1+1e-12) {
		return 0, notApplicable(RouteERM, "step %.6g exceeds 1/(beta_s + mu) = %.6g", eta, limit)
	}
	return proxGDConv(L, mu, eta, k), nil
}

// proxGDConv is delta_conv(k) = (1 - eta mu)^k L/mu without the checks.
func proxGDConv(L, mu, eta float64, k int) float64 {
	return math.Pow(1-eta*mu, float64(k)) * L / mu
}

// ProxGDPasses returns the smallest number of passes k >= 1 of full-batch
// proximal gradient descent (trainer.Config with Batch = n, the Constant
// schedule and Eta = 0, the default step 1/(betaS + mu)) after which the
// convergence term of RouteERM is at most rel times the exact minimizer's
// sensitivity:
//
//	2 delta_conv(k) = 2 (1 - eta mu)^k L/mu <= rel * 2L/(mu n),  eta = 1/(betaS + mu),
//
// that is (betaS/(betaS + mu))^k <= rel/n. L cancels, so it is not an
// argument (with clipping, L -> min(G, L) on both sides). The route's Delta
// is then at most (1 + rel)(1 + RoundingSlack) 2L/(mu n): rel = 0.01 asks for
// the exact-minimizer bound within 1%. The count depends on settings only,
// so it may be fixed before seeing the data; a smaller step than the default
// contracts more slowly and needs more passes (the route computes Delta from
// the step actually used). betaS is the smoothness S_z kappa^2 of the loss in
// the weights (trainer.Run.BetaS), mu = lambda*(1-alpha).
//
// For full-batch runs route 4 (RouteStronglyConvexSGD) gives
// (1 - (1 - eta mu)^k) 2L/(mu n), below the exact minimizer's bound for
// every k: the pass count buys accuracy, not privacy, when route 4 applies.
//
// Errors wrap ErrInvalid (NaN, infinite or negative betaS, rel not finite
// and > 0, n < 1, or a count above trainer.MaxPasses) or ErrNotApplicable
// (mu = 0).
func ProxGDPasses(betaS, mu float64, n int, rel float64) (int, error) {
	if err := checkNonNeg([]string{"smoothness", "mu"}, betaS, mu); err != nil {
		return 0, err
	}
	if !check.Positive(rel) {
		return 0, invalid("rel = %v, want finite > 0", rel)
	}
	if n < 1 {
		return 0, invalid("n = %d, want >= 1", n)
	}
	if mu == 0 {
		return 0, notApplicable(RouteERM, "mu = lambda*(1-l1 ratio) = 0: the iterates need not contract")
	}
	eta := 1 / (betaS + mu)
	target := rel / float64(n)
	// The test the route applies, in the route's own arithmetic.
	ok := func(k int) bool { return math.Pow(1-eta*mu, float64(k)) <= target }
	k := 1
	if q := 1 - eta*mu; q > 0 && !ok(1) {
		// (1 - eta mu)^k <= target from k >= log(target)/log(q); the
		// estimate is then corrected in the route's arithmetic.
		est := math.Ceil(math.Log(target) / math.Log1p(-eta*mu))
		if est > trainer.MaxPasses+1 {
			return 0, invalid("%.4g passes needed for rel = %g (n = %d, beta_s = %g, mu = %g), more than trainer.MaxPasses = %d; raise rel or mu", est, rel, n, betaS, mu, trainer.MaxPasses)
		}
		k = max(1, int(est))
		for k > 1 && ok(k-1) {
			k--
		}
		for !ok(k) {
			k++
		}
	}
	if k > trainer.MaxPasses {
		return 0, invalid("%d passes needed for rel = %g (n = %d, beta_s = %g, mu = %g), more than trainer.MaxPasses = %d; raise rel or mu", k, rel, n, betaS, mu, trainer.MaxPasses)
	}
	return k, nil
}

// erm is route 1 with the Remark 8 term of full-batch proximal gradient
// descent: (1 + RoundingSlack) (2 L_eff/(n mu) + 2 delta_conv(k)). L_eff =
// min(G, L) is the Lipschitz constant of the (clipped) loss whose objective
// the passes minimize. Only settings enter: the report is the same for every
// data set, and so is the decision to release.
func (c *checked) erm(e *Route) Route {
	r := c.run
	if dc, ok := c.deltaConv(); ok {
		if d, err := ERMDelta(c.eff.L, r.Mu, r.N); err == nil {
			if d2, err := Remark8Delta(d, dc); err == nil {
				e.Nominal = (1 + RoundingSlack) * d2
			}
		}
	}
	nominal := e.Nominal
	if err := c.ermConditions(RouteERM); err != nil {
		return c.fail(e, err)
	}
	return c.ok(e, nominal)
}

// ermConditions checks what routes 1 and 2 share: the run is full-batch
// proximal gradient descent with a constant step, a fixed number of passes
// and the last iterate returned, so that ProxGDConvergence bounds its
// distance to the minimizer of the (clipped) objective on every data set.
// Every reason names settings only.
func (c *checked) ermConditions(id RouteID) error {
	r := c.run
	if why := c.outside(); why != "" {
		return notApplicable(id, "%s", why)
	}
	if r.Mu == 0 {
		return notApplicable(id, "mu = lambda*(1-l1 ratio) = 0: the objective is not strongly convex")
	}
	if r.Tolerance > 0 {
		return notApplicable(id, "a tolerance (%.3g) stops training at a data-dependent pass: no route certifies such a run; fix the passes in advance (ProxGDPasses) and set no tolerance", r.Tolerance)
	}
	if r.Batch != r.N {
		return notApplicable(id, "minibatch %d < n = %d: the distance to the minimizer is bounded for full-batch passes (b = n) only", r.Batch, r.N)
	}
	if r.Schedule != trainer.Constant.String() {
		return notApplicable(id, "schedule %s: the convergence bound needs a constant step", r.Schedule)
	}
	if r.Average {
		return notApplicable(id, "iterate averaging: the convergence bound covers the last iterate only")
	}
	if c.s < 1 {
		return notApplicable(id, "s-dropout (s = %g) draws new masks every pass: the passes do not iterate one map with a fixed minimizer", c.s)
	}
	if c.clipErr != "" {
		return notApplicable(id, "%s", c.clipErr)
	}
	if r.Passes < 1 || len(r.PassMaxStep) != r.Passes {
		return notApplicable(id, "%d passes asked for, %d recorded: the run must do a fixed number of passes", r.Passes, len(r.PassMaxStep))
	}
	limit := 1 / (c.eff.BetaS + r.Mu)
	for j, hi := range r.PassMaxStep {
		if !near(hi, r.Eta) {
			return notApplicable(id, "step %.6g in pass %d differs from the constant step %.6g", hi, j, r.Eta)
		}
	}
	if r.Eta <= 0 || r.Eta > limit*(1+1e-12) {
		return notApplicable(id, "step %.6g exceeds 1/(beta_s + mu) = %.6g: the contraction bound needs a smaller step", r.Eta, limit)
	}
	if r.Radius > 0 && r.Radius < r.L/r.Mu {
		return notApplicable(id, "projection radius %.4g < L/mu = %.4g: the unconstrained minimizer of a neighbour may lie outside the ball where the loss constants hold", r.Radius, r.L/r.Mu)
	}
	return nil
}

// deltaConv returns delta_conv(k) = (1 - eta mu)^k L_eff/mu for the run's
// settings, and whether it can be evaluated (mu > 0, a constant step with
// 0 <= 1 - eta mu < 1, k >= 1). L_eff = min(G, L) with clipping (K = 1):
// the full-batch passes minimize the clipped objective.
func (c *checked) deltaConv() (float64, bool) {
	r := c.run
	if r.Mu <= 0 || r.Schedule != trainer.Constant.String() || r.Passes < 1 {
		return 0, false
	}
	if q := 1 - r.Eta*r.Mu; r.Eta <= 0 || q < 0 || q >= 1 {
		return 0, false
	}
	return proxGDConv(c.eff.L, r.Mu, r.Eta, r.Passes), true
}
