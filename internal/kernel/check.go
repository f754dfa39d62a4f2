package kernel

import "math"

// The checks of the wrappers, which the assembly kernels rely on: they
// read and write only inside the slices they are given.

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

// checkRowsAt panics unless the row of n elements of every index in idx lies
// inside x, at the given stride (>= 0).
func checkRowsAt(x []float64, stride, n int, idx []int) {
	if len(idx) == 0 {
		return
	}
	last := len(x) - n // the last start of a row of n elements
	if stride < 0 || last < 0 {
		panic("kernel: rows outside x")
	}
	maxRow := math.MaxInt // stride 0: every row starts at 0
	if stride > 0 {
		maxRow = last / stride
	}
	for _, i := range idx {
		if uint(i) > uint(maxRow) {
			panic("kernel: row index outside x")
		}
	}
}
