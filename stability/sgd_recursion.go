package stability

import (
	"math"

	"github.com/stabpriv/stabpriv/trainer"
)

// What routes 3 and 4 (RouteConvexSGD, RouteStronglyConvexSGD) share: their
// conditions, the step sizes of a run and the growth recursion.

const (
	citeSGD = "Wu et al. 2017, Bolt-on Differential Privacy; Hardt, Recht & Singer 2016, growth recursion"
	// sgdAssumption is what routes 3 and 4 take for granted.
	sgdAssumption = "the number of steps is fixed in advance and neighbouring runs share the permutations and dropout masks (same seed)"
)

// sgdConditions checks what routes 3 and 4 share.
func (c *checked) sgdConditions(id RouteID) error {
	r := c.run
	if why := c.outside(); why != "" {
		return notApplicable(id, "%s", why)
	}
	if c.clipErr != "" {
		return notApplicable(id, "%s", c.clipErr)
	}
	if r.Tolerance > 0 {
		return notApplicable(id, "a tolerance (%.3g) stops training at a data-dependent pass: the growth recursion couples runs of the same length only", r.Tolerance)
	}
	if len(r.PassMaxStep) < 1 {
		return notApplicable(id, "no pass was run")
	}
	return nil
}

// schedule returns an upper bound on eta_t, and the smallest eta_t, of step
// t >= 1: exact when the schedule can be recomputed from the record and
// agrees with it, else the largest and smallest step of t's pass.
func (c *checked) schedule() func(t int) (hi, lo float64) {
	r := c.run
	var f func(t int) float64
	switch r.Schedule {
	case trainer.Constant.String():
		f = func(int) float64 { return r.Eta }
	case trainer.InverseT.String():
		if r.Mu > 0 {
			f = func(t int) float64 { return 1 / (r.Mu * float64(t)) }
		}
	case trainer.BoundedInverseT.String():
		if r.Mu > 0 {
			beta := r.BetaS + r.Mu
			f = func(t int) float64 { return math.Min(1/beta, 1/(r.Mu*float64(t))) }
		}
	}
	passLevel := func(t int) (float64, float64) {
		j := (t - 1) / c.m
		lo := r.PassMaxStep[j]
		if r.PassMinStep != nil {
			lo = r.PassMinStep[j]
		} else if r.Mu > 0 {
			lo = 0 // unknown: no contraction may be assumed
		}
		return r.PassMaxStep[j], lo
	}
	if f == nil {
		return passLevel
	}
	// The recomputed steps must match the record (same max and min per pass).
	for j := 0; j < len(r.PassMaxStep); j++ {
		hi, lo := f(j*c.m+1), f((j+1)*c.m)
		if !near(hi, r.PassMaxStep[j]) || r.PassMinStep != nil && !near(lo, r.PassMinStep[j]) {
			return passLevel
		}
	}
	return func(t int) (float64, float64) { v := f(t); return v, v }
}

// recursion runs the growth recursion of the SGD routes over the T =
// passes*m steps, in units of 2L/b, for the last iterate and for the average
// of the iterates w_1..w_T. strong selects the contraction rho_s = 1 - eta_s
// mu of route 4; route 3 uses rho_s = 1.
//
// If the differing example sits at step u_j of pass j, the distance after
// step t is at most sum_{j: u_j <= t} eta_{u_j} prod_{s=u_j+1}^{t} rho_s
// (each step contracts the distance by rho_s and the step using the example
// adds 2 eta L/b). For the last iterate the worst position is chosen per pass:
//
//	last = sum_j max_{u in pass j} eta_u P(u),  P(u) = prod_{s=u+1}^{T} rho_s.
//
// The average's distance is at most the average of the per-step distances of
// the same permutation (triangle inequality), and summing over t first,
//
//	mean = (1/T) sum_j max_{u in pass j} eta_u G(u),  G(u) = sum_{t=u}^{T} prod_{s=u+1}^{t} rho_s,
//
// again with the worst position per pass. Both are computed backwards from
// P(T) = G(T) = 1, P(u) = rho_{u+1} P(u+1), G(u) = 1 + rho_{u+1} G(u+1).
// One loop computes both routes, once per analysis, with one evaluation of
// the schedule per step. The products are rounded before they are added
// (an explicit conversion), so a build that fuses multiply-adds
// (GOAMD64=v3) gives the same bits.
func (c *checked) recursion(strong bool) (last, mean float64) {
	if c.rec == nil {
		c.rec = c.recursions()
	}
	if strong {
		return c.rec[1][0], c.rec[1][1]
	}
	return c.rec[0][0], c.rec[0][1]
}

// recursions returns (last, mean) of route 3 (index 0, rho = 1) and of
// route 4 (index 1).
func (c *checked) recursions() *[2][2]float64 {
	r := c.run
	eta := c.schedule()
	T := len(r.PassMaxStep) * c.m
	var rec [2][2]float64
	P, G := [2]float64{1, 1}, [2]float64{1, 1}
	var bestP, bestG [2]float64
	var loNext float64 // the smallest eta of step u+1
	for u := T; u >= 1; u-- {
		if u < T {
			rho := [2]float64{1, 1 - loNext*r.Mu}
			for k := range 2 {
				P[k] *= rho[k]
				G[k] = 1 + float64(rho[k]*G[k])
			}
		}
		hi, lo := eta(u)
		loNext = lo
		for k := range 2 {
			bestP[k] = maxOf(bestP[k], hi*P[k])
			bestG[k] = maxOf(bestG[k], hi*G[k])
		}
		if (u-1)%c.m == 0 { // first step of a pass: close it
			for k := range 2 {
				rec[k][0] += bestP[k]
				rec[k][1] += bestG[k]
				bestP[k], bestG[k] = 0, 0
			}
		}
	}
	for k := range 2 {
		rec[k][1] /= float64(T)
	}
	return &rec
}

// maxOf is math.Max, special cases included (a NaN, +Inf, signed zeros),
// with the common case of two ordered values inline.
func maxOf(x, y float64) float64 {
	switch {
	case x > y:
		return x
	case y > x:
		return y
	}
	return math.Max(x, y)
}

// sgd evaluates route 3 or 4 from the recursion, after the shared checks
// and the step-size condition limit, times 1 + RoundingSlack.
func (c *checked) sgd(e *Route, strong bool, limit float64, cond string) Route {
	r := c.run
	unit := 2 * c.eff.L / float64(r.Batch)
	// With a tolerance the pass records are statistics of the data (it
	// chose when to stop) and the route does not apply: no nominal value
	// is computed from them, so that a report does not publish them.
	if r.Tolerance == 0 && len(r.PassMaxStep) >= 1 && (r.PassMinStep == nil || len(r.PassMinStep) == len(r.PassMaxStep)) {
		last, mean := c.recursion(strong)
		if r.Average {
			e.Nominal = (1 + RoundingSlack) * unit * mean
		} else {
			e.Nominal = (1 + RoundingSlack) * unit * last
		}
	}
	nominal := e.Nominal
	if err := c.sgdConditions(e.Route); err != nil {
		return c.fail(e, err)
	}
	for j, hi := range r.PassMaxStep {
		if hi > limit*(1+1e-12) {
			return c.fail(e, notApplicable(e.Route, "step %.6g in pass %d exceeds %s = %.6g", hi, j, cond, limit))
		}
	}
	return c.ok(e, nominal)
}
