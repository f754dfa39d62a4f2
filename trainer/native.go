package trainer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sirupsen/logrus"
	gonumblas "gonum.org/v1/gonum/blas/gonum"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/hugepage"
	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
)

// observer is a test-only hook on a problem. It is nil in production, where
// it costs one nil check per example.
type observer struct {
	// example, when set, is called for every example of a step after dropout
	// and clipping, with the step t (from 1), the example index i, the masked
	// row xm and the clipped margin gradient g (length K): the clipped
	// per-example gradient of the loss is g xm^T. The slices are read only
	// and valid only during the call.
	example func(t, i int, xm, g []float64)
	// step, when set, is called after every step with the step size and the
	// weights after the prox and the projection (read only).
	step func(t int, eta float64, w []float64)
}

// native is the pass driver of every engine: the state of one run, the
// weights and every scratch buffer, allocated once so that a native step
// allocates nothing. It runs the passes, draws the minibatches and the
// s-dropout masks, and makes the update of the run's Step (the clipping, the
// minibatch sum, the decay, the prox, the projection and the averaging),
// whatever computes the gradients: the native kernel, inline here
// (passFused, batchStep and step), or the kernel of another engine
// (kernelStep), so that every engine makes the same update.
type native struct {
	p   *problem
	smp *sampler
	obs *observer
	sgd *Step // the update of a step, &p.sgd

	// mk and ek are the kernel of a non-native engine, nil for the native
	// one: margin gradients of a minibatch of a linear model (mk), or the
	// whole gradient of one example of a user model (ek).
	mk MarginKernel
	ek ExampleKernel
	// dim is the number of parameters: K*d, or the user model's Dim.
	dim int
	// The rows after dropout, norms and labels of a minibatch, the margin
	// gradients of its examples (mk) and the gradient of one example (ek).
	xb, nb, yb []float64
	gzb        []float64
	g          []float64
	// ctxEvery is the number of steps between two checks of the context
	// inside a pass: ctxSteps for the native kernel, 1 for a kernel engine,
	// whose step costs far more than the check.
	ctxEvery int

	// margin is the scalar view of a K = 1 loss (nil for K > 1). A type
	// switch calling losses.Logistic's Deriv without the interface made no
	// measurable difference in BenchmarkNativePass3600x33: the exponential
	// dominates the derivative.
	margin losses.Margin

	k, d int
	drop float64 // s

	w   []float64 // K x d weights, row-major
	avg []float64 // running mean of the iterates (Average only)
	acc []float64 // K x d sum of the clipped per-example gradients (b > 1)
	xm  []float64 // masked row (Dropout < 1)
	z   []float64 // K margins
	gz  []float64 // K margin gradients
	t   int       // steps done
	j   int       // current pass, 0-based

	// fuse selects passFused, for K = 1 and b = 1 without dropout and
	// projection; fuseBatch selects batchStep, for K = 1 and b > 1 without
	// dropout.
	fuse, fuseBatch bool
	// The margin gradients of a part of a minibatch (fuseBatch).
	gb []float64
	// The two buffers of passFused (fuse) and the number of examples of each.
	fbuf   [2]rowBlock
	fblock int

	// The rows, norms and labels of the next chunk examples of the pass are
	// copied into cx, cn and cy, starting at position c0 (chunk = 0: rows
	// are read in place, as passFused always does).
	chunk  int
	cx     []float64
	cn, cy []float64
	c0     int
}

// gatherChunk is the least number of examples gathered at once; a chunk
// holds whole minibatches. A step of the unfused paths (dropout, K > 1, the
// kernel engines) is long enough that the processor does not look ahead to
// the next example, so a row fetched from a random place in memory inside a
// step stalls it. Instead, every step issues prefetch hints for the rows one
// chunk ahead in the pass order (kernel.Prefetch: PREFETCHT0 on amd64,
// nothing elsewhere), which the memory system serves while the steps
// compute, and at a chunk boundary those rows are copied, from cache, into a
// contiguous buffer; 64 rows of a few tens of features stay in L1. Long rows
// (more than gatherMaxD features) and chunks of more than gatherMaxRows rows
// (large minibatches) are read in place: the hardware prefetcher streams
// long rows, and copying would only add work. The fused paths have their
// own: passFused (b = 1, any d) copies the examples block by block into two
// buffers of its own (rowBlock), and batchStep (b > 1, K = 1) reads rows in
// place and hints the rows, norms and labels batchAhead examples ahead,
// spread over all the work of a step.
const (
	gatherChunk   = 64
	gatherMaxD    = 256
	gatherMaxRows = 1024
)

