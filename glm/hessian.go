package glm

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/kernel"
)

// MaxHessianWeights is the most weights (K d) whose Hessian the callers
// of this package (objective perturbation's solver, package objpert
// through package release, and per-instance DP, package pdp) hold as a
// dense square matrix: 8192^2 float64 values are 512 MiB, and the
// factorization's time grows as the cube. A limit on public values (the
// model's shape), checked before the matrix is made; wider rows are
// projected first (a random projection) or released by output
// perturbation, which needs no Hessian.
const MaxHessianWeights = 8192

// Hess writes the Hessian of F at w into dst (gonum optimize's Hess):
// (1/m) sum_i H_i kron x_i x_i^T + Lambda I, the (K d) x (K d) matrix in
// the row-major layout of w, H_i the margin Hessian of row i. An empty dst
// is resized; otherwise it must be K*d square. It keeps the rows' margin
// Hessians at w for HessVec.
func (o *Objective) Hess(dst *mat.SymDense, w []float64) {
	o.checkLen(w)
	o.curvature(w)
	o.hessianFrom(o.reuse(dst), o.s.hz)
}

// SegmentHess writes into dst the mean of the Hessian of F along the
// segment from w0 to w1, int_0^1 H(w0 + t (w1 - w0)) dt: the matrix of
// the Hessian identity of Wang, "Per-instance Differential Privacy",
// Lemma 13, with grad F(w1) - grad F(w0) = (the mean) (w1 - w0). The
// integral is taken row by row on the margin curvature: for a scalar loss
// in closed form, int_0^1 l”(z0 + t (z1 - z0)) dt = (l'(z1) - l'(z0))/(z1
// - z0) (l' is absolutely continuous for a smooth loss, Wang's A.2), and
// otherwise (K > 1, or |z1 - z0| <= 1e-6 (1 + |z0|), where that quotient
// loses its digits) by 5-point Gauss-Lobatto quadrature, whose nodes
// include both endpoints. An empty dst is resized.
func (o *Objective) SegmentHess(dst *mat.SymDense, w0, w1 []float64) {
	o.checkLen(w0, w1)
	o.hessianFrom(o.reuse(dst), o.segmentCurvature(w0, w1))
}

// SegmentHessVec writes into dst the product of the mean Hessian of F
// along the segment from w0 to w1 (SegmentHess) with v, without forming
// the matrix: the rows' mean margin curvature along the segment, kept for
// further products on the same segment, then one pass over the rows
// (O(m K d + m K^2) per product). It is what a conjugate gradient solve
// with that matrix needs (package pdp checks Wang's Lemma 13 so).
func (o *Objective) SegmentHessVec(dst, w0, w1, v []float64) {
	o.checkLen(dst, w0, w1, v)
	h := o.segmentCurvature(w0, w1)
	o.hessVecWith(dst, v, h)
}

// segmentCurvature returns the rows' mean margin Hessians along the
// segment from w0 to w1 (K*K per row of the view; SegmentHess says how
// they are integrated), computed once per segment: a second call with the
// same end points returns the stored ones.
func (o *Objective) segmentCurvature(w0, w1 []float64) []float64 {
	k, kk, rows := o.k, o.k*o.k, o.n+o.e
	if len(o.s.seg) == rows*(kk+2*k) && floats.Same(o.s.segAt0, w0) && floats.Same(o.s.segAt1, w1) {
		return o.s.seg[:rows*kk]
	}
	if len(o.s.seg) != rows*(kk+2*k) {
		o.s.seg = make([]float64, rows*(kk+2*k))
	}
	h, z0, z1 := o.s.seg[:rows*kk], o.s.seg[rows*kk:rows*(kk+k)], o.s.seg[rows*(kk+k):]
	o.marginsTo(z0, w0)
	o.marginsTo(z1, w1)
	zt, ht := make([]float64, k), make([]float64, kk)
	o.viewRows(func(i int) {
		a, b, s := z0[i*k:(i+1)*k], z1[i*k:(i+1)*k], h[i*kk:(i+1)*kk]
		if o.margin != nil {
			if dz := b[0] - a[0]; math.Abs(dz) > 1e-6*(1+math.Abs(a[0])) {
				c, y := math.Inf(1), o.label(i)
				if o.clip > 0 {
					c = o.capAt(i)
				}
				s[0] = (o.deriv(b[0], y, c) - o.deriv(a[0], y, c)) / dz
				return
			}
		}
		clear(s)
		for q, t := range lobattoNodes {
			for c := range zt {
				zt[c] = a[c] + t*(b[c]-a[c])
			}
			o.rowHess(ht, zt, i)
			for e := range s {
				s[e] += lobattoWeights[q] * ht[e]
			}
		}
	})
	o.s.segAt0 = append(o.s.segAt0[:0], w0...)
	o.s.segAt1 = append(o.s.segAt1[:0], w1...)
	return h
}

