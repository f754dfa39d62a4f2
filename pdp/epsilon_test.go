package pdp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

// TestGaussianEpsilonBits checks that gaussianEpsilon returns the bits of
// perturb.AnalyticGaussianEpsilon, over sensitivities from 1e-8 to 30
// noise scales and deltas from 1e-12 to 0.5, including the ones where the
// mechanism is (0, delta)-DP and the root is large.
func TestGaussianEpsilonBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 30))
	deltas := []float64{1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.1, 0.5}
	for i := range 30000 {
		sigma := math.Exp(r.NormFloat64() * 3)
		l2 := sigma * math.Pow(10, -8+9.5*r.Float64())
		delta := deltas[i%len(deltas)]
		want, werr := perturb.AnalyticGaussianEpsilon(sigma, delta, l2)
		got, err := gaussianEpsilon(sigma, delta, l2, 0)
		if (err != nil) != (werr != nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("sigma %v, delta %v, l2 %v: %v (%v), want %v (%v)", sigma, delta, l2, got, err, want, werr)
		}
	}
	for _, bad := range [][3]float64{{1, 1e-6, -1}, {1, 0, 1}, {0, 1e-6, 1}, {1, 1e-6, math.NaN()}, {1, 1e-6, math.Inf(1)}} {
		want, werr := perturb.AnalyticGaussianEpsilon(bad[0], bad[1], bad[2])
		got, err := gaussianEpsilon(bad[0], bad[1], bad[2], 0)
		if (err != nil) != (werr != nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%v: %v (%v), want %v (%v)", bad, got, err, want, werr)
		}
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
