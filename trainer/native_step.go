package trainer

import (
	"math"
	"math/rand/v2"

	"github.com/sirupsen/logrus"
	gonumblas "gonum.org/v1/gonum/blas/gonum"

	"github.com/stabpriv/stabpriv/internal/kernel"
)

// shuffle permutes order as rng.Shuffle does with a swap of two elements:
// the same draws, rng.Uint64N(i+1) for i = n-1 down to 1, and the same
// swaps in the same order, so the permutation is the same
// (TestShuffleMatchesRand). On a pass order of millions of examples each
// swap reads an element at a random place, a cache miss; here the draws
// run a round of shuffleAhead swaps ahead of the swaps, and the elements
// they will swap are hinted to the cache a round at a time
// (kernel.HintIntsAt), so that the misses overlap instead of coming one
// after another.
func shuffle(rng *rand.Rand, order []int) {
	var f shuffler
	f.reset(rng, order)
	for f.round(shuffleAhead) {
	}
}

// shuffleAhead is how many swaps ahead of the swaps shuffle draws and
// hints, and the most a shuffler's round draws.
const shuffleAhead = 64

// shuffler is shuffle cut into rounds, so that a pass can draw the order
// of the next pass a few swaps at a time between its own steps
// (passFused).
type shuffler struct {
	rng   *rand.Rand
	order []int
	// buf[b^1][:ncur] holds the draws of the swaps of positions top,
	// top-1, ...; the next round draws for positions i, i-1, ... into
	// buf[b]. (Indices, not a slice of buf: a shuffler that pointed into
	// itself would escape to the heap.)
	buf          [2][shuffleAhead]int
	ncur, top, i int
	b            int
}

// reset starts the shuffle of order with the draws of rng.
func (f *shuffler) reset(rng *rand.Rand, order []int) {
	f.rng, f.order, f.ncur, f.top, f.i, f.b = rng, order, 0, 0, len(order)-1, 0
}

// round draws the next m (at most shuffleAhead) swaps and hints their
// elements, makes the swaps the round before drew, and reports whether
// swaps remain.
func (f *shuffler) round(m int) bool {
	i, order := f.i, f.order
	nxt := f.buf[f.b][:max(min(m, i), 0)]
	for q := range nxt {
		nxt[q] = int(f.rng.Uint64N(uint64(i - q + 1)))
	}
	kernel.HintIntsAt(order, nxt)
	for q, j := range f.buf[f.b^1][:f.ncur] {
		a := f.top - q
		order[a], order[j] = order[j], order[a]
	}
	f.top, f.i, f.ncur, f.b = i, i-len(nxt), len(nxt), f.b^1
	return f.i > 0 || f.ncur > 0
}

// orderAhead is the order of the pass after the current one, which
// passFused draws between its own steps: a b = 1 step waits on its chain
// of dependent operations (the margin, the exponential, the update that
// the next margin needs), and the draws and swaps of the next order, which
// do not depend on it, fill the time. Only passFused draws ahead (one
// order of n ints more), and only in a run of more than one pass.
type orderAhead struct {
	shuffler
	pcg   rand.PCG
	order []int
	pass  int  // the pass whose order it draws or holds
	done  bool // order is whole
}

// newOrderAhead returns the buffer of the orders of n examples.
func newOrderAhead(n int) *orderAhead {
	a := &orderAhead{order: make([]int, n)}
	a.rng = rand.New(&a.pcg)
	return a
}

// start begins drawing the order of pass j as sampler.pass draws it: the
// identity permutation shuffled by the stream of (seed, j).
func (a *orderAhead) start(seed uint64, j int) {
	for i := range a.order {
		a.order[i] = i
	}
	a.pcg.Seed(seed, uint64(j)+1)
	a.reset(a.rng, a.order)
	a.pass, a.done = j, false
}

// passOrder returns the example order of pass j: the one passFused drew
// during pass j-1 if it is whole, otherwise the sampler's.
func (e *native) passOrder(j int) []int {
	if a := e.ahead; a != nil && a.done && a.pass == j {
		a.done = false
		e.smp.order, a.order = a.order, e.smp.order
		return e.smp.order
	}
	return e.smp.pass(j)
}

// gather copies the rows, norms and labels of the examples idx, which start
// at position pos of the pass order, into the chunk buffers.
func (e *native) gather(idx []int, pos int) {
	d, p := e.d, e.p
	e.c0 = pos
	for q, i := range idx {
		copy(e.cx[q*d:(q+1)*d], p.x[i*d:(i+1)*d])
		e.cn[q], e.cy[q] = p.norm[i], p.y[i]
	}
}

