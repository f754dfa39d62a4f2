package pdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

// TestReview2GaussianEpsilonExtremes sweeps gaussianEpsilon against
// perturb.AnalyticGaussianEpsilon bit for bit far outside the ranges of
// TestGaussianEpsilonBits: sigmas from 1e-300 to 1e300, sensitivities
// from subnormal to 1e6 noise scales, deltas from the smallest subnormal
// to 1 - 2^-53, and the starts gaussianEpsilons uses (the previous row's
// result, which may be a few ulps above this one's, or far below).
func TestReview2GaussianEpsilonExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 2))
	deltas := []float64{5e-324, 1e-310, 1e-300, 1e-100, 1e-30, 1e-16, 1e-12, 1e-5, 0.3, 0.9, 1 - 0x1p-53}
	sigmas := []float64{5e-324, 1e-310, 1e-300, 1e-30, 1, 1e30, 1e300, math.MaxFloat64}
	fails := 0
	check := func(sigma, delta, l2, start float64) {
		want, werr := perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
		got, err := gaussianEpsilon(sigma, delta, l2, start)
		if (err != nil) != (werr != nil) || math.Float64bits(got) != math.Float64bits(want) {
			fails++
			if fails <= 20 {
				t.Errorf("sigma %v, delta %v, l2 %v, start %v: %v (%v), want %v (%v)", sigma, delta, l2, start, got, err, want, werr)
			}
		}
	}
	for i := range 40000 {
		var sigma float64
		if i%5 == 0 {
			sigma = sigmas[r.IntN(len(sigmas))]
		} else {
			sigma = math.Exp(r.NormFloat64() * 60)
		}
		var l2 float64
		switch i % 4 {
		case 0:
			l2 = sigma * math.Pow(10, -16+22*r.Float64())
		case 1:
			l2 = math.Float64frombits(1 + r.Uint64N(1<<52)) // subnormal
		default:
			l2 = sigma * math.Pow(10, -3+4*r.Float64())
		}
		if math.IsInf(l2, 0) || l2 == 0 {
			continue
		}
		delta := deltas[i%len(deltas)]
		if i%3 == 0 {
			delta = math.Pow(10, -320*r.Float64())
		}
		want, _ := perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
		check(sigma, delta, l2, 0)
		// gaussianEpsilons' starts: the previous (smaller or equal) l2's
		// result, which can be a few ulps above this one's bits.
		for _, s := range []float64{want, math.Nextafter(want, math.Inf(1)), want * (1 + 1e-13), want * 0.5, want * 1e-9} {
			if s >= 0 && s < 700 {
				check(sigma, delta, l2, s)
			}
		}
	}
	if fails > 0 {
		t.Errorf("%d mismatches", fails)
	}
}
