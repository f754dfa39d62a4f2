package kernel

import "math"

// The kernels of this file run over blocks of rows of a matrix stored row
// by row (row r of x is x[r*stride:], the first len(w) or len(acc)
// elements), with every product fused into its sum as math.FMA does, so
// that the results are the same on every build (see GramTile), NaN
// payloads apart.

// prefix returns the first n elements of x, and panics if x has fewer:
// x[:n] alone would accept any n up to the capacity, and the assembly
// would read the elements past the length.
func prefix[T any](x []T, n int) []T { return x[:len(x):len(x)][:n] }

// rowsEnd returns (rows-1)*stride + width, the length of x that rows rows
// of width elements stride apart need (rows > 0). It panics if stride is
// negative or the length overflows, where the assembly would read outside
// x.
func rowsEnd(rows, stride, width int) int {
	if stride < 0 || width < 0 || (stride > 0 && rows-1 > (math.MaxInt-width)/stride) {
		panic("kernel: rows outside x")
	}
	return (rows-1)*stride + width
}

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

// fusedDot is FusedDots for one row.
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
	for r, cr := range c {
		xr := x[r*stride : r*stride+n]
		for j, v := range xr {
			acc[j] = math.FMA(cr, v, acc[j])
		}
	}
}
