//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// hasGramKernel selects the assembly kernels: the processor has AVX, AVX2
// and FMA and the operating system saves the YMM registers.
var hasGramKernel = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

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

// setGramKernel selects the assembly kernel (on) or the Go loop and
// returns the previous choice.
func setGramKernel(on bool) bool {
	old := hasGramKernel
	hasGramKernel = on && cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	return old
}
