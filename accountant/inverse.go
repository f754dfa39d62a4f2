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
