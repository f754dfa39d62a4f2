package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFusedKernels checks FusedDots and FusedAddRows bit for bit against
// loops of math.FMA written from their documentation, with the assembly
// kernels and without, on every length up to 70, row counts 0 to 9 and
// strides at and above the length, on values that include zeros of both
// signs, subnormals, infinities and NaNs.
func TestFusedKernels(t *testing.T) {
	asmAndGo(t, hasFusedKernels, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		special := []float64{0, math.Copysign(0, -1), 0x1p-1060, math.Inf(1), math.Inf(-1), math.NaN(), 1e300}
		val := func() float64 {
			if r.IntN(23) == 0 {
				return special[r.IntN(len(special))]
			}
			return r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
		}
		for n := 0; n <= 70; n++ {
			for rows := 0; rows <= 9; rows++ {
				stride := n + r.IntN(3)
				w := make([]float64, n)
				for j := range w {
					w[j] = val()
				}
				x := make([]float64, max(rows-1, 0)*stride+n)
				for i := range x {
					x[i] = val()
				}
				// FusedDots
				z := make([]float64, rows)
				FusedDots(z, w, x, stride)
				for q := range rows {
					var p [4]float64
					m := n &^ 3
					for j := range m {
						p[j%4] = math.FMA(w[j], x[q*stride+j], p[j%4])
					}
					for j := m; j < n; j++ {
						p[0] = math.FMA(w[j], x[q*stride+j], p[0])
					}
					if want := (p[0] + p[2]) + (p[1] + p[3]); !sameBits(z[q], want) {
						t.Fatalf("FusedDots n = %d, rows = %d, stride %d: row %d is %v, want %v", n, rows, stride, q, z[q], want)
					}
				}
				// FusedAddRows
				c := make([]float64, rows)
				for i := range c {
					c[i] = val()
				}
				acc, want := make([]float64, n), make([]float64, n)
				for j := range acc {
					acc[j] = val()
					want[j] = acc[j]
				}
				FusedAddRows(acc, c, x, stride)
				for q := range rows {
					for j := range n {
						want[j] = math.FMA(c[q], x[q*stride+j], want[j])
					}
				}
				for j := range n {
					if !sameBits(acc[j], want[j]) {
						t.Fatalf("FusedAddRows n = %d, rows = %d, stride %d: element %d is %v, want %v", n, rows, stride, j, acc[j], want[j])
					}
				}
			}
		}
	})
}

// TestFusedKernelsFuse fails if a product is rounded before its addition
// (see TestGramTileFusesProducts): v*v - 1 keeps 2^-60 only when fused.
func TestFusedKernelsFuse(t *testing.T) {
	asmAndGo(t, hasFusedKernels, func(t *testing.T) {
		v := 1 + 0x1p-30
		want := 0x1p-29 + 0x1p-60
		for _, n := range []int{4, 5, 9} {
			acc := make([]float64, n)
			row := make([]float64, n)
			for j := range acc {
				acc[j], row[j] = -1, v
			}
			FusedAddRows(acc, []float64{v}, row, n)
			for j, a := range acc {
				if a != want {
					t.Fatalf("n = %d: FusedAddRows element %d is %v, want %v", n, j, a, want)
				}
			}
		}
		// FusedDots: lane 0 is 1*(-1) = -1 after the first group, then
		// the tail element v*v is fused into it.
		w := []float64{1, 0, 0, 0, v}
		x := []float64{-1, 0, 0, 0, v}
		z := make([]float64, 4)
		FusedDots(z, w, append(append(append(append([]float64{}, x...), x...), x...), x...), 5)
		for q, got := range z {
			if got != want {
				t.Fatalf("FusedDots row %d is %v, want %v", q, got, want)
			}
		}
	})
}

// BenchmarkFusedDots and BenchmarkFusedAddRows run over 64 rows of 33
// elements, a block of objpert's pass, in cache.
func BenchmarkFusedDots(b *testing.B) {
	const n, rows = 33, 64
	w, x, z := make([]float64, n), make([]float64, rows*n), make([]float64, rows)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	for b.Loop() {
		FusedDots(z, w, x, n)
	}
}

func BenchmarkFusedAddRows(b *testing.B) {
	const n, rows = 33, 64
	acc, x, c := make([]float64, n), make([]float64, rows*n), make([]float64, rows)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	for b.Loop() {
		FusedAddRows(acc, c, x, n)
	}
}

// TestFusedStrides checks that the block kernels refuse a negative stride
// and one whose rows' end overflows (the assembly would read outside x)
// with a panic, on every build.
func TestFusedStrides(t *testing.T) {
	buf := []float64{100, 200, 300, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	x := buf[3:]
	huge := math.MaxInt/3 + 1
	var tile [32]float64
	for name, f := range map[string]func(){
		"FusedDots, negative":      func() { FusedDots(make([]float64, 4), []float64{1, 0, 0, 0}, x, -1) },
		"FusedAddRows, negative":   func() { FusedAddRows(make([]float64, 4), []float64{1, 1, 1, 1}, x, -1) },
		"FusedDots, overflow":      func() { FusedDots(make([]float64, 4), []float64{1, 0, 0, 0}, x, huge) },
		"GramTile, negative":       func() { GramTile(&tile, x, -1, x, 0, 2) },
		"GramTile, overflow":       func() { GramTile(&tile, x, huge*2, x, 0, 4) },
		"GramTileScaled, overflow": func() { GramTileScaled(&tile, make([]float64, 4), x, 0, x, huge*2, 4) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestKernelsRefuseShortSlices checks that the kernels' wrappers read no
// element past a slice's length, even where its capacity holds more: each
// call gets one input one element short (with spare capacity) and must
// panic, on every build.
func TestKernelsRefuseShortSlices(t *testing.T) {
	short := func(n int) []float64 { return make([]float64, n+8)[:n-1] }
	full := func(n int) []float64 { return make([]float64, n) }
	var tile [32]float64
	for name, f := range map[string]func(){
		"FusedDots x":      func() { FusedDots(full(4), full(5), short(3*6+5), 6) },
		"FusedAddRows x":   func() { FusedAddRows(full(5), full(4), short(3*6+5), 6) },
		"GramTile x":       func() { GramTile(&tile, full(4), 0, short(8), 0, 1) },
		"GramTileScaled h": func() { GramTileScaled(&tile, short(2), full(12), 8, full(16), 8, 2) },
		"LogisticParts y":  func() { LogisticParts(full(8), short(8), full(8), full(8), full(8), full(8)) },
		"SquaredNorms x":   func() { SquaredNorms(full(8), short(8*5), 5) },
		"SquaredNorms d":   func() { SquaredNorms(full(8), full(16), 1<<61+1) },
		"SeqDots4 x3":      func() { SeqDots4(full(6), full(6), full(6), full(6), short(6)) },
		"ShrinkDot next":   func() { ShrinkDot(full(6), full(6), 1, 1, 0, short(6)) },
		"DotsAt idx":       func() { DotsAt(full(4), full(3), full(12), 3, []int{0, 1, 2, 3, 0}[:3], nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
