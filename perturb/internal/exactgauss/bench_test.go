package exactgauss

import (
	"math/rand/v2"
	"testing"
)

// benchmarkAddSnapped adds the noise at sigma = 3.7 to d weights drawn
// from N(0, 10^2) per iteration and reports the cost per coordinate.
func benchmarkAddSnapped(b *testing.B, d int) {
	s := New([32]byte{1})
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, d)
	for i := range w {
		w[i] = 10 * r.NormFloat64()
	}
	b.ReportAllocs()
	for b.Loop() {
		s.AddSnapped(w, 3.7)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d), "ns/coord")
}

func BenchmarkAddSnapped_D33(b *testing.B)   { benchmarkAddSnapped(b, 33) }
func BenchmarkAddSnapped_D1000(b *testing.B) { benchmarkAddSnapped(b, 1000) }

func BenchmarkTables(b *testing.B) {
	for b.Loop() {
		if _, err := buildTables(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNormFloat64_D1000 is the float64 sampler of the seeded source
// (math/rand/v2's NormFloat64 on PCG) at the same size, for comparison.
func BenchmarkNormFloat64_D1000(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, 1000)
	for b.Loop() {
		for i := range w {
			w[i] += 3.7 * r.NormFloat64()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/coord")
}
