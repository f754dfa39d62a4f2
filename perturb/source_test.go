package perturb

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// ksAlpha is the level of every goodness-of-fit test below: by the DKW
// inequality each rejects a correct sampler with probability at most 1e-4.
// With the seeded source the tests are deterministic; the negative controls
// show that they would reject a scale off by 10%.
const ksAlpha = 1e-4

func zeros(n int) []float64 { return make([]float64, n) }

// checkFit fails t unless the samples x pass a Kolmogorov-Smirnov test at
// level ksAlpha against cdf. With a non-nil wrong (a law off by a little), it
// also fails t if the samples pass against it: the test must have the power
// to tell the two apart.
func checkFit(t *testing.T, what string, x []float64, cdf, wrong func(float64) float64) {
	t.Helper()
	checkFitAt(t, what, x, cdf, wrong, ksAlpha)
}

// checkFitAt is checkFit at level alpha: a test that makes k checks of
// fresh (secure) samples gives each ksAlpha/k, so that together they reject
// a correct sampler with probability at most ksAlpha.
func checkFitAt(t *testing.T, what string, x []float64, cdf, wrong func(float64) float64, alpha float64) {
	t.Helper()
	crit := ksCritical(len(x), alpha)
	if d := ksStatistic(x, cdf); d > crit {
		t.Errorf("%s: KS D = %v > critical %v", what, d, crit)
	}
	if wrong != nil {
		if d := ksStatistic(x, wrong); d <= crit {
			t.Errorf("%s: KS D = %v <= critical %v against a wrong law: the test has no power", what, d, crit)
		}
	}
}

// TestNoiseGoodnessOfFit checks the per-coordinate Laplace and Gaussian
// samples of both sources against their laws. On the seeded samples a law
// with a scale off by 10% must be rejected (for Laplace at n = 50000 the
// CDFs differ by up to ~0.017, well above the critical value ~0.010). The
// two secure samples are fresh: each is tested at level ksAlpha/2, so the
// test rejects correct samplers with probability at most ksAlpha = 1e-4.
func TestNoiseGoodnessOfFit(t *testing.T) {
	const l1, eps, sigma = 2.0, 0.5, 3.7
	b := l1 / eps
	laplace := func(src Source, x []float64) error { return src.AddLaplace(x, l1, eps) }
	gaussian := func(src Source, x []float64) error { return src.AddGaussian(x, sigma) }
	for _, tc := range []struct {
		name       string
		src        Source
		n          int
		draw       func(Source, []float64) error
		law, wrong func(float64) float64
		alpha      float64
	}{
		{"laplace/seeded", Seeded(1), 50000, laplace, distuv.Laplace{Scale: b}.CDF, distuv.Laplace{Scale: 1.1 * b}.CDF, ksAlpha},
		{"laplace/secure", Secure(), 20000, laplace, distuv.Laplace{Scale: b}.CDF, nil, ksAlpha / 2},
		{"gaussian/seeded", Seeded(2), 50000, gaussian, distuv.Normal{Sigma: sigma}.CDF, distuv.Normal{Sigma: 1.1 * sigma}.CDF, ksAlpha},
		{"gaussian/secure", Secure(), 20000, gaussian, distuv.Normal{Sigma: sigma}.CDF, nil, ksAlpha / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := zeros(tc.n)
			if err := tc.draw(tc.src, x); err != nil {
				t.Fatal(err)
			}
			checkFitAt(t, tc.name, x, tc.law, tc.wrong, tc.alpha)
		})
	}
}

func TestSecureGaussianSigmaMapping(t *testing.T) {
	for _, sigma := range []float64{1e-6, 0.01, 1, 3.7, 1234.5, 1e8} {
		_, used, err := googleLInf(sigma)
		if err != nil {
			t.Fatal(err)
		}
		if used < sigma || used > sigma*(1+1e-9) {
			t.Errorf("sigma %v: the secure sampler uses %v, want in [sigma, sigma(1+1e-9)]", sigma, used)
		}
	}
}

