package accountant

import (
	"fmt"
	"math"
)

// stepPMF is one step's privacy loss distribution on the grid: mass[k] at
// the loss (lo+k) Interval, and inf at +Inf.
type stepPMF struct {
	lo   int
	mass []float64
	inf  float64
}

// gaussHS returns H(a), the hockey-stick divergence at a > 0 of
// N(1, sigma^2) from N(0, sigma^2) (the same both ways), Phi(m - s) - a
// Phi(-m - s) with m = 1/(2 sigma), s = sigma log a (Balle & Wang 2018,
// Theorem 8), and its complement H(a) - (1 - a) = a Phi(m + s) - Phi(s - m),
// each from its own formula so that both keep their relative precision
// where they are small (H for a large, the complement for a small).
func gaussHS(a, sigma float64) (h, hc float64) {
	if a == 0 {
		return 1, 0
	}
	m, s := 1/(2*sigma), sigma*math.Log(a)
	h = phi(m-s) - a*phi(-m-s)
	hc = a*phi(m+s) - phi(s-m)
	return max(h, 0), max(hc, 0)
}

// phi is the standard normal distribution function.
func phi(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

// stepDelta returns the hockey-stick divergence at e^eps of one step of g
// in direction d (the PLD doc comment's closed forms), and its complement
// delta - (1 - e^eps) >= 0, each computed apart (gaussHS).
func stepDelta(g SampledGaussian, d direction, eps float64) (delta, comp float64) {
	q, sigma := g.SampleRate, g.NoiseMultiplier
	if d == remove {
		if q < 1 && eps <= math.Log1p(-q) {
			return -math.Expm1(eps), 0
		}
		// q H(a) with a = (e^eps - (1-q))/q; 1 - e^eps = q (1 - a).
		h, hc := gaussHS((math.Expm1(eps)+q)/q, sigma)
		return q * h, q * hc
	}
	if q < 1 && eps >= -math.Log1p(-q) {
		return 0, math.Expm1(eps)
	}
	// c H(a) with c = 1 - (1-q) e^eps, a = q e^eps / c; 1 - e^eps = c (1 - a).
	c := 1.0
	if q < 1 {
		c = -math.Expm1(eps + math.Log1p(-q))
	}
	h, hc := gaussHS(q*math.Exp(eps)/c, sigma)
	return c * h, c * hc
}

// lossAt is x(l) = sigma^2 log((e^l - (1-q))/q) + 1/2, the output at which
// the remove direction's privacy loss log(1 - q + q exp((2x-1)/(2
// sigma^2))) is l; -Inf at or below log(1-q).
func lossAt(q, sigma, l float64) float64 {
	r := (math.Expm1(l) + q) / q
	if !(r > 0) {
		return math.Inf(-1)
	}
	return sigma*sigma*math.Log(r) + 0.5
}

// stepSurvival is P(L >= l), L one step's privacy loss in direction d.
// Remove: L = log(1 - q + q exp((2x-1)/(2 sigma^2))), increasing in x,
// x drawn from (1-q) N(0, sigma^2) + q N(1, sigma^2). Add: L is minus that
// loss, x drawn from N(0, sigma^2).
func stepSurvival(g SampledGaussian, d direction, l float64) float64 {
	q, sigma := g.SampleRate, g.NoiseMultiplier
	if d == remove {
		x := lossAt(q, sigma, l)
		return (1-q)*phi(-x/sigma) + q*phi((1-x)/sigma)
	}
	if q < 1 && l >= -math.Log1p(-q) {
		return 0
	}
	return phi(lossAt(q, sigma, -l) / sigma)
}

// stepCDF is P(L < l) = 1 - stepSurvival, computed without cancellation.
func stepCDF(g SampledGaussian, d direction, l float64) float64 {
	q, sigma := g.SampleRate, g.NoiseMultiplier
	if d == remove {
		x := lossAt(q, sigma, l)
		return (1-q)*phi(x/sigma) + q*phi((x-1)/sigma)
	}
	if q < 1 && l >= -math.Log1p(-q) {
		return 1
	}
	return phi(-lossAt(q, sigma, -l) / sigma)
}

// stepGrid returns the first and last grid indices of one step's
// distribution in direction d: the last where the step's delta is at most
// tail/steps (above it, for the add direction with q < 1, delta is 0: its
// last index is where the losses end), the first at log(1-q) for the
// remove direction with q < 1 (below it the curve is the line 1 - e^eps,
// which the first chord keeps exactly), else where the mass below is at
// most tail/steps.
func stepGrid(g SampledGaussian, d direction, p PLD) (lo, hi int, err error) {
	h, q := p.Interval, g.SampleRate
	cut := p.Tail / float64(g.Steps)
	// The loss at which the step's delta falls to cut (or 0), by doubling
	// then bisection on the grid index.
	if d == add && q < 1 {
		hi = int(math.Ceil(-math.Log1p(-q) / h))
	} else {
		hi, err = searchIndex(func(i int) bool { dl, _ := stepDelta(g, d, float64(i)*h); return dl <= cut }, 1)
		if err != nil {
			return 0, 0, err
		}
	}
	if d == remove && q < 1 {
		lo = int(math.Floor(math.Log1p(-q) / h))
	} else {
		lo, err = searchIndex(func(i int) bool { return stepCDF(g, d, -float64(i)*h) <= cut }, 1)
		if err != nil {
			return 0, 0, err
		}
		lo = -lo
	}
	lo = min(lo, hi-1)
	if hi-lo+1 > MaxPLDSize {
		return 0, 0, fmt.Errorf("%w: one step's losses span [%.4g, %.4g], %d points at interval %g (at most %d): raise the interval, or use RDP",
			ErrWindow, float64(lo)*h, float64(hi)*h, hi-lo+1, h, MaxPLDSize)
	}
	return lo, hi, nil
}

// searchIndex returns the smallest i >= 0 with ok(i), ok monotone (false
// then true), searching from start by doubling, or an error wrapping
// ErrWindow beyond 2 MaxPLDSize.
func searchIndex(ok func(int) bool, start int) (int, error) {
	if ok(0) {
		return 0, nil
	}
	lo, hi := 0, start // !ok(lo)
	for !ok(hi) {
		if hi > 2*MaxPLDSize {
			return 0, fmt.Errorf("%w: the losses of one step reach beyond %d grid intervals: raise the interval, or use RDP", ErrWindow, 2*MaxPLDSize)
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// discretize returns one step's distribution in direction d on p's grid:
// connect-the-dots (Pessimistic) or rounded down (Optimistic).
func discretize(g SampledGaussian, d direction, p PLD) (stepPMF, error) {
	lo, hi, err := stepGrid(g, d, p)
	if err != nil {
		return stepPMF{}, err
	}
	h := p.Interval
	n := hi - lo + 1
	mass := make([]float64, n)
	if p.Discretization == Optimistic {
		// mass[k] = P(eps_k <= L < eps_k+1), the last P(L >= eps_hi); the
		// mass below eps_lo is dropped.
		upper := stepSurvival(g, d, float64(lo)*h)
		for k := range n {
			next := 0.0
			if k < n-1 {
				next = stepSurvival(g, d, float64(lo+k+1)*h)
			}
			mass[k] = max(upper-next, 0)
			upper = next
		}
		return stepPMF{lo: lo, mass: mass}, nil
	}
	// Connect the dots (Doroshenko et al. 2022, Algorithm 1): with
	// delta_k the step's delta at eps_k = (lo+k) h and E = e^h - 1, the
	// mass at eps_0 is (1 - delta_0) + (delta_1 - delta_0)/E, at eps_k
	// (0 < k < n-1) ((delta_k+1 - delta_k) - e^h (delta_k - delta_k-1))/E,
	// at eps_n-1 e^h (delta_n-2 - delta_n-1)/E, and delta_n-1 at +Inf.
	// Where delta is near 1 its complement c = delta - (1 - e^eps) is used
	// instead: 1 - e^eps has no second difference, so the inner masses are
	// the same with c for delta, and the first is -c_0 + (c_1 - c_0)/E.
	delta, comp := make([]float64, n), make([]float64, n)
	for k := range n {
		delta[k], comp[k] = stepDelta(g, d, float64(lo+k)*h)
	}
	e, eh := math.Expm1(h), math.Exp(h)
	for k := range n {
		v := delta
		if comp[k] < delta[k] {
			v = comp
		}
		var m float64
		switch {
		case n == 1:
			m = 1 - delta[0]
		case k == 0 && comp[0] < delta[0]:
			m = -comp[0] + (comp[1]-comp[0])/e
		case k == 0:
			m = (1 - delta[0]) + (delta[1]-delta[0])/e
		case k == n-1:
			m = eh * (delta[k-1] - delta[k]) / e
		default:
			m = ((v[k+1] - v[k]) - eh*(v[k]-v[k-1])) / e
		}
		mass[k] = max(m, 0)
	}
	return stepPMF{lo: lo, mass: mass, inf: delta[n-1]}, nil
}
