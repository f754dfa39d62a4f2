package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestShrinkDotMatchesGeneric checks that ShrinkDot (an assembly kernel on
// amd64) gives shrinkDotGeneric's weights and margin bit for bit, on every
// length up to 70, with thresholds that zero some weights, no threshold,
// and NaN weights.
func TestShrinkDotMatchesGeneric(t *testing.T) { checkShrinkDot(t) }

func checkShrinkDot(t *testing.T) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		for _, thr := range []float64{0, 1e-3, 0.3} {
			w, dir, next := make([]float64, n), make([]float64, n), make([]float64, n)
			for j := range w {
				w[j], dir[j], next[j] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
				if j%7 == 3 {
					w[j] = 0
				}
				if j%11 == 5 && thr == 0.3 {
					w[j] = math.NaN()
				}
			}
			w2 := append([]float64(nil), w...)
			a, c := 0.999, 0.1*r.NormFloat64()
			got := ShrinkDot(w, dir, a, c, thr, next)
			want := shrinkDotGeneric(w2, dir, a, c, thr, next)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("n=%d thr=%v: margin %v, want %v", n, thr, got, want)
			}
			for j := range w {
				if w[j] != w2[j] && !(math.IsNaN(w[j]) && math.IsNaN(w2[j])) {
					t.Fatalf("n=%d thr=%v: w[%d] = %v, want %v", n, thr, j, w[j], w2[j])
				}
			}
		}
	}
}
