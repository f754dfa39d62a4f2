// Package kernel holds the inner loops of the native engine's step and of
// objective perturbation's solver: the proximal gradient move fused with
// the next margin (Shrink, ShrinkDot, ShrinkDdot), cache hints (Prefetch,
// PrefetchExample, HintAt), loops over four rows (SeqDots4, SeqSquares4,
// SquaredNorms, Ddots4, AddRows4) and over a minibatch's rows in place
// (DotsAt, AddRowsAt), over blocks of rows (FusedDots, FusedAddRows), the
// 4 x 8 tiles of a Gram matrix (GramTile, GramTileScaled) and the logistic
// loss's parts (LogisticParts).
//
// Every kernel gives, on every build, the bits of the Go loop that its doc
// comment states, NaN payloads apart, so that its results do not depend on
// the build; LogisticParts's depend on math.Exp's alone, whose amd64 code
// has a path with fused multiply-adds and one without. On amd64 the kernels
// run in assembly where the processor has the features they need (AVX for
// most, FMA and AVX2 for some; ShrinkDot and ShrinkDdot have an SSE2 kernel
// too); on other
// architectures, with the purego build tag (go build -tags purego) and on
// processors without those features, their Go twins run. The loops of
// FusedDots, FusedAddRows, GramTile and GramTileScaled fuse every product
// into its sum, as math.FMA does on every processor; LogisticParts's
// assembly repeats math.Exp's fused path and runs only where math.Exp
// takes it; no other loop fuses a multiply-add. The hints change no state
// and do nothing without the assembly.
//
// docs/DESIGN.md, section 13, gives the rationale: the layout, which loops
// fuse and why, and the measurements behind the kernels.
package kernel
