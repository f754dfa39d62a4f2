//go:build !amd64 || purego

package kernel

// hasLogisticKernel is false without the assembly kernels: LogisticParts
// computes no row.
const hasLogisticKernel = false

func logisticParts4(z, y, plus, e, d1, d2 *float64, groups int) { panic("unreachable") }

// SetLogisticKernel reports false: there is no kernel to select.
func SetLogisticKernel(bool) bool { return false }

func setLogisticKernel(bool) bool { return false }
