package objpert

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
)

// SolveStats are statistics of one minimization: they depend on the data
// and the noise, and are never published.
type SolveStats struct {
	NewtonSteps   int
	GradientSteps int
	// GradNorm is ||grad F|| at the returned weights; Reached reports
	// GradNorm <= GradTol.
	GradNorm float64
	Reached  bool
}

// objective evaluates F(w) = (1/n) sum_i l(W x_i, y_i) + (lambda/2)||w||^2
// + <b, w>/n on the rows of X.
type objective struct {
	X      *mat.Dense
	y      []float64
	loss   losses.Loss
	n, d   int
	k      int
	lambda float64
	b      []float64 // nil: no linear term
	// scratch
	z, g *mat.Dense
	// curvature: the margin Hessians of the rows (n k^2, row-major) and
	// hessVec's n x k products
	hz []float64
	u  *mat.Dense
	// X^T X, computed at the first Hessian whose rows share one margin
	// Hessian
	xtx *mat.Dense
	zi  []float64
	gi  []float64
	// marginsAt is the w of the margins in z and hzAt that of the margin
	// Hessians in hz (eval and curvature share them)
	marginsAt, hzAt []float64
	// blockHook, if not nil, is called by rowPass with each block of rows
	// it has done (eval1 sums X^T X there)
	blockHook func(part, b0, m, hi int)
	// partAcc holds rowPass's per-part sums, and parts1 the logistic
	// loss's parts of a block of each part (partsStride apart)
	partAcc, parts1 []float64
}

func newObjective(X *mat.Dense, y []float64, loss losses.Loss, k int, lambda float64, b []float64) *objective {
	n, d := X.Dims()
	return &objective{X: X, y: y, loss: loss, n: n, d: d, k: k, lambda: lambda, b: b,
		z: mat.NewDense(n, k, nil), g: mat.NewDense(n, k, nil), zi: make([]float64, k), gi: make([]float64, k)}
}

// margins sets o.z = X W^T (for K = 1, the matrix-vector product X w),
// and records w in o.marginsAt.
func (o *objective) margins(w []float64) {
	o.marginsAt = append(o.marginsAt[:0], w...)
	if o.k == 1 {
		// The dot products of rowPass, with its bits.
		x := o.X.RawMatrix()
		kernel.FusedDots(o.z.RawMatrix().Data, w, x.Data, x.Stride)
		return
	}
	W := mat.NewDense(o.k, o.d, w)
	o.z.Mul(o.X, W.T())
}

// eval returns F(w) and, if grad is not nil, writes grad F(w) into it.
func (o *objective) eval(w, grad []float64) float64 {
	if o.k == 1 {
		return o.eval1(w, grad)
	}
	o.margins(w)
	var sum float64
	for i := range o.n {
		copy(o.zi, o.z.RawRowView(i))
		if grad != nil {
			sum += o.loss.Grad(o.gi, o.zi, o.y[i])
			o.g.SetRow(i, o.gi)
		} else {
			sum += o.loss.Value(o.zi, o.y[i])
		}
	}
	if grad != nil {
		G := mat.NewDense(o.k, o.d, grad)
		G.Mul(o.g.T(), o.X)
	}
	return o.finish(w, grad, sum)
}

