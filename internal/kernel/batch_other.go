//go:build !amd64 || purego

package kernel

// hasBatchKernels is false without the assembly kernels: DotsAt and
// AddRowsAt run their Go loops.
const hasBatchKernels = false

func setBatchKernels(bool) bool { return false }

func dotsAt4AVX(z, w, x *float64, stride, m, n int, idx, ahead *int, na int) {
	panic("unreachable")
}

func addRowsAt8AVX(acc, x *float64, stride, m, n int, idx *int, c *float64) {
	panic("unreachable")
}

func hintAt(v *float64, idx *int, n int) { panic("unreachable") }
