//go:build !amd64 || purego

package kernel

// Prefetch hints that row will be read soon; a no-op without the assembly
// kernels.
func Prefetch([]float64) {}

// PrefetchExample hints that a row, its norm and its label will be read
// soon; a no-op without the assembly kernels.
func PrefetchExample(*float64, int, *float64, *float64) {}
