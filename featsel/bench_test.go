package featsel

import (
	"math/rand/v2"
	"testing"
)

func benchmarkExpectedFlips(b *testing.B, kind noiseKind, k, d int) {
	rng := rand.New(rand.NewPCG(1, 1))
	w := make([]float64, k*d)
	for i := range w {
		if rng.IntN(4) == 0 {
			w[i] = rng.NormFloat64()
		}
	}
	noise := noiseSpec{Kind: kind, Scale: 0.1, Dim: k * d}.law()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ExpectedFlips(w, k, d, 0.5, noise); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExpectedFlipsLaplace1x1000(b *testing.B) { benchmarkExpectedFlips(b, Laplace, 1, 1000) }
func BenchmarkExpectedFlipsGaussian10x1000(b *testing.B) {
	benchmarkExpectedFlips(b, Gaussian, 10, 1000)
}
func BenchmarkExpectedFlipsGammaNorm1x1000(b *testing.B) {
	benchmarkExpectedFlips(b, GammaNorm, 1, 1000)
}
func BenchmarkExpectedFlipsGammaNorm10x1000(b *testing.B) {
	benchmarkExpectedFlips(b, GammaNorm, 10, 1000)
}

func BenchmarkDynamicThresholdGammaNorm(b *testing.B) {
	noise := noiseSpec{Kind: GammaNorm, Scale: 0.1, Dim: 10000}.law()
	for i := 0; i < b.N; i++ {
		if _, err := DynamicThreshold(1e-3).Resolve(noise, 1); err != nil {
			b.Fatal(err)
		}
	}
}
