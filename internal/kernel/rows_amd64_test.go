//go:build amd64 && !purego

package kernel

// setRowKernels selects the assembly kernels (on) or the Go loops and
// returns the previous choice.
func setRowKernels(on bool) bool {
	old := hasRowKernels
	hasRowKernels = on && hasAVX
	return old
}
