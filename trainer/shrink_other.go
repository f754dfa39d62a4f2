//go:build !amd64

package trainer

// shrinkDot does what shrink does and returns <w, next> for the updated w;
// see shrinkDotGeneric.
func shrinkDot(w, dir []float64, a, c, thr float64, next []float64) float64 {
	return shrinkDotGeneric(w, dir, a, c, thr, next)
}
