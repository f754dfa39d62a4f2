package accountant

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
)

// ErrUnreachable is wrapped by the error of NoiseMultiplier when no noise
// multiplier in its range reaches the target budget.
var ErrUnreachable = errors.New("accountant: target budget unreachable")

// The range NoiseMultiplier searches, and its relative tolerance.
const (
	minNoise      = 1e-3
	maxNoise      = 1e6
	noiseRelWidth = 1e-9
)

// NoiseMultiplier returns the smallest noise multiplier sigma (to a
// relative 1e-9, rounded up) in [1e-3, 1e6] with which Steps steps at the
// sample rate q meet the target budget (eps, delta) by the conversion c
// over orders (nil for DefaultOrders), with its Guarantee (whose Epsilon is
// at most target.Epsilon). It searches by bisection on log(sigma), the eps
// of a sampled Gaussian decreasing with sigma at every order (its RDP does,
// Mironov, Talwar & Zhang 2019, Section 3), as TF Privacy's
// compute_noise_from_budget_lib does. A target met at sigma = 1e-3 gives 1e-3.
//
// It returns an error wrapping ErrInvalid when q is not in (0, 1] (at q = 0
// any noise meets any target), steps < 1, or target is not an eps > 0 and a
// delta in (0, 1); one wrapping ErrUnreachable when sigma = 1e6 does not
// meet the target (with the classical conversion eps cannot go below
// log(1/delta) / (alpha_max - 1)).
func NoiseMultiplier(q float64, steps int, target dp.Budget, c Conversion, orders []float64) (float64, Guarantee, error) {
	if !(q > 0 && q <= 1) {
		return 0, Guarantee{}, fmt.Errorf("%w: sample rate q = %v, want 0 < q <= 1 to calibrate noise", ErrInvalid, q)
	}
	if err := target.Validate(); err != nil || target.Pure() {
		return 0, Guarantee{}, fmt.Errorf("%w: target eps = %v, delta = %v, want eps > 0 and 0 < delta < 1", ErrInvalid, target.Epsilon, target.Delta)
	}
	if orders == nil {
		orders = DefaultOrders()
	}
	at := func(sigma float64) (Guarantee, error) {
		g, err := SampledGaussian{SampleRate: q, NoiseMultiplier: sigma, Steps: steps}.Epsilon(target.Delta, c, orders)
		if errors.Is(err, ErrNoBound) {
			return Guarantee{Epsilon: math.Inf(1)}, nil
		}
		return g, err
	}
	hiG, err := at(maxNoise)
	if err != nil {
		return 0, Guarantee{}, err
	}
	if hiG.Epsilon > target.Epsilon {
		hint := "raise eps or delta"
		if c == Classical {
			hint += ", or use the improved conversion"
		}
		return 0, Guarantee{}, fmt.Errorf("%w: %d steps at q = %v reach eps = %.4g at best (sigma = %g), above %v: %s",
			ErrUnreachable, steps, q, hiG.Epsilon, float64(maxNoise), target.Epsilon, hint)
	}
	if g, err := at(minNoise); err != nil {
		return 0, Guarantee{}, err
	} else if g.Epsilon <= target.Epsilon {
		return minNoise, g, nil
	}
	lo, hi := float64(minNoise), float64(maxNoise) // eps(lo) > target >= eps(hi)
	for hi/lo-1 > noiseRelWidth {
		mid := math.Sqrt(lo * hi)
		g, err := at(mid)
		if err != nil {
			return 0, Guarantee{}, err
		}
		if g.Epsilon <= target.Epsilon {
			hi, hiG = mid, g
		} else {
			lo = mid
		}
	}
	return hi, hiG, nil
}

// pldNoiseRelWidth is NoiseMultiplierPLD's relative tolerance on sigma.
const pldNoiseRelWidth = 1e-7

