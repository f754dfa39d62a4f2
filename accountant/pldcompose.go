package accountant

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// composedPLD is the T-fold composition of one direction's step
// distribution on a window of the grid: mass[k] at the loss (lo+k)
// Interval; shift is added to every delta read from it: the truncated
// masses and the rounding allowance for the pessimistic bound, minus the
// window's two tails and the allowance for the optimistic one.
type composedPLD struct {
	lo         int
	mass       []float64
	interval   float64
	shift      float64
	tailDelta  float64 // the truncated masses (all three), >= 0
	roundDelta float64 // the rounding allowance (roundingDelta), >= 0
	size       int     // the transform's length
}

// roundingDelta is the allowance for the floating-point rounding of T
// steps whose discretized masses (with the mass at +Inf) sum to total: T
// (|total - 1| + 1e-14) + 1e-12. The masses' own rounding (their sum is 1
// in exact arithmetic) moves the composed delta by at most T |total - 1|
// to first order; the transform's rounding, measured as the L1 distance
// between the composed masses of transform lengths N and 2N, was at most
// 1.2e-14 T + 2e-14 on the tests' settings (1.2e-11 at the MNIST
// tutorial's 14,062 steps, 9e-11 at 100,000 steps), a tenth of the
// allowance or less.
func roundingDelta(steps int, total float64) float64 {
	return float64(steps)*(math.Abs(total-1)+1e-14) + 1e-12
}

// composeDirection discretizes one step of g in direction d and composes
// it over g.Steps steps.
func composeDirection(g SampledGaussian, d direction, p PLD) (composedPLD, error) {
	s, err := discretize(g, d, p)
	if err != nil {
		return composedPLD{}, err
	}
	return compose(s, g.Steps, p)
}

// logMGF returns log sum_k mass[k] exp(lambda (lo+k)), the log of the
// moment generating function of the step's finite part in grid units. The
// sum is anchored at its largest exponent (the highest index with mass for
// lambda > 0, the lowest for lambda < 0) and its factors exp(-|lambda|) are
// multiplied in one by one; terms that underflow are below 1e-300 of the
// anchor's.
func (s stepPMF) logMGF(lambda float64) float64 {
	first, last := 0, len(s.mass)-1
	for first <= last && s.mass[first] == 0 {
		first++
	}
	for last >= first && s.mass[last] == 0 {
		last--
	}
	if first > last {
		return math.Inf(-1)
	}
	f := math.Exp(-math.Abs(lambda))
	var sum float64
	if lambda >= 0 {
		w := 1.0
		for k := last; k >= first && w > 0; k-- {
			sum += s.mass[k] * w
			w *= f
		}
		return lambda*float64(s.lo+last) + math.Log(sum)
	}
	w := 1.0
	for k := first; k <= last && w > 0; k++ {
		sum += s.mass[k] * w
		w *= f
	}
	return lambda*float64(s.lo+first) + math.Log(sum)
}

// tailIndex returns the window's edge on one side, with the Chernoff bound
// on the composed mass beyond it: sign +1 gives the smallest u with
// P(S >= u) <= tail (bound exp(-lambda u + T K(lambda))), sign -1 the
// largest l with P(S <= l) <= tail (bound exp(lambda l + T K(-lambda))),
// S the sum of T steps' grid indices (their finite parts). Any lambda > 0
// gives a valid bound; a golden-section search on log lambda finds a good
// one. The bound is raised by 1e-9 of itself for the rounding of the sum.
func (s stepPMF) tailIndex(steps int, tail float64, sign float64) (edge int, bound float64, err error) {
	T := float64(steps)
	logTail := math.Log(tail)
	// The edge at lambda, in grid units: (T K(±lambda) - log tail) / lambda.
	at := func(logLambda float64) float64 {
		lam := math.Exp(logLambda)
		return (T*s.logMGF(sign*lam) - logTail) / lam
	}
	// lambda from 1e-9 to 1e3 per grid interval.
	a, b := math.Log(1e-9), math.Log(1e3)
	const golden = 0.6180339887498949
	x1, x2 := b-golden*(b-a), a+golden*(b-a)
	f1, f2 := at(x1), at(x2)
	for range 40 {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - golden*(b-a)
			f1 = at(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + golden*(b-a)
			f2 = at(x2)
		}
	}
	best, fb := x1, f1
	if f2 < f1 {
		best, fb = x2, f2
	}
	if !(math.Abs(fb) < 4*MaxPLDSize*T) {
		return 0, 0, fmt.Errorf("%w: no window found for %d steps", ErrWindow, steps)
	}
	lam := math.Exp(best)
	if sign > 0 {
		edge = int(math.Ceil(fb))
		bound = math.Exp(-lam*float64(edge) + T*s.logMGF(lam))
	} else {
		edge = -int(math.Ceil(fb))
		bound = math.Exp(lam*float64(edge) + T*s.logMGF(-lam))
	}
	return edge, bound * (1 + 1e-9), nil
}

// fftLength returns the smallest 2^a 3^b 5^c >= n (the lengths gonum's
// transform factors best).
func fftLength(n int) int {
	best := math.MaxInt
	for p5 := 1; p5 < 2*n; p5 *= 5 {
		for p35 := p5; p35 < 2*n; p35 *= 3 {
			m := p35
			for m < n {
				m *= 2
			}
			best = min(best, m)
		}
	}
	return best
}

