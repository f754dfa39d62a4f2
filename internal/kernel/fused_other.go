//go:build !amd64 || purego

package kernel

// hasFusedKernels is false without the assembly kernels: FusedDots and
// FusedAddRows run their Go loops.
const hasFusedKernels = false

func fusedDots4FMA(z, w *float64, n int, x *float64, stride, groups int) { panic("unreachable") }

func fusedAddRowsFMA(acc *float64, n int, c *float64, rows int, x *float64, stride int) {
	panic("unreachable")
}

func setFusedKernels(bool) bool { return false }
