package trainer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sirupsen/logrus"
	gonumblas "gonum.org/v1/gonum/blas/gonum"

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

// native is the state of one run of the native engine: the weights and every
// scratch buffer, allocated once so that a step allocates nothing.
type native struct {
	p   *problem
	smp *sampler
	obs *observer

	// margin is the scalar view of a K = 1 loss (nil for K > 1). A type
	// switch calling losses.Logistic's Deriv without the interface made no
	// measurable difference (BenchmarkNativePass3600x33: 96-101 ns/step
	// either way): the exponential dominates the derivative.
	margin losses.Margin

	k, d   int
	clip   float64 // G, 0: none
	drop   float64 // s
	l1     float64 // lambda*alpha
	radius float64

	w   []float64 // K x d weights, row-major
	avg []float64 // running mean of the iterates (Average only)
	acc []float64 // K x d sum of the clipped per-example gradients (b > 1)
	xm  []float64 // masked row (Dropout < 1)
	z   []float64 // K margins
	gz  []float64 // K margin gradients
	t   int       // steps done
	j   int       // current pass, 0-based

	// The rows, norms and labels of the next chunk examples of the pass are
	// copied into cx, cn and cy, starting at position c0 (chunk = 0: rows
	// are read in place).
	chunk  int
	cx     []float64
	cn, cy []float64
	c0     int
	sink   float64 // keeps the loads of gather's touch loop
}

// gatherChunk is the least number of examples gathered at once; a chunk
// holds whole minibatches. A b = 1 step is one chain of dependent operations
// (the margin needs the previous step's weights), and a minibatch example
// is long enough that the processor does not look ahead to the next one, so
// a row fetched from a random place in memory inside a step stalls it;
// copying a chunk of rows in pass order first lets the processor overlap
// those fetches, which on 36000 x 33 data (9.5 MB) makes a b = 1 pass about
// 1.7 times as fast. (Copying instead one row per step, a fixed distance
// ahead into a ring buffer, measured as slow as not copying at all: a load
// that misses inside the step holds up the step's own chain, while 64 rows
// copied at once have their misses overlap.) 64 rows of a few tens of
// features stay in L1. Long rows
// (more than gatherMaxD features) and chunks of more than gatherMaxRows rows
// (large minibatches) are read in place: the hardware prefetcher streams
// long rows, and copying would only add work.
const (
	gatherChunk   = 64
	gatherMaxD    = 256
	gatherMaxRows = 1024
)

func newNative(p *problem) (*native, error) {
	if p.loss == nil {
		return nil, fmt.Errorf("%w: the native engine needs a built-in loss", ErrConfig)
	}
	e := &native{
		p: p, smp: newSampler(p), obs: p.obs,
		k: p.k, d: p.d,
		clip: p.cfg.Clip, drop: p.cfg.Dropout, l1: p.cfg.Reg.L1Weight(), radius: p.cfg.Radius,
		w:  make([]float64, p.k*p.d),
		xm: make([]float64, p.d),
		z:  make([]float64, p.k), gz: make([]float64, p.k),
	}
	if p.k == 1 {
		m, ok := p.loss.(losses.Margin)
		if !ok {
			return nil, fmt.Errorf("%w: scalar loss %s does not implement losses.Margin", ErrConfig, p.loss.Name())
		}
		e.margin = m
	}
	if p.cfg.Batch > 1 {
		e.acc = make([]float64, p.k*p.d)
	}
	if p.cfg.Average {
		e.avg = make([]float64, p.k*p.d)
	}
	b := p.cfg.Batch
	if chunk := b * ((gatherChunk + b - 1) / b); p.d <= gatherMaxD && chunk <= gatherMaxRows {
		e.chunk = chunk
		e.cx = make([]float64, chunk*p.d)
		e.cn, e.cy = make([]float64, chunk), make([]float64, chunk)
	}
	return e, nil
}

// runNative trains with the native engine and returns the K x d weights,
// row-major, filling the pass records, the objective and the gradient norm of
// p.run.
func runNative(ctx context.Context, p *problem) ([]float64, error) {
	e, err := newNative(p)
	if err != nil {
		return nil, err
	}
	run := p.run
	var (
		start       = time.Now()
		info        = levelEnabled(p.log, logrus.InfoLevel)
		debug       = levelEnabled(p.log, logrus.DebugLevel)
		grad        = make([]float64, p.k*p.d)
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
		if v := sqNorm(e.w); math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: the iterates diverged in pass %d; lower the step size", ErrConfig, j+1)
		}
		run.PassMaxStep = append(run.PassMaxStep, hi)
		run.PassMinStep = append(run.PassMinStep, lo)
		run.PassesDone = j + 1
		if info {
			p.log.WithFields(logrus.Fields{
				"pass": j + 1, "steps": e.t, "eta_max": hi, "eta_min": lo, "elapsed": time.Since(start),
			}).Info("trainer: pass done")
		}
		if p.cfg.Tolerance > 0 || debug {
			f, gradNorm = p.objective(e.weights(), grad, e.z, e.gz)
			done = true
			p.log.WithFields(logrus.Fields{"pass": j + 1, "objective": f, "grad_norm": gradNorm}).Debug("trainer: objective")
			if p.cfg.Tolerance > 0 && gradNorm <= p.cfg.Tolerance {
				run.Converged = true
				break
			}
		} else {
			done = false
		}
	}
	w := e.weights()
	if !done {
		f, gradNorm = p.objective(w, grad, e.z, e.gz)
	}
	run.Objective, run.GradNorm = f, gradNorm
	if p.cfg.Tolerance > 0 && gradNorm <= p.cfg.Tolerance {
		run.Converged = true
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: the objective diverged to %v; lower the step size", ErrConfig, f)
	}
	return w, nil
}

