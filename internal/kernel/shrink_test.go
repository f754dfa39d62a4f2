package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestShrinkDot checks ShrinkDot's weights and margin bit for bit against
// Shrink followed by the dot product summed as ShrinkDot's doc states, on
// every length up to 70, with thresholds that zero some weights, no
// threshold, and NaN weights: with the AVX kernel, the SSE2 kernel and the
// Go twin.
func TestShrinkDot(t *testing.T) {
	if hasSSE2 {
		t.Run("sse2", func(t *testing.T) {
			defer func(v bool) { hasAVX = v }(hasAVX)
			hasAVX = false
			checkShrinkDot(t)
		})
	}
	asmAndGo(t, hasSSE2, checkShrinkDot)
}

func checkShrinkDot(t *testing.T) {
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
			Shrink(w2, dir, a, c, thr)
			var s [4]float64
			for j, u := range w2 {
				k := j % 4
				if j >= n&^3 {
					k = 0
				}
				s[k] += float64(u * next[j])
			}
			if want := (s[0] + s[1]) + (s[2] + s[3]); !sameBits(got, want) {
				t.Fatalf("n=%d thr=%v: margin %v, want %v", n, thr, got, want)
			}
			for j := range w {
				if !sameBits(w[j], w2[j]) {
					t.Fatalf("n=%d thr=%v: w[%d] = %v, want %v", n, thr, j, w[j], w2[j])
				}
			}
		}
	}
}
