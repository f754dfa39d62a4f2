package kernel

import "math"

// The Go twins of the assembly kernels: each does the work of one assembly
// function, or of a wrapper where no assembly runs, with the same
// operations in the same order, so that every wrapper gives the same bits
// with the assembly and without it. They run on other architectures, with
// the purego tag and on amd64 processors without the features a kernel
// needs (stubs_amd64.go), and the tests hold the assembly to them.

// shrinkDot4Generic is ShrinkDot's loop over groups of four elements
// (len(dir) a multiple of 4) and returns the partial sums: the twin of
// shrinkDot4AVX and shrinkDot4SSE2. The loop body works on subslices of
// exactly four elements, so that it has no bounds checks, and -thr is
// computed once (softThreshold2).
func shrinkDot4Generic(w, dir []float64, a, c, thr float64, next []float64) [4]float64 {
	nthr := -thr
	var s0, s1, s2, s3 float64
	for j := 0; j+4 <= len(dir); j += 4 {
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
	return [4]float64{s0, s1, s2, s3}
}

// seqDots4Generic adds w[j]*x_r[j] to s[r] for j = m, m+1, ..., len(w)-1
// in order: SeqDots4's loop, the twin of seqDots4AVX (m = 0) and its tail.
func seqDots4Generic(s *[4]float64, w, x0, x1, x2, x3 []float64, m int) {
	for j := m; j < len(w); j++ {
		v := w[j]
		s[0] += float64(v * x0[j])
		s[1] += float64(v * x1[j])
		s[2] += float64(v * x2[j])
		s[3] += float64(v * x3[j])
	}
}

// seqSquares4Generic adds x_r[j]^2 to s[r] for j = m, m+1, ..., len(x0)-1
// in order: SeqSquares4's loop, the twin of seqSquares4AVX and its tail.
func seqSquares4Generic(s *[4]float64, x0, x1, x2, x3 []float64, m int) {
	for j := m; j < len(x0); j++ {
		v0, v1, v2, v3 := x0[j], x1[j], x2[j], x3[j]
		s[0] += float64(v0 * v0)
		s[1] += float64(v1 * v1)
		s[2] += float64(v2 * v2)
		s[3] += float64(v3 * v3)
	}
}

// addSquares returns v plus the squares of x, added in order: the loop of
// one row of SquaredNorms.
func addSquares(v float64, x []float64) float64 {
	for _, e := range x {
		v += float64(e * e)
	}
	return v
}

// ddots4Generic writes the four partial sums of gonum's DotUnitary of each
// row over len(w) elements (a multiple of 4) into p[4r:4r+4]: the twin of
// ddots4AVX.
func ddots4Generic(p *[16]float64, w, x0, x1, x2, x3 []float64) {
	for r, x := range [4][]float64{x0, x1, x2, x3} {
		q := p[4*r : 4*r+4 : 4*r+4]
		for j := 0; j+4 <= len(w); j += 4 {
			ww, xx := w[j:j+4:j+4], x[j:j+4:j+4]
			q[0] += float64(ww[0] * xx[0])
			q[1] += float64(ww[1] * xx[1])
			q[2] += float64(ww[2] * xx[2])
			q[3] += float64(ww[3] * xx[3])
		}
	}
}

// addRows4Generic does AddRows4's loop for the elements j = m, m+1, ...,
// len(acc)-1: the twin of addRows4AVX (m = 0) and its tail.
func addRows4Generic(acc []float64, c [4]float64, x0, x1, x2, x3 []float64, m int) {
	for j := m; j < len(acc); j++ {
		a := acc[j]
		a += float64(c[0] * x0[j])
		a += float64(c[1] * x1[j])
		a += float64(c[2] * x2[j])
		a += float64(c[3] * x3[j])
		acc[j] = a
	}
}

// batchDot is the loop of DotsAt on one row, the order of gonum's
// DotUnitary: the twin of dotsAt4AVX for one row. len(x) >= len(w).
func batchDot(w, x []float64) float64 {
	n := len(w)
	x = prefix(x, n)
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= n; j += 4 {
		ww, xx := w[j:j+4:j+4], x[j:j+4:j+4]
		s0 += float64(ww[0] * xx[0])
		s1 += float64(ww[1] * xx[1])
		s2 += float64(ww[2] * xx[2])
		s3 += float64(ww[3] * xx[3])
	}
	for ; j < n; j++ {
		s0 += float64(w[j] * x[j])
	}
	return (s0 + s2) + (s1 + s3)
}

// batchAxpy is the loop of AddRowsAt on one row: the twin of addRowsAt8AVX
// for one row. len(x) >= len(acc).
func batchAxpy(acc []float64, c float64, x []float64) {
	x = prefix(x, len(acc))
	for j, v := range x {
		acc[j] += float64(c * v)
	}
}

// fusedDot is FusedDots for one row: the twin of fusedDots4FMA for one
// row.
func fusedDot(w, x []float64) float64 {
	x = prefix(x, len(w))
	var p [4]float64
	m := len(w) &^ 3
	for j := 0; j < m; j += 4 {
		ww, xx := w[j:j+4:j+4], x[j:j+4:j+4]
		p[0] = math.FMA(ww[0], xx[0], p[0])
		p[1] = math.FMA(ww[1], xx[1], p[1])
		p[2] = math.FMA(ww[2], xx[2], p[2])
		p[3] = math.FMA(ww[3], xx[3], p[3])
	}
	for j := m; j < len(w); j++ {
		p[0] = math.FMA(w[j], x[j], p[0])
	}
	return (p[0] + p[2]) + (p[1] + p[3])
}

// fusedAddRowsGeneric is FusedAddRows's loop: the twin of
// fusedAddRowsFMA.
func fusedAddRowsGeneric(acc, c, x []float64, stride int) {
	n := len(acc)
	for r, cr := range c {
		xr := x[r*stride : r*stride+n]
		for j, v := range xr {
			acc[j] = math.FMA(cr, v, acc[j])
		}
	}
}

// gramTileGeneric is GramTile's loop: the twin of gramTileFMA.
func gramTileGeneric(t *[32]float64, s []float64, ss int, x []float64, xs, rows int) {
	for r := range rows {
		gramRow(t, [4]float64(s[r*ss:r*ss+4]), x[r*xs:r*xs+8:r*xs+8])
	}
}

// gramTileScaledGeneric is GramTileScaled's loop over len(h) rows: the
// twin of gramTileScaledFMA.
func gramTileScaledGeneric(t *[32]float64, h, s []float64, ss int, x []float64, xs int) {
	for r, hr := range h {
		sr := [4]float64(s[r*ss : r*ss+4])
		for a, sa := range sr {
			sr[a] = float64(hr * sa)
		}
		gramRow(t, sr, x[r*xs:r*xs+8:r*xs+8])
	}
}

// gramRow adds s[a]*x[b] to t[8a+b], each product fused into its sum, for
// the eight elements of x.
func gramRow(t *[32]float64, s [4]float64, x []float64) {
	for a, sa := range s {
		ta := t[8*a : 8*a+8 : 8*a+8]
		for b, xb := range x {
			ta[b] = math.FMA(sa, xb, ta[b])
		}
	}
}

// logisticRow is LogisticParts for one row: the twin of logisticParts4 for
// one lane.
func logisticRow(z, y float64) (plus, e, d1, d2 float64) {
	ny := -y
	m := ny * z
	e = math.Exp(-math.Abs(m))
	q := 1 + e
	inv, frac := 1/q, e/q
	s := inv
	if z < 0 {
		s = frac
	}
	d2 = s * (1 - s)
	if m >= 0 {
		return m, e, ny * inv, d2
	}
	return 0, e, ny * frac, d2
}
