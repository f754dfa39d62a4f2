package kernel

// The kernels of this file work on the rows of a minibatch where they lie:
// row q is x[idx[q]*stride:][:n], the row of example idx[q] of a row-major
// matrix x with stride elements per row. They read the rows in place,
// without gathering them, and give the bits of the one-row loops stated
// per kernel, so that a caller may switch between them and those loops
// without changing a result. An index whose row does not lie inside x
// makes them panic.

// DotsAt sets z[q] = <w, x_q> for every q < len(z), where x_q is the row of
// example idx[q] (len(w) elements), with the bits of gonum's native BLAS
// Ddot (unit strides) on each row, written out as batchDot: four partial
// sums s_k of the products w[j]*x_q[j] with j mod 4 = k over the first
// len(w) &^ 3 elements, the remaining ones added to s_0 in order, and the
// result (s_0 + s_2) + (s_1 + s_3). The margins of rows that lie far apart
// in memory do not wait on each other: the kernel takes four rows at a time.
//
// While it reads row q, DotsAt also hints the row of example ahead[q] (len(w)
// elements at the same stride) to the cache, so that a caller hints the rows
// it will read next, spread over the work, for q < min(len(ahead), len(z)).
// The assembly hints to the L2 cache (PREFETCHT1; docs/DESIGN.md, section
// 13), the Go loop with Prefetch. The hints change no state.
// len(idx) >= len(z).
func DotsAt(z, w, x []float64, stride int, idx, ahead []int) {
	m, n := len(z), len(w)
	idx = prefix(idx, m)
	ahead = prefix(ahead, min(len(ahead), m))
	checkRowsAt(x, stride, n, idx)
	checkRowsAt(x, stride, n, ahead)
	q := 0
	if hasBatchKernels && m >= 4 && n > 0 {
		q = m &^ 3
		var ap *int
		if len(ahead) > 0 {
			ap = &ahead[0]
		}
		dotsAt4AVX(&z[0], &w[0], &x[0], stride, q, n, &idx[0], ap, min(len(ahead), q))
	}
	for ; q < m; q++ {
		if q < len(ahead) {
			Prefetch(prefix(x[ahead[q]*stride:], n))
		}
		z[q] = batchDot(w, prefix(x[idx[q]*stride:], n))
	}
}

// AddRowsAt sets acc[j] += c[q]*x_q[j] for q = 0, 1, ..., len(c)-1 in
// this order, for every j < len(acc), where x_q is the row of example idx[q]
// (len(acc) elements): the bits of one loop per row,
//
//	for j, v := range x_q { acc[j] += c[q] * v }
//
// in the order of the rows. The assembly kernel adds eight rows to each
// four elements of acc at a time, which keeps acc in registers across them.
// len(idx) >= len(c).
func AddRowsAt(acc, c, x []float64, stride int, idx []int) {
	m, n := len(c), len(acc)
	idx = prefix(idx, m)
	checkRowsAt(x, stride, n, idx)
	q := 0
	if hasBatchKernels && m >= 8 && n > 0 {
		q = m &^ 7
		addRowsAt8AVX(&acc[0], &x[0], stride, q, n, &idx[0], &c[0])
	}
	for ; q < m; q++ {
		batchAxpy(acc, c[q], prefix(x[idx[q]*stride:], n))
	}
}

// HintAt hints the elements v[i] for every i in idx to the cache: the norms
// or labels of the examples a caller will read next, which lie as far
// apart in memory as their rows. Hints change no state and never fault, for
// any index; they are dropped without the assembly kernels.
func HintAt(v []float64, idx []int) {
	if hasBatchKernels && len(v) > 0 && len(idx) > 0 {
		hintAt(&v[0], &idx[0], len(idx))
	}
}

// HintIntsAt is HintAt for the elements of an []int: the entries of a
// permutation that a shuffle will swap next, which lie anywhere in it.
func HintIntsAt(v, idx []int) {
	if hasBatchKernels && len(v) > 0 && len(idx) > 0 {
		hintIntsAt(&v[0], &idx[0], len(idx))
	}
}
