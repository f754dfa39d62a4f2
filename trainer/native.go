package trainer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/internal/check"
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
	// The order of the next pass, which passFused draws between its steps
	// (fuse, more than one pass), nil otherwise.
	ahead *orderAhead

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
	if e.fuse && p.cfg.Passes > 1 {
		e.ahead = newOrderAhead(p.n)
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
	order := e.passOrder(j)
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
