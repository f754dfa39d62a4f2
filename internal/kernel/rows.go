package kernel

// The kernels of this file work on four rows at once. Each gives, for every
// row, the bits of a loop over that row alone, in an order stated per
// kernel, so that a caller may switch between them and the one-row loops
// without changing a result. Four independent sums interleaved keep the
// processor busy where one sum would wait on each addition.

// SeqDots4 returns the four sums s_r = sum_j w[j]*x_r[j], each accumulated
// from 0 in the order j = 0, 1, ..., len(w)-1, as the loop
//
//	for j, v := range w { s += v * x[j] }
//
// does. Every x_r has at least len(w) elements.
func SeqDots4(w, x0, x1, x2, x3 []float64) [4]float64 {
	n := len(w)
	x0, x1, x2, x3 = prefix(x0, n), prefix(x1, n), prefix(x2, n), prefix(x3, n)
	var s [4]float64
	m := 0
	if hasRowKernels && n >= 4 {
		m = n &^ 3
		seqDots4AVX(&w[0], &x0[0], &x1[0], &x2[0], &x3[0], m, &s)
	}
	seqDots4Generic(&s, w, x0, x1, x2, x3, m)
	return s
}

// SeqSquares4 returns the four sums of squares s_r = sum_j x_r[j]^2, each
// accumulated from 0 in the order j = 0, 1, ..., as the loop
//
//	for _, v := range x { s += v * v }
//
// does. The rows have the same length.
func SeqSquares4(x0, x1, x2, x3 []float64) [4]float64 {
	n := len(x0)
	x1, x2, x3 = prefix(x1, n), prefix(x2, n), prefix(x3, n)
	var s [4]float64
	m := 0
	if hasRowKernels && n >= 4 {
		m = n &^ 3
		seqSquares4AVX(&x0[0], &x1[0], &x2[0], &x3[0], m, &s)
	}
	seqSquares4Generic(&s, x0, x1, x2, x3, m)
	return s
}

// SquaredNorms sets dst[r] to the sum of squares of row r of x (the d
// elements from x[r*d]) for r < len(dst), each accumulated from 0 in
// column order as SeqSquares4 does, eight rows at a time where the
// assembly kernel runs. x needs len(dst)*d elements; a negative d, or one
// whose rows' end overflows, panics.
func SquaredNorms(dst, x []float64, d int) {
	n := len(dst)
	if n == 0 {
		return
	}
	x = prefix(x, rowsEnd(n, d, d))
	r := 0
	if hasRowKernels && d >= 4 {
		m := d &^ 3
		var s [8]float64
		for ; r+8 <= n; r += 8 {
			seqSquares8AVX(&x[r*d], d, m, &s)
			for q := range 8 {
				dst[r+q] = addSquares(s[q], x[(r+q)*d+m:(r+q+1)*d])
			}
		}
	}
	for ; r+4 <= n; r += 4 {
		s := SeqSquares4(x[r*d:(r+1)*d], x[(r+1)*d:(r+2)*d], x[(r+2)*d:(r+3)*d], x[(r+3)*d:(r+4)*d])
		copy(dst[r:r+4], s[:])
	}
	for ; r < n; r++ {
		dst[r] = addSquares(0, x[r*d:(r+1)*d])
	}
}

// Ddots4 returns the four dot products <w, x_r> with the bits of gonum's
// native BLAS Ddot (unit strides) on each row: four partial sums s_k of the
// products w[j]*x_r[j] with j mod 4 = k over the first len(w) &^ 3
// elements, the remaining ones added to s_0 in order, and the result
// (s_0 + s_2) + (s_1 + s_3). Every x_r has at least len(w) elements.
func Ddots4(w, x0, x1, x2, x3 []float64) [4]float64 {
	n := len(w)
	x0, x1, x2, x3 = prefix(x0, n), prefix(x1, n), prefix(x2, n), prefix(x3, n)
	var p [16]float64 // p[4r+k] is s_k of row r
	m := n &^ 3
	if m > 0 {
		if hasRowKernels {
			ddots4AVX(&w[0], &x0[0], &x1[0], &x2[0], &x3[0], m, &p)
		} else {
			ddots4Generic(&p, prefix(w, m), x0, x1, x2, x3)
		}
	}
	var s [4]float64
	for r, x := range [4][]float64{x0, x1, x2, x3} {
		q := p[4*r : 4*r+4 : 4*r+4]
		for j := m; j < n; j++ {
			q[0] += float64(w[j] * x[j])
		}
		s[r] = (q[0] + q[2]) + (q[1] + q[3])
	}
	return s
}

// AddRows4 sets acc[j] += c[0]*x0[j], then += c[1]*x1[j], += c[2]*x2[j]
// and += c[3]*x3[j], for every j < len(acc): the bits of four calls of
//
//	for j, v := range x { acc[j] += c * v }
//
// in the order of the rows. Every x_r has at least len(acc) elements.
func AddRows4(acc []float64, c [4]float64, x0, x1, x2, x3 []float64) {
	n := len(acc)
	x0, x1, x2, x3 = prefix(x0, n), prefix(x1, n), prefix(x2, n), prefix(x3, n)
	m := 0
	if hasRowKernels && n >= 4 {
		m = n &^ 3
		addRows4AVX(&acc[0], &x0[0], &x1[0], &x2[0], &x3[0], m, &c)
	}
	addRows4Generic(acc, c, x0, x1, x2, x3, m)
}
