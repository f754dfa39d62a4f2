//go:build amd64 && !purego

package kernel

// hasBatchKernels selects the AVX kernels of DotsAt and AddRowsAt.
var hasBatchKernels = hasAVX

// setBatchKernels selects the assembly kernels of this file (on) or the Go
// loops and returns the previous choice.
func setBatchKernels(on bool) bool {
	old := hasBatchKernels
	hasBatchKernels = on && hasAVX
	return old
}

// dotsAt4AVX does the first m (a multiple of 4) rows of DotsAt, with rows of
// n >= 1 elements, hinting the rows ahead[q] for q < na.
//
//go:noescape
func dotsAt4AVX(z, w, x *float64, stride, m, n int, idx, ahead *int, na int)

// addRowsAt8AVX does the first m (a multiple of 8) rows of AddRowsAt, with
// rows of n >= 1 elements.
//
//go:noescape
func addRowsAt8AVX(acc, x *float64, stride, m, n int, idx *int, c *float64)

// hintAt issues PREFETCHT0 for v[idx[q]], q < n.
//
//go:noescape
func hintAt(v *float64, idx *int, n int)