// compose returns the T-fold composition of s on the window between the
// Chernoff edges (steps from the composition's doc on PLD): the step's
// masses folded onto a cycle of N >= the window's points, transformed,
// raised to the power T, transformed back; the window read from the cycle.
func compose(s stepPMF, steps int, p PLD) (composedPLD, error) {
	hi, upper, err := s.tailIndex(steps, p.Tail, 1)
	if err != nil {
		return composedPLD{}, err
	}
	lo, lower, err := s.tailIndex(steps, p.Tail, -1)
	if err != nil {
		return composedPLD{}, err
	}
	// The window is [lo+1, hi-1]; the mass at or beyond its edges is at
	// most upper + lower.
	lo++
	w := hi - lo
	if w < 1 {
		lo, w = hi-1, 1
	}
	if w > MaxPLDSize {
		return composedPLD{}, fmt.Errorf("%w: %d steps spread the losses over [%.4g, %.4g], %d points at interval %g (at most %d): raise the interval, or use RDP",
			ErrWindow, steps, float64(lo)*p.Interval, float64(hi)*p.Interval, w, p.Interval, MaxPLDSize)
	}
	n := fftLength(max(w, 2))
	seq := s.cyclicPower(steps, n)
	c := composedPLD{lo: lo, mass: make([]float64, w), interval: p.Interval, size: n}
	for k := range w {
		c.mass[k] = seq[mod(lo+k, n)]
	}
	// The composed mass at +Inf: 1 - (1 - inf)^T.
	infT := -math.Expm1(float64(steps) * math.Log1p(-s.inf))
	c.tailDelta = infT + upper + lower
	total := s.inf
	for _, m := range s.mass {
		total += m
	}
	c.roundDelta = roundingDelta(steps, total)
	if p.Discretization == Optimistic {
		c.shift = -(upper + lower + c.roundDelta)
	} else {
		for k, m := range c.mass {
			c.mass[k] = max(m, 0) // rounding may leave tiny negatives
		}
		c.shift = c.tailDelta + c.roundDelta
	}
	return c, nil
}

// cyclicPower returns the steps-fold cyclic convolution of s's masses on
// a cycle of n points (the mass at grid index i at position i mod n): the
// masses folded onto the cycle, transformed, raised to the power steps,
// transformed back and divided by n.
func (s stepPMF) cyclicPower(steps, n int) []float64 {
	seq := make([]float64, n)
	for k, m := range s.mass {
		seq[mod(s.lo+k, n)] += m
	}
	fft := fourier.NewFFT(n)
	coef := fft.Coefficients(nil, seq)
	for i, z := range coef {
		coef[i] = cpow(z, steps)
	}
	seq = fft.Sequence(seq, coef)
	scale := 1 / float64(n)
	for i := range seq {
		seq[i] *= scale
	}
	return seq
}

// mod returns i mod n in [0, n).
func mod(i, n int) int {
	r := i % n
	if r < 0 {
		r += n
	}
	return r
}

// cpow returns z^t by binary powering.
func cpow(z complex128, t int) complex128 {
	r := complex(1, 0)
	for t > 0 {
		if t&1 == 1 {
			r *= z
		}
		z *= z
		t >>= 1
	}
	return r
}

// delta returns the composed distribution's hockey-stick divergence at
// e^eps plus shift, clamped at 0: shift + sum over the losses l > eps of
// mass(l) (1 - exp(eps - l)).
func (c composedPLD) delta(eps float64) float64 {
	d := c.shift
	for k, m := range c.mass {
		if l := float64(c.lo+k) * c.interval; l > eps {
			d += m * -math.Expm1(eps-l)
		}
	}
	return max(d, 0)
}

// epsilon returns the smallest eps >= 0 at which delta(eps) <= target, or
// an error wrapping ErrNoBound when the mass at +Inf and the truncations
// reach target. It scans the window from the top: with A = shift, S_k the
// mass at k and above and D_k = delta at the loss of k, D_k-1 = A +
// (1 - e^-h) S_k + e^-h (D_k - A), a recursion of positive terms; in the
// interval where D crosses target, delta(eps) = A + S - e^(eps - l) M, M
// the mass above weighted by e^-(loss - l), is solved for eps.
func (c composedPLD) epsilon(target float64) (float64, error) {
	A := c.shift
	if A >= target {
		return 0, fmt.Errorf("%w: the PLD's truncated masses and rounding allowance (%.3g) reach delta = %v: raise delta",
			ErrNoBound, A, target)
	}
	h := c.interval
	decay, grow := math.Exp(-h), -math.Expm1(-h)
	var S float64 // mass at index k and above
	D := A        // delta at the loss of index k
	for k := len(c.mass) - 1; k >= 0; k-- {
		S += c.mass[k]
		next := A + grow*S + decay*(D-A) // delta at the loss of k-1
		if next >= target || k == 0 {
			// eps = l_k - x with e^-x = (A + S - target)/M, M = S - (D - A).
			M := S - (D - A)
			rest := A + S - target
			if rest <= 0 || M <= 0 {
				return 0, nil
			}
			eps := float64(c.lo+k)*h - math.Log(M/rest)
			return max(eps, 0), nil
		}
		D = next
	}
	return 0, nil
}
