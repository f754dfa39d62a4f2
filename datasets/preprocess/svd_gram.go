package preprocess

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

const (
	// gramMaxD bounds d for the exact method: its d x d eigen-decomposition
	// and the partial Gram matrices stay small.
	gramMaxD = 512
	// gramMinRatio is the smallest lambda_k / lambda_1 for which the exact
	// method's result is kept (see FitTruncatedSVD).
	gramMinRatio = 1e-8
	// gramRows is the number of rows transposed into a panel at a time; the
	// panel (d x gramRows) stays in the L2 cache.
	gramRows = 128
	// gramParts is the number of parts of the rows whose Gram matrices are
	// accumulated separately (in parallel) and then summed in order. It is a
	// constant so that the result does not depend on GOMAXPROCS.
	gramParts = 8
)

// useGram reports whether FitTruncatedSVD uses the exact method: when d is
// at most n and gramMaxD and the Gram matrix (n d^2 / 2 multiply-adds) costs
// less than the randomized method's 2 (powerIters+1) products with X
// (2 (powerIters+1) n d l multiply-adds).
func useGram(n, d, k, oversample, powerIters int) bool {
	l := min(k+oversample, n, d)
	return d <= n && d <= gramMaxD && d < 4*(powerIters+1)*l
}

// gramMinScale is the smallest largest diagonal entry of X^T X that the
// exact method takes: every entry of G above it has relative rounding (it
// is 2^-900, far above the subnormal range 2^-1022, with room for d terms).
const gramMinScale = 0x1p-900

// fitGram returns the exact truncated SVD from the Gram matrix g (d x d,
// row-major, upper triangle used), or nil when lambda_k <= gramMinRatio
// lambda_1 or the eigen-decomposition fails.
func fitGram(g []float64, d, k int) *SVDProjection {
	// Entries of X near 1e-154 and below make products of X^T X subnormal,
	// where rounding is no longer relative: the guard on the eigenvalues'
	// ratio does not see that, so such a Gram matrix is left to the
	// randomized method, which works on X itself.
	var top float64
	for i := range d {
		top = max(top, g[i*d+i])
	}
	if !(top >= gramMinScale) {
		return nil
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(d, g), true) {
		return nil
	}
	lambda := eig.Values(nil) // ascending
	top, kth := lambda[d-1], lambda[d-k]
	if !(kth > gramMinRatio*top) {
		return nil
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	v := mat.NewDense(d, k, nil)
	values := make([]float64, k)
	for j := range k {
		values[j] = math.Sqrt(lambda[d-1-j])
		for i := range d {
			v.Set(i, j, vecs.At(i, d-1-j))
		}
	}
	fixColumnSigns(v)
	return &SVDProjection{V: v, Values: values, method: "exact"}
}

// gramDense returns the upper triangle of X^T X (d x d, row-major; the
// lower triangle is zero). The rows are cut into gramParts contiguous parts
// of whole panels; each part's Gram matrix is accumulated panel by panel
// (each panel transposed so that a feature's gramRows values are
// contiguous, then one Dgemv per feature gives its row of the panel's Gram
// matrix), the parts in parallel, and the parts are summed in order.
func gramDense(X *mat.Dense) []float64 {
	raw := X.RawMatrix()
	n, d := raw.Rows, raw.Cols
	panels := (n + gramRows - 1) / gramRows
	parts := min(gramParts, panels)
	gs := make([][]float64, parts)
	parallelParts(parts, func(q, parts int) {
		g := make([]float64, d*d)
		p := make([]float64, d*gramRows)
		impl := blas64.Implementation()
		for b := q * panels / parts; b < (q+1)*panels/parts; b++ {
			r0 := b * gramRows
			rb := min(gramRows, n-r0)
			for r := range rb {
				row := raw.Data[(r0+r)*raw.Stride : (r0+r)*raw.Stride+d]
				for f, x := range row {
					p[f*gramRows+r] = x
				}
			}
			for i := range d {
				pi := p[i*gramRows : i*gramRows+rb]
				impl.Dgemv(blas.NoTrans, d-i, rb, 1, p[i*gramRows:], gramRows, pi, 1, 1, g[i*d+i:(i+1)*d], 1)
			}
		}
		gs[q] = g
	})
	for _, g := range gs[1:] {
		floats.Add(gs[0], g)
	}
	return gs[0]
}

// gramOperator returns X^T X (d x d, row-major) from the operator's products,
// width columns at a time: X^T (X E) with E a block of columns of the
// identity. With width = l, the n x width block takes no more memory than
// the randomized method's basis.
func gramOperator(op Operator, width int) []float64 {
	n, d := op.Dims()
	g := mat.NewDense(d, d, nil)
	for c0 := 0; c0 < d; c0 += width {
		c := min(width, d-c0)
		e := mat.NewDense(d, c, nil)
		for j := range c {
			e.Set(c0+j, j, 1)
		}
		xe := mat.NewDense(n, c, nil)
		op.MulTo(xe, e)
		gc := mat.NewDense(d, c, nil)
		op.MulTransTo(gc, xe)
		g.Slice(0, d, c0, c0+c).(*mat.Dense).Copy(gc)
	}
	return g.RawMatrix().Data
}

// describe says which method fitted p, for ReduceSVD's Note.
func (p *SVDProjection) describe(seed uint64) string {
	if p.method == "exact" {
		return "exact truncated SVD, from the eigen-decomposition of X^T X"
	}
	return fmt.Sprintf("randomized truncated SVD, seed %d", seed)
}
