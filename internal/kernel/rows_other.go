//go:build !amd64 || purego

package kernel

// hasRowKernels is false without the assembly kernels: the four-row kernels
// run their Go loops.
const hasRowKernels = false

func seqDots4AVX(w, x0, x1, x2, x3 *float64, n int, s *[4]float64) { panic("unreachable") }
func seqSquares4AVX(x0, x1, x2, x3 *float64, n int, s *[4]float64) { panic("unreachable") }
func seqSquares8AVX(x *float64, stride, n int, s *[8]float64)      { panic("unreachable") }
func ddots4AVX(w, x0, x1, x2, x3 *float64, n int, p *[16]float64)  { panic("unreachable") }
func addRows4AVX(acc, x0, x1, x2, x3 *float64, n int, c *[4]float64) {
	panic("unreachable")
}