// eval1 is eval for K = 1, in one pass over the rows: the margin, the
// loss and its derivative per row, and the gradient's data part sum_i
// l'(z_i) x_i (rowPass). Without grad, the margins and the losses only.
func (o *objective) eval1(w, grad []float64) float64 {
	z := o.z.RawMatrix().Data
	if grad == nil {
		o.margins(w)
		zi := o.zi[:1]
		var sum float64
		for i, y := range o.y {
			zi[0] = z[i]
			sum += o.loss.Value(zi, y)
		}
		return o.finish(w, nil, sum)
	}
	// At w = 0, where the solver starts and hessian will want X^T X, the
	// pass sums X^T X too, each block while it is in cache.
	var xtx *gramSum
	if o.xtx == nil && !slices.ContainsFunc(w, func(v float64) bool { return v != 0 }) {
		xtx = o.newGramSum(o.parts())
		o.blockHook = func(part, b0, m, hi int) { xtx.block(part, b0, m, hi, nil) }
		defer func() { o.blockHook = nil }()
	}
	var sum float64
	if _, ok := o.loss.(losses.Logistic); ok {
		// The built-in logistic loss gives the curvature from the same
		// exponential: hz at w comes with the gradient (curvature then
		// skips its pass). Its values max(m, 0) + log1p(e) are summed as
		// sum max(m, 0) + sum log(prod (1 + e)) (logProducts).
		o.allocCurvature()
		hz := o.hz
		var logs [rowParts]logProduct
		if o.parts1 == nil {
			o.parts1 = make([]float64, rowParts*partsStride)
		}
		sum = o.rowPass(grad, w, func(part, lo int, s, c []float64) float64 {
			copy(z[lo:], s)
			y, hz, lp := o.y[lo:lo+len(s)], hz[lo:lo+len(s)], &logs[part]
			buf := o.parts1[part*partsStride:]
			plus, e := buf[:len(s)], buf[passRows:passRows+len(s)]
			// Parts1's bits
			kernel.LogisticParts(s, y, plus, e, c, hz)
			var plusSum float64
			for r := range s {
				lp.add(1 + e[r])
				plusSum += plus[r]
			}
			return plusSum
		})
		for p := range logs {
			sum += logs[p].sum()
		}
		o.hzAt = append(o.hzAt[:0], w...)
	} else {
		// Each part's scratch on its own cache line.
		var zs, gs [rowParts][8]float64
		sum = o.rowPass(grad, w, func(part, lo int, s, c []float64) float64 {
			copy(z[lo:], s)
			zi, gi := zs[part][:1], gs[part][:1]
			var v float64
			for r, sr := range s {
				zi[0] = sr
				v += o.loss.Grad(gi, zi, o.y[lo+r])
				c[r] = gi[0]
			}
			return v
		})
	}
	o.marginsAt = append(o.marginsAt[:0], w...)
	if xtx != nil {
		o.setXTX(func(dst []float64, stride int) { xtx.finish(dst, stride, 1) })
	}
	return o.finish(w, grad, sum)
}

// logProduct sums the logarithms of factors in (1, 2] as the logarithm of
// their products over runs of logRun factors (at most 2^logRun, finite):
// one logarithm per run instead of one per factor. Each product carries a
// relative rounding error of at most logRun ulps, so the sum is within
// about n 2^-53 (absolute) of the sum of the logarithms; the solver uses
// the objective's value only in its line search, whose tolerance is 1e-10
// relative. A logProduct fills a cache line, so that the parts of rowPass
// do not share one.
type logProduct struct {
	prod, logs float64
	n          int
	_          [5]float64
}

// logRun is the number of factors of logProduct's products.
const logRun = 512

func (l *logProduct) add(f float64) {
	if l.n == 0 {
		l.prod = 1
	}
	l.prod *= f
	if l.n++; l.n == logRun {
		l.logs += math.Log(l.prod)
		l.n = 0
	}
}

// sum returns the sum of the logarithms of the factors added.
func (l *logProduct) sum() float64 {
	if l.n > 0 {
		return l.logs + math.Log(l.prod)
	}
	return l.logs
}

// rowParts is the number of row parts of rowPass, and minPartRows the
// number of rows from which it runs them on goroutines.
const (
	rowParts    = 2
	minPartRows = 16384
)

