package perturb

import (
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// benchmarkRelease calibrates the noise and adds it to a fresh vector of d
// weights per iteration.
func benchmarkRelease(b *testing.B, mech dp.Mechanism, delta float64, src func() Source, d int) {
	sens := Sensitivity{L2: 0.01}
	b.ReportAllocs()
	for b.Loop() {
		w := make([]float64, d)
		cal, err := Calibrate(mech, 1, delta, sens, d)
		if err != nil {
			b.Fatal(err)
		}
		if err := Add(w, cal, src()); err != nil {
			b.Fatal(err)
		}
	}
}

func secure() Source { return Secure() }
func seeded() Source { return Seeded(1) }

func BenchmarkReleaseLaplaceSecure_D100(b *testing.B) {
	benchmarkRelease(b, Laplace, 0, secure, 100)
}
func BenchmarkReleaseLaplaceSecure_D10000(b *testing.B) {
	benchmarkRelease(b, Laplace, 0, secure, 10000)
}
func BenchmarkReleaseGammaSecure_D100(b *testing.B) {
	benchmarkRelease(b, Gamma, 0, secure, 100)
}
func BenchmarkReleaseGammaSecure_D10000(b *testing.B) {
	benchmarkRelease(b, Gamma, 0, secure, 10000)
}
func BenchmarkReleaseAnalyticGaussianSecure_D100(b *testing.B) {
	benchmarkRelease(b, AnalyticGaussian, 1e-5, secure, 100)
}
func BenchmarkReleaseAnalyticGaussianSecure_D10000(b *testing.B) {
	benchmarkRelease(b, AnalyticGaussian, 1e-5, secure, 10000)
}
func BenchmarkReleaseAnalyticGaussianSeeded_D10000(b *testing.B) {
	benchmarkRelease(b, AnalyticGaussian, 1e-5, seeded, 10000)
}

func BenchmarkAnalyticGaussianSigma(b *testing.B) {
	for b.Loop() {
		if _, err := AnalyticGaussianSigma(0.7, 1e-6, 1); err != nil {
			b.Fatal(err)
		}
	}
}
