//go:build !amd64 || purego

package kernel

// Without the assembly kernels no kernel is selected and the wrappers run
// the Go twins (generic.go). The selections are variables, as on amd64, so
// that the tests set them the same way on every build.
var (
	hasAVX, hasSSE2   bool
	hasRowKernels     bool
	hasBatchKernels   bool
	hasFusedKernels   bool
	hasGramKernel     bool
	hasLogisticKernel bool
)

// hasPrefetch is false: the hints do nothing.
const hasPrefetch = false

// The assembly kernels' names, which the wrappers call only where one of
// the selections above is true.

func shrinkDot4SSE2(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64) {
	panic(unreachable)
}
func shrinkDot4AVX(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64) {
	panic(unreachable)
}
func prefetchRange(p *float64, n int)                              { panic(unreachable) }
func prefetchExample(x *float64, n int, norm, y *float64)          { panic(unreachable) }
func seqDots4AVX(w, x0, x1, x2, x3 *float64, n int, s *[4]float64) { panic(unreachable) }
func seqSquares4AVX(x0, x1, x2, x3 *float64, n int, s *[4]float64) { panic(unreachable) }
func seqSquares8AVX(x *float64, stride, n int, s *[8]float64)      { panic(unreachable) }
func ddots4AVX(w, x0, x1, x2, x3 *float64, n int, p *[16]float64)  { panic(unreachable) }
func addRows4AVX(acc, x0, x1, x2, x3 *float64, n int, c *[4]float64) {
	panic(unreachable)
}
func dotsAt4AVX(z, w, x *float64, stride, m, n int, idx, ahead *int, na int) {
	panic(unreachable)
}
func addRowsAt8AVX(acc, x *float64, stride, m, n int, idx *int, c *float64) {
	panic(unreachable)
}
func hintAt(v *float64, idx *int, n int) { panic(unreachable) }
func hintIntsAt(v *int, idx *int, n int) { panic(unreachable) }
func fusedDots4FMA(z, w *float64, n int, x *float64, stride, groups int) {
	panic(unreachable)
}
func fusedAddRowsFMA(acc *float64, n int, c *float64, rows int, x *float64, stride int) {
	panic(unreachable)
}
func gramTileFMA(t *[32]float64, s *float64, ss int, x *float64, xs, rows int) {
	panic(unreachable)
}
func gramTileScaledFMA(t *[32]float64, h, s *float64, ss int, x *float64, xs, rows int) {
	panic(unreachable)
}
func logisticParts4(z, y, plus, e, d1, d2 *float64, groups int) int { panic(unreachable) }

const unreachable = "kernel: no assembly on this build"
