package kernel

// Shrink sets w = prox_{thr*||.||_1}(a*w - c*dir), the gradient move with the
// decay a = 1 - eta*mu followed by soft thresholding at thr = eta*lambda*alpha,
// in one loop. len(w) >= len(dir); the first len(dir) weights are updated.
func Shrink(w, dir []float64, a, c, thr float64) {
	w = w[:len(dir)]
	for j, v := range dir {
		w[j] = SoftThreshold(float64(a*w[j])-float64(c*v), thr)
	}
}

// shrinkDotGeneric does what Shrink does and returns <w, next> for the
// updated w, in the same loop: the next step's margin costs no second read
// of w. len(w) >= len(dir), len(next) >= len(dir). Four partial sums keep the
// additions from forming one long chain of dependent operations. The loop
// body works on subslices of exactly four elements, so that it has no bounds
// checks, and -thr is computed once (softThreshold2). ShrinkDot runs it, or
// an assembly kernel with the same results.
func shrinkDotGeneric(w, dir []float64, a, c, thr float64, next []float64) float64 {
	n := len(dir)
	w, next = prefix(w, n), prefix(next, n)
	nthr := -thr
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		ww, dd, xx := w[j:j+4:j+4], dir[j:j+4:j+4], next[j:j+4:j+4]
		u0 := softThreshold2(float64(a*ww[0])-float64(c*dd[0]), thr, nthr)
		u1 := softThreshold2(float64(a*ww[1])-float64(c*dd[1]), thr, nthr)
		u2 := softThreshold2(float64(a*ww[2])-float64(c*dd[2]), thr, nthr)
		u3 := softThreshold2(float64(a*ww[3])-float64(c*dd[3]), thr, nthr)
		ww[0], ww[1], ww[2], ww[3] = u0, u1, u2, u3
		s0 += float64(u0 * xx[0])
		s1 += float64(u1 * xx[1])
		s2 += float64(u2 * xx[2])
		s3 += float64(u3 * xx[3])
	}
	for ; j < n; j++ {
		u := softThreshold2(float64(a*w[j])-float64(c*dir[j]), thr, nthr)
		w[j] = u
		s0 += float64(u * next[j])
	}
	return (s0 + s1) + (s2 + s3)
}

// SoftThreshold returns sign(u) max(|u| - thr, 0) for thr >= 0, and keeps a
// NaN visible as regularizers.SoftThreshold does.
func SoftThreshold(u, thr float64) float64 { return softThreshold2(u, thr, -thr) }

// softThreshold2 is SoftThreshold with nthr = -thr given, for loops that
// compute it once.
func softThreshold2(u, thr, nthr float64) float64 {
	switch {
	case u > thr:
		return u - thr
	case u < nthr:
		return u - nthr
	case u <= thr && u >= nthr:
		return 0
	}
	return u
}
