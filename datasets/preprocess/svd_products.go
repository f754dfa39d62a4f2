package preprocess

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// svdProducts are the randomized method's products with X (n x d) on
// transposed bases.
type svdProducts interface {
	// xzT sets yT (l x n) to (X Z)^T, where zT = Z^T is l x d.
	xzT(yT, zT *mat.Dense)
	// xtyT sets zT (l x d) to (X^T Y)^T = Y^T X, where yT = Y^T is l x n.
	xtyT(zT, yT *mat.Dense)
}

// svdProductsOf returns the products of a dense matrix's own kernels, or
// else the operator's.
func svdProductsOf(op Operator) svdProducts {
	if m, ok := op.(matOperator); ok {
		if d, ok := m.m.(*mat.Dense); ok {
			return denseProducts{d.RawMatrix()}
		}
	}
	return operatorProducts{op}
}

// operatorProducts transposes around the operator's products.
type operatorProducts struct{ op Operator }

func (p operatorProducts) xzT(yT, zT *mat.Dense) {
	n, _ := p.op.Dims()
	l, _ := zT.Dims()
	y := mat.NewDense(n, l, nil)
	p.op.MulTo(y, mat.DenseCopyOf(zT.T()))
	yT.Copy(y.T())
}

func (p operatorProducts) xtyT(zT, yT *mat.Dense) {
	_, d := p.op.Dims()
	l, _ := yT.Dims()
	z := mat.NewDense(d, l, nil)
	p.op.MulTransTo(z, mat.DenseCopyOf(yT.T()))
	zT.Copy(z.T())
}

// denseProducts computes the products of a row-major X with Dgemv kernels
// (gonum's assembly GemvN and GemvT) on blocks of rows, in parallel. Each
// entry of X Z is computed by one Dgemv whatever the blocks; X^T Y is
// accumulated in gramParts fixed parts summed in order, so that neither
// depends on GOMAXPROCS.
type denseProducts struct{ x blas64.General }

func (p denseProducts) xzT(yT, zT *mat.Dense) {
	n, d := p.x.Rows, p.x.Cols
	zr, yr := zT.RawMatrix(), yT.RawMatrix()
	l := zr.Rows
	impl := blas64.Implementation()
	panels := (n + gramRows - 1) / gramRows
	parallelParts(min(gramParts, panels), func(q, parts int) {
		for r := q * panels / parts * gramRows; r < min((q+1)*panels/parts*gramRows, n); r++ {
			// Column r of Y^T: Z^T x_r.
			impl.Dgemv(blas.NoTrans, l, d, 1, zr.Data, zr.Stride, p.x.Data[r*p.x.Stride:r*p.x.Stride+d], 1, 0, yr.Data[r:], yr.Stride)
		}
	})
}

func (p denseProducts) xtyT(zT, yT *mat.Dense) {
	n, d := p.x.Rows, p.x.Cols
	zr, yr := zT.RawMatrix(), yT.RawMatrix()
	l := zr.Rows
	impl := blas64.Implementation()
	panels := (n + gramRows - 1) / gramRows
	parts := min(gramParts, panels)
	partial := make([][]float64, parts)
	parallelParts(parts, func(q, parts int) {
		z := make([]float64, l*d)
		for b := q * panels / parts; b < (q+1)*panels/parts; b++ {
			r0 := b * gramRows
			rb := min(gramRows, n-r0)
			xb := p.x.Data[r0*p.x.Stride:]
			for i := range l {
				// Row i of Y^T X over the block: X_b^T (Y^T)_i,b.
				impl.Dgemv(blas.Trans, rb, d, 1, xb, p.x.Stride, yr.Data[i*yr.Stride+r0:i*yr.Stride+r0+rb], 1, 1, z[i*d:(i+1)*d], 1)
			}
		}
		partial[q] = z
	})
	for _, z := range partial[1:] {
		floats.Add(partial[0], z)
	}
	for i := range l {
		copy(zr.Data[i*zr.Stride:i*zr.Stride+d], partial[0][i*d:(i+1)*d])
	}
}

// parallelParts runs work(q, parts) for q in [0, parts) on at most
// GOMAXPROCS goroutines.
func parallelParts(parts int, work func(q, parts int)) {
	workers := min(parts, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for q := range parts {
			work(q, parts)
		}
		return
	}
	next := make(chan int, parts)
	for q := range parts {
		next <- q
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for q := range next {
				work(q, parts)
			}
		})
	}
	wg.Wait()
}
