package publish

import (
	"fmt"
	"math"
	"sort"

	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// Values returns the normalized per-row statistics the summary is of,
// u_i = min(U_i, B)/B in [0, 1], with U_i = GradNorms[i]/(n lambda) and B
// = Lipschitz/(n lambda) (PublicConstants.RemoveOneBound), sorted
// ascending. CONFIDENTIAL: functions of the data.
//
// Claim (the per-row bound dominates the per-instance epsilon): for the
// exact minimizer w of J_Z (n lambda strongly convex) and w_{-i} that of
// J_Z without row i (still n lambda strongly convex, its gradient at w
// equal to -grad l(w, z_i) since grad J_Z(w) = 0), strong monotonicity gives
// n lambda ||w - w_{-i}||^2 <= <grad J_{-i}(w) - grad J_{-i}(w_{-i}), w - w_{-i}>
// <= ||grad l(w, z_i)|| ||w - w_{-i}||, so the remove-one sensitivity
// Delta_i <= U_i; and Delta_i <= B always (the gradient is at most L). The
// release's epsilon is nondecreasing in the sensitivity (its L1 norm at
// most sqrt(dim) times the L2 norm for Laplace), so eps_i <= phi(B u_i).
func Values(p *pdp.Publishable) ([]float64, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nothing to summarize", ErrInput)
	}
	c := &p.Public
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if len(p.GradNorms) != c.N {
		return nil, fmt.Errorf("%w: %d gradient norms for n = %d rows", ErrInput, len(p.GradNorms), c.N)
	}
	u := make([]float64, c.N)
	for i, g := range p.GradNorms {
		if !(g >= 0) || math.IsInf(g, 1) {
			return nil, fmt.Errorf("%w: gradient norm %v of row %d", ErrInput, g, i)
		}
		// U_i/B = g/L, capped at 1 (a computed minimizer may leave the
		// region of the Lipschitz bound by its tolerance; B bounds
		// Delta_i regardless, and the cap is a per-row map).
		u[i] = math.Min(1, g/c.Lipschitz)
	}
	sort.Float64s(u)
	return u, nil
}

// Shift returns rho, the largest change of any row's normalized statistic
// u_j (Values) when another row of the data set is replaced (replace-one,
// the relation of DP certificates), in units of B:
//
//	rho = beta_s (2 + 2 tau/(lambda B)) / (n lambda), enlarged by a relative
//	1e-6 and an absolute 1e-12 for floating-point rounding,
//
// with beta_s the smoothness, tau the solver's gradient tolerance.
//
// Proof: Z and Z' differ in row k. J_Z and J_Z' are n lambda strongly
// convex and differ in one loss term, whose gradients are at most L, so
// their exact minimizers satisfy ||w - w'|| <= 2L/(n lambda) = 2B
// (Chaudhuri, Monteleoni & Sarwate 2011; Bousquet & Elisseeff 2002). The
// computed minimizers have ||grad F|| <= tau with F = J/n lambda strongly
// convex, so each is within tau/lambda of the exact one: they are within
// 2B + 2 tau/lambda of each other. For a row j != k, present in both,
// | ||grad l(w, z_j)|| - ||grad l(w', z_j)|| | <= beta_s ||w - w'||, so U_j
// moves by at most beta_s (2B + 2 tau/lambda)/(n lambda), rho B. Row k's
// statistic is arbitrary in [0, 1]. The cap at 1 and the sort keep both
// facts (the cap is 1-Lipschitz; sorting two multisets matched within rho
// but for one element leaves them so). TestShiftBound checks it by
// retraining on neighbouring data sets, adversarial replacements
// included.
func Shift(c *pdp.PublicConstants) float64 {
	b := c.RemoveOneBound()
	rho := c.Smoothness * (2 + 2*c.Tolerance/(c.Lambda*b)) / (float64(c.N) * c.Lambda)
	return rho*(1+1e-6) + 1e-12
}

// Length returns the inverse-sensitivity length of the value t for the
// rank-r order statistic (1 <= r <= n) of the sorted values u under shift
// rho: the smallest k >= 0 such that some multiset reachable from u in k
// neighbouring steps has t as its r-th smallest element, where one step
// replaces one value arbitrarily and moves every other by at most rho
// (the neighbourhood of Shift).
//
// In k steps every value moves by at most k rho and k values are
// arbitrary, so t can be made the r-th smallest exactly when at most
// r-1+k values lie below t - k rho and at most n-r+k above t + k rho (the
// values in between can be placed at t; at most one of the two conditions
// needs the replaced values, since the two sets cannot together hold more
// than n-1 values when both need them). Both counts fall and both
// allowances grow with k, so the smallest k is found by bisection.
//
// Sensitivity 1: the length is the distance, in the path metric of the
// neighbourhood, from u to the set of multisets whose r-th value is t. For
// neighbours u and u' (Shift), the triangle inequality of that metric gives
// |Length(u, t) - Length(u', t)| <= 1 for every t, so the exponential
// mechanism with utility -Length and weights exp(-eps Length/2) is
// eps-DP (McSherry & Talwar 2007; Asi & Duchi 2020, the inverse
// sensitivity mechanism).
func Length(u []float64, r int, t, rho float64) int {
	n := len(u)
	return smallest(n, func(k int) bool {
		kr := float64(k) * rho
		below := sort.SearchFloat64s(u, t-kr) // values < t - k rho
		above := n - upperBound(u, t+kr)      // values > t + k rho
		return below <= r-1+k && above <= n-r+k
	})
}

// CountLength returns the inverse-sensitivity length of the count c (0 <=
// c <= n) of values at most tau, under shift rho (see Length): the
// smallest k such that some multiset reachable in k steps has exactly c
// values at most tau. In k steps the values at most tau - k rho stay
// counted, those above tau + k rho stay out, the others can go either
// way, and k values are arbitrary: c is reachable exactly when
// #{u <= tau - k rho} - k <= c <= #{u <= tau + k rho} + k. Sensitivity 1 as
// for Length.
func CountLength(u []float64, c int, tau, rho float64) int {
	return smallest(len(u), func(k int) bool {
		kr := float64(k) * rho
		return upperBound(u, tau-kr)-k <= c && c <= upperBound(u, tau+kr)+k
	})
}

// upperBound returns the number of values of sorted u at most x.
func upperBound(u []float64, x float64) int {
	return sort.Search(len(u), func(i int) bool { return u[i] > x })
}

// smallest returns the smallest k in [0, n] with ok(k), ok nondecreasing
// (ok(n) holds for the lengths: n steps reach any multiset).
func smallest(n int, ok func(k int) bool) int {
	return sort.Search(n+1, ok)
}

// sample draws an index with probability proportional to
// exp(-eps lengths[i]/2) (the exponential mechanism with utility -length
// and sensitivity 1), from one uniform draw of src.
func sample(lengths []int, eps float64, src perturb.Source) int {
	lmin := lengths[0]
	for _, l := range lengths {
		lmin = min(lmin, l)
	}
	w := make([]float64, len(lengths))
	var total float64
	for i, l := range lengths {
		w[i] = math.Exp(-eps * float64(l-lmin) / 2)
		total += w[i]
	}
	x := src.Uniform() * total
	for i, v := range w {
		if x < v {
			return i
		}
		x -= v
	}
	// Rounding left x beyond the last weight: the last positive one.
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] > 0 {
			return i
		}
	}
	return len(w) - 1
}
