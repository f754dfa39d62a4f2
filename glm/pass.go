package glm

import (
	"math"
	"slices"
	"sync"

	"github.com/stabpriv/stabpriv/internal/kernel"
)

// rowParts is the number of row parts of rowPass, and minPartRows the
// number of rows of X from which it runs them on goroutines.
const (
	rowParts    = 2
	minPartRows = 16384
)

// passRows is the number of rows of a block of rowPass: the block stays
// in cache between its dot products and its sum. partsStride is the
// length of a part's scratch for the logistic loss's parts (three blocks'
// worth and a cache line).
const (
	passRows    = 64
	partsStride = 3*passRows + 8
)

// scratch is an Objective's working memory, allocated at first use.
type scratch struct {
	// partAcc holds rowPass's per-part sums, blk each part's margins and
	// coefficients of a block, parts1 the logistic loss's parts of a block
	// of each part (partsStride apart), gz each part's margin gradient.
	partAcc, blk, parts1 []float64
	gz                   [rowParts][]float64
	// The solver's state: the margins z of the view's rows at marginsAt
	// (kept by eval), their margin Hessians hz (K*K per row) at hzAt, X^T X
	// of the view (once every row's curvature has been equal), and
	// Hessian scratch.
	z, hz           []float64
	marginsAt, hzAt []float64
	xtx             []float64
	seg             []float64 // SegmentHess's weights
	segAt0, segAt1  []float64 // the segment whose weights seg holds
	// blockHook, if not nil, is called by rowRange with each block of rows
	// of X it has done (eval sums X^T X there).
	blockHook func(part, b0, m, hi int)
}

// blockFunc computes the coefficients of a block of rows of the view:
// given their margins s (K per row, row-major) at rows lo, lo+1, ... of
// the view's index space, it writes their coefficients c (K per row) and
// adds their values into *sum in row order. It is called for the blocks
// of a part in order, and must be safe for concurrent calls on different
// parts.
type blockFunc func(part, lo int, s, c []float64, sum *float64)

// rowPass sets acc (K*d) to sum_i c_i x_i^T over the rows x_i of the view
// (c_i the K coefficients f gives row i, acc the K x d matrix row-major)
// and returns the sum of the values f adds, in one pass over the rows
// (where X V^T and then C^T X would read them twice): the margins s_i = V
// x_i of a block of consecutive rows of X (dots), f's coefficients, and
// the block added into the sum while it is in cache (addRows). From
// minPartRows rows of X on, the rows are cut into rowParts fixed parts of
// consecutive rows (boundaries multiples of 4, a function of n alone),
// each on its own goroutine; the parts' sums are added in part order, and
// the extra rows of a neighbour come last: the bits depend on the rows,
// not on the scheduling or GOMAXPROCS. The kernels' bits do not depend on
// the build; f's may (math.Exp on amd64 takes another path without FMA).
// With acc nil, only the values are summed.
func (o *Objective) rowPass(acc, v []float64, f blockFunc) float64 {
	parts := o.parts()
	o.passScratch(acc != nil)
	var sums [rowParts]float64
	runParts(o.n, parts, func(p, lo, hi int) {
		sums[p] = o.rowRange(o.partAcc(acc, p), v, p, lo, hi, f)
	})
	sum := o.addParts(acc, &sums, parts)
	if o.e > 0 {
		sum = o.extraRows(acc, v, f, sum)
	}
	return sum
}

// passScratch makes the scratch of rowPass: every part's block buffer,
// and its sums of K*d when acc is set.
func (o *Objective) passScratch(acc bool) {
	if acc && len(o.s.partAcc) < rowParts*partStride(o.k*o.d) {
		o.s.partAcc = make([]float64, rowParts*partStride(o.k*o.d))
	}
	if len(o.s.blk) < rowParts*2*passRows*o.k {
		o.s.blk = make([]float64, rowParts*2*passRows*o.k)
	}
}

