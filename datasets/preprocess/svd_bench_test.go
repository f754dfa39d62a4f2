package preprocess

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// BenchmarkFitTruncatedSVD100kx100 fits k = 32 components (10 oversamples,
// 5 power iterations: scikit-learn's TruncatedSVD defaults) of 100,000 x 100
// Gaussian rows.
func BenchmarkFitTruncatedSVD100kx100(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(100_000, 100, nil)
	raw := X.RawMatrix().Data
	for i := range raw {
		raw[i] = r.NormFloat64()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := FitTruncatedSVD(X, 32, 10, 5, 1); err != nil {
			b.Fatal(err)
		}
	}
}