// newNative returns the driver of a run with the kernel of the engine of
// p.cfg (a user model's kernel if p.cfg.Model is set). Its kernel must be
// released with close.
func newNative(p *problem) (*native, error) {
	var (
		mk  MarginKernel
		ek  ExampleKernel
		dim = p.k * p.d
		err error
	)
	switch {
	case p.cfg.Model != nil:
		if ek, err = p.cfg.Model.Kernel(p.d); err != nil {
			return nil, err
		}
		if dim = ek.Dim(); dim <= 0 {
			ek.Close()
			return nil, fmt.Errorf("%w: user model with %d parameters", ErrConfig, dim)
		}
	case p.cfg.Engine != Native:
		newKernel, err := engineKernel(p.cfg.Engine)
		if err != nil {
			return nil, err
		}
		if mk, err = newKernel(p.kernelProblem()); err != nil {
			return nil, err
		}
	case p.loss == nil:
		return nil, fmt.Errorf("%w: the native engine needs a built-in loss", ErrConfig)
	}
	e := &native{
		p: p, smp: newSampler(p), obs: p.obs, sgd: &p.sgd,
		mk: mk, ek: ek, dim: dim, ctxEvery: ctxSteps,
		k: p.k, d: p.d, drop: p.cfg.Dropout,
		w:  make([]float64, dim),
		xm: make([]float64, p.d),
		z:  make([]float64, p.k), gz: make([]float64, p.k),
	}
	if mk != nil || ek != nil {
		b := p.cfg.Batch
		e.ctxEvery = 1
		e.xb, e.nb, e.yb = make([]float64, b*p.d), make([]float64, b), make([]float64, b)
		if mk != nil {
			e.gzb = make([]float64, b*p.k)
		} else {
			e.g = make([]float64, dim)
			if err := ek.Init(e.w); err != nil {
				ek.Close()
				return nil, err
			}
		}
	} else if p.k == 1 {
		m, ok := p.loss.(losses.Margin)
		if !ok {
			return nil, fmt.Errorf("%w: scalar loss %s does not implement losses.Margin", ErrConfig, p.loss.Name())
		}
		e.margin = m
	}
	if p.cfg.Batch > 1 {
		e.acc = make([]float64, dim)
	}
	if p.cfg.Average {
		e.avg = make([]float64, dim)
	}
	b := p.cfg.Batch
	e.fuseBatch = mk == nil && ek == nil && e.k == 1 && b > 1 && e.drop >= 1
	if chunk := b * ((gatherChunk + b - 1) / b); !e.fuseBatch && p.d <= gatherMaxD && chunk <= gatherMaxRows {
		e.chunk = chunk
		e.cx = make([]float64, chunk*p.d)
		e.cn, e.cy = make([]float64, chunk), make([]float64, chunk)
	}
	e.fuse = mk == nil && ek == nil && e.k == 1 && b == 1 && e.drop >= 1 && p.cfg.Radius == 0 &&
		(p.d <= gatherMaxD || gonumDdotPairs)
	if e.fuseBatch {
		e.gb = make([]float64, batchChunk)
	}
	if e.fuse {
		if e.fblock = fusedBlock(p.n, p.d, func() bool { return rowsOnHugePages(p.x) }); e.fblock > 0 {
			e.fbuf = [2]rowBlock{newRowBlock(e.fblock, p.d), newRowBlock(e.fblock, p.d)}
		}
	}
	return e, nil
}

// close releases the kernel of the engine.
func (e *native) close() {
	if e.mk != nil {
		e.mk.Close()
	}
	if e.ek != nil {
		e.ek.Close()
	}
}

