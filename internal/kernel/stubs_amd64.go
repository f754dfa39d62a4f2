//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// The assembly kernels run where the processor has the features they need,
// as golang.org/x/sys/cpu reports them: AVX where the operating system also
// saves the YMM registers, and GODEBUG's cpu.avx=off and cpu.fma=off turn
// AVX and FMA off here as they do for math.Exp. Elsewhere the wrappers run
// the Go twins (generic.go). The hints and ShrinkDot's SSE2 kernel need
// nothing beyond amd64.
var (
	// hasAVX selects ShrinkDot's AVX kernel, and hasSSE2 its SSE2 kernel
	// where hasAVX is false.
	hasAVX  = cpu.X86.HasAVX
	hasSSE2 = true

	// hasRowKernels selects the AVX kernels of the four-row functions.
	hasRowKernels = cpu.X86.HasAVX

	// hasBatchKernels selects the AVX kernels of DotsAt and AddRowsAt, and
	// HintAt's hints.
	hasBatchKernels = cpu.X86.HasAVX

	// hasFusedKernels selects the AVX and FMA kernels of FusedDots and
	// FusedAddRows.
	hasFusedKernels = cpu.X86.HasAVX && cpu.X86.HasFMA

	// hasGramKernel selects the AVX2 and FMA kernels of the Gram tiles.
	hasGramKernel = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

	// hasLogisticKernel selects logisticParts4, which repeats math.Exp's
	// fused multiply-add path: math.Exp takes that path where AVX and FMA
	// are on.
	hasLogisticKernel = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// hasPrefetch selects the prefetch instructions of Prefetch and
// PrefetchExample.
const hasPrefetch = true

// shrinkDot4SSE2 does ShrinkDot's loop for the first n (a multiple of 4)
// elements, two per instruction, thresholding with MAXPD and MINPD instead
// of branches, with the partial sums of shrinkDot4Generic in s.
//
//go:noescape
func shrinkDot4SSE2(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64)

// shrinkDot4AVX is shrinkDot4SSE2 with four elements per instruction.
//
//go:noescape
func shrinkDot4AVX(w, dir, next *float64, n int, a, c, thr float64, s *[4]float64)

// prefetchRange issues PREFETCHT0 for every cache line of the n float64s at
// p. It never faults and changes no state.
//
//go:noescape
func prefetchRange(p *float64, n int)

// prefetchExample is prefetchRange(x, n) with the lines of *norm and *y.
//
//go:noescape
func prefetchExample(x *float64, n int, norm, y *float64)

// seqDots4AVX does the first n (a multiple of 4) elements of SeqDots4:
// the products of four columns of the four rows are transposed so that each
// lane of one register holds one row's sum, which adds them in column order.
//
//go:noescape
func seqDots4AVX(w, x0, x1, x2, x3 *float64, n int, s *[4]float64)

// seqSquares4AVX is seqDots4AVX with each row as its own w.
//
//go:noescape
func seqSquares4AVX(x0, x1, x2, x3 *float64, n int, s *[4]float64)

// seqSquares8AVX is seqSquares4AVX for eight rows stride elements apart
// from x, in two independent chains.
//
//go:noescape
func seqSquares8AVX(x *float64, stride, n int, s *[8]float64)

// ddots4AVX writes the four partial sums of gonum's DotUnitary of each row
// over n elements (a multiple of 4) into p[4r:4r+4].
//
//go:noescape
func ddots4AVX(w, x0, x1, x2, x3 *float64, n int, p *[16]float64)

// addRows4AVX does the first n (a multiple of 4) elements of AddRows4.
//
//go:noescape
func addRows4AVX(acc, x0, x1, x2, x3 *float64, n int, c *[4]float64)

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

// hintIntsAt is hintAt on the 8-byte elements of an []int.
//
//go:noescape
func hintIntsAt(v *int, idx *int, n int)

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

// gramTileFMA is GramTile for rows > 0 with VFMADD231PD: the tile in eight
// registers, four broadcasts of s and two loads of x per row.
//
//go:noescape
func gramTileFMA(t *[32]float64, s *float64, ss int, x *float64, xs, rows int)

// gramTileScaledFMA is GramTileScaled for rows > 0: the four elements of
// s times h[r] in one multiplication, then spread over four registers by
// permutations.
//
//go:noescape
func gramTileScaledFMA(t *[32]float64, h, s *float64, ss int, x *float64, xs, rows int)

// logisticParts4 does LogisticParts for groups > 0 groups of four rows,
// math.Exp's steps four lanes at a time. The scaling by 2^k it ends with
// is math.Exp's only for |m| < logisticRange: far is nonzero if a row has
// another |m| (or NaN), which needs the Go twin.
//
//go:noescape
func logisticParts4(z, y, plus, e, d1, d2 *float64, groups int) (far int)
