package stability

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/trainer"
)

// RouteID names a sensitivity route of docs/DESIGN.md, section 3.
type RouteID int

const (
	// RouteERM is route 1: the exact minimizer of a mu-strongly convex
	// objective, 2L/(n mu), plus the Remark 8 term 2 delta_conv(k) for the
	// k-th iterate of full-batch proximal gradient descent. See ERMDelta,
	// ProxGDConvergence and Remark8Delta.
	RouteERM RouteID = iota + 1
	// RouteTheorem7 is route 2: Theorem 7 of Watson, Rozemberczki & Sarkar,
	// sqrt(2 beta/mu), plus the same Remark 8 term. See Theorem7Delta.
	RouteTheorem7
	// RouteConvexSGD is route 3: permutation SGD on a convex smooth loss,
	// (2L/b) times the sum over passes of the step at which the differing
	// example is used. See ConvexSGDDelta.
	RouteConvexSGD
	// RouteStronglyConvexSGD is route 4: permutation SGD on a mu-strongly
	// convex objective, where every step contracts by (1 - eta_t mu). See
	// StronglyConvexSGDDelta and DecreasingStepDelta.
	RouteStronglyConvexSGD
)

// Routes lists every route in the order of docs/DESIGN.md, section 3.
var Routes = []RouteID{RouteERM, RouteTheorem7, RouteConvexSGD, RouteStronglyConvexSGD}

// String returns the route name used in reports and certificates.
func (r RouteID) String() string {
	switch r {
	case RouteERM:
		return "erm"
	case RouteTheorem7:
		return "theorem7"
	case RouteConvexSGD:
		return "convex-sgd"
	case RouteStronglyConvexSGD:
		return "strongly-convex-sgd"
	}
	return fmt.Sprintf("Route(%d)", int(r))
}

// MarshalText returns the route name, so that JSON shows names, not numbers.
func (r RouteID) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a route name written by MarshalText.
func (r *RouteID) UnmarshalText(b []byte) error {
	for _, id := range Routes {
		if id.String() == string(b) {
			*r = id
			return nil
		}
	}
	return invalid("unknown route %q", b)
}

// checkNonNeg returns an error wrapping ErrInvalid unless every value is
// finite and >= 0.
func checkNonNeg(names []string, vals ...float64) error {
	for i, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return invalid("%s = %v, want finite >= 0", names[i], v)
		}
	}
	return nil
}

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

// MinScale is the smallest sensitivity bound, and the smallest effective
// Lipschitz constant (the clipping norm), that Analyze accepts: 2^-800,
// far above the subnormal range (below 2^-1022), where float64 rounding is
// absolute and RoundingSlack does not cover it.
const MinScale = 0x1p-800