// partAcc returns part p's sum of the K*d weights of acc in the scratch
// (nil for acc nil).
func (o *Objective) partAcc(acc []float64, p int) []float64 {
	if acc == nil {
		return nil
	}
	stride := partStride(o.k * o.d)
	return o.s.partAcc[p*stride : p*stride+len(acc)]
}

// addParts sets acc to the parts' sums added in part order and returns
// the sum of their values, in the same order.
func (o *Objective) addParts(acc []float64, sums *[rowParts]float64, parts int) float64 {
	sum := sums[0]
	if acc != nil {
		copy(acc, o.partAcc(acc, 0))
	}
	for p := 1; p < parts; p++ {
		if acc != nil {
			add(acc, o.partAcc(acc, p))
		}
		sum += sums[p]
	}
	return sum
}

// runParts calls f(p, lo, hi) for each part p of n rows in parts parts,
// the last on the calling goroutine and the others on their own, and
// returns when all are done.
func runParts(n, parts int, f func(p, lo, hi int)) {
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := partBounds(n, p, parts)
		if p == parts-1 {
			f(p, lo, hi)
			continue
		}
		wg.Go(func() { f(p, lo, hi) })
	}
	wg.Wait()
}

// partBounds returns the rows lo..hi-1 of part p of n rows in parts parts.
func partBounds(n, p, parts int) (lo, hi int) {
	lo, hi = p*n/parts&^3, (p+1)*n/parts&^3
	if p == parts-1 {
		hi = n
	}
	return lo, hi
}

// parts returns the number of row parts of rowPass and gram.
func (o *Objective) parts() int {
	if o.n >= minPartRows {
		return rowParts
	}
	return 1
}

// partStride is the distance between two parts' sums of length p in
// rowPass's scratch, whole cache lines apart so that the goroutines do not
// write to a shared line.
func partStride(p int) int { return (p + 15) &^ 7 }

// blocks calls f(b0, m) for the blocks of at most passRows consecutive
// rows of X from lo to hi-1, in order, leaving out the row o.skip.
func (o *Objective) blocks(lo, hi int, f func(b0, m int)) {
	for b0 := lo; b0 < hi; {
		if b0 == o.skip {
			b0++
			continue
		}
		m := min(passRows, hi-b0)
		if o.skip > b0 && o.skip < b0+m {
			m = o.skip - b0
		}
		f(b0, m)
		b0 += m
	}
}

// rowRange is rowPass over the rows lo..hi-1 of X into acc.
func (o *Objective) rowRange(acc, v []float64, part, lo, hi int, f blockFunc) float64 {
	clear(acc)
	var sum float64
	o.rowBlocks(acc, v, part, lo, hi, f, &sum)
	return sum
}

// rowBlocks adds the rows lo..hi-1 of X (leaving out o.skip) into acc
// and their values into *sum, block by block: rowRange without clearing.
func (o *Objective) rowBlocks(acc, v []float64, part, lo, hi int, f blockFunc, sum *float64) {
	x := o.x.RawMatrix()
	kb := passRows * o.k
	buf := o.s.blk[part*2*kb : (part+1)*2*kb]
	o.blocks(lo, hi, func(b0, m int) {
		blk := x.Data[b0*x.Stride:]
		s, c := buf[:m*o.k], buf[kb:kb+m*o.k]
		o.dots(s, v, blk, x.Stride)
		f(part, b0, s, c, sum)
		if acc != nil {
			o.addRows(acc, c, blk, x.Stride)
		}
		if o.s.blockHook != nil {
			o.s.blockHook(part, b0, m, hi)
		}
	})
}

// extraRows is rowPass over a neighbour's extra rows, added into acc and
// into the sum of the values of the other rows.
func (o *Objective) extraRows(acc, v []float64, f blockFunc, sum float64) float64 {
	x := o.ex.RawMatrix()
	kb := passRows * o.k
	buf := o.s.blk[:2*kb]
	for b0 := 0; b0 < o.e; b0 += passRows {
		m := min(passRows, o.e-b0)
		blk := x.Data[b0*x.Stride:]
		s, c := buf[:m*o.k], buf[kb:kb+m*o.k]
		o.dots(s, v, blk, x.Stride)
		f(0, o.n+b0, s, c, &sum)
		if acc != nil {
			o.addRows(acc, c, blk, x.Stride)
		}
	}
	return sum
}

