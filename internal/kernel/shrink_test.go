package kernel

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// TestShrinkDot checks ShrinkDot's and ShrinkDdot's weights and margins bit
// for bit against Shrink followed by the dot product summed as their docs
// state (and, on amd64, ShrinkDdot's against gonum's Ddot), on
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
			w2, w3 := append([]float64(nil), w...), append([]float64(nil), w...)
			a, c := 0.999, 0.1*r.NormFloat64()
			got := ShrinkDot(w, dir, a, c, thr, next)
			gotD := ShrinkDdot(w3, dir, a, c, thr, next)
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
			if want := (s[0] + s[2]) + (s[1] + s[3]); !sameBits(gotD, want) {
				t.Fatalf("n=%d thr=%v: ShrinkDdot's margin %v, want %v", n, thr, gotD, want)
			}
			// On amd64 gonum's Ddot is its assembly, whatever the build tags
			// of this package, and ShrinkDdot gives its bits.
			if ddot := (gonumblas.Implementation{}).Ddot(n, w2, 1, next, 1); runtime.GOARCH == "amd64" && !sameBits(gotD, ddot) {
				t.Fatalf("n=%d thr=%v: ShrinkDdot's margin %v, gonum's Ddot %v", n, thr, gotD, ddot)
			}
			for j := range w {
				if !sameBits(w[j], w2[j]) || !sameBits(w3[j], w2[j]) {
					t.Fatalf("n=%d thr=%v: w[%d] = %v (ShrinkDdot: %v), want %v", n, thr, j, w[j], w3[j], w2[j])
				}
			}
		}
	}
}
