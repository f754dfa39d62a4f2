package kernel

// GramTile adds to the 4 x 8 tile t (t[8a+b] is its entry (a, b)) the
// products s[r*ss+a] * x[r*xs+b] of rows r = 0, 1, ..., rows-1, in that
// order, each by one fused multiply-add:
//
//	t[8a+b] = math.FMA(s[r*ss+a], x[r*xs+b], t[8a+b])
//
// With s the rows of a matrix S from column j on and x those of X from
// column m on, it is the block (j..j+3, m..m+7) of S^T X, the kernel of a
// Gram matrix. A fused multiply-add rounds once and math.FMA gives its
// bits on every processor, so the result does not depend on the build (NaN
// payloads apart). If rows > 0, s needs at least (rows-1)*ss+4 elements
// and x (rows-1)*xs+8, and the strides may not be negative.
func GramTile(t *[32]float64, s []float64, ss int, x []float64, xs, rows int) {
	if rows <= 0 {
		return
	}
	s, x = prefix(s, rowsEnd(rows, ss, 4)), prefix(x, rowsEnd(rows, xs, 8))
	if hasGramKernel {
		gramTileFMA(t, &s[0], ss, &x[0], xs, rows)
		return
	}
	gramTileGeneric(t, s, ss, x, xs, rows)
}

// GramTileScaled is GramTile with row r of s scaled by h[r]: it adds
// math.FMA(float64(h[r]*s[r*ss+a]), x[r*xs+b], t[8a+b]) over the rows in
// order, the product h[r]*s[r*ss+a] rounded, the kernel of a weighted Gram
// matrix X^T diag(h) X. h needs at least rows elements.
func GramTileScaled(t *[32]float64, h, s []float64, ss int, x []float64, xs, rows int) {
	if rows <= 0 {
		return
	}
	h, s, x = prefix(h, rows), prefix(s, rowsEnd(rows, ss, 4)), prefix(x, rowsEnd(rows, xs, 8))
	if hasGramKernel {
		gramTileScaledFMA(t, &h[0], &s[0], ss, &x[0], xs, rows)
		return
	}
	gramTileScaledGeneric(t, h, s, ss, x, xs)
}