// Gauss-Lobatto rule with 5 nodes on [0, 1]: both endpoints are nodes; it
// integrates polynomials of degree 7 exactly.
var (
	lobattoNodes   = [5]float64{0, (1 - 0.6546536707079771) / 2, 0.5, (1 + 0.6546536707079771) / 2, 1}
	lobattoWeights = [5]float64{1.0 / 20, 49.0 / 180, 16.0 / 45, 49.0 / 180, 1.0 / 20}
)

// reuse returns dst sized K*d, resizing an empty one; it panics on a
// wrong size.
func (o *Objective) reuse(dst *mat.SymDense) *mat.SymDense {
	p := o.k * o.d
	if dst.IsEmpty() {
		dst.ReuseAsSym(p)
	}
	if dst.SymmetricDim() != p {
		panic(fmt.Sprintf("glm: a %d x %d Hessian for %d weights", dst.SymmetricDim(), dst.SymmetricDim(), p))
	}
	return dst
}

// hessianFrom writes (1/m) sum_i H_i kron x_i x_i^T + lambda I into H,
// H_i = h[i K^2 : (i+1) K^2] the weights of row i of the view (its margin
// Hessian, or their integral along a segment).
//
// Block (a, c) of the data part is X^T diag(h_ac) X / m, with h_ac the
// entries (a, c) of the H_i. When every H_i is the same matrix H_1 (at w =
// 0 every margin is 0 and the losses here do not look at the label there)
// the data part is H_1 kron X^T X / m, from X^T X computed once. Otherwise,
// for K = 1 it is the weighted Gram matrix sum_i (h_i / m) x_i x_i^T
// (gram), and for K > 1 entry (j, m) of block (a, c) is sum_i h_i[a, c]
// x_ij x_im, an entry of the product Hq^T Q of the m x K(K+1)/2 matrix Hq
// of the upper triangles of the H_i and the m x d(d+1)/2 matrix Q of the
// upper triangles of the x_i x_i^T: one matrix product, symmetric in both
// the classes and the inputs (K(K+1)/2 d(d+1)/2 m multiply-adds where one
// product per pair of classes takes K(K+1)/2 d^2 m), computed over blocks
// of rows so that Q is never held whole.
func (o *Objective) hessianFrom(H *mat.SymDense, h []float64) {
	k, d := o.k, o.d
	kk := k * k
	hs := H.RawSymmetric()
	mf := float64(o.m)
	first := 0
	if o.skip == 0 {
		first = 1
	}
	same := true
	h1 := h[first*kk : (first+1)*kk]
	o.viewRows(func(i int) { same = same && floats.Equal(h[i*kk:(i+1)*kk], h1) })
	switch {
	case same:
		if o.s.xtx == nil {
			o.setXTX(func(dst []float64, stride int) { o.gram(dst, stride, nil, 1) })
		}
		for a := range k {
			for c := a; c < k; c++ {
				ha := h1[a*k+c] / mf
				for j := range d {
					row := hs.Data[(a*d+j)*hs.Stride+c*d : (a*d+j)*hs.Stride+c*d+d]
					floats.ScaleTo(row, ha, o.s.xtx[j*d:(j+1)*d])
				}
			}
		}
	case k == 1:
		// Blocks of rows transposed in cache, entries as dot products
		// (gonum's Dgemm on X^T times X runs an axpy of length d per row).
		o.gram(hs.Data, hs.Stride, h, 1/mf)
	default:
		o.hessianK(hs, h)
	}
	for i := range k * d {
		hs.Data[i*hs.Stride+i] += o.lambda
	}
}

