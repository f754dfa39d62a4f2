package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// sameBits reports whether a and b are the same float64, NaNs equal.
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// testRows returns w and four rows of n elements (two longer than n), with
// zeros, negative zeros and, if nan, a NaN.
func testRows(r *rand.Rand, n int, nan bool) (w []float64, x [4][]float64) {
	w = make([]float64, n)
	for j := range w {
		w[j] = r.NormFloat64()
	}
	for q := range x {
		x[q] = make([]float64, n+q%2)
		for j := range x[q] {
			x[q][j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
			switch (j + q) % 9 {
			case 4:
				x[q][j] = 0
			case 7:
				x[q][j] = math.Copysign(0, -1)
			}
		}
	}
	if nan && n > 2 {
		x[2][n/2] = math.NaN()
	}
	return w, x
}

// TestRowKernels checks SeqDots4, SeqSquares4, Ddots4 and AddRows4 bit for
// bit against the one-row loops they stand for (gonum's Ddot for Ddots4),
// on every length up to 70, with the assembly kernels and without.
func TestRowKernels(t *testing.T) { asmAndGo(t, hasRowKernels, checkRowKernels) }

func checkRowKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 70; n++ {
		for _, nan := range []bool{false, true} {
			w, x := testRows(r, n, nan)
			dots := SeqDots4(w, x[0], x[1], x[2], x[3])
			dd := Ddots4(w, x[0], x[1], x[2], x[3])
			sqs := SeqSquares4(x[0][:n], x[1][:n], x[2][:n], x[3][:n])
			for q := range x {
				var want, wantSq float64
				for j, v := range w {
					want += float64(v * x[q][j])
				}
				for _, v := range x[q][:n] {
					wantSq += float64(v * v)
				}
				if !sameBits(dots[q], want) {
					t.Fatalf("n=%d row %d: SeqDots4 %v, loop %v", n, q, dots[q], want)
				}
				if !sameBits(sqs[q], wantSq) {
					t.Fatalf("n=%d row %d: SeqSquares4 %v, loop %v", n, q, sqs[q], wantSq)
				}
				if want := (gonumblas.Implementation{}).Ddot(n, w, 1, x[q], 1); !sameBits(dd[q], want) || !sameBits(ddotRef(w, x[q]), want) {
					t.Fatalf("n=%d row %d: Ddots4 %v, reference %v, Ddot %v", n, q, dd[q], ddotRef(w, x[q]), want)
				}
			}
			acc := make([]float64, n)
			for j := range acc {
				acc[j] = r.NormFloat64()
			}
			want := append([]float64(nil), acc...)
			c := [4]float64{r.NormFloat64(), 0, -r.NormFloat64(), r.NormFloat64()}
			for q := range x {
				for j, v := range x[q][:n] {
					want[j] += float64(c[q] * v)
				}
			}
			AddRows4(acc, c, x[0], x[1], x[2], x[3])
			for j := range acc {
				if !sameBits(acc[j], want[j]) {
					t.Fatalf("n=%d: AddRows4 acc[%d] = %v, loops %v", n, j, acc[j], want[j])
				}
			}
		}
	}
}

// ddotRef is the order of gonum's DotUnitary (blas/gonum Ddot with unit
// strides) written out: two SSE2 accumulators (s0, s1) and (s2, s3).
func ddotRef(w, x []float64) float64 {
	var s [4]float64
	n := len(w)
	j := 0
	for ; j+4 <= n; j += 4 {
		s[0] += float64(w[j] * x[j])
		s[1] += float64(w[j+1] * x[j+1])
		s[2] += float64(w[j+2] * x[j+2])
		s[3] += float64(w[j+3] * x[j+3])
	}
	for ; j < n; j++ {
		s[0] += float64(w[j] * x[j])
	}
	return (s[1] + s[3]) + (s[0] + s[2])
}

// TestSquaredNorms checks SquaredNorms bit for bit against the one-row
// loop, with the assembly kernels and without, on every row length up to
// 70 and every row count up to 19 (groups of eight, of four, and single
// rows), with zeros, huge values and NaN.
func TestSquaredNorms(t *testing.T) {
	asmAndGo(t, hasRowKernels, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for d := 0; d <= 70; d++ {
			for n := 0; n <= 19; n++ {
				x := make([]float64, n*d)
				for i := range x {
					x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
					switch r.IntN(29) {
					case 0:
						x[i] = math.Copysign(0, -1)
					case 1:
						x[i] = 1e160
					case 2:
						x[i] = math.NaN()
					}
				}
				got := make([]float64, n)
				SquaredNorms(got, x, d)
				for q := range n {
					var want float64
					for _, v := range x[q*d : (q+1)*d] {
						want += float64(v * v)
					}
					if !sameBits(got[q], want) {
						t.Fatalf("d = %d, n = %d: row %d is %v, want %v", d, n, q, got[q], want)
					}
				}
			}
		}
	})
}
