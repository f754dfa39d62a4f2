//go:build amd64 && !purego

package kernel

// hasRowKernels selects the AVX kernels of the four-row functions.
var hasRowKernels = hasAVX

// seqDots4AVX does the first n (a multiple of 4) elements of SeqDots4:
// the products of four columns of the four rows are transposed so that each
// lane of one register holds one row's sum, which adds them in column order.
//
//go:noescape
func seqDots4AVX(w, x0, x1, x2, x3 *float64, n int, s *[4]float64)

// seqSquares4AVX is seqDots4AVX with each row as its own w.
//
//go:noescape
func seqSquares4AVX(x0, x1, x2, x3 *float64, n int, s *[4]float64)

// seqSquares8AVX is seqSquares4AVX for eight rows stride elements apart
// from x, in two independent chains.
//
//go:noescape
func seqSquares8AVX(x *float64, stride, n int, s *[8]float64)

// ddots4AVX writes the four partial sums of gonum's DotUnitary of each row
// over n elements (a multiple of 4) into p[4r:4r+4].
//
//go:noescape
func ddots4AVX(w, x0, x1, x2, x3 *float64, n int, p *[16]float64)

// addRows4AVX does the first n (a multiple of 4) elements of AddRows4.
//
//go:noescape
func addRows4AVX(acc, x0, x1, x2, x3 *float64, n int, c *[4]float64)
