package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogisticPartsExp checks LogisticParts's exponential against math.Exp
// bit for bit, on margins spread over every scale up to the end of its
// range (objpert's TestLogisticPartsKernel checks every part against
// losses.Logistic's Parts1).
func TestLogisticPartsExp(t *testing.T) {
	if !hasLogisticKernel {
		t.Skip("no logistic kernel on this build or processor")
	}
	r := rand.New(rand.NewPCG(11, 12))
	const n = 1 << 16
	z, y := make([]float64, n), make([]float64, n)
	for i := range z {
		z[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-4))
		if i%8 == 0 {
			z[i] = (2*r.Float64() - 1) * LogisticFastRange
		}
		y[i] = float64(2*r.IntN(2) - 1)
	}
	z[0], z[1], z[2] = 0, math.Copysign(0, -1), 0x1p-1074
	z[3], z[4] = math.Nextafter(LogisticFastRange, 0), -math.Nextafter(LogisticFastRange, 0)
	plus, e, d1, d2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	if done := LogisticParts(z, y, plus, e, d1, d2); done != n {
		t.Fatalf("done = %d, want %d", done, n)
	}
	for i, zi := range z {
		if want := math.Exp(-math.Abs(-y[i] * zi)); !sameBits(e[i], want) {
			t.Fatalf("z = %v: e = %v, math.Exp %v", zi, e[i], want)
		}
	}
	if done := LogisticParts(z[:7], y, plus, e, d1, d2); done != 4 {
		t.Errorf("7 rows: done = %d, want 4", done)
	}
	defer useGo()()
	if done := LogisticParts(z, y, plus, e, d1, d2); done != 0 {
		t.Errorf("without the kernel: done = %d, want 0", done)
	}
}

// BenchmarkLogisticParts runs over a block of 64 rows.
func BenchmarkLogisticParts(b *testing.B) {
	const n = 64
	z, y := make([]float64, n), make([]float64, n)
	for i := range z {
		z[i], y[i] = float64(i%9)-4, float64(1-2*(i%2))
	}
	plus, e, d1, d2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for b.Loop() {
		LogisticParts(z, y, plus, e, d1, d2)
	}
}
