//go:build !amd64 || purego

package kernel

// hasGramKernel is false without the assembly kernels: GramTile runs its
// Go loop.
const hasGramKernel = false

func gramTileFMA(t *[32]float64, s *float64, ss int, x *float64, xs, rows int) { panic("unreachable") }

func gramTileScaledFMA(t *[32]float64, h, s *float64, ss int, x *float64, xs, rows int) {
	panic("unreachable")
}

func setGramKernel(bool) bool { return false }
