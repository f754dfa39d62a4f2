package pdp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

// TestGaussianEpsilonBits checks that gaussianEpsilon returns the bits of
// perturb.AnalyticGaussianEpsilon (and its error or none), in two seeded
// sweeps: sensitivities from 1e-8 to 30 noise scales and deltas from
// 1e-12 to 0.5, including the ones where the mechanism is (0, delta)-DP
// and the root is large; and far outside that, sigmas from the smallest
// subnormal to MaxFloat64, sensitivities from subnormal to 1e6 noise
// scales, deltas from the smallest subnormal to 1 - 2^-53, each from the
// starts gaussianEpsilons uses (0, the previous row's result, which may
// be a few ulps above this one's, or far below it).
func TestGaussianEpsilonBits(t *testing.T) {
	fails := 0
	check := func(sigma, delta, l2, start float64) {
		t.Helper()
		want, werr := perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
		got, err := gaussianEpsilon(sigma, delta, l2, start)
		if (err != nil) != (werr != nil) || math.Float64bits(got) != math.Float64bits(want) {
			if fails++; fails <= 10 {
				t.Errorf("sigma %v, delta %v, l2 %v, start %v: %v (%v), want %v (%v)", sigma, delta, l2, start, got, err, want, werr)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 30))
	deltas := []float64{1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.1, 0.5}
	for i := range 30000 {
		sigma := math.Exp(r.NormFloat64() * 3)
		check(sigma, deltas[i%len(deltas)], sigma*math.Pow(10, -8+9.5*r.Float64()), 0)
	}
	r = rand.New(rand.NewPCG(20, 2))
	deltas = []float64{5e-324, 1e-310, 1e-300, 1e-100, 1e-30, 1e-16, 1e-12, 1e-5, 0.3, 0.9, 1 - 0x1p-53}
	sigmas := []float64{5e-324, 1e-310, 1e-300, 1e-30, 1, 1e30, 1e300, math.MaxFloat64}
	for i := range 12000 {
		sigma := math.Exp(r.NormFloat64() * 60)
		if i%5 == 0 {
			sigma = sigmas[r.IntN(len(sigmas))]
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
		for _, s := range []float64{0, want, math.Nextafter(want, math.Inf(1)), want * (1 + 1e-13), want * 0.5, want * 1e-9} {
			if s >= 0 && s < 700 {
				check(sigma, delta, l2, s)
			}
		}
	}
	for _, bad := range [][3]float64{{1, 1e-6, -1}, {1, 0, 1}, {0, 1e-6, 1}, {1, 1e-6, math.NaN()}, {1, 1e-6, math.Inf(1)}} {
		check(bad[0], bad[1], bad[2], 0)
	}
	if fails > 0 {
		t.Errorf("%d mismatches", fails)
	}
}

// TestGaussianEpsilonsBits checks that the batched epsilons, whose
// searches start from the previous value, are Epsilon's bits (hence
// perturb.AnalyticGaussianEpsilon's), zero sensitivities included, and
// that a bad one is an error.
func TestGaussianEpsilonsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 50))
	m := PrivacyLoss{Kind: perturb.AnalyticGaussian, Scale: 0.3, Delta: 1e-6}
	diffs := make([]Diff, 5000)
	for i := range diffs {
		diffs[i].L2 = 0.3 * math.Pow(10, -7+7*r.Float64())
		if i%100 == 0 {
			diffs[i].L2 = 0
		}
		if i%7 == 0 && i > 0 {
			diffs[i].L2 = diffs[i-1].L2 // ties
		}
	}
	got, err := m.Epsilons(diffs)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range diffs {
		want, err := m.Epsilon(d)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got[i]) != math.Float64bits(want) {
			t.Fatalf("row %d (l2 %v): %v, want %v", i, d.L2, got[i], want)
		}
	}
	diffs[17].L2 = math.NaN()
	if _, err := m.Epsilons(diffs); !errors.Is(err, ErrInput) {
		t.Errorf("NaN sensitivity: %v, want ErrInput", err)
	}
}
