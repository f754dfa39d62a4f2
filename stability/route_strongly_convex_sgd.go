package stability

import "math"

// RouteStronglyConvexSGD is route 4: permutation SGD on a mu-strongly
// convex objective, where every step contracts by (1 - eta_t mu). See
// StronglyConvexSGDDelta and DecreasingStepDelta.
const RouteStronglyConvexSGD RouteID = 4

// stronglyConvexSGDRoute is the table entry of route 4.
var stronglyConvexSGDRoute = route{
	ID:          RouteStronglyConvexSGD,
	Name:        "strongly-convex-sgd",
	Citation:    citeSGD,
	Formula:     "(2L/b) sum_j eta_{t_j} prod_{s > t_j} (1 - eta_s mu); steps <= 2/(beta_s + 2 mu)",
	Assumptions: []string{sgdAssumption},
	Evaluate:    (*checked).stronglyConvexSGD,
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

// stronglyConvexSGD is route 4: the recursion with contraction (1 - eta_t mu)
// per step, every step <= 2/(beta_s + 2 mu). For a constant step it equals
// StronglyConvexSGDDelta, for BoundedInverseT it is at most
// DecreasingStepDelta.
func (c *checked) stronglyConvexSGD(e *Route) Route {
	if c.run.Average {
		e.Formula += "; averaged iterates: mean over steps of the per-step bounds"
	}
	if c.run.Mu == 0 {
		if err := c.sgdConditions(e.Route); err != nil {
			return c.fail(e, err)
		}
		return c.fail(e, notApplicable(e.Route, "mu = lambda*(1-l1 ratio) = 0: the steps do not contract"))
	}
	return c.sgd(e, true, 2/(c.eff.BetaS+2*c.eff.Mu), "2/(beta_s + 2 mu)")
}
