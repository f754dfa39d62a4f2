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

func TestLaplaceGoodnessOfFit(t *testing.T) {
	const l1, eps = 2.0, 0.5
	b := l1 / eps
	for _, tc := range []struct {
		name string
		src  Source
		n    int
	}{
		{"seeded", Seeded(1), 50000},
		{"secure", Secure(), 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := zeros(tc.n)
			if err := tc.src.AddLaplace(x, l1, eps); err != nil {
				t.Fatal(err)
			}
			crit := ksCritical(tc.n, ksAlpha)
			if d := ksStatistic(x, distuv.Laplace{Scale: b}.CDF); d > crit {
				t.Errorf("KS D = %v > critical %v for Laplace(%v)", d, crit, b)
			}
			// Negative control: the same samples against a scale off by 10%
			// must be rejected (power check: the CDFs differ by up to ~0.017,
			// well above the critical value ~0.010 at n = 50000).
			if tc.name == "seeded" {
				if d := ksStatistic(x, distuv.Laplace{Scale: 1.1 * b}.CDF); d <= crit {
					t.Errorf("KS D = %v <= critical %v against a 10%% wrong scale: the test has no power", d, crit)
				}
			}
		})
	}
}

func TestGaussianGoodnessOfFit(t *testing.T) {
	const sigma = 3.7
	for _, tc := range []struct {
		name string
		src  Source
		n    int
	}{
		{"seeded", Seeded(2), 50000},
		{"secure", Secure(), 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := zeros(tc.n)
			if err := tc.src.AddGaussian(x, sigma); err != nil {
				t.Fatal(err)
			}
			crit := ksCritical(tc.n, ksAlpha)
			if d := ksStatistic(x, distuv.Normal{Sigma: sigma}.CDF); d > crit {
				t.Errorf("KS D = %v > critical %v for N(0, %v^2)", d, crit, sigma)
			}
			if tc.name == "seeded" {
				if d := ksStatistic(x, distuv.Normal{Sigma: 1.1 * sigma}.CDF); d <= crit {
					t.Errorf("KS D = %v <= critical %v against a 10%% wrong sigma: the test has no power", d, crit)
				}
			}
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

func TestGammaNormGoodnessOfFit(t *testing.T) {
	const d, theta = 5, 0.8
	for _, tc := range []struct {
		name string
		src  Source
		n    int
	}{
		{"seeded", Seeded(3), 30000},
		{"secure", Secure(), 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			norms, first, proj := gammaNoise(t, tc.src, tc.n, d, theta)
			crit := ksCritical(tc.n, ksAlpha)
			// ||b|| ~ Gamma(d, theta); gonum's Beta field is the rate 1/theta.
			if D := ksStatistic(norms, distuv.Gamma{Alpha: d, Beta: 1 / theta}.CDF); D > crit {
				t.Errorf("norm: KS D = %v > critical %v for Gamma(%d, %v)", D, crit, d, theta)
			}
			// For u uniform on the sphere of R^d, u_1^2 and <u, v/||v||>^2
			// are Beta(1/2, (d-1)/2).
			beta := distuv.Beta{Alpha: 0.5, Beta: float64(d-1) / 2}
			if D := ksStatistic(first, beta.CDF); D > crit {
				t.Errorf("direction, first coordinate: KS D = %v > critical %v", D, crit)
			}
			if D := ksStatistic(proj, beta.CDF); D > crit {
				t.Errorf("direction, projection: KS D = %v > critical %v", D, crit)
			}
			if tc.name == "seeded" {
				if D := ksStatistic(norms, distuv.Gamma{Alpha: d, Beta: 1 / (1.1 * theta)}.CDF); D <= crit {
					t.Errorf("norm: KS D = %v <= critical %v against a 10%% wrong scale: no power", D, crit)
				}
				wrong := distuv.Beta{Alpha: 0.5, Beta: float64(d) / 2}
				if D := ksStatistic(first, wrong.CDF); D <= crit {
					t.Errorf("direction: KS D = %v <= critical %v against the law in dimension d+1: no power", D, crit)
				}
			}
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
	if d, crit := ksStatistic(x, distuv.Gamma{Alpha: shape, Beta: 1 / scale}.CDF), ksCritical(n, ksAlpha); d > crit {
		t.Errorf("KS D = %v > critical %v", d, crit)
	}
	if v := SampleGamma(src, -1, 1); !math.IsNaN(v) {
		t.Errorf("SampleGamma(shape -1) = %v, want NaN", v)
	}
}
