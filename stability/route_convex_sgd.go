package stability

import "github.com/stabpriv/stabpriv/internal/check"

// RouteConvexSGD is route 3: permutation SGD on a convex smooth loss,
// (2L/b) times the sum over passes of the step at which the differing
// example is used. See ConvexSGDDelta.
const RouteConvexSGD RouteID = 3

// convexSGDRoute is the table entry of route 3.
var convexSGDRoute = route{
	ID:          RouteConvexSGD,
	Name:        "convex-sgd",
	Citation:    citeSGD,
	Formula:     "(2L/b) sum over passes of the step using the differing example; steps <= 2/(beta_s + mu)",
	Assumptions: []string{sgdAssumption},
	Evaluate:    (*checked).convexSGD,
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
		if !check.Positive(eta) {
			return 0, invalid("step %v in pass %d, want finite > 0", eta, j)
		}
		if eta > limit {
			return 0, notApplicable(RouteConvexSGD, "step %.6g in pass %d exceeds 2/(beta_s + mu) = %.6g: the step may expand", eta, j, limit)
		}
		sum += eta
	}
	return 2 * L / float64(b) * sum, nil
}

// convexSGD is route 3: (2L/b) sum_j eta_{t_j} (the average of the per-step
// bounds when Average is set), every step <= 2/(beta_s + mu).
func (c *checked) convexSGD(e *Route) Route {
	if c.run.Average {
		e.Formula += "; averaged iterates: mean over steps of the per-step bounds"
	}
	return c.sgd(e, false, 2/(c.eff.BetaS+c.eff.Mu), "2/(beta_s + mu)")
}

// stronglyConvexSGD is route 4: the recursion with contraction (1 - eta_t mu)
