package pdp

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/stabpriv/stabpriv/perturb"
)

// bisectRelTol and the iteration limits are those of
// perturb.AnalyticGaussianEpsilon's bisection, which gaussianEpsilon
// replays (TestGaussianEpsilonBits checks that the results are its bits).
const (
	bisectRelTol  = 1e-13
	bisectMaxIter = 200
	bisectDoubles = 64
)

// gaussianEpsilon returns perturb.AnalyticGaussianEpsilon(sigma, delta,
// l2), the same bits, with a fraction of its evaluations of the privacy
// curve (the per-instance epsilons of every row were where pDP spent most
// of its time), from an eps at most the result (0 if unknown: start).
//
// That function bisects on the predicate "the mechanism is (eps,
// delta)-DP" (perturb.AnalyticGaussianDelta(sigma, eps, l2) <= delta),
// doubling eps from 1 and then halving the bracket until its width is at
// most 1e-13 of its upper end, which it returns. Its path depends only on
// the predicate at the points it visits. The predicate is false below its
// root and true above it (the privacy curve decreases in eps) but for
// rounding near the root, so this function first finds the root by
// Newton's method on the curve (gaussianRoot), then replays the bisection
// evaluating the predicate only at the points within a margin of the
// root, taking the others' side from the root, and finally evaluates it
// at both ends of the final bracket. When an end disagrees (the root was
// off by more than the margin), the bracket ends at 0, or the root is not
// found, it calls perturb.AnalyticGaussianEpsilon itself. It also does
// where the predicate's curve is not smooth enough for a margin to
// bound its rounding: a subnormal argument (smoothArgs).
func gaussianEpsilon(sigma, delta, l2, start float64) (float64, error) {
	if !smoothArgs(sigma, delta, l2) {
		return perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
	}
	root, margin, ok := gaussianRoot(sigma, delta, l2, start)
	if !ok {
		return perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
	}
	dp := func(eps float64) (bool, bool) {
		d, err := perturb.AnalyticGaussianDelta(sigma, eps, l2)
		return d <= delta, err == nil
	}
	// evaluated holds the points whose predicate was evaluated (the
	// bracket's ends need it at the end).
	valid, evaluated := true, [2]float64{-1, -1}
	pred := func(eps float64) bool {
		switch {
		case eps < root-margin:
			return false
		case eps > root+margin:
			return true
		}
		p, ok := dp(eps)
		valid = valid && ok
		evaluated[0], evaluated[1] = evaluated[1], eps
		return p
	}
	lo, hi := 0.0, 1.0
	for i := 0; !pred(hi); i++ {
		if i > bisectDoubles {
			return perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
		}
		lo = hi
		hi *= 2
	}
	for i := 0; i < bisectMaxIter && hi-lo > bisectRelTol*hi; i++ {
		mid := lo + (hi-lo)/2
		if pred(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	check := func(eps float64, want bool) bool {
		if eps == evaluated[0] || eps == evaluated[1] {
			return true
		}
		p, ok := dp(eps)
		return ok && p == want
	}
	if !valid || lo == 0 || !check(hi, true) || !check(lo, false) {
		return perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
	}
	return hi, nil
}

// smoothArgs reports whether sigma, delta and l2 are normal numbers
// (not subnormal, zero, infinite or NaN): below the smallest normal
// number their few significant bits make the computed privacy curve a
// staircase in eps, on which Newton's root does not locate the
// predicate's switch within a margin.
func smoothArgs(sigma, delta, l2 float64) bool {
	return normal(sigma) && normal(delta) && normal(l2)
}

// normal reports whether x is a positive normal float64: at least 2^-1022
// (the smallest normal number) and finite.
func normal(x float64) bool { return x >= 0x1p-1022 && x <= math.MaxFloat64 }

// gaussianRoot returns the eps at which the delta of the Gaussian
// mechanism (Balle & Wang 2018, Theorem 8) with its rounding allowance,
// the predicate's curve in gaussianEpsilon,
//
//	Phi(a - b) - e^eps Phi(-a - b) + 4 ulp (4 + (a+b)^2) (t1 + t2),
//
// a = l2/(2 sigma), b = eps sigma/l2 and t1, t2 the two terms, equals
// delta, by Newton's method from start (the curve is convex and
// decreasing, so from below the root the iterates increase to it; its
// slope is -e^eps Phi(-a-b), the allowance's neglected) until a step is
// at most 1e-7 of eps (Newton's error is then of the order of its
// square), and a margin beyond which the predicate is decided by the side
// of the root: 1e-12 of the root plus the rounding of the terms (a
// quarter of the allowance) over the slope. It reports false when the
// root is not positive, not found in 100 steps, or the slope underflows
// (as where delta is below the allowance: the curve with its allowance
// then stays above delta until both terms are tiny).
func gaussianRoot(sigma, delta, l2, start float64) (root, margin float64, ok bool) {
	const ulp = 0x1p-52
	a := l2 / (2 * sigma)
	if !(a > 0) || math.IsInf(a, 0) || !(delta > 0 && delta < 1) || !(start >= 0 && start < 700) {
		return 0, 0, false
	}
	eps := start
	for range 100 {
		b := eps * sigma / l2
		t1 := 0.5 * math.Erfc((b-a)/math.Sqrt2)
		t2 := math.Exp(eps) * 0.5 * math.Erfc((a+b)/math.Sqrt2)
		noise := ulp * (4 + (a+b)*(a+b)) * (t1 + t2)
		if !(t2 > 0) || math.IsInf(t2, 0) {
			return 0, 0, false
		}
		step := (t1 - t2 + 4*noise - delta) / t2
		if step < 0 && eps == 0 {
			return 0, 0, false // (0, delta)-DP: the root is not positive
		}
		eps += step
		if !(eps > 0 && eps < 700) {
			return 0, 0, false
		}
		if math.Abs(step) <= 1e-7*eps {
			return eps, 1e-12*eps + noise/t2, true
		}
	}
	return 0, 0, false
}

// gaussianEpsilons returns gaussianEpsilon of every sensitivity of l2s,
// on GOMAXPROCS goroutines: in increasing order of the sensitivities,
// each started from the epsilon of the previous one (the epsilon
// increases with the sensitivity), so that Newton's method takes a step
// or two. Each result is perturb.AnalyticGaussianEpsilon's bits, whatever
// the order or the scheduling. Zero sensitivities have epsilon 0.
func gaussianEpsilons(sigma, delta float64, l2s []float64) ([]float64, error) {
	order := make([]int, len(l2s))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(l2s[i], l2s[j]) })
	out := make([]float64, len(l2s))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(l2s)/256))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			lo, hi := w*len(order)/workers, (w+1)*len(order)/workers
			prev := 0.0
			for _, i := range order[lo:hi] {
				if l2s[i] == 0 {
					continue
				}
				e, err := gaussianEpsilon(sigma, delta, l2s[i], prev)
				if err != nil {
					errs[w] = err
					return
				}
				out[i], prev = e, e
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
