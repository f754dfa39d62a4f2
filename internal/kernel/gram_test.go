package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGramTile checks GramTile and GramTileScaled bit for bit against a
// loop of math.FMA over the rows, entry by entry, with the assembly kernels
// and without, for several strides and row counts, on values that include
// zeros of both signs, subnormals, infinities and a NaN.
func TestGramTile(t *testing.T) {
	asmAndGo(t, hasGramKernel, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		special := []float64{0, math.Copysign(0, -1), 0x1p-1060, math.Inf(1), math.Inf(-1), math.NaN(), 1e300}
		for _, strides := range [][2]int{{8, 8}, {4, 9}, {16, 33}, {33, 8}, {40, 40}} {
			ss, xs := strides[0], strides[1]
			for _, rows := range []int{0, 1, 2, 3, 7, 64, 129} {
				s := make([]float64, max(rows-1, 0)*ss+4)
				x := make([]float64, max(rows-1, 0)*xs+8)
				for i := range s {
					s[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
					if r.IntN(17) == 0 {
						s[i] = special[r.IntN(len(special))]
					}
				}
				for i := range x {
					x[i] = r.NormFloat64()
					if r.IntN(19) == 0 {
						x[i] = special[r.IntN(len(special))]
					}
				}
				h := make([]float64, rows)
				for i := range h {
					h[i] = r.Float64() * math.Pow(10, float64(r.IntN(9)-4))
					if r.IntN(13) == 0 {
						h[i] = special[r.IntN(len(special))]
					}
				}
				for _, scaled := range []bool{false, true} {
					var got, want [32]float64
					for i := range got {
						got[i] = r.NormFloat64()
						want[i] = got[i]
					}
					if scaled {
						GramTileScaled(&got, h, s, ss, x, xs, rows)
					} else {
						GramTile(&got, s, ss, x, xs, rows)
					}
					for a := range 4 {
						for b := range 8 {
							for i := range rows {
								sa := s[i*ss+a]
								if scaled {
									sa = float64(h[i] * sa)
								}
								want[8*a+b] = math.FMA(sa, x[i*xs+b], want[8*a+b])
							}
						}
					}
					for i := range got {
						if !sameBits(got[i], want[i]) {
							t.Fatalf("scaled %v, strides %d, %d, rows %d: entry %d is %v, want %v", scaled, ss, xs, rows, i, got[i], want[i])
						}
					}
				}
			}
		}
	})
}

// TestGramTileFusesProducts fails if GramTile or GramTileScaled rounds the
// product before the addition: with s = x = 1 + 2^-30 (and h = 1), the
// product's last bits (2^-60) survive a fused multiply-add into -1 and are
// lost otherwise.
func TestGramTileFusesProducts(t *testing.T) {
	asmAndGo(t, hasGramKernel, func(t *testing.T) {
		v := 1 + 0x1p-30
		s := []float64{v, v, v, v, v, v, v, v}
		var tile [32]float64
		for i := range tile {
			tile[i] = -1
		}
		GramTile(&tile, s, 8, s, 8, 1)
		want := 0x1p-29 + 0x1p-60
		if tile[0] != want || tile[31] != want {
			t.Fatalf("tile %v, want %v (fused)", tile[0], want)
		}
		for i := range tile {
			tile[i] = -1
		}
		GramTileScaled(&tile, []float64{1}, s, 8, s, 8, 1)
		if tile[0] != want || tile[31] != want {
			t.Fatalf("scaled: tile %v, want %v (fused)", tile[0], want)
		}
	})
}

func BenchmarkGramTile(b *testing.B) {
	const stride, rows = 40, 64
	s := make([]float64, rows*stride)
	for i := range s {
		s[i] = float64(i%7) - 3
	}
	var tile [32]float64
	for b.Loop() {
		GramTile(&tile, s, stride, s[8:], stride, rows-1)
	}
}
