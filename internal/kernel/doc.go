// Package kernel holds the inner loops of the native engine's step: the
// proximal gradient move w = soft(a*w - c*dir, thr) (Shrink), the same move
// fused with the next step's margin <w, next> (ShrinkDot), and cache hints
// for the rows a pass will read (Prefetch, PrefetchExample). It also holds
// the loops over four rows at a time (SeqDots4, Ddots4, AddRows4), and the
// loops over blocks of rows (FusedDots, FusedAddRows), the 4 x 8 tiles of
// a Gram matrix (GramTile, GramTileScaled) and the logistic loss's parts
// four rows at a time (LogisticParts) that package objpert's solver runs.
//
// On amd64 ShrinkDot runs an assembly kernel (AVX where the processor and
// the operating system support it, SSE2 otherwise) and the prefetch hints
// are PREFETCHT0 instructions. Every other architecture, and every build with
// the purego tag (go build -tags purego), uses the Go versions: ShrinkDot is
// shrinkDotGeneric and the hints do nothing. The results are the same bit
// for bit on every build: the kernels do the Go loop's operations in the
// same order with the same four partial sums, without fused multiply-adds,
// and the hints change no state. The tests check the assembly against the
// Go loop on every length up to 70, with and without AVX. The block loops
// and the Gram tiles are the exception to "without fused multiply-adds":
// every product is fused into its sum (VFMADD231PD, on processors with FMA
// and AVX, AVX2 for the tiles), and their Go loops call math.FMA, which has
// the same bits on every processor, so they too give the same results on
// every build, NaN payloads apart (a NaN stays a NaN). Their wrappers
// refuse negative strides and rows whose end overflows with a panic. LogisticParts repeats math.Exp's own steps (the fused
// multiply-add path of its amd64 assembly, taken on every processor where
// the kernel runs) four lanes at a time, and TestLogisticPartsExp holds it
// to math.Exp's bits; elsewhere it does nothing and the caller computes
// the rows.
//
// # Benchmark note
//
// BenchmarkNativePass3600x33 in package trainer (logistic loss, elastic net,
// b = 1, 33 features, rows in cache) measured a step faster with the SSE2
// kernel than with the Go loop, and faster again with the AVX kernel.
// Hinting the rows of the next chunk instead of touching them at a chunk
// boundary made a b = 1 step faster when the rows are fetched from memory
// (BenchmarkNativePass36000x33). docs/PERFORMANCE.md holds the current
// figures of these benchmarks. Wall-clock figures depend on the
// machine and its load; to compare two builds, count instructions instead
// (valgrind --tool=callgrind on the trainer test binary with GOMAXPROCS=1).
package kernel