// runPasses is the pass driver of every engine: it trains with the engine of
// p.cfg and returns the weights (K x d, row-major, or the parameters of a
// user model), filling the pass records, the objective and the gradient norm
// of p.run.
func runPasses(ctx context.Context, p *problem) (_ []float64, err error) {
	e, err := newNative(p)
	if err != nil {
		return nil, err
	}
	defer e.close()
	run := p.run
	var (
		start       = time.Now()
		info        = levelEnabled(p.log, logrus.InfoLevel)
		debug       = levelEnabled(p.log, logrus.DebugLevel)
		grad        []float64
		done        bool
		f, gradNorm float64
	)
	for j := 0; j < p.cfg.Passes; j++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("trainer: stopped before pass %d: %w", j+1, err)
		}
		lo, hi, err := e.pass(ctx, j)
		if err != nil {
			return nil, err
		}
		if !check.Finite(sqNorm(e.w)) {
			return nil, fmt.Errorf("%w: the iterates diverged in pass %d; lower the step size", ErrConfig, j+1)
		}
		run.PassMaxStep = append(run.PassMaxStep, hi)
		run.PassMinStep = append(run.PassMinStep, lo)
		run.Stats.PassesDone = j + 1
		if info {
			p.log.WithFields(logrus.Fields{
				"pass": j + 1, "steps": e.t, "eta_max": hi, "eta_min": lo, "elapsed": time.Since(start),
			}).Info("trainer: pass done")
		}
		if p.cfg.Tolerance > 0 || debug {
			if grad == nil {
				grad = make([]float64, e.dim)
			}
			if f, gradNorm, err = e.objective(e.weights(), grad); err != nil {
				return nil, err
			}
			done = true
			p.log.WithFields(logrus.Fields{"pass": j + 1, "objective": f, "grad_norm": gradNorm}).Debug("trainer: objective")
			if p.cfg.Tolerance > 0 && gradNorm <= p.cfg.Tolerance {
				run.Stats.Converged = true
				break
			}
		} else {
			done = false
		}
	}
	w := e.weights()
	if !done && !p.cfg.SkipObjective {
		if grad == nil {
			grad = make([]float64, e.dim)
		}
		if f, gradNorm, err = e.objective(w, grad); err != nil {
			return nil, err
		}
		done = true
	}
	run.Stats.Objective, run.Stats.GradNorm, run.Stats.Evaluated = f, gradNorm, done
	if p.cfg.Tolerance > 0 && gradNorm <= p.cfg.Tolerance {
		run.Stats.Converged = true
	}
	if !check.Finite(f) {
		return nil, fmt.Errorf("%w: the objective diverged to %v; lower the step size", ErrConfig, f)
	}
	if e.ek != nil {
		if err := e.ek.Finish(w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// objective returns F_S(w) and the norm of the minimum-norm subgradient of
// F_S at w: with the loss (problem.objective), or for a user model with its
// kernel, the mean loss over the rows (without dropout) plus R(w). grad is
// scratch of length dim.
func (e *native) objective(w, grad []float64) (f, gnorm float64, err error) {
	p := e.p
	if e.ek == nil {
		f, gnorm = p.objective(w, grad, e.z, e.gz)
		return f, gnorm, nil
	}
	clear(grad)
	for i := 0; i < p.n; i++ {
		l, err := e.ek.ExampleGrad(e.g, w, p.x[i*p.d:(i+1)*p.d], p.y[i])
		if err != nil {
			return 0, 0, err
		}
		f += l
		for j, v := range e.g {
			grad[j] += v
		}
	}
	inv := 1 / float64(p.n)
	f *= inv
	for j := range grad {
		grad[j] *= inv
	}
	f += p.cfg.Reg.Value(w)
	gnorm = p.cfg.Reg.MinNormSubgrad(grad, grad, w)
	return f, gnorm, nil
}

// weights returns the weights the run returns: the average of the iterates or
// the last iterate.
func (e *native) weights() []float64 {
	if e.avg != nil {
		return e.avg
	}
	return e.w
}

// ctxSteps is the number of steps between two checks of the context inside
// a pass of the native kernel.
const ctxSteps = 4096

// pass runs pass j (0-based) in the order of the sampler and returns the
// smallest and largest step size used.
func (e *native) pass(ctx context.Context, j int) (lo, hi float64, err error) {
	p := e.p
	order := e.smp.pass(j)
	e.j = j
	if e.fuse {
		return e.passFused(ctx, order)
	}
	b := p.cfg.Batch
	lo = math.Inf(1)
	if e.fuseBatch {
		for _, i := range order[:min(batchAhead, len(order))] {
			kernel.PrefetchExample(&p.x[i*e.d], e.d, &p.norm[i], &p.y[i])
		}
	}
	for s := 0; s < len(order); s += b {
		if e.chunk > 0 && s%e.chunk == 0 {
			e.gather(order[s:min(s+e.chunk, len(order))], s)
		}
		if q := s + e.chunk; e.chunk > 0 && q < len(order) {
			for _, i := range order[q:min(q+b, len(order))] {
				kernel.Prefetch(p.x[i*e.d : (i+1)*e.d])
			}
		}
		e.t++
		eta, err := e.sgd.Eta(e.t)
		if err != nil {
			return 0, 0, err
		}
		if eta < lo {
			lo = eta
		}
		if eta > hi {
			hi = eta
		}
		if e.t%e.ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, fmt.Errorf("trainer: stopped at step %d: %w", e.t, err)
			}
		}
		if err := e.step(order[s:min(s+b, len(order))], s, eta); err != nil {
			return 0, 0, err
		}
	}
	return lo, hi, nil
}

