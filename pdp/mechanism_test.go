package pdp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestMechanismEpsilon checks the per-instance epsilon of each mechanism
// against its closed form, and the general covariance against the
// isotropic case.
func TestMechanismEpsilon(t *testing.T) {
	d := Diff{V: []float64{0.03, -0.04}, L2: 0.05, L1: 0.07}
	gauss, err := perturb.AnalyticGaussianEpsilon(0.1, 1e-5, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind         dp.Mechanism
		scale, delta float64
		want         float64
	}{
		{perturb.Laplace, 0.1, 0, 0.7},
		{perturb.Gamma, 0.1, 0, 0.5},
		{perturb.AnalyticGaussian, 0.1, 1e-5, gauss},
		{perturb.Gaussian, 0.1, 1e-5, gauss},
	}
	for _, tc := range cases {
		m, err := NewPrivacyLoss(tc.kind, tc.scale, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Epsilon(d)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: eps %v, want %v", tc.kind, got, tc.want)
		}
		if z, _ := m.Epsilon(Diff{V: []float64{0, 0}}); z != 0 {
			t.Errorf("%s: eps %v at a zero difference", tc.kind, z)
		}
	}
	for _, bad := range []struct {
		kind         dp.Mechanism
		scale, delta float64
	}{{perturb.Laplace, 0.1, 1e-5}, {perturb.AnalyticGaussian, 0.1, 0}, {perturb.Gamma, 0, 0}, {"cauchy", 1, 0}} {
		if _, err := NewPrivacyLoss(bad.kind, bad.scale, bad.delta); !errors.Is(err, ErrInput) {
			t.Errorf("%+v accepted", bad)
		}
	}
	// N(0, A^{-1}/gamma) with A = I, gamma = 1/sigma^2 is N(0, sigma^2 I).
	cov := GaussianCov{A: mat.NewSymDense(2, []float64{1, 0, 0, 1}), Gamma: 100, Delta: 1e-5}
	got, err := cov.Epsilon(d)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-gauss) > 1e-9 {
		t.Errorf("covariance Gaussian eps %v, isotropic %v", got, gauss)
	}
	// A stretched along V: the whitened distance doubles.
	cov.A = mat.NewSymDense(2, []float64{4, 0, 0, 4})
	na, _ := cov.NormA(d)
	if math.Abs(na-0.1) > 1e-15 {
		t.Errorf("Delta_A = %v, want 0.1", na)
	}
	rs, rm, err := WorstCaseSensitivity(1, 1, 1e-2, 100)
	if err != nil || rs != 2 || rm != 1 {
		t.Errorf("WorstCaseSensitivity = %v, %v, %v", rs, rm, err)
	}
}

// TestGaussianCovLemma4 checks GaussianCov.Epsilon against the exact
// privacy curve of two Gaussians (Balle & Wang 2018, Theorem 8: at the
// whitened distance m, delta(eps) = Phi(m/2 - eps/m) - e^eps Phi(-m/2 -
// eps/m)) and against Wang's Lemma 4: the corrected classical form
// sqrt(gamma) Delta_A sqrt(2 log(1.25/delta)) bounds it where it is at
// most 1, while the printed gamma Delta_A sqrt(log(1.25/delta)) falls below
// the exact epsilon (so claims too little loss) at gamma = 0.5.
func TestGaussianCovLemma4(t *testing.T) {
	const delta = 1e-5
	d := Diff{V: []float64{0.03, -0.04}, L2: 0.05}
	for _, tc := range []struct{ gamma, scale float64 }{{0.5, 1}, {100, 1}, {20, 4}} {
		a := mat.NewSymDense(2, []float64{tc.scale, 0, 0, tc.scale})
		cov := GaussianCov{A: a, Gamma: tc.gamma, Delta: delta}
		eps, err := cov.Epsilon(d)
		if err != nil {
			t.Fatal(err)
		}
		na, _ := cov.NormA(d)
		m := math.Sqrt(tc.gamma) * na
		curve := distuv.UnitNormal.CDF(m/2-eps/m) - math.Exp(eps)*distuv.UnitNormal.CDF(-m/2-eps/m)
		if math.Abs(curve-delta) > 1e-9 {
			t.Errorf("gamma %v: delta(eps %v) = %v on the exact curve, want %v", tc.gamma, eps, curve, delta)
		}
		classical := m * math.Sqrt(2*math.Log(1.25/delta))
		if classical <= 1 && eps > classical {
			t.Errorf("gamma %v: eps %v above the classical %v", tc.gamma, eps, classical)
		}
		printed := tc.gamma * na * math.Sqrt(math.Log(1.25/delta))
		if tc.gamma == 0.5 && !(printed < eps) {
			t.Errorf("gamma 0.5: the printed Lemma 4 gives %v, not below the exact %v: the case does not show the misprint", printed, eps)
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
	for _, kind := range []dp.Mechanism{perturb.AnalyticGaussian, perturb.Laplace, perturb.Gamma} {
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
