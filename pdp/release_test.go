package pdp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

func TestCompareCertified(t *testing.T) {
	ids := []int{4, 9, 2, 7}
	diffs := []Diff{{L2: 0.1}, {L2: 0.5}, {L2: 0.5}, {L2: 0}}
	eps := []float64{0.2, 1, 1, 0}
	c, err := CompareCertified(ids, diffs, eps, 1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	// Strictly below: 0.2 and 0; the worst of the two ties is the smaller id.
	if c.Below != 2 || c.ShareBelow != 0.5 || c.Worst.ID != 2 || c.Worst.Epsilon != 1 || c.WorstRatio != 1 || c.Delta != 1e-6 {
		t.Errorf("%+v", c)
	}
	for _, bad := range []struct {
		eps  []float64
		cert float64
	}{{eps[:3], 1}, {eps, 0}, {eps, math.Inf(1)}, {[]float64{0, math.NaN(), 0, 0}, 1}} {
		if _, err := CompareCertified(ids, diffs, bad.eps, bad.cert, 0); !errors.Is(err, ErrInput) {
			t.Errorf("eps %v, certified %v: %v, want ErrInput", bad.eps, bad.cert, err)
		}
	}
}

// TestNoiseRMSNorm checks sqrt(E||b||^2) against the sample mean of ||b||^2
// of 20000 draws of each mechanism's noise. The tolerance, 5% of the mean
// square, is at least 7 standard errors of the sample mean in dimension 5
// for each mechanism, so a correct formula fails with probability below
// 1e-11 (normal approximation of the mean).
func TestNoiseRMSNorm(t *testing.T) {
	const dim, draws = 5, 20000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []perturb.Mechanism{perturb.AnalyticGaussian, perturb.Laplace, perturb.Gamma} {
		m := PrivacyLoss{Kind: kind, Scale: 0.7}
		var ms float64
		for range draws {
			var sq float64
			switch kind {
			case perturb.Laplace:
				for range dim {
					v := rng.ExpFloat64() * m.Scale
					sq += v * v
				}
			case perturb.Gamma:
				var r float64 // Gamma(dim, theta) as a sum of exponentials
				for range dim {
					r += rng.ExpFloat64() * m.Scale
				}
				sq = r * r
			default:
				for range dim {
					v := rng.NormFloat64() * m.Scale
					sq += v * v
				}
			}
			ms += sq / draws
		}
		want := m.NoiseRMSNorm(dim)
		if math.Abs(ms-want*want) > 0.05*want*want {
			t.Errorf("%s: mean square norm %g, formula %g", kind, ms, want*want)
		}
	}
}
