//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// ShrinkDot does what Shrink does and returns <w, next> for the updated w;
// see shrinkDotGeneric, whose results it gives bit for bit. On amd64 an
// assembly kernel does the elements in groups of four (shrinkDot4AVX, or
// shrinkDot4SSE2 without AVX), two or four per instruction, thresholding
// with MAXPD and MINPD instead of branches, and this function the rest.
func ShrinkDot(w, dir []float64, a, c, thr float64, next []float64) float64 {
	n := len(dir)
	w, next = prefix(w, n), prefix(next, n)
	var s [4]float64
	m := n &^ 3
	if m > 0 {
		if hasAVX {
			shrinkDot4AVX(&w[0], &dir[0], &next[0], m, a, c, thr, &s)
		} else {
			shrinkDot4SSE2(&w[0], &dir[0], &next[0], m, a, c, thr, &s)
		}
	}
	nthr := -thr
	for j := m; j < n; j++ {
		u := softThreshold2(float64(a*w[j])-float64(c*dir[j]), thr, nthr)
		w[j] = u
		s[0] += float64(u * next[j])
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

// hasAVX selects shrinkDot4AVX: the processor has AVX and the operating
// system saves the YMM registers.
var hasAVX = cpu.X86.HasAVX

//go:noescape
func shrinkDot4SSE2(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64)

//go:noescape
func shrinkDot4AVX(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64)