// rowPass sets acc to sum_i c_i x_i over the rows x_i of X and returns
// the sum of the values f returns, in one pass over X (where a product X v
// and then X^T c read it twice): f(part, lo, s, c) gets the dot products
// s[r] = <v, x_{lo+r}> of a block of consecutive rows (kernel.FusedDots),
// writes their coefficients into c and returns the sum of their values,
// and the block is added into the sum while it is in cache
// (kernel.FusedAddRows). From minPartRows rows on, the rows are cut into
// rowParts fixed parts of consecutive rows (boundaries a function of n
// alone), each on its own goroutine; f is called for the blocks of a part
// in order, with the part's index, and must be safe for concurrent calls
// on different parts. The blocks have passRows rows, and the parts' sums
// are added in part order: the bits depend on the rows and n, not on the
// scheduling or GOMAXPROCS. The kernels' bits do not depend on the build;
// f's may (math.Exp on amd64 takes another path without FMA).
func (o *objective) rowPass(acc, v []float64, f func(part, lo int, s, c []float64) float64) float64 {
	parts := o.parts()
	stride := partStride(o.d)
	if len(o.partAcc) < parts*stride {
		o.partAcc = make([]float64, rowParts*stride)
	}
	var sums [rowParts]float64
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*o.n/parts&^3, (p+1)*o.n/parts&^3
		if p == parts-1 {
			hi = o.n
		}
		pa := o.partAcc[p*stride : p*stride+o.d]
		if p == parts-1 {
			sums[p] = o.rowRange(pa, v, p, lo, hi, f)
			continue
		}
		wg.Go(func() { sums[p] = o.rowRange(pa, v, p, lo, hi, f) })
	}
	wg.Wait()
	copy(acc, o.partAcc[:o.d])
	sum := sums[0]
	for p := 1; p < parts; p++ {
		floats.Add(acc, o.partAcc[p*stride:p*stride+o.d])
		sum += sums[p]
	}
	return sum
}

// parts returns the number of row parts of rowPass and gram.
func (o *objective) parts() int {
	if o.n >= minPartRows {
		return rowParts
	}
	return 1
}

// passRows is the number of rows of a block of rowPass: the block stays
// in cache between its dot products and its sum. partsStride is the
// length of a part's scratch for the logistic loss's parts (two blocks'
// worth and a cache line).
const (
	passRows    = 64
	partsStride = 2*passRows + 8
)

// partStride is the distance between two parts' sums of length d in
// rowPass's scratch, whole cache lines apart so that the goroutines do not
// write to a shared line.
func partStride(d int) int { return (d + 15) &^ 7 }

// rowRange is rowPass over the rows lo..hi-1 into acc.
func (o *objective) rowRange(acc, v []float64, part, lo, hi int, f func(part, lo int, s, c []float64) float64) float64 {
	clear(acc)
	x := o.X.RawMatrix()
	var sc [2 * passRows]float64
	var sum float64
	for b0 := lo; b0 < hi; b0 += passRows {
		m := min(passRows, hi-b0)
		blk := x.Data[b0*x.Stride:]
		s, c := sc[:m], sc[passRows:passRows+m]
		kernel.FusedDots(s, v, blk, x.Stride)
		sum += f(part, b0, s, c)
		kernel.FusedAddRows(acc, c, blk, x.Stride)
		if o.blockHook != nil {
			o.blockHook(part, b0, m, hi)
		}
	}
	return sum
}

// finish returns F(w) from the sum of the losses, and completes grad (the
// data part's sum already in it): the mean, the ridge and the linear term.
func (o *objective) finish(w, grad []float64, sum float64) float64 {
	nf := float64(o.n)
	f := sum/nf + o.lambda/2*floats.Dot(w, w)
	if o.b != nil {
		f += floats.Dot(o.b, w) / nf
	}
	if grad != nil {
		floats.Scale(1/nf, grad)
		floats.AddScaled(grad, o.lambda, w)
		if o.b != nil {
			floats.AddScaled(grad, 1/nf, o.b)
		}
	}
	return f
}