// hessianK is hessianFrom's product Hq^T Q for K > 1.
func (o *Objective) hessianK(hs blas64.Symmetric, h []float64) {
	k, d := o.k, o.d
	kk, kp, q := k*k, k*(k+1)/2, d*(d+1)/2
	mf := float64(o.m)
	rowsPer := min(o.m, hessianRows)
	hq := blas64.General{Rows: rowsPer, Cols: kp, Stride: kp, Data: make([]float64, rowsPer*kp)}
	xq := blas64.General{Rows: rowsPer, Cols: q, Stride: q, Data: make([]float64, rowsPer*q)}
	c := blas64.General{Rows: kp, Cols: q, Stride: q, Data: make([]float64, kp*q)}
	r := 0
	flush := func() {
		hm, xm := hq, xq
		hm.Rows, xm.Rows = r, r
		blas64.Gemm(blas.Trans, blas.NoTrans, 1/mf, hm, xm, 1, c)
		r = 0
	}
	o.viewRows(func(i int) {
		hi := h[i*kk : (i+1)*kk]
		hrow := hq.Data[r*kp : (r+1)*kp]
		t := 0
		for a := range k {
			t += copy(hrow[t:], hi[a*k+a:(a+1)*k])
		}
		x := o.row(i)
		xrow := xq.Data[r*q : (r+1)*q]
		t = 0
		for j, xj := range x {
			floats.ScaleTo(xrow[t:t+d-j], xj, x[j:])
			t += d - j
		}
		if r++; r == rowsPer {
			flush()
		}
	})
	if r > 0 {
		flush()
	}
	// Scatter: block (a, c) is symmetric, so entry t = (j, m), j <= m, of
	// its row of c fills (a d + j, c d + m) and (a d + m, c d + j); the
	// upper triangle of H needs both for a < c and one for a = c.
	t := 0
	for a := range k {
		for b := a; b < k; b++ {
			row := c.Data[t*q : (t+1)*q]
			t++
			u := 0
			for j := range d {
				for m := j; m < d; m++ {
					v := row[u]
					u++
					hs.Data[(a*d+j)*hs.Stride+b*d+m] = v
					if a < b {
						hs.Data[(a*d+m)*hs.Stride+b*d+j] = v
					}
				}
			}
		}
	}
}

// hessianRows is the number of rows per block of hessianK's product.
const hessianRows = 256

// setXTX sets the cached X^T X of the view's rows, whose upper triangle
// upper writes.
func (o *Objective) setXTX(upper func(dst []float64, stride int)) {
	d := o.d
	o.s.xtx = make([]float64, d*d)
	upper(o.s.xtx, d)
	for j := range d {
		for m := range j {
			o.s.xtx[j*d+m] = o.s.xtx[m*d+j]
		}
	}
}

// curvature stores the margin Hessians of the view's rows at w (hz) for
// hessVec and Hess.
func (o *Objective) curvature(w []float64) {
	if floats.Same(o.s.hzAt, w) {
		return
	}
	if !floats.Same(o.s.marginsAt, w) {
		o.margins(w)
	}
	o.allocCurvature()
	k, kk := o.k, o.k*o.k
	o.viewRows(func(i int) { o.rowHess(o.s.hz[i*kk:(i+1)*kk], o.s.z[i*k:(i+1)*k], i) })
	o.s.hzAt = append(o.s.hzAt[:0], w...)
}

// allocCurvature makes hz, once.
func (o *Objective) allocCurvature() {
	if n := (o.n + o.e) * o.k * o.k; len(o.s.hz) != n {
		o.s.hz = make([]float64, n)
	}
}

// split runs f(part, parts) for part = 0..parts-1, on goroutines when X
// has at least minPartRows rows (parts = rowParts) and inline otherwise
// (parts = 1).
func (o *Objective) split(f func(part, parts int)) {
	if o.n < minPartRows {
		f(0, 1)
		return
	}
	var wg sync.WaitGroup
	for p := 1; p < rowParts; p++ {
		wg.Go(func() { f(p, rowParts) })
	}
	f(0, rowParts)
	wg.Wait()
}

// gram sets the upper triangle of the d x d matrix in dst (row stride
// stride) to scale sum_i h_i x_i x_i^T over the view's rows (h nil: every
// h_i = 1), in one pass over the rows of X in blocks of passRows
// (gramSum), then the extra rows. From minPartRows rows on, the rows of X
// are cut into rowParts fixed parts of consecutive rows (as in rowPass),
// summed on their own goroutines and then added in part order: the bits
// depend on the rows and n, not on the scheduling or the build, and are
// the same as those of the sum that eval takes along with its pass at w
// = 0.
func (o *Objective) gram(dst []float64, stride int, h []float64, scale float64) {
	n, parts := o.n, o.parts()
	g := o.newGramSum(parts)
	o.split(func(part, parts int) {
		lo, hi := partBounds(n, part, parts)
		o.blocks(lo, hi, func(b0, m int) { g.block(part, b0, m, hi, h) })
	})
	g.finish(dst, stride, scale)
	for r := range o.e {
		x, hr := o.ex.RawRowView(r), 1.0
		if h != nil {
			hr = h[n+r]
		}
		for j, xj := range x {
			s := scale * hr * xj
			row := dst[j*stride : j*stride+o.d]
			for m := j; m < o.d; m++ {
				row[m] = math.FMA(s, x[m], row[m])
			}
		}
	}
}