// step does one SGD step on the minibatch of example indices batch, which
// starts at position pos of the pass order, with the update of the Step:
//
//	w = proj_R(prox(w - eta*((1/b) sum_i clip_G(grad_i) + mu*w)))
//
// then folds w into the average. b is Config.Batch, also for a short last
// minibatch. With the native kernel it allocates nothing and never fails.
func (e *native) step(batch []int, pos int, eta float64) error {
	if e.mk != nil || e.ek != nil {
		return e.kernelStep(batch, pos, eta)
	}
	if e.fuseBatch {
		e.batchStep(e.smp.order, pos, eta)
		return nil
	}
	if e.acc == nil {
		x := e.exampleGrad(batch[0], pos)
		e.sgd.updateOneGLM(e.w, eta, e.gz, x)
	} else {
		acc, d := e.acc, e.d
		clear(acc)
		for q, i := range batch {
			x := e.exampleGrad(i, pos+q)
			for k, g := range e.gz {
				e.sgd.Add(acc[k*d:(k+1)*d], g, x)
			}
		}
		e.sgd.Update(e.w, eta, acc)
	}
	e.endStep(eta)
	return nil
}

// batchStep is step for K = 1 and b > 1 without dropout (e.fuseBatch) on
// the minibatch at positions pos to pos+b of the pass order: the same
// operations in the same order on each weight, grouped by kind over parts
// of batchChunk examples instead of example by example, on the rows where
// they lie. The margins all use the weights of the start of the step, so
// they do not wait on each other: kernel.DotsAt takes four at a time with
// the bits of dot. Then come the clipped derivatives, and kernel.AddRowsAt
// adds the clipped gradients to the sum with the bits of axpy, the
// examples in their order. Each part hints the rows, norms and labels of as
// many examples batchAhead positions on in the pass order to the cache, so
// that fetching them from memory overlaps every kind of work of the step.
// The sum is applied as Step.Update does, by kernel.ShrinkDot, whose update
// is Shrink's (the product it also returns is not used).
func (e *native) batchStep(order []int, pos int, eta float64) {
	p := e.p
	d, n := e.d, len(order)
	end := min(pos+p.cfg.Batch, n)
	w, x, norm, y := e.w[:d], p.x, p.norm, p.y
	acc := e.acc
	clear(acc)
	for c0 := pos; c0 < end; c0 += batchChunk {
		c1 := min(c0+batchChunk, end)
		rows := order[c0:c1]
		ahead := order[min(c0+batchAhead, n):min(c1+batchAhead, n)]
		g := e.gb[:len(rows)]
		kernel.DotsAt(g, w, x, d, rows, ahead)
		kernel.HintAt(norm, ahead)
		kernel.HintAt(y, ahead)
		for q, i := range rows {
			gq := e.margin.Deriv(g[q], y[i])
			g[q] = gq * e.sgd.ClipScale(math.Abs(gq)*norm[i])
		}
		if e.obs != nil && e.obs.example != nil {
			for q, i := range rows {
				e.gz[0] = g[q]
				e.obs.example(e.t, i, x[i*d:(i+1)*d], e.gz)
			}
		}
		kernel.AddRowsAt(acc, g, x, d, rows)
	}
	a, thr := e.sgd.decay(eta)
	kernel.ShrinkDot(e.w, acc, a, e.sgd.sumScale(eta), thr, acc)
	e.sgd.project(e.w)
	e.endStep(eta)
}

// batchChunk is the number of examples batchStep takes through the margins,
// the derivatives and the sum at once, and batchAhead how many positions
// of the pass order ahead of them it hints examples to the cache.
const (
	batchChunk = 16
	batchAhead = 16
)

// endStep is the end of every step after the update: the average.
func (e *native) endStep(eta float64) {
	if e.avg != nil {
		e.sgd.Average(e.avg, e.w, e.t)
	}
	if e.obs != nil && e.obs.step != nil {
		e.obs.step(e.t, eta, e.w)
	}
}

// kernelStep is step with the gradients of the engine's kernel: the rows of
// the minibatch after dropout go to the kernel at once (mk) or one by one
// (ek), and each example's gradient is clipped, summed and applied by the
// Step exactly as step does with the native kernel's.
func (e *native) kernelStep(batch []int, pos int, eta float64) error {
	d, k, sgd := e.d, e.k, e.sgd
	m := len(batch)
	for q, i := range batch {
		x, xn, y := e.row(i, pos+q)
		copy(e.xb[q*d:(q+1)*d], x)
		e.nb[q], e.yb[q] = xn, y
	}
	if e.acc != nil {
		clear(e.acc)
	}
	if e.ek != nil {
		for q := 0; q < m; q++ {
			x := e.xb[q*d : (q+1)*d]
			if _, err := e.ek.ExampleGrad(e.g, e.w, x, e.yb[q]); err != nil {
				return err
			}
			c, _ := sgd.Clip(e.g)
			if e.obs != nil && e.obs.example != nil {
				e.obs.example(e.t, batch[q], x, e.g)
			}
			if e.acc == nil {
				sgd.UpdateOne(e.w, eta, c, e.g)
			} else {
				sgd.Add(e.acc, c, e.g)
			}
		}
	} else {
		gzb := e.gzb[:m*k]
		if err := e.mk.MarginGrads(gzb, e.w, e.xb[:m*d], e.yb[:m]); err != nil {
			return err
		}
		for q := 0; q < m; q++ {
			x, gz := e.xb[q*d:(q+1)*d], gzb[q*k:(q+1)*k]
			e.clipGLM(gz, e.nb[q])
			if e.obs != nil && e.obs.example != nil {
				e.obs.example(e.t, batch[q], x, gz)
			}
			if e.acc == nil {
				sgd.updateOneGLM(e.w, eta, gz, x)
			}
		}
		if e.acc != nil {
			e.addRows(gzb, m)
		}
	}
	if e.acc != nil {
		sgd.Update(e.w, eta, e.acc)
	}
	e.endStep(eta)
	return nil
}