// dots sets the margins s (K per row) of the len(s)/K rows of x (stride
// apart) at v: for K = 1 by kernel.FusedDots, for K > 1 each margin summed
// in column order with each product rounded (kernel.SeqDots4, four rows
// at a time).
func (o *Objective) dots(s, v, x []float64, stride int) {
	k, d := o.k, o.d
	if k == 1 {
		kernel.FusedDots(s, v, x, stride)
		return
	}
	byRows(x, len(s)/k, stride, d, func(r int, x0, x1, x2, x3 []float64) {
		for c := range k {
			q := kernel.SeqDots4(v[c*d:(c+1)*d], x0, x1, x2, x3)
			for t, sv := range q {
				s[(r+t)*k+c] = sv
			}
		}
	}, func(r int, xr []float64) {
		for c := range k {
			var sv float64
			for j, vj := range v[c*d : (c+1)*d] {
				sv += float64(vj * xr[j])
			}
			s[r*k+c] = sv
		}
	})
}

// addRows adds the rows of x (stride apart) times their coefficients c
// into acc, row by row in order: for K = 1 by kernel.FusedAddRows (each
// product fused into its sum), for K > 1 with each product rounded
// (kernel.AddRows4, four rows at a time).
func (o *Objective) addRows(acc, c, x []float64, stride int) {
	k, d := o.k, o.d
	if k == 1 {
		kernel.FusedAddRows(acc, c, x, stride)
		return
	}
	byRows(x, len(c)/k, stride, d, func(r int, x0, x1, x2, x3 []float64) {
		for cl := range k {
			kernel.AddRows4(acc[cl*d:(cl+1)*d], [4]float64{c[r*k+cl], c[(r+1)*k+cl], c[(r+2)*k+cl], c[(r+3)*k+cl]}, x0, x1, x2, x3)
		}
	}, func(r int, xr []float64) {
		for cl := range k {
			g, row := c[r*k+cl], acc[cl*d:(cl+1)*d]
			for j, v := range xr {
				row[j] += float64(g * v)
			}
		}
	})
}

// byRows calls four for the rows r..r+3 of the m rows of x (stride apart,
// d wide) in groups of four, in order, then one for each remaining row.
// The K > 1 kernels give the bits of one's loops, so the grouping does not
// change them.
func byRows(x []float64, m, stride, d int, four func(r int, x0, x1, x2, x3 []float64), one func(r int, xr []float64)) {
	row := func(r int) []float64 { return x[r*stride : r*stride+d] }
	r := 0
	for ; r+4 <= m; r += 4 {
		four(r, row(r), row(r+1), row(r+2), row(r+3))
	}
	for ; r < m; r++ {
		one(r, row(r))
	}
}

// partScratch returns part's buffers for the logistic loss's parts of a
// block (plus, e, d2) and its margin gradient (K).
func (o *Objective) partScratch() {
	if o.s.parts1 == nil {
		o.s.parts1 = make([]float64, rowParts*partsStride)
		for p := range o.s.gz {
			o.s.gz[p] = make([]float64, o.k)
		}
	}
}