// weights returns the weights the run returns: the average of the iterates or
// the last iterate.
func (e *native) weights() []float64 {
	if e.avg != nil {
		return e.avg
	}
	return e.w
}

// ctxEvery is the number of steps between two checks of the context inside
// a pass.
const ctxEvery = 4096

// pass runs pass j (0-based) in the order of the sampler and returns the
// smallest and largest step size used.
func (e *native) pass(ctx context.Context, j int) (lo, hi float64, err error) {
	p := e.p
	order := e.smp.pass(j)
	e.j = j
	b := p.cfg.Batch
	lo = math.Inf(1)
	for s := 0; s < len(order); s += b {
		if e.chunk > 0 && s%e.chunk == 0 {
			e.gather(order[s:min(s+e.chunk, len(order))], s)
		}
		e.t++
		eta, err := p.step(e.t)
		if err != nil {
			return 0, 0, err
		}
		if eta < lo {
			lo = eta
		}
		if eta > hi {
			hi = eta
		}
		if e.t%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, fmt.Errorf("trainer: stopped at step %d: %w", e.t, err)
			}
		}
		e.step(order[s:min(s+b, len(order))], s, eta)
	}
	return lo, hi, nil
}

// gather copies the rows, norms and labels of the examples idx, which start
// at position pos of the pass order, into the chunk buffers.
func (e *native) gather(idx []int, pos int) {
	d, p := e.d, e.p
	e.c0 = pos
	// Touch every cache line of the rows first: a loop this short keeps
	// the misses of many rows in flight at once, which made a b = 1 pass
	// over 36000 x 33 data another 15% faster than the copy alone.
	var sink float64
	for _, i := range idx {
		row := p.x[i*d : (i+1)*d]
		for j := 0; j < len(row); j += 8 {
			sink += row[j]
		}
		sink += row[len(row)-1]
	}
	e.sink += sink
	for q, i := range idx {
		copy(e.cx[q*d:(q+1)*d], p.x[i*d:(i+1)*d])
		e.cn[q], e.cy[q] = p.norm[i], p.y[i]
	}
}

// step does one SGD step on the minibatch of example indices batch, which
// starts at position pos of the pass order:
//
//	w = proj_R(prox(w - eta*((1/b) sum_i clip_G(grad_i) + mu*w)))
//
// then folds w into the average. b is Config.Batch, also for a short last
// minibatch. It allocates nothing.
func (e *native) step(batch []int, pos int, eta float64) {
	a, thr, d := 1-eta*e.p.mu, eta*e.l1, e.d
	if e.acc == nil {
		// b = 1: the update of each row of W is fused with the decay and
		// the soft thresholding, w_k = prox(a w_k - eta g_k x).
		x := e.exampleGrad(batch[0], pos)
		for k, g := range e.gz {
			shrink(e.w[k*d:(k+1)*d], x, a, eta*g, thr)
		}
	} else {
		acc := e.acc
		for q := range acc {
			acc[q] = 0
		}
		for q, i := range batch {
			x := e.exampleGrad(i, pos+q)
			for k, g := range e.gz {
				axpy(g, x, acc[k*d:(k+1)*d])
			}
		}
		shrink(e.w, acc, a, eta/float64(e.p.cfg.Batch), thr)
	}
	if e.radius > 0 {
		project(e.w, e.radius)
	}
	if e.avg != nil {
		average(e.avg, e.w, e.t)
	}
	if e.obs != nil && e.obs.step != nil {
		e.obs.step(e.t, eta, e.w)
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
		e.gz[0] = g * clipScale(math.Abs(g)*xn, e.clip)
	} else {
		d := e.d
		for k := range e.z {
			e.z[k] = dot(e.w[k*d:(k+1)*d], x)
		}
		e.p.loss.Grad(e.gz, e.z, y)
		if c := clipScale(math.Sqrt(sqNorm(e.gz))*xn, e.clip); c != 1 {
			for k := range e.gz {
				e.gz[k] *= c
			}
		}
	}
	if e.obs != nil && e.obs.example != nil {
		e.obs.example(e.t, i, x, e.gz)
	}
	return x
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

// shrink sets w = prox_{thr*||.||_1}(a*w - c*dir), the gradient move with the
// decay a = 1 - eta*mu followed by soft thresholding at thr = eta*lambda*alpha,
// in one loop. len(w) == len(dir).
func shrink(w, dir []float64, a, c, thr float64) {
	w = w[:len(dir)]
	if thr <= 0 {
		for j, v := range dir {
			w[j] = a*w[j] - c*v
		}
		return
	}
	for j, v := range dir {
		// Soft thresholding as in regularizers.SoftThreshold, which keeps a
		// NaN visible.
		switch u := a*w[j] - c*v; {
		case u > thr:
			w[j] = u - thr
		case u < -thr:
			w[j] = u + thr
		case u <= thr && u >= -thr:
			w[j] = 0
		default:
			w[j] = u
		}
	}
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
		y[j] += alpha * v
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