// gammaNoise draws n noise vectors of the gamma mechanism in dimension d.
func gammaNoise(t *testing.T, src Source, n, d int, theta float64) (norms, first, proj []float64) {
	t.Helper()
	v := make([]float64, d)
	for i := range v {
		v[i] = float64(i + 1)
	}
	var vn float64
	for _, x := range v {
		vn += x * x
	}
	vn = math.Sqrt(vn)
	cal := Calibration{Mechanism: Gamma, Epsilon: 1, Dim: d, L2: theta, L1: theta, Scale: theta}
	for i := 0; i < n; i++ {
		w := zeros(d)
		if err := addNoise(w, cal, src); err != nil {
			t.Fatal(err)
		}
		var sq, dot float64
		for j, x := range w {
			sq += x * x
			dot += x * v[j]
		}
		r := math.Sqrt(sq)
		norms = append(norms, r)
		first = append(first, w[0]*w[0]/sq)
		p := dot / (r * vn)
		proj = append(proj, p*p)
	}
	return norms, first, proj
}

// TestGammaNormGoodnessOfFit checks the norm and the direction of the
// gamma mechanism's noise vectors of both sources against their laws, with
// negative controls on the seeded samples. The secure samples are fresh:
// each of their three checks is at level ksAlpha/3, so the test rejects a
// correct sampler with probability at most ksAlpha = 1e-4.
func TestGammaNormGoodnessOfFit(t *testing.T) {
	const d, theta = 5, 0.8
	for _, tc := range []struct {
		name  string
		src   Source
		n     int
		alpha float64
	}{
		{"seeded", Seeded(3), 30000, ksAlpha},
		{"secure", Secure(), 10000, ksAlpha / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			norms, first, proj := gammaNoise(t, tc.src, tc.n, d, theta)
			// ||b|| ~ Gamma(d, theta); gonum's Beta field is the rate 1/theta.
			// For u uniform on the sphere of R^d, u_1^2 and <u, v/||v||>^2
			// are Beta(1/2, (d-1)/2). Negative controls on the seeded
			// samples: a scale off by 10%, and the law in dimension d+1.
			var wrongNorm, wrongDir func(float64) float64
			if tc.name == "seeded" {
				wrongNorm = distuv.Gamma{Alpha: d, Beta: 1 / (1.1 * theta)}.CDF
				wrongDir = distuv.Beta{Alpha: 0.5, Beta: float64(d) / 2}.CDF
			}
			beta := distuv.Beta{Alpha: 0.5, Beta: float64(d-1) / 2}
			checkFitAt(t, "norm", norms, distuv.Gamma{Alpha: d, Beta: 1 / theta}.CDF, wrongNorm, tc.alpha)
			checkFitAt(t, "direction, first coordinate", first, beta.CDF, wrongDir, tc.alpha)
			checkFitAt(t, "direction, projection", proj, beta.CDF, nil, tc.alpha)
		})
	}
}

func TestSampleGammaSmallShape(t *testing.T) {
	// Shape < 1 uses the boost; KS at level 1e-4 (DKW), deterministic seed.
	const n, shape, scale = 20000, 0.4, 2.0
	src := Seeded(4)
	x := make([]float64, n)
	for i := range x {
		x[i] = SampleGamma(src, shape, scale)
	}
	checkFit(t, "Gamma(0.4, 2)", x, distuv.Gamma{Alpha: shape, Beta: 1 / scale}.CDF, nil)
	if v := SampleGamma(src, -1, 1); !math.IsNaN(v) {
		t.Errorf("SampleGamma(shape -1) = %v, want NaN", v)
	}
}

// claimsSecure is a caller's source whose Kind says it is the secure one.
type claimsSecure struct{ Source }

func (claimsSecure) Kind() string { return SourceSecure }

// TestSourceName: certificates name this package's sources by their type,
// and any other source as custom, whatever its Kind says (a caller's source
// cannot make a release private by naming itself secure).
func TestSourceName(t *testing.T) {
	for _, c := range []struct {
		src  Source
		want string
	}{
		{Secure(), SourceSecure},
		{Seeded(1), SourceSeeded},
		{claimsSecure{Seeded(1)}, "custom: " + SourceSecure},
	} {
		if got := SourceName(c.src); got != c.want {
			t.Errorf("SourceName(%T) = %q, want %q", c.src, got, c.want)
		}
	}
}