// gramSum is a Gram matrix sum_i h_i x_i x_i^T being summed over blocks of
// rows of X, from the 4 x 8 tiles of kernel.GramTile: entry (j, m) is one
// fused multiply-add per row, in row order. With d8 = d rounded down to a
// multiple of 8, the tiles that meet the upper triangle of the first d8
// columns read the rows in place (kernel.GramTileScaled multiplies by h);
// the last d - d8 columns are copied into a buffer 8 wide padded with
// zeros, whose tiles give their entries against every column. The tiles
// run over a block while it is in cache, and prefetch the next one.
type gramSum struct {
	o     *Objective
	d8    int
	tiles []gramTile
	acc   [][32]float64 // the tiles of each part
	rb    [][]float64   // each part's buffer of the last d - d8 columns
}

// gramTile is a tile of gramSum: the s columns j..j+3 (of the rows, or of
// the buffer if rem) against the x columns m..m+7 (of the rows, or of the
// buffer if rem and m >= d8).
type gramTile struct {
	j, m int
	rem  bool
}

func (o *Objective) newGramSum(parts int) *gramSum {
	d := o.d
	g := &gramSum{o: o, d8: d &^ 7}
	for j := 0; j < g.d8; j += 4 {
		for m := j &^ 7; m < g.d8; m += 8 {
			g.tiles = append(g.tiles, gramTile{j, m, false})
		}
	}
	for j := g.d8; j < d; j += 4 {
		for m := 0; m < d; m += 8 {
			g.tiles = append(g.tiles, gramTile{j - g.d8, m, true})
		}
	}
	g.acc = make([][32]float64, parts*len(g.tiles))
	g.rb = make([][]float64, parts)
	for p := range g.rb {
		g.rb[p] = make([]float64, 8*passRows)
	}
	return g
}

// block adds the m <= passRows rows of X from b0 on (weights h[b0:], or 1
// if h is nil) into part's sums; hi is the end of the part, up to which
// the next block is prefetched.
func (g *gramSum) block(part, b0, m, hi int, h []float64) {
	x, d, d8 := g.o.x.RawMatrix(), g.o.d, g.d8
	a := g.acc[part*len(g.tiles) : (part+1)*len(g.tiles)]
	rb := g.rb[part]
	blk := x.Data[b0*x.Stride:]
	if d8 < d {
		for r := range m {
			copy(rb[8*r:8*r+d-d8], blk[r*x.Stride+d8:r*x.Stride+d])
		}
	}
	// the next block's rows, a slice of them after each tile
	next := x.Data[min((b0+m)*x.Stride, len(x.Data)):min(min(b0+2*m, hi)*x.Stride, len(x.Data))]
	chunk := (len(next)/len(g.tiles) + 8) &^ 7
	for t, tl := range g.tiles {
		if len(next) > 0 {
			c := min(chunk, len(next))
			kernel.Prefetch(next[:c])
			next = next[c:]
		}
		s, ss, xt, xs := blk[tl.j:], x.Stride, blk[tl.m:], x.Stride
		if tl.rem {
			s, ss = rb[tl.j:], 8
			if tl.m >= d8 {
				xt, xs = rb, 8
			}
		}
		if h == nil {
			kernel.GramTile(&a[t], s, ss, xt, xs, m)
		} else {
			kernel.GramTileScaled(&a[t], h[b0:b0+m], s, ss, xt, xs, m)
		}
	}
}

// finish adds the parts' sums in part order and writes scale times the
// upper triangle into dst (row stride stride).
func (g *gramSum) finish(dst []float64, stride int, scale float64) {
	d, nt := g.o.d, len(g.tiles)
	for t, tl := range g.tiles {
		for p := 1; p < len(g.acc)/nt; p++ {
			floats.Add(g.acc[t][:], g.acc[p*nt+t][:])
		}
		for r := range 4 {
			for c := range 8 {
				// entry (j, m) of the tile's block; a remainder tile's
				// (j, m) is below the diagonal, its transpose above
				j, m := tl.j+r, tl.m+c
				if tl.rem {
					j, m = m, g.d8+tl.j+r
				}
				if j <= m && m < d {
					dst[j*stride+m] = scale * g.acc[t][8*r+c]
				}
			}
		}
	}
}
