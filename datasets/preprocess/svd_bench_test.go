package preprocess

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// svdBenchData returns n x d Gaussian rows (PCG(1, 2)).
func svdBenchData(n, d int) *mat.Dense {
	r := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(n, d, nil)
	raw := X.RawMatrix().Data
	for i := range raw {
		raw[i] = r.NormFloat64()
	}
	return X
}

// BenchmarkFitTruncatedSVD100kx100 fits k = 32 components (10 oversamples,
// 5 power iterations: scikit-learn's TruncatedSVD defaults) of 100,000 x 100
// Gaussian rows. FitTruncatedSVD takes the exact method (the Gram matrix).
func BenchmarkFitTruncatedSVD100kx100(b *testing.B) {
	X := svdBenchData(100_000, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := FitTruncatedSVD(X, 32, 10, 5, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitRandomizedSVD100kx100 is the randomized method on the same
// data and settings: what FitTruncatedSVD runs when d is large or the top k
// is numerically rank-deficient.
func BenchmarkFitRandomizedSVD100kx100(b *testing.B) {
	X := svdBenchData(100_000, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := fitRandomized(asSVDOperator(X), 32, 10, 5, 1); err != nil {
			b.Fatal(err)
		}
	}
}
