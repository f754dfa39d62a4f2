//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// hasLogisticKernel selects logisticParts4: the processor has AVX, AVX2
// and FMA. math.Exp runs its fused multiply-add path, whose operations the
// kernel repeats four lanes at a time, where AVX and FMA are on; both
// flags follow GODEBUG's cpu.avx=off and cpu.fma=off as the runtime's do.
var hasLogisticKernel = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// logisticParts4 does LogisticParts for groups > 0 groups of four rows.
//
//go:noescape
func logisticParts4(z, y, plus, e, d1, d2 *float64, groups int)

// setLogisticKernel selects the assembly kernel (on) or none and returns
// the previous choice.
func setLogisticKernel(on bool) bool {
	old := hasLogisticKernel
	hasLogisticKernel = on && cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	return old
}

// SetLogisticKernel is setLogisticKernel for the tests of other packages.
func SetLogisticKernel(on bool) bool { return setLogisticKernel(on) }
