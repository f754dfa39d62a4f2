package losses

import (
	"math/rand/v2"
	"testing"
)

// benchGrad measures Grad of loss l with k margins on 1024 seeded points.
func benchGrad(b *testing.B, l Loss, k int) {
	r := rand.New(rand.NewPCG(7, 7))
	const n = 1024
	z := make([]float64, n*k)
	y := make([]float64, n)
	for i := range z {
		z[i] = 3 * r.NormFloat64()
	}
	for i := range y {
		switch l.Task() {
		case Binary:
			y[i] = binaryLabel(r)
		case Multiclass:
			y[i] = float64(r.IntN(k))
		default:
			y[i] = realLabel(r)
		}
	}
	dst := make([]float64, k)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % n
		l.Grad(dst, z[j*k:(j+1)*k], y[j])
	}
}

func BenchmarkGradLogistic(b *testing.B)   { benchGrad(b, Logistic{}, 1) }
func BenchmarkGradHuberHinge(b *testing.B) { benchGrad(b, HuberHinge{H: 0.5}, 1) }
func BenchmarkGradHuber(b *testing.B)      { benchGrad(b, Huber{Delta: 1}, 1) }
func BenchmarkGradSquared(b *testing.B)    { benchGrad(b, Squared{}, 1) }
func BenchmarkGradSoftmax3(b *testing.B)   { benchGrad(b, Softmax{}, 3) }
func BenchmarkGradSoftmax10(b *testing.B)  { benchGrad(b, Softmax{}, 10) }
func BenchmarkGradSoftmax100(b *testing.B) { benchGrad(b, Softmax{}, 100) }