// addRows adds the clipped gradients of the m rows of e.xb to e.acc: row
// j of the sum gets gz[q*K+j] x_q for q = 0, 1, ..., m-1 in order, four rows
// at a time by kernel.AddRows4 (the bits of one axpy per row and class).
func (e *native) addRows(gz []float64, m int) {
	d, k := e.d, e.k
	x := func(q int) []float64 { return e.xb[q*d : (q+1)*d] }
	for j := range k {
		acc := e.acc[j*d : (j+1)*d]
		q := 0
		for ; q+4 <= m; q += 4 {
			c := [4]float64{gz[q*k+j], gz[(q+1)*k+j], gz[(q+2)*k+j], gz[(q+3)*k+j]}
			kernel.AddRows4(acc, c, x(q), x(q+1), x(q+2), x(q+3))
		}
		for ; q < m; q++ {
			e.sgd.Add(acc, gz[q*k+j], x(q))
		}
	}
}

// exampleGrad computes the clipped margin gradient of example i, at position
// pos of the pass order, into e.gz and returns the (masked) row x: the
// clipped per-example gradient is gz x^T, and it is clipped by its Frobenius
// norm ||gz|| ||x||.
func (e *native) exampleGrad(i, pos int) []float64 {
	x, xn, y := e.row(i, pos)
	if e.k == 1 {
		g := e.margin.Deriv(dot(e.w, x), y)
		e.gz[0] = g * e.sgd.ClipScale(math.Abs(g)*xn)
	} else {
		d := e.d
		for k := range e.z {
			e.z[k] = dot(e.w[k*d:(k+1)*d], x)
		}
		e.p.loss.Grad(e.gz, e.z, y)
		e.clipGLM(e.gz, xn)
	}
	if e.obs != nil && e.obs.example != nil {
		e.obs.example(e.t, i, x, e.gz)
	}
	return x
}

// clipGLM scales the margin gradient gz of an example whose row has norm
// xn by the clip scale of its gradient gz x^T, of norm ||gz|| xn.
func (e *native) clipGLM(gz []float64, xn float64) {
	if c := e.sgd.ClipScale(math.Sqrt(sqNorm(gz)) * xn); c != 1 {
		for k := range gz {
			gz[k] *= c
		}
	}
}

// row returns the row of example i, at position pos of the pass order, after
// s-dropout, its norm, which the clipping uses, and its label. Without
// dropout the row is the (gathered) row itself.
func (e *native) row(i, pos int) (x []float64, norm, y float64) {
	if e.cx != nil {
		q := pos - e.c0
		x, norm, y = e.cx[q*e.d:(q+1)*e.d], e.cn[q], e.cy[q]
	} else {
		x, norm, y = e.p.x[i*e.d:(i+1)*e.d], e.p.norm[i], e.p.y[i]
	}
	if e.drop >= 1 {
		return x, norm, y
	}
	norm = e.smp.dropout(e.xm, x, norm, e.drop, e.j, pos)
	return e.xm, norm, y
}

// dot returns <a, b> for len(b) >= len(a). It calls gonum's native BLAS
// directly (its assembly kernel on amd64), not through blas64, whose
// implementation a program may swap for a cgo one that costs more per call
// than a whole step. On rows of a few tens of features it is as fast as a
// plain loop with four partial sums, and faster from about 64 features on
// (BenchmarkDot*).
func dot(a, b []float64) float64 {
	return gonumblas.Implementation{}.Ddot(len(a), a, 1, b, 1)
}

// axpy sets y += alpha*x for len(y) >= len(x).
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += float64(alpha * v)
	}
}

// levelEnabled reports whether l logs at level. For a logger that is neither
// a *logrus.Logger nor a *logrus.Entry it assumes yes.
func levelEnabled(l logrus.FieldLogger, level logrus.Level) bool {
	switch l := l.(type) {
	case *logrus.Logger:
		return l.IsLevelEnabled(level)
	case *logrus.Entry:
		return l.Logger.IsLevelEnabled(level)
	}
	return true
}