// passFused is pass for K = 1 and b = 1 without dropout or projection (the
// common case, e.fuse): the same steps as step, in the same order, as one
// loop that keeps the margin and the step size in locals instead of going
// through e's fields and methods on every step. Per step it
//   - takes the margin z, which the previous step's kernel computed (dot
//     only on the first row), and its clipped derivative g;
//   - updates w = prox(a w - eta g x) and computes the next row's margin in
//     the same loop, so a step reads the weights once: kernel.ShrinkDot up
//     to gatherMaxD features, whose margins the model files pinned by
//     package cmd/stabpriv were computed with; beyond, kernel.ShrinkDdot,
//     whose margins are dot's: such rows were trained by the
//     example-by-example step before passFused took them, and keep its bits
//     (TestPassFusedWideMatchesStep). It takes them only where dot is
//     gonum's amd64 assembly (gonumDdotPairs).
//
// Rows are read in place, with the row, norm and label of the example
// fusedAhead positions on hinted to the cache at every step
// (kernel.PrefetchExample), unless they take fusedBlockMinBytes or more
// and do not lie on huge pages (rowsOnHugePages; package trainer and the
// command's reader advise the matrices they build onto them,
// hugepage.Advise). Then they are read from copies made block by block
// (rowBlock.gather):
// the next fblock examples of the pass order are copied, in that order,
// into the other of two buffers when the step before the block needs its
// first row, and the steps read their rows one after another from a buffer
// that fits in the L2 cache. A pass over rows that large is bound by their
// random reads (each row on its own page: a TLB miss, then a cache miss);
// issued as one burst of independent hints per block, these overlap each
// other, where hints spread over the steps a fixed distance ahead
// overlapped less (BenchmarkEpochOverStream1Mx100, docs/PERFORMANCE.md).
// On huge pages a random row costs its cache miss alone, which the hints
// ahead cover, and the copies would only add work.
// The copies hold the rows' bits, so a step computes the same either way
// (TestPassFusedBlocks). A Constant schedule's step size is computed once
// per pass. The update is the Step's: its move (the one updateOneGLM
// makes, without a projection), fused with the next margin, then Average.
func (e *native) passFused(ctx context.Context, order []int) (lo, hi float64, err error) {
	p, d, n, sgd := e.p, e.d, len(order), e.sgd
	w := e.w[:d]
	lo = math.Inf(1)
	if n == 0 {
		return lo, 0, nil
	}
	var eta float64
	constant := p.cfg.Schedule == Constant
	if constant {
		if eta, err = sgd.Eta(e.t + 1); err != nil {
			return 0, 0, err
		}
		lo, hi = eta, eta
	}
	// ddot: the margins in dot's order (kernel.ShrinkDdot).
	ddot := d > gatherMaxD
	// The examples are read from xs, ns and ys: at their index i in place,
	// or at their position q in the block cur when blk > 0.
	xs, ns, ys := p.x, p.norm, p.y
	blk := e.fblock
	cur, nxt := &e.fbuf[0], &e.fbuf[1]
	r := order[0]
	if blk > 0 {
		cur.gather(p, order[:min(blk, n)])
		xs, ns, ys, r = cur.x, cur.norm, cur.y, 0
	} else {
		for _, i := range order[:min(fusedAhead, n)] {
			kernel.PrefetchExample(&p.x[i*d], d, &p.norm[i], &p.y[i])
		}
	}
	z := dot(w, xs[r*d:(r+1)*d])
	q := 0 // position in cur
	for s, i := range order {
		r = i
		if blk > 0 {
			if q == blk {
				cur, nxt, q = nxt, cur, 0
				xs, ns, ys = cur.x, cur.norm, cur.y
			}
			r = q
		} else if s+fusedAhead < n {
			j := order[s+fusedAhead]
			kernel.PrefetchExample(&p.x[j*d], d, &p.norm[j], &p.y[j])
		}
		e.t++
		if !constant {
			if eta, err = sgd.Eta(e.t); err != nil {
				return 0, 0, err
			}
			lo, hi = min(lo, eta), max(hi, eta)
		}
		if e.t%ctxSteps == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, fmt.Errorf("trainer: stopped at step %d: %w", e.t, err)
			}
		}
		x := xs[r*d : (r+1)*d]
		g := e.margin.Deriv(z, ys[r])
		g *= sgd.ClipScale(math.Abs(g) * ns[r])
		if e.obs != nil && e.obs.example != nil {
			e.gz[0] = g
			e.obs.example(e.t, i, x, e.gz)
		}
		a, thr := sgd.decay(eta)
		if s+1 < n {
			var next []float64
			switch j := order[s+1]; {
			case blk == 0:
				next = p.x[j*d : (j+1)*d]
			case q+1 < blk:
				next = cur.x[(q+1)*d : (q+2)*d]
			default:
				nxt.gather(p, order[s+1:min(s+1+blk, n)])
				next = nxt.x[:d]
			}
			if ddot {
				z = kernel.ShrinkDdot(w, x, a, eta*g, thr, next)
			} else {
				z = kernel.ShrinkDot(w, x, a, eta*g, thr, next)
			}
		} else {
			sgd.move(w, eta, eta*g, x)
		}
		q++
		if e.avg != nil {
			sgd.Average(e.avg, e.w, e.t)
		}
		if e.obs != nil && e.obs.step != nil {
			e.obs.step(e.t, eta, e.w)
		}
	}
	return lo, hi, nil
}