// hessian returns the Hessian of F at w: (1/n) sum_i H_i kron x_i x_i^T +
// lambda I, the (k d) x (k d) matrix in the row-major layout of w. It
// leaves the margin Hessians H_i at w for hessVec (as curvature does).
//
// Block (a, c) of the data part is X^T diag(h_ac) X / n, with h_ac the n
// entries (a, c) of the H_i. When every H_i is the same matrix H_1 (at w =
// 0 every margin is 0 and the losses here do not look at the label there)
// the data part is H_1 kron X^T X / n, from X^T X computed once. Otherwise,
// for k = 1 it is the weighted Gram matrix sum_i (h_i / n) x_i x_i^T (gram), and
// for k > 1 entry (j, m) of block (a, c) is sum_i h_i[a, c] x_ij x_im, an
// entry of the product Hq^T Q of the n x k(k+1)/2 matrix Hq of the upper
// triangles of the H_i and the n x d(d+1)/2 matrix Q of the upper
// triangles of the x_i x_i^T: one matrix product, symmetric in both the
// classes and the inputs (k(k+1)/2 d(d+1)/2 n multiply-adds where one
// product per pair of classes takes k(k+1)/2 d^2 n), computed over blocks
// of rows so that Q is never held whole.
func (o *objective) hessian(w []float64) *mat.SymDense {
	o.curvature(w)
	k, d, n := o.k, o.d, o.n
	kk := k * k
	p := k * d
	H := mat.NewSymDense(p, nil)
	hs := H.RawSymmetric()
	nf := float64(n)
	same := true
	for i := 1; i < n && same; i++ {
		same = floats.Equal(o.hz[i*kk:(i+1)*kk], o.hz[:kk])
	}
	switch {
	case same:
		if o.xtx == nil {
			o.setXTX(func(dst []float64, stride int) { o.gram(dst, stride, nil, 1) })
		}
		for a := range k {
			for c := a; c < k; c++ {
				h := o.hz[a*k+c] / nf
				for j := range d {
					row := hs.Data[(a*d+j)*hs.Stride+c*d : (a*d+j)*hs.Stride+c*d+d]
					floats.ScaleTo(row, h, o.xtx.RawRowView(j))
				}
			}
		}
	case k == 1:
		// Blocks of rows transposed in cache, entries as dot products
		// (gonum's Dgemm on X^T times X runs an axpy of length d per row).
		o.gram(hs.Data, hs.Stride, o.hz[:n], 1/nf)
	default:
		kp, q := k*(k+1)/2, d*(d+1)/2
		rowsPer := min(n, hessianRows)
		hq := blas64.General{Rows: rowsPer, Cols: kp, Stride: kp, Data: make([]float64, rowsPer*kp)}
		xq := blas64.General{Rows: rowsPer, Cols: q, Stride: q, Data: make([]float64, rowsPer*q)}
		c := blas64.General{Rows: kp, Cols: q, Stride: q, Data: make([]float64, kp*q)}
		for lo := 0; lo < n; lo += rowsPer {
			m := min(rowsPer, n-lo)
			for r := range m {
				i := lo + r
				hi := o.hz[i*kk : (i+1)*kk]
				hrow := hq.Data[r*kp : (r+1)*kp]
				t := 0
				for a := range k {
					t += copy(hrow[t:], hi[a*k+a:(a+1)*k])
				}
				x := o.X.RawRowView(i)
				xrow := xq.Data[r*q : (r+1)*q]
				t = 0
				for j, xj := range x {
					floats.ScaleTo(xrow[t:t+d-j], xj, x[j:])
					t += d - j
				}
			}
			hm, xm := hq, xq
			hm.Rows, xm.Rows = m, m
			blas64.Gemm(blas.Trans, blas.NoTrans, 1/nf, hm, xm, 1, c)
		}
		// Scatter: block (a, c) is symmetric, so entry t = (j, m), j <= m,
		// of its row of c fills (a d + j, c d + m) and (a d + m, c d + j);
		// the upper triangle of H needs both for a < c and one for a = c.
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
	for i := range p {
		hs.Data[i*hs.Stride+i] += o.lambda
	}
	return H
}

// setXTX sets o.xtx to X^T X, whose upper triangle upper writes.
func (o *objective) setXTX(upper func(dst []float64, stride int)) {
	d := o.d
	o.xtx = mat.NewDense(d, d, nil)
	xtx := o.xtx.RawMatrix()
	upper(xtx.Data, xtx.Stride)
	for j := range d {
		for m := range j {
			xtx.Data[j*xtx.Stride+m] = xtx.Data[m*xtx.Stride+j]
		}
	}
}

// hessianRows is the number of rows per block of hessian's product.
const hessianRows = 256

// curvature stores the margin Hessians of the rows at w (o.hz) for
// hessVec.
func (o *objective) curvature(w []float64) {
	if floats.Same(o.hzAt, w) {
		return
	}
	if !floats.Same(o.marginsAt, w) {
		o.margins(w)
	}
	o.allocCurvature()
	kk := o.k * o.k
	for i := range o.n {
		o.loss.Hess(o.hz[i*kk:(i+1)*kk], o.z.RawRowView(i), o.y[i])
	}
	o.hzAt = append(o.hzAt[:0], w...)
}

// allocCurvature makes o.hz and o.u, once.
func (o *objective) allocCurvature() {
	if kk := o.k * o.k; len(o.hz) != o.n*kk {
		o.hz = make([]float64, o.n*kk)
		o.u = mat.NewDense(o.n, o.k, nil)
	}
}

// hessVec writes the product of the Hessian of F at the point of the last
// curvature call with v into dst: with V the k x d matrix of v, the rows
// of X V^T times their margin Hessians, then (1/n) of their product with
// X, plus lambda v. It costs two products of n x d and d x k matrices.
func (o *objective) hessVec(dst, v []float64) {
	k := o.k
	if k == 1 {
		h := o.hz[:o.n]
		o.rowPass(dst, v, func(_, lo int, s, c []float64) float64 {
			h := h[lo : lo+len(s)]
			for r, sr := range s {
				c[r] = h[r] * sr
			}
			return 0
		})
		floats.Scale(1/float64(o.n), dst)
		floats.AddScaled(dst, o.lambda, v)
		return
	}
	o.u.Mul(o.X, mat.NewDense(k, o.d, v).T())
	kk := k * k
	for i := range o.n {
		u := o.u.RawRowView(i)
		copy(o.zi, u)
		h := o.hz[i*kk : (i+1)*kk]
		for a := range k {
			u[a] = floats.Dot(h[a*k:(a+1)*k], o.zi)
		}
	}
	D := mat.NewDense(k, o.d, dst)
	D.Mul(o.u.T(), o.X)
	floats.Scale(1/float64(o.n), dst)
	floats.AddScaled(dst, o.lambda, v)
}

// newtonDirection solves H(w) dir = g for the Newton direction at w.
// fresh reports that chol factors H(w); otherwise chol factors the Hessian
// at an earlier iterate and serves as the preconditioner of conjugate
// gradients on H(w) (products by hessVec, after curvature at w), stopped
// when the residual is at most eta ||g||. It returns the number of
// conjugate-gradient iterations and whether they met eta within maxCG.
func (o *objective) newtonDirection(dir, g []float64, chol *mat.Cholesky, fresh bool, eta float64, s *cgScratch) (int, bool) {
	p := len(g)
	dv := mat.NewVecDense(p, dir)
	if fresh {
		if err := chol.SolveVecTo(dv, mat.NewVecDense(p, g)); err != nil {
			return 0, false
		}
		return 0, true
	}
	clear(dir)
	copy(s.r, g)
	zv := mat.NewVecDense(p, s.z)
	if err := chol.SolveVecTo(zv, mat.NewVecDense(p, s.r)); err != nil {
		return 0, false
	}
	copy(s.d, s.z)
	rz := floats.Dot(s.r, s.z)
	target := eta * floats.Norm(g, 2)
	for it := 1; it <= maxCG; it++ {
		o.hessVec(s.q, s.d)
		dq := floats.Dot(s.d, s.q)
		if !(dq > 0) || !(rz > 0) {
			return it, false
		}
		alpha := rz / dq
		floats.AddScaled(dir, alpha, s.d)
		floats.AddScaled(s.r, -alpha, s.q)
		if floats.Norm(s.r, 2) <= target {
			return it, true
		}
		if err := chol.SolveVecTo(zv, mat.NewVecDense(p, s.r)); err != nil {
			return it, false
		}
		rzNew := floats.Dot(s.r, s.z)
		beta := rzNew / rz
		rz = rzNew
		floats.AddScaledTo(s.d, s.z, beta, s.d)
	}
	return maxCG, false
}

// cgScratch holds the vectors of newtonDirection's conjugate gradients.
type cgScratch struct{ r, z, d, q []float64 }

// split runs f(part, parts) for part = 0..parts-1, on goroutines when rows
// >= minPartRows (parts = rowParts) and inline otherwise (parts = 1).
func (o *objective) split(rows int, f func(part, parts int)) {
	if rows < minPartRows {
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
// stride) to scale sum_i h_i x_i x_i^T (h nil: every h_i = 1), in one pass
// over the rows in blocks of passRows (gramSum). From minPartRows rows on,
// the rows are cut into rowParts fixed parts of consecutive rows (as in
// rowPass), summed on their own goroutines and then added in part order:
// the bits depend on the rows and n, not on the scheduling or the build,
// and are the same as those of the sum that eval1 takes along with its
// pass at w = 0.
func (o *objective) gram(dst []float64, stride int, h []float64, scale float64) {
	n, parts := o.n, o.parts()
	g := o.newGramSum(parts)
	o.split(n, func(part, parts int) {
		lo, hi := part*n/parts&^3, (part+1)*n/parts&^3
		if part == parts-1 {
			hi = n
		}
		for b0 := lo; b0 < hi; b0 += passRows {
			g.block(part, b0, min(passRows, hi-b0), hi, h)
		}
	})
	g.finish(dst, stride, scale)
}

// gramSum is a Gram matrix sum_i h_i x_i x_i^T being summed over blocks of
// rows, from the 4 x 8 tiles of kernel.GramTile: entry (j, m) is one fused
// multiply-add per row, in row order. With d8 = d rounded down to a
// multiple of 8, the tiles that meet the upper triangle of the first d8
// columns read the rows in place (kernel.GramTileScaled multiplies by h);
// the last d - d8 columns are copied into a buffer 8 wide padded with
// zeros, whose tiles give their entries against every column. The tiles
// run over a block while it is in cache, and prefetch the next one.
type gramSum struct {
	o     *objective
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

func (o *objective) newGramSum(parts int) *gramSum {
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

// block adds the m <= passRows rows from b0 on (weights h[b0:], or 1 if h
// is nil) into part's sums; hi is the end of the part, up to which the
// next block is prefetched.
func (g *gramSum) block(part, b0, m, hi int, h []float64) {
	x, d, d8 := g.o.X.RawMatrix(), g.o.d, g.d8
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

// minimize runs Newton's method with a line search from w (in place) for
// at most maxNewton steps, then at most fallback gradient steps of size
// step (fallback < 0: as many as it takes), stopping at the first iterate
// with ||grad F|| <= tol. With fallback >= 0 the number of steps is fixed
// in advance and reaching tol or not is reported in the statistics; with
// fallback < 0 the loop ends only at tol or when ctx is done (an error).
//
// Every Newton iterate w satisfies F(w) <= F(w0) (w0 the starting point),
// so the gradient steps start from a point with F <= F(w0), within
// ||grad F(w0)||/lambda of the minimizer. A Newton step along dir is
// accepted at the first t in 1, 1/2, 1/4, ... at which either F decreases
// by at least 1e-4 t <dir, grad F> (Armijo), or ||grad F|| decreases by the
// factor 1 - 1e-4 t while F rises by no more than its rounding and stays at
// most F(w0): the Newton direction is a descent direction of both F and
// ||grad F||^2, and near the minimizer the decrease of F falls below the
// rounding of F while the gradient norm is still resolved.
//
// The direction solves H dir = grad F, H the Hessian at w. H is built and
// factored at the first step; then the factored Hessian of an earlier
// iterate preconditions conjugate gradients with exact Hessian-vector
// products at w, run to a relative residual of min(0.1, sqrt(||grad F||)),
// and H is built afresh when they need more than refreshCG iterations
// (refreshCG1 for K = 1) or fail. The path is deterministic: it depends
// only on the rows, the labels and b.
func (o *objective) minimize(ctx context.Context, w []float64, tol float64, maxNewton, fallback int, step float64) (SolveStats, error) {
	p := len(w)
	g := make([]float64, p)
	gt := make([]float64, p)
	trial := make([]float64, p)
	dir := make([]float64, p)
	var st SolveStats
	f := o.eval(w, g)
	f0 := f
	gn := floats.Norm(g, 2)
	newton := p <= MaxNewtonDim
	refreshAt := refreshCG
	if o.k == 1 {
		refreshAt = refreshCG1
	}
	var chol mat.Cholesky
	factored := false // chol holds the Hessian at some earlier iterate
	refresh := true   // build the Hessian at the next step
	s := cgScratch{r: make([]float64, p), z: make([]float64, p), d: make([]float64, p), q: make([]float64, p)}
	for it := 0; newton && it < maxNewton && gn > tol; it++ {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		ok := false
		if factored && !refresh {
			o.curvature(w)
			var iters int
			iters, ok = o.newtonDirection(dir, g, &chol, false, math.Min(0.1, math.Sqrt(gn)), &s)
			refresh = iters > refreshAt
		}
		if !ok {
			if !chol.Factorize(o.hessian(w)) {
				break // not positive definite in floating point: gradient steps
			}
			factored, refresh = true, false
			if _, ok = o.newtonDirection(dir, g, &chol, true, 0, &s); !ok {
				break
			}
		}
		slope := floats.Dot(dir, g)
		if !(slope > 0) {
			break
		}
		// F's rounding is relative to the size of its terms, which cancel
		// (the ridge and the linear term at a noise-dominated minimizer).
		roundF := 1e-10 * (1 + math.Abs(f) + o.lambda/2*floats.Dot(w, w))
		if o.b != nil {
			roundF += 1e-10 * math.Abs(floats.Dot(o.b, w)) / float64(o.n)
		}
		accepted := false
		for t := 1.0; t > 1e-12; t /= 2 {
			copy(trial, w)
			floats.AddScaled(trial, -t, dir)
			ft := o.eval(trial, gt)
			if ft <= f-1e-4*t*slope || (ft <= f+roundF && ft <= f0 && floats.Norm(gt, 2) <= (1-1e-4*t)*gn) {
				f = ft
				accepted = true
				break
			}
		}
		if !accepted {
			break
		}
		copy(w, trial)
		copy(g, gt)
		gn = floats.Norm(g, 2)
		st.NewtonSteps++
	}
	for s := 0; (fallback < 0 || s < fallback) && gn > tol; s++ {
		if s%64 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
		floats.AddScaled(w, -step, g)
		o.eval(w, g)
		gn = floats.Norm(g, 2)
		st.GradientSteps++
	}
	st.GradNorm, st.Reached = gn, gn <= tol
	if math.IsNaN(gn) || math.IsInf(gn, 0) {
		return st, fmt.Errorf("objpert: the gradient norm is %v", gn)
	}
	return st, nil
}

// maxCG bounds the conjugate-gradient iterations of one Newton direction
// with an earlier Hessian as the preconditioner, and refreshCG is the
// count above which the next step builds the Hessian afresh (for softmax
// one build costs about as much as 50 Hessian-vector products).
const (
	maxCG     = 50
	refreshCG = 25
	// refreshCG1 is refreshCG for K = 1, where a build costs about 5
	// products at Adult's d = 33 and the earlier Hessian soon needs more.
	refreshCG1 = 2
)

// maxNewton is the number of Newton steps before the gradient steps take
// over (a constant: Newton reaches GradTol in a few dozen steps on every
// problem the tests and experiments met).
const maxNewton = 100
