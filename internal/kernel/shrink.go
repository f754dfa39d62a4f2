package kernel

// Shrink sets w = prox_{thr*||.||_1}(a*w - c*dir), the gradient move with the
// decay a = 1 - eta*mu followed by soft thresholding at thr = eta*lambda*alpha,
// in one loop. len(w) >= len(dir); the first len(dir) weights are updated.
func Shrink(w, dir []float64, a, c, thr float64) {
	w = prefix(w, len(dir))
	for j, v := range dir {
		w[j] = SoftThreshold(float64(a*w[j])-float64(c*v), thr)
	}
}

// ShrinkDot does what Shrink does and returns <w, next> for the updated w,
// in the same loop: the next step's margin costs no second read of w.
// len(w) >= len(dir), len(next) >= len(dir). Four partial sums s_k, of
// the products of the elements j mod 4 = k of the first len(dir) &^ 3,
// keep the additions from forming one long chain of dependent operations;
// the remaining elements are added to s_0 in order, and the margin is
// (s_0 + s_1) + (s_2 + s_3).
func ShrinkDot(w, dir []float64, a, c, thr float64, next []float64) float64 {
	return shrinkDot(w, dir, a, c, thr, next, false)
}

// shrinkDot is ShrinkDot, and ShrinkDdot if ddot: one function, called
// once per step, so that the wrappers inline and a step makes no more calls
// than one.
func shrinkDot(w, dir []float64, a, c, thr float64, next []float64, ddot bool) float64 {
	n := len(dir)
	w, next = prefix(w, n), prefix(next, n)
	var s [4]float64
	m := n &^ 3
	if m > 0 {
		switch {
		case hasAVX:
			shrinkDot4AVX(&w[0], &dir[0], &next[0], m, a, c, thr, &s)
		case hasSSE2:
			shrinkDot4SSE2(&w[0], &dir[0], &next[0], m, a, c, thr, &s)
		default:
			s = shrinkDot4Generic(w[:m], dir[:m], a, c, thr, next[:m])
		}
	}
	nthr := -thr
	for j := m; j < n; j++ {
		u := softThreshold2(float64(a*w[j])-float64(c*dir[j]), thr, nthr)
		w[j] = u
		s[0] += float64(u * next[j])
	}
	if ddot {
		return (s[0] + s[2]) + (s[1] + s[3])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
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

// ShrinkDdot is ShrinkDot with the margin's partial sums added as gonum's
// Ddot adds them on amd64 (f64.DotUnitary: two registers of two lanes):
// (s_0 + s_2) + (s_1 + s_3). It gives the bits of Shrink followed by
// gonum's Ddot of the updated w and next.
func ShrinkDdot(w, dir []float64, a, c, thr float64, next []float64) float64 {
	return shrinkDot(w, dir, a, c, thr, next, true)
}