// gradBlock returns FuncGrad's blockFunc: the losses in row order and the
// coefficients l'(z_i)/m (see FuncGrad). Without value, the logistic
// loss's rows skip their values (Grad: the coefficients, hence the
// gradient, are the same bits).
func (o *Objective) gradBlock(value bool) blockFunc {
	o.partScratch()
	mf := float64(o.m)
	if o.k > 1 {
		return func(part, lo int, s, c []float64, sum *float64) {
			k, gz := o.k, o.s.gz[part]
			f := *sum
			for r := range len(s) / k {
				f += o.loss.Grad(gz, s[r*k:(r+1)*k], o.label(lo+r))
				for cl, g := range gz {
					c[r*k+cl] = g / mf
				}
			}
			*sum = f
		}
	}
	return func(part, lo int, s, c []float64, sum *float64) {
		y, gz := o.labels(lo, len(s)), o.s.gz[part]
		var plus, e []float64
		if o.logistic != nil {
			buf := o.s.parts1[part*partsStride:]
			plus, e = buf[:len(s)], buf[passRows:passRows+len(s)]
			kernel.LogisticParts(s, y, plus, e, c, buf[2*passRows:2*passRows+len(s)])
			if o.signs && !value {
				// Grad on labels -1 and +1: every row the kernel's, no values.
				for r := range c[:len(s)] {
					c[r] /= mf
				}
				return
			}
		}
		f := *sum
		for r, sr := range s {
			if o.logistic != nil && (y[r] == 1 || y[r] == -1) {
				// Logistic.Grad: the value plus + log1p(e)
				if value {
					f += plus[r] + math.Log1p(e[r])
				}
				c[r] /= mf
				continue
			}
			f += o.rowGrad1(sr, y[r], lo+r, gz)
			c[r] = gz[0] / mf
		}
		*sum = f
	}
}

// signs reports whether every label of y is -1 or +1.
func signs(y []float64) bool {
	for _, v := range y {
		if v != 1 && v != -1 {
			return false
		}
	}
	return true
}

// eval is the solver's FuncGrad (grad not nil) and Func: faster, to other
// bits. It keeps the margins of the view's rows at w (z, marginsAt) for
// curvature, scales the gradient's data part by 1/m at the end, and for
// the fused logistic path keeps the margin Hessians at w too (hz, hzAt,
// from the same exponential) and sums the values max(m, 0) + log1p(e) as
// sum max(m, 0) + sum log(prod (1 + e)) (logProduct). At w = 0 for K = 1,
// where the solver starts and its first Hessian will want X^T X, the pass
// sums X^T X too, each block while it is in cache.
func (o *Objective) eval(w, grad []float64) float64 {
	o.allocMargins()
	z, k := o.s.z, o.k
	if grad == nil {
		o.margins(w)
		var sum float64
		o.viewRows(func(i int) { sum += o.rowValue(z[i*k:(i+1)*k], i) })
		return o.finish(w, nil, sum, false)
	}
	var xtx *gramSum
	if k == 1 && o.e == 0 && o.s.xtx == nil && !slices.ContainsFunc(w, func(v float64) bool { return v != 0 }) {
		xtx = o.newGramSum(o.parts())
		o.s.blockHook = func(part, b0, m, hi int) { xtx.block(part, b0, m, hi, nil) }
		defer func() { o.s.blockHook = nil }()
	}
	var sum float64
	switch {
	case o.logistic != nil:
		// The logistic loss gives the curvature from the same exponential:
		// hz at w comes with the gradient (curvature then skips its pass).
		o.partScratch()
		o.allocCurvature()
		hz := o.s.hz
		var logs [rowParts]logProduct
		sum = o.rowPass(grad, w, func(part, lo int, s, c []float64, sum *float64) {
			copy(z[lo:], s)
			y, hz, lp := o.labels(lo, len(s)), hz[lo:lo+len(s)], &logs[part]
			buf := o.s.parts1[part*partsStride:]
			plus, e := buf[:len(s)], buf[passRows:passRows+len(s)]
			// Parts1's bits (the kernel's for the labels -1 and +1)
			kernel.LogisticParts(s, y, plus, e, c, hz)
			var plusSum float64
			for r, sr := range s {
				if y[r] != 1 && y[r] != -1 {
					plus[r], e[r], c[r], hz[r] = o.logistic.Parts1(sr, y[r])
				}
				lp.add(1 + e[r])
				plusSum += plus[r]
			}
			*sum += plusSum
		})
		for p := range logs {
			sum += logs[p].sum()
		}
		o.s.hzAt = append(o.s.hzAt[:0], w...)
	case k == 1:
		o.partScratch()
		sum = o.rowPass(grad, w, func(part, lo int, s, c []float64, sum *float64) {
			copy(z[lo:], s)
			gz := o.s.gz[part]
			for r, sr := range s {
				*sum += o.rowGrad1(sr, o.label(lo+r), lo+r, gz)
				c[r] = gz[0]
			}
		})
	default:
		sum = o.rowPass(grad, w, func(_, lo int, s, c []float64, sum *float64) {
			copy(z[lo*k:], s)
			for r := range len(s) / k {
				*sum += o.loss.Grad(c[r*k:(r+1)*k], s[r*k:(r+1)*k], o.label(lo+r))
			}
		})
	}
	o.s.marginsAt = append(o.s.marginsAt[:0], w...)
	if xtx != nil {
		o.setXTX(func(dst []float64, stride int) { xtx.finish(dst, stride, 1) })
	}
	return o.finish(w, grad, sum, false)
}