// NoiseMultiplierPLD returns the smallest noise multiplier sigma (to a
// relative 1e-7, rounded up) in [1e-3, 1e6] with which steps steps at the
// sample rate q meet the target budget (eps, delta) by the pessimistic PLD
// accountant p, with its guarantee (whose Epsilon is at most
// target.Epsilon). The PLD's eps falls as sigma grows (the hockey-stick
// divergences of a step fall with the noise at every e^eps, so the
// composed ones do): the search brackets sigma from the RDP accountant's
// noise multiplier (NoiseMultiplier, improved conversion), which the PLD
// bound meets in the usual regimes, by steps of 1.25, then closes the
// bracket by regula falsi on log(sigma) with the Illinois modification
// (a bisection step when it stalls). A sigma at which the PLD has no bound
// (ErrWindow, ErrNoBound) counts as not meeting the target.
//
// Errors are NoiseMultiplier's, and ErrInvalid for an optimistic p (a
// lower bound calibrates no noise).
func NoiseMultiplierPLD(q float64, steps int, target dp.Budget, p PLD) (float64, PLDGuarantee, error) {
	if !(q > 0 && q <= 1) {
		return 0, PLDGuarantee{}, fmt.Errorf("%w: sample rate q = %v, want 0 < q <= 1 to calibrate noise", ErrInvalid, q)
	}
	if err := target.Validate(); err != nil || target.Pure() {
		return 0, PLDGuarantee{}, fmt.Errorf("%w: target eps = %v, delta = %v, want eps > 0 and 0 < delta < 1", ErrInvalid, target.Epsilon, target.Delta)
	}
	if steps < 1 {
		return 0, PLDGuarantee{}, fmt.Errorf("%w: %d steps, want at least 1", ErrInvalid, steps)
	}
	p, err := p.withDefaults()
	if err != nil {
		return 0, PLDGuarantee{}, err
	}
	if p.Discretization != Pessimistic {
		return 0, PLDGuarantee{}, fmt.Errorf("%w: the %v PLD is a lower bound: calibrate with the pessimistic one", ErrInvalid, p.Discretization)
	}
	at := func(sigma float64) (PLDGuarantee, bool, error) {
		g, err := p.Epsilon(SampledGaussian{SampleRate: q, NoiseMultiplier: sigma, Steps: steps}, target.Delta)
		switch {
		case errors.Is(err, ErrWindow) || errors.Is(err, ErrNoBound):
			return PLDGuarantee{}, false, nil
		case err != nil:
			return PLDGuarantee{}, false, err
		}
		return g, g.Epsilon <= target.Epsilon, nil
	}
	start := float64(maxNoise)
	if s, _, err := NoiseMultiplier(q, steps, target, Improved, nil); err == nil {
		start = s
	}
	const step = 1.25
	hi := start
	hiG, ok, err := at(hi)
	for ; err == nil && !ok; hiG, ok, err = at(hi) {
		if hi >= maxNoise {
			return 0, PLDGuarantee{}, fmt.Errorf("%w: %d steps at q = %v do not reach eps = %v at delta = %v by PLD even at sigma = %g: raise eps or delta",
				ErrUnreachable, steps, q, target.Epsilon, target.Delta, float64(maxNoise))
		}
		hi = min(hi*step, maxNoise)
	}
	if err != nil {
		return 0, PLDGuarantee{}, err
	}
	lo := hi / step
	for {
		if lo <= minNoise {
			lo = minNoise
			g, ok, err := at(lo)
			if err != nil {
				return 0, PLDGuarantee{}, err
			}
			if ok {
				return lo, g, nil
			}
			break
		}
		g, ok, err := at(lo)
		if err != nil {
			return 0, PLDGuarantee{}, err
		}
		if !ok {
			break
		}
		hi, hiG, lo = lo, g, lo/step
	}
	// Regula falsi on f(x) = eps(e^x) - target, f(a) > 0 >= f(b); f(a) is
	// +Inf where the PLD has no bound, and the step is then a bisection.
	a, b := math.Log(lo), math.Log(hi)
	loG, _, err := at(lo)
	if err != nil {
		return 0, PLDGuarantee{}, err
	}
	fa, fb := math.Inf(1), hiG.Epsilon-target.Epsilon
	if loG.Epsilon > 0 {
		fa = loG.Epsilon - target.Epsilon
	}
	side := 0
	for math.Exp(b-a)-1 > pldNoiseRelWidth {
		w := b - a
		x := a + w/2
		if !math.IsInf(fa, 1) && side > -3 && side < 3 {
			x = (a*fb - b*fa) / (fb - fa)
		}
		// Keep the probe inside, so that the bracket closes from both ends.
		x = min(max(x, a+w*pldNoiseRelWidth/4), b-w*pldNoiseRelWidth/4)
		sigma := math.Exp(x)
		g, ok, err := at(sigma)
		if err != nil {
			return 0, PLDGuarantee{}, err
		}
		if ok {
			b, fb, hi, hiG = x, g.Epsilon-target.Epsilon, sigma, g
			if side < 0 {
				fa /= 2 // Illinois: the end kept twice has its value halved
			}
			side = min(side, 0) - 1
		} else {
			a = x
			fa = math.Inf(1)
			if g.Epsilon > 0 {
				fa = g.Epsilon - target.Epsilon
			}
			if side > 0 {
				fb /= 2
			}
			side = max(side, 0) + 1
		}
	}
	return hi, hiG, nil
}
