package perturb

import "testing"

// benchmarkAddGaussian adds the noise of src at sigma = 3.7 to a vector of d
// weights per iteration and reports the cost per coordinate.
func benchmarkAddGaussian(b *testing.B, src Source, d int) {
	w := make([]float64, d)
	b.ReportAllocs()
	for b.Loop() {
		if err := src.AddGaussian(w, 3.7); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d), "ns/coord")
}

func BenchmarkSecureAddGaussian_D33(b *testing.B)   { benchmarkAddGaussian(b, Secure(), 33) }
func BenchmarkSecureAddGaussian_D1000(b *testing.B) { benchmarkAddGaussian(b, Secure(), 1000) }
func BenchmarkSeededAddGaussian_D33(b *testing.B)   { benchmarkAddGaussian(b, Seeded(1), 33) }