// allocMargins makes the margins' storage, once.
func (o *Objective) allocMargins() {
	if len(o.s.z) != (o.n+o.e)*o.k {
		o.s.z = make([]float64, (o.n+o.e)*o.k)
	}
}

// margins sets the margins z of every row of X and the extra rows at w
// (the dots of rowPass, with their bits) and records w in marginsAt.
func (o *Objective) margins(w []float64) {
	o.allocMargins()
	o.s.marginsAt = append(o.s.marginsAt[:0], w...)
	o.marginsTo(o.s.z, w)
}

// marginsTo writes the margins of every row of X and the extra rows at w
// into z.
func (o *Objective) marginsTo(z, w []float64) {
	x := o.x.RawMatrix()
	o.dots(z[:o.n*o.k], w, x.Data, x.Stride)
	if o.e > 0 {
		ex := o.ex.RawMatrix()
		o.dots(z[o.n*o.k:], w, ex.Data, ex.Stride)
	}
}

// hessVec writes the product of the Hessian of F at the point of the last
// curvature call with v into dst: the margins of v, times each row's
// margin Hessian, added over the rows (rowPass), over m, plus lambda v.
func (o *Objective) hessVec(dst, v []float64) { o.hessVecWith(dst, v, o.s.hz) }

// hessVecWith writes into dst the product with v of the Hessian of F whose
// rows have the margin Hessians hz (K*K per row of the view): the margins
// of v, times each row's margin Hessian, added over the rows (rowPass),
// over m, plus lambda v.
func (o *Objective) hessVecWith(dst, v, hz []float64) {
	k, kk := o.k, o.k*o.k
	if k == 1 {
		o.rowPass(dst, v, func(_, lo int, s, c []float64, _ *float64) {
			h := hz[lo : lo+len(s)]
			for r, sr := range s {
				c[r] = h[r] * sr
			}
		})
	} else {
		o.rowPass(dst, v, func(_, lo int, s, c []float64, _ *float64) {
			for r := range len(s) / k {
				h, sr := hz[(lo+r)*kk:(lo+r+1)*kk], s[r*k:(r+1)*k]
				for a := range k {
					c[r*k+a] = dot(h[a*k:(a+1)*k], sr)
				}
			}
		})
	}
	scale(1/float64(o.m), dst)
	if o.lambda != 0 {
		axpy(o.lambda, v, dst)
	}
}

// HessVec writes H(w) v into dst, H the Hessian of F at w, without forming
// H: two products of the rows with vectors (O(m K d + m K^2)).
func (o *Objective) HessVec(dst, w, v []float64) {
	o.checkLen(dst, w, v)
	o.curvature(w)
	o.hessVec(dst, v)
}

// logProduct sums the logarithms of factors in (1, 2] as the logarithm of
// their products over runs of logRun factors (at most 2^logRun, finite):
// one logarithm per run instead of one per factor. Each product carries a
// relative rounding error of at most logRun ulps, so the sum is within
// about m 2^-53 (absolute) of the sum of the logarithms; the solver uses
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
