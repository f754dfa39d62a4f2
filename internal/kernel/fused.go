package kernel

// The kernels of this file run over blocks of rows of a matrix stored row
// by row (row r of x is x[r*stride:], the first len(w) or len(acc)
// elements), with every product fused into its sum as math.FMA does, so
// that the results are the same on every build (see GramTile), NaN
// payloads apart.

// FusedDots sets z[r] to the dot product of w with row r of x for r <
// len(z): four partial sums p_k of the products w[j]*x_r[j] with j mod 4
// = k over the first len(w) &^ 3 elements, each fused into its sum in
// the order of j and starting from 0; the remaining elements fused into
// p_0 in order; and z[r] = (p_0 + p_2) + (p_1 + p_3), the order of
// gonum's Ddot. x needs (len(z)-1)*stride + len(w) elements.
func FusedDots(z, w, x []float64, stride int) {
	if len(z) == 0 {
		return
	}
	n := len(w)
	x = prefix(x, rowsEnd(len(z), stride, n))
	r := 0
	if hasFusedKernels && n >= 4 && len(z) >= 4 {
		r = len(z) &^ 3
		fusedDots4FMA(&z[0], &w[0], n, &x[0], stride, r/4)
	}
	for ; r < len(z); r++ {
		z[r] = fusedDot(w, x[r*stride:r*stride+n])
	}
}

// FusedAddRows adds c[r] times row r of x to acc for r = 0, 1, ...,
// len(c)-1 in order, each product fused into the sum:
//
//	acc[j] = math.FMA(c[r], x[r*stride+j], acc[j])
//
// x needs (len(c)-1)*stride + len(acc) elements.
func FusedAddRows(acc, c, x []float64, stride int) {
	if len(c) == 0 {
		return
	}
	n := len(acc)
	x = prefix(x, rowsEnd(len(c), stride, n))
	if hasFusedKernels && n > 0 {
		fusedAddRowsFMA(&acc[0], n, &c[0], len(c), &x[0], stride)
		return
	}
	fusedAddRowsGeneric(acc, c, x, stride)
}