// rowBlock is one of passFused's two buffers: copies of the rows, norms and
// labels of consecutive positions of a pass order.
type rowBlock struct {
	x, norm, y []float64
}

// newRowBlock returns a buffer for m examples of d features.
func newRowBlock(m, d int) rowBlock {
	return rowBlock{x: make([]float64, m*d), norm: make([]float64, m), y: make([]float64, m)}
}

// gather copies the rows, norms and labels of the examples idx (at most
// the buffer's size) into b, in order. It first hints the first cache line
// of every row and the norm and label of every example, so that the page
// walks and cache misses of the whole block overlap, then copies.
func (b *rowBlock) gather(p *problem, idx []int) {
	d := p.d
	for _, i := range idx {
		kernel.PrefetchExample(&p.x[i*d], 1, &p.norm[i], &p.y[i])
	}
	for q, i := range idx {
		copy(b.x[q*d:(q+1)*d], p.x[i*d:(i+1)*d])
		b.norm[q], b.y[q] = p.norm[i], p.y[i]
	}
}

// fusedBlock returns the number of examples of each of passFused's two
// buffers for n rows of d features: 0 (rows read in place) when the rows
// take less than fusedBlockMinBytes or huge reports that they lie on huge
// pages (it is called only for rows that large), otherwise as many rows as
// fit in fusedBlockFloats float64s, at least one, at most n. The buffers
// hold at most 2 (max(fusedBlockFloats, d) + 2 fusedBlock) float64s: 130
// kB at d = 100, whatever n.
func fusedBlock(n, d int, huge func() bool) int {
	if 8*float64(n)*float64(d) < fusedBlockMinBytes || huge() {
		return 0
	}
	return min(n, max(1, fusedBlockFloats/d))
}

// The sizes of passFused's blocks. Each buffer holds fusedBlockFloats
// float64s of rows (64 kB): BenchmarkEpochOverStream1Mx100 timed blocks of
// 8,192 floats faster than of 32,768 and 131,072. Rows that take less than
// fusedBlockMinBytes (256 MiB) are read in place (larger ones too on huge
// pages, rowsOnHugePages): on 4 kB pages their page
// tables take less than 512 kB, the TLB misses of random rows cost little,
// and copies only add work (BenchmarkPass100kx100/b=1, 80 MB, timed 1.3
// times slower with them; BenchmarkEpochOverStream1Mx100, 800 MB, faster).
// Variables, so that the tests can take other sizes.
var (
	fusedBlockFloats   = 1 << 13
	fusedBlockMinBytes = float64(1 << 28)
)

// rowsOnHugePages reports whether most of the bytes of the rows x lie on
// huge pages (hugepage.Share): there a random row costs no page walk, and
// passFused reads rows of any size in place, which
// BenchmarkEpochOverStream1Mx100 timed faster than the copies by blocks
// (which still pay for the copy). A variable, so that the tests can fix it.
var rowsOnHugePages = func(x []float64) bool { return hugepage.Share(x) >= 0.5 }

// fusedAhead is how many examples ahead of the current one passFused hints
// the processor to fetch when it reads the rows in place: enough steps to
// cover a memory latency, few enough that the hints in flight do not wait
// for each other. Distances from 8 to 24 timed the same in
// BenchmarkNativePass36000x33; on rows of 800 MB on huge pages
// (BenchmarkEpochOverStream1Mx100) 4 took 5% less CPU time per epoch than
// 16, and on 4 kB pages (BenchmarkPass100kx100/b=1,
// BenchmarkNativePass36000x33) the two timed the same.
const fusedAhead = 4

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
