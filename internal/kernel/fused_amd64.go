//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// hasFusedKernels selects the assembly kernels of FusedDots and
// FusedAddRows: the processor has AVX and FMA and the operating system
// saves the YMM registers.
var hasFusedKernels = cpu.X86.HasAVX && cpu.X86.HasFMA

// fusedDots4FMA does FusedDots for groups of four rows (groups > 0, n >=
// 4): the partial sums of each row in the lanes of one register, the
// remaining elements fused into lane 0, then the lanes added as Ddot does.
//
//go:noescape
func fusedDots4FMA(z, w *float64, n int, x *float64, stride, groups int)

// fusedAddRowsFMA does FusedAddRows for n > 0 elements of acc and rows > 0
// rows.
//
//go:noescape
func fusedAddRowsFMA(acc *float64, n int, c *float64, rows int, x *float64, stride int)

// setFusedKernels selects the assembly kernels (on) or the Go loops and
// returns the previous choice.
func setFusedKernels(on bool) bool {
	old := hasFusedKernels
	hasFusedKernels = on && cpu.X86.HasAVX && cpu.X86.HasFMA
	return old
}
