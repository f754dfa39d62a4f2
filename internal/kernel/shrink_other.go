//go:build !amd64 || purego

package kernel

// ShrinkDot does what Shrink does and returns <w, next> for the updated w;
// see shrinkDotGeneric.
func ShrinkDot(w, dir []float64, a, c, thr float64, next []float64) float64 {
	return shrinkDotGeneric(w, dir, a, c, thr, next)
}
