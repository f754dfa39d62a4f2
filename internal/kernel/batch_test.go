package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// batchRows returns a row-major matrix of rows rows of stride elements,
// with zeros, negative zeros and values of many magnitudes, and a NaN in
// row nanRow (none if nanRow < 0) at column n/2.
func batchRows(r *rand.Rand, rows, stride, n, nanRow int) []float64 {
	x := make([]float64, rows*stride)
	for i := range x {
		x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
		switch i % 11 {
		case 4:
			x[i] = 0
		case 7:
			x[i] = math.Copysign(0, -1)
		}
	}
	if nanRow >= 0 && n > 0 {
		x[nanRow*stride+n/2] = math.NaN()
	}
	return x
}

// TestBatchKernels checks DotsAt and AddRowsAt bit for bit against the
// one-row loops they stand for (gonum's Ddot for DotsAt, the loop of
// batchAxpy for AddRowsAt, written out here), on rows of every length up to
// 70 and minibatches of 0 to 19 rows (whole groups of the kernels and
// remainders), in place at a stride longer than the rows, with repeated
// indices, with the assembly kernels and without.
func TestBatchKernels(t *testing.T) { asmAndGo(t, hasBatchKernels, checkBatchKernels) }

func checkBatchKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const rows = 23
	for n := 0; n <= 70; n++ {
		for _, m := range []int{0, 1, 3, 4, 5, 7, 8, 9, 12, 16, 17, 19} {
			stride := n + r.IntN(3)
			nanRow := -1
			if m%2 == 1 {
				nanRow = r.IntN(rows)
			}
			x := batchRows(r, rows, stride, n, nanRow)
			x = x[:len(x)-(stride-n)] // the last row ends the slice
			w := make([]float64, n)
			for j := range w {
				w[j] = r.NormFloat64()
			}
			idx, ahead := make([]int, m+1), make([]int, r.IntN(m+2))
			for q := range idx {
				idx[q] = r.IntN(rows)
			}
			if m > 2 {
				idx[2] = idx[0]
			}
			for q := range ahead {
				ahead[q] = r.IntN(rows)
			}
			before := append([]float64(nil), x...)
			z := make([]float64, m)
			DotsAt(z, w, x, stride, idx, ahead)
			for q := range z {
				row := x[idx[q]*stride:][:n]
				want := gonumblas.Implementation{}.Ddot(n, w, 1, row, 1)
				if !sameBits(z[q], want) || !sameBits(batchDot(w, row), want) {
					t.Fatalf("n=%d m=%d row %d: DotsAt %v, batchDot %v, Ddot %v", n, m, q, z[q], batchDot(w, row), want)
				}
			}
			c := make([]float64, m)
			for q := range c {
				c[q] = r.NormFloat64()
			}
			if m > 1 {
				c[1] = 0
			}
			acc, want := make([]float64, n), make([]float64, n)
			for j := range acc {
				acc[j] = r.NormFloat64()
				want[j] = acc[j]
			}
			for q := range c {
				for j, v := range x[idx[q]*stride:][:n] {
					want[j] += float64(c[q] * v)
				}
			}
			AddRowsAt(acc, c, x, stride, idx)
			for j := range acc {
				if !sameBits(acc[j], want[j]) {
					t.Fatalf("n=%d m=%d: AddRowsAt acc[%d] = %v, loops %v", n, m, j, acc[j], want[j])
				}
			}
			for j := range x {
				if !sameBits(x[j], before[j]) {
					t.Fatalf("n=%d m=%d: x[%d] changed", n, m, j)
				}
			}
		}
	}
}

// TestBatchKernelsCheckRows checks that an index whose row does not lie
// inside x panics, in idx and in ahead, and that rows up to the end of x
// do not.
func TestBatchKernelsCheckRows(t *testing.T) {
	const n, stride, rows = 5, 7, 6
	x := make([]float64, (rows-1)*stride+n)
	w, z, c, acc := make([]float64, n), make([]float64, 4), make([]float64, 8), make([]float64, n)
	ok := []int{0, 5, 5, 1, 2, 3, 4, 5, 0}
	DotsAt(z, w, x, stride, ok, ok)
	AddRowsAt(acc, c, x, stride, ok)
	for _, bad := range []int{-1, rows, 1 << 60} {
		idx := []int{0, 1, 2, bad, 0, 1, 2, 3}
		for name, f := range map[string]func(){
			"DotsAt idx":    func() { DotsAt(z, w, x, stride, idx, nil) },
			"DotsAt ahead":  func() { DotsAt(z, w, x, stride, ok, idx) },
			"AddRowsAt idx": func() { AddRowsAt(acc, c, x, stride, idx) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: index %d, no panic", name, bad)
					}
				}()
				f()
			}()
		}
	}
}