// RoundingSlack is the relative slack by which Analyze multiplies the
// exact-arithmetic bound of every route: a route's Delta is
// (1 + RoundingSlack) times the value of its formula (the closed-form
// functions of this file return the exact-arithmetic values). Neighbouring
// runs are computed in float64, and where a bound is attained (the smoothed
// hinge in its linear part with the differing example at the row bound, for
// the SGD routes and for the exact minimizer alike) the realized distance
// exceeded the exact-arithmetic value by up to about 1e-15 relative on the
// SGD routes in the neighbour tests (and by 1e-14 on route 1 under the
// former tolerance rule). 1e-9 covers that
// with a wide margin at the sizes those tests measure (n up to a few hundred,
// up to a few hundred steps); it is an allowance for float64 rounding, not a
// worst-case floating-point bound, which, like the rounding of the noise
// sampler, lies outside the exact-arithmetic claim.
const RoundingSlack = 1e-9

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
	if math.IsNaN(rel) || math.IsInf(rel, 0) || rel <= 0 {
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

// Theorem7Delta returns sqrt(2 beta/mu): Theorem 7 of Watson, Rozemberczki
// & Sarkar, "Stability Enhanced Privacy and Applications in Private SGD".
// An algorithm that outputs the minimizer w_S of a mu-strongly convex
// objective F_S and is beta-uniformly stable in the per-example REGULARIZED
// loss l + R has L2 sensitivity at most sqrt(2 beta/mu) under replace-one
// neighbours: F_S'(w_S) - F_S'(w_S') <= beta term by term, and strong
// convexity at the minimizer w_S' gives (mu/2)||w_S - w_S'||^2 <= beta.
//
// Conventions: the paper writes the penalty lambda_p*(gamma ||w||^2 +
// eta ||w||_1); here it is lambda*((1-alpha)/2 ||w||^2 + alpha ||w||_1), so
// the paper's modulus 2*lambda_p*gamma is our mu = lambda*(1-alpha), with
// lambda = lambda_p*(2 gamma + eta) and alpha = eta/(2 gamma + eta).
//
// The beta consumed is that of l + R, not of l alone. Fed the stability of
// the exact minimizer, beta = (L + L_R) * 2L/(n mu), where L_R >= L is the
// Lipschitz constant of R on the ball ||w|| <= L/mu that holds every
// minimizer, it gives at least sqrt(8/n) L/mu, looser than ERMDelta's
// 2L/(n mu) by a factor sqrt(2n) > 1 for every n >= 1 (with the smaller beta
// 2L^2/(n mu) of l alone, which the paper's proof does not cover, it would
// give 2L/(mu sqrt(n)), still looser by sqrt(n)): the route earns its place
// only with a beta obtained by other means. An iterate within delta_conv of the minimizer
// adds 2*delta_conv (Remark8Delta). Errors wrap ErrInvalid or
// ErrNotApplicable (mu = 0).
func Theorem7Delta(beta, mu float64) (float64, error) {
	if err := checkNonNeg([]string{"beta", "mu"}, beta, mu); err != nil {
		return 0, err
	}
	if mu == 0 {
		return 0, notApplicable(RouteTheorem7, "mu = lambda*(1-l1 ratio) = 0: the objective is not strongly convex")
	}
	return math.Sqrt(2 * beta / mu), nil
}

// ConvexSGDDelta returns (2L/b) * sum_j steps[j], the L2 sensitivity of the
// last iterate of permutation SGD (one pass per entry of steps, each a fresh
// permutation shared by both runs) on a convex loss, under replace-one
// neighbours. steps[j] bounds the step size at which the differing example is
// used in pass j (the largest step of the pass when its position is not
// known); with a constant step eta over k passes it is 2kL eta/b.
//
// Conditions, checked: L is the Lipschitz constant of every per-example
// gradient used in a step (after clipping and dropout), the per-example loss
// is convex and betaS-smooth, and every step is at most 2/(betaS + mu). The
// trainer's step w -> w - eta(mean gradient + mu w) is the gradient step of
// the (betaS + mu)-smooth convex function mean(l) + (mu/2)||w||^2, hence
// 1-expansive for eta <= 2/(betaS + mu) (Hardt, Recht & Singer 2016,
// "Train faster, generalize better", Lemma 3.3 and the growth recursion,
// Lemma 2.5); the elastic-net prox and the projection onto a ball are
// non-expansive; the step that uses the differing example (weight 1/b) adds at
// most 2 eta L/b. Citation: Wu, Li, Kumar, Chaudhuri, Jha & Naughton 2017,
// "Bolt-on Differential Privacy for Scalable Stochastic Gradient
// Descent-based Analytics" (SIGMOD 2017), the sensitivity bound of
// permutation SGD in the convex case and its mini-batch form. With mu > 0 the steps even contract; see StronglyConvexSGDDelta.
func ConvexSGDDelta(L, betaS, mu float64, b int, steps []float64) (float64, error) {
	if err := checkNonNeg([]string{"L", "smoothness", "mu"}, L, betaS, mu); err != nil {
		return 0, err
	}
	if b < 1 {
		return 0, invalid("batch = %d, want >= 1", b)
	}
	if len(steps) == 0 {
		return 0, invalid("no passes")
	}
	limit := 2 / (betaS + mu)
	var sum float64
	for j, eta := range steps {
		if math.IsNaN(eta) || math.IsInf(eta, 0) || eta <= 0 {
			return 0, invalid("step %v in pass %d, want finite > 0", eta, j)
		}
		if eta > limit {
			return 0, notApplicable(RouteConvexSGD, "step %.6g in pass %d exceeds 2/(beta_s + mu) = %.6g: the step may expand", eta, j, limit)
		}
		sum += eta
	}
	return 2 * L / float64(b) * sum, nil
}

// StronglyConvexSGDDelta returns the L2 sensitivity of the last iterate of
// permutation SGD with a constant step eta over k passes on a mu-strongly
// convex objective, under replace-one neighbours and a shared permutation per
// pass:
//
//	Delta <= (2 eta L / b) * sum_{j=0}^{k-1} (1 - eta mu)^(j m),  m = ceil(n/b),
//
// the steps per pass. Citation: Wu et al. 2017, "Bolt-on Differential
// Privacy ...", the strongly convex case with constant steps and its
// mini-batch form (which writes n/b for m;
// m >= n/b steps each contract, so the sum with m is smaller and still
// valid).
//
// Conditions, checked: L bounds every per-example gradient used in a step,
// the per-example loss is convex and betaS-smooth, mu > 0, and
// eta <= 2/(betaS + 2 mu) (implied by Wu et al.'s eta <= 1/(betaS + mu)).
// Then each step w -> (1 - eta mu) w - eta grad h(w), with h the mean loss of
// the minibatch (betaS-smooth), is (1 - eta mu)-Lipschitz, because
// w - eta/(1 - eta mu) grad h(w) is non-expansive for
// eta/(1 - eta mu) <= 2/betaS. The differing example adds 2 eta L/b in the
// one step of each pass that uses it; the worst case puts it at the end of
// every pass, so that pass j's term contracts over (k-1-j) full passes.
func StronglyConvexSGDDelta(L, betaS, mu, eta float64, n, b, passes int) (float64, error) {
	if err := checkNonNeg([]string{"L", "smoothness", "mu", "eta"}, L, betaS, mu, eta); err != nil {
		return 0, err
	}
	if n < 1 || b < 1 || b > n || passes < 1 {
		return 0, invalid("n = %d, batch = %d, passes = %d, want 1 <= b <= n and passes >= 1", n, b, passes)
	}
	if mu == 0 {
		return 0, notApplicable(RouteStronglyConvexSGD, "mu = lambda*(1-l1 ratio) = 0: the objective is not strongly convex")
	}
	if eta == 0 {
		return 0, invalid("eta = 0, want > 0")
	}
	if limit := 2 / (betaS + 2*mu); eta > limit {
		return 0, notApplicable(RouteStronglyConvexSGD, "step %.6g exceeds 2/(beta_s + 2 mu) = %.6g: the step may not contract", eta, limit)
	}
	m := (n + b - 1) / b
	rho := math.Pow(1-eta*mu, float64(m))
	// sum_{j<k} rho^j; the loop stops once the terms no longer change the
	// sum, so a huge pass count costs no more than a few hundred terms.
	var sum, f float64 = 0, 1
	for j := 0; j < passes; j++ {
		next := sum + f
		if next == sum {
			break
		}
		sum = next
		f *= rho
	}
	return 2 * eta * L / float64(b) * sum, nil
}

// DecreasingStepDelta returns 2L/(mu b m), m = ceil(n/b) the steps per pass,
// which is at most 2L/(mu n): the L2 sensitivity of the last iterate of
// permutation SGD with the steps eta_t = min(1/c, 1/(mu t)) (the trainer's
// BoundedInverseT schedule), after any whole number k >= 1 of passes, under
// replace-one neighbours and a shared permutation per pass. Citation: Wu et
// al. 2017, "Bolt-on Differential Privacy ...", the strongly convex case
// with decreasing steps (2L/(mu n)).
//
// Derivation (t counts MINIBATCH steps, 1, 2, ..., T = k m, as the trainer
// does, and every minibatch gradient is a sum divided by b). Each step
// contracts the distance by (1 - eta_t mu) (see StronglyConvexSGDDelta; the
// condition eta_t <= 2/(betaS + 2mu) holds for all t because c >= (betaS +
// 2mu)/2, checked). The differing example enters one step t_j of pass j with
// weight 1/b and adds at most 2 eta_{t_j} L/b, which then contracts by
// prod_{s > t_j} (1 - eta_s mu). On the uncapped steps eta_s = 1/(mu s) the
// product telescopes, prod_{s=t+1}^T (1 - 1/s) = t/T, so the term is
// (2L/b) (1/(mu t)) (t/T) = 2L/(b mu T) wherever the example sits; on the
// capped steps t < t0 (1/c <= 1/(mu t)) the term is at most
// (2L/b)(1/c)(t0-1)/T <= 2L/(b mu T) because t0 - 1 <= c/mu. Summing k terms:
//
//	Delta <= k * 2L/(b mu T) = 2L/(mu b m) <= 2L/(mu n).
//
// So the bound is 2L/(mu n), not 2L/(mu n b): the 1/b of the example's weight
// is cancelled by the b-fold fewer steps (smaller total contraction) when t
// counts minibatches. The variant 2L/(mu n b) of TensorFlow Privacy's bolt-on
// optimizer would hold if t counted examples (eta_t = 1/(mu b t') for the
// t'-th minibatch), which the trainer does not do; the neighbour tests show
// runs that exceed it. Errors wrap ErrInvalid or ErrNotApplicable (mu = 0,
// cap too small).
func DecreasingStepDelta(L, betaS, mu, c float64, n, b int) (float64, error) {
	if err := checkNonNeg([]string{"L", "smoothness", "mu", "cap"}, L, betaS, mu, c); err != nil {
		return 0, err
	}
	if n < 1 || b < 1 || b > n {
		return 0, invalid("n = %d, batch = %d, want 1 <= b <= n", n, b)
	}
	if mu == 0 {
		return 0, notApplicable(RouteStronglyConvexSGD, "mu = lambda*(1-l1 ratio) = 0: the objective is not strongly convex")
	}
	if c < (betaS+2*mu)/2 {
		return 0, notApplicable(RouteStronglyConvexSGD, "step cap 1/%.6g exceeds 2/(beta_s + 2 mu) = %.6g", c, 2/(betaS+2*mu))
	}
	m := (n + b - 1) / b
	return 2 * L / (mu * float64(b) * float64(m)), nil
}

// EnhancedEpsilon returns eps * delta/baseDelta: Corollary 13 of Watson,
// Rozemberczki & Sarkar (privacy enhancement by stability). A pure
// mechanism whose noise scale was fixed for the baseline sensitivity
// baseDelta to give eps-DP (Laplace with scale Delta_1/eps, or the gamma-norm
// mechanism with density ~ exp(-eps ||b||/Delta_2)) is (eps*delta/baseDelta)-DP
// for a release whose sensitivity is delta, because the privacy loss of these
// mechanisms is linear in the sensitivity: |log p(o - w) - log p(o - w')| <=
// (eps/baseDelta)||w - w'||. With Delta = beta/L the ratio is also the ratio
// of the uniform stabilities. Both sensitivities must be measured in the same
// norm and neighbouring relation. For (eps, delta) Gaussian mechanisms eps is
// not linear in Delta; the perturb package inverts the analytic Gaussian
// mechanism instead. Errors wrap ErrInvalid (eps or baseDelta not finite and
// positive, delta negative).
func EnhancedEpsilon(eps, baseDelta, delta float64) (float64, error) {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return 0, invalid("eps = %v, want finite > 0", eps)
	}
	if math.IsNaN(baseDelta) || math.IsInf(baseDelta, 0) || baseDelta <= 0 {
		return 0, invalid("baseline sensitivity = %v, want finite > 0", baseDelta)
	}
	if err := checkNonNeg([]string{"sensitivity"}, delta); err != nil {
		return 0, err
	}
	return eps * delta / baseDelta, nil
}
