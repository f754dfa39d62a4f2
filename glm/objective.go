package glm

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
)

var (
	// ErrConfig reports an unusable configuration or shape: no loss, a
	// negative or non-finite lambda or clipping norm, a linear term of the
	// wrong length, clipping of a loss with K > 1 outputs, a neighbour
	// without rows, or solver settings out of range.
	ErrConfig = errors.New("glm: invalid configuration")
	// ErrNotFinite reports an objective or gradient that is NaN or
	// infinite at the solver's iterate.
	ErrNotFinite = errors.New("glm: the objective is not finite")
)

// Config describes the objective
//
//	F(w) = (1/m) sum_i l_G(W x_i, y_i) + (Lambda/2) ||w||^2 + <Linear, w>/m
//
// over the m rows of the data set, W the K x d weight matrix and w its
// row-major flattening (K*d weights). l_G is the loss, clipped to G =
// Clip when Clip > 0.
type Config struct {
	// Loss is the per-example loss l(z, y) of the margins z = W x. Required.
	Loss losses.Loss
	// Classes is the number of classes of a multiclass loss (K =
	// Loss.Outputs(Classes)); scalar losses ignore it, and its zero value
	// is valid for them.
	Classes int
	// Lambda >= 0 is the ridge strength. Zero: no ridge, F is then strongly
	// convex only if the data make it so.
	Lambda float64
	// Linear, if not nil, is the vector b (length K*d) of the linear term
	// <b, w>/m of objective perturbation (Chaudhuri, Monteleoni & Sarwate
	// 2011, Section 3.2: the noise enters the objective through it). Nil
	// means no linear term. It is read, not copied, and must not change
	// while the Objective is in use.
	Linear []float64
	// Clip > 0 is the per-example gradient clipping norm G of a trainer
	// that clips, for a scalar loss (K = 1) with a losses.Margin view:
	// clipping the gradient l'(z) x to norm G is a gradient step of the
	// loss whose margin derivative is l' clamped to [-G/||x||, G/||x||], a
	// convex Huberized loss, linear beyond the clamp, whose derivative is
	// still absolutely continuous when l's is (so Wang's Lemma 13 applies
	// to it, docs/DESIGN.md, section 8). F is then the objective that the
	// clipped trainer minimizes. Zero means no clipping; with K > 1 a
	// positive Clip is refused (the clipped margin gradient is the gradient
	// of no loss).
	Clip float64
}

// Objective is F of a Config on a data set: its value, gradient, Hessian
// and Hessian-vector products, and its minimization by Newton's method
// (Minimize). The row passes run in blocks of rows on the kernels of
// internal/kernel, and from minPartRows rows on in two fixed parts of the
// rows on two goroutines, added in part order: every result depends on
// the rows and their number, never on GOMAXPROCS or the scheduling.
//
// An Objective keeps scratch space and the margins and curvature of its
// last evaluation, so it is not safe for concurrent use; Neighbour gives
// another one on the same rows, which may be used concurrently with it.
type Objective struct {
	x        *mat.Dense // the n x d rows, read only
	y        []float64  // the labels of the n rows of x (label, labels)
	ex       *mat.Dense // the extra rows (E x d), nil for none
	ey       []float64  // the labels of the extra rows, read in place
	skip     int        // the row of x left out of every sum, -1 for none
	loss     losses.Loss
	margin   losses.Margin        // the scalar view (K = 1), nil otherwise
	logistic losses.LogisticParts // the fused logistic path, nil when absent or clipped
	signs    bool                 // logistic is set and every label is -1 or +1 (the kernel's rows)
	n, d, k  int                  // rows of x, features, outputs
	e, m     int                  // extra rows, rows of the view
	lambda   float64
	b        []float64
	clip     float64
	caps     []float64 // G/||x_i|| for the n rows of x (clipping only; capAt)
	ecaps    []float64 // the same for the extra rows
	cfg      Config

	s scratch
}

// New returns the objective of cfg on the rows of X and the labels y (one
// per row). X and y are read in place, not copied, and must not change
// while the Objective is in use. New checks the configuration and the
// shapes; the rows and the labels are the caller's to validate (finite
// entries, labels the loss accepts: losses.Loss.CheckLabel), since every
// caller already has. Errors wrap ErrConfig.
func New(X *mat.Dense, y []float64, cfg Config) (*Objective, error) {
	if cfg.Loss == nil {
		return nil, fmt.Errorf("%w: no loss", ErrConfig)
	}
	if X == nil || X.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows", ErrConfig)
	}
	n, d := X.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d rows but %d labels", ErrConfig, n, len(y))
	}
	if !check.NonNegative(cfg.Lambda) {
		return nil, fmt.Errorf("%w: lambda = %v, want finite >= 0", ErrConfig, cfg.Lambda)
	}
	if !check.NonNegative(cfg.Clip) {
		return nil, fmt.Errorf("%w: clipping norm G = %v, want finite >= 0 (0: none)", ErrConfig, cfg.Clip)
	}
	if cfg.Loss.Task() == losses.Multiclass && cfg.Classes < 2 {
		return nil, fmt.Errorf("%w: the multiclass %s loss with %d classes, want >= 2", ErrConfig, cfg.Loss.Name(), cfg.Classes)
	}
	k := cfg.Loss.Outputs(cfg.Classes)
	if k < 1 {
		return nil, fmt.Errorf("%w: the %s loss has %d outputs with %d classes", ErrConfig, cfg.Loss.Name(), k, cfg.Classes)
	}
	if cfg.Linear != nil && len(cfg.Linear) != k*d {
		return nil, fmt.Errorf("%w: a linear term of length %d for %d weights", ErrConfig, len(cfg.Linear), k*d)
	}
	o := &Objective{x: X, y: y, skip: -1, loss: cfg.Loss, n: n, d: d, k: k, m: n,
		lambda: cfg.Lambda, b: cfg.Linear, clip: cfg.Clip, cfg: cfg}
	if mg, ok := cfg.Loss.(losses.Margin); ok && k == 1 {
		o.margin = mg
	}
	if cfg.Clip > 0 {
		if o.margin == nil {
			return nil, fmt.Errorf("%w: per-example clipping (G = %v) needs a one-output margin loss, not the %d-output %s", ErrConfig, cfg.Clip, k, cfg.Loss.Name())
		}
		o.caps = make([]float64, n)
		for i := range n {
			o.caps[i] = o.capOf(X.RawRowView(i))
		}
	} else if lp, ok := cfg.Loss.(losses.LogisticParts); ok && k == 1 {
		o.logistic = lp
		o.signs = signs(y)
	}
	return o, nil
}

// Neighbour returns the objective of a neighbouring data set: the rows of
// o without row skip (skip < 0 keeps every row), followed by the rows of X
// with the labels y (X nil: none), as per-instance DP's add/remove-one
// neighbours need (Wang, "Per-instance Differential Privacy"). The
// unnormalized objective m F loses or gains the rows' summands and keeps
// its ridge weight n Lambda and its linear term, so the neighbour's lambda
// is Lambda n/m' for its m' rows (docs/DESIGN.md, section 8). o must be an
// Objective that New returned. The neighbour shares o's rows and clipping
// caps, reads X and y in place (they must not change while the neighbour
// is in use) and has its own scratch. Errors wrap ErrConfig.
func (o *Objective) Neighbour(skip int, X *mat.Dense, y []float64) (*Objective, error) {
	if o.skip >= 0 || o.e > 0 {
		return nil, fmt.Errorf("%w: a neighbour of a neighbour", ErrConfig)
	}
	if skip >= o.n {
		return nil, fmt.Errorf("%w: row %d of %d", ErrConfig, skip, o.n)
	}
	e := 0
	if X != nil && !X.IsEmpty() {
		var d int
		e, d = X.Dims()
		if d != o.d || len(y) != e {
			return nil, fmt.Errorf("%w: %d x %d extra rows with %d labels, want %d features", ErrConfig, e, d, len(y), o.d)
		}
	}
	m := o.n + e
	if skip >= 0 {
		m--
	} else {
		skip = -1
	}
	if m < 1 {
		return nil, fmt.Errorf("%w: a neighbour without rows", ErrConfig)
	}
	nb := &Objective{x: o.x, y: o.y, skip: skip, loss: o.loss, margin: o.margin, logistic: o.logistic,
		n: o.n, d: o.d, k: o.k, e: e, m: m, lambda: o.lambda * float64(o.n) / float64(m),
		b: o.b, clip: o.clip, caps: o.caps, cfg: o.cfg, signs: o.signs}
	if e > 0 {
		nb.signs = nb.signs && signs(y)
		// The extra rows' labels and caps are kept apart (label, capAt): a
		// neighbour copies nothing of o's n rows.
		nb.ex, nb.ey = X, y
		if o.caps != nil {
			nb.ecaps = make([]float64, e)
			for r := range e {
				nb.ecaps[r] = o.capOf(X.RawRowView(r))
			}
		}
	}
	return nb, nil
}

// Rows returns m, the number of rows of the objective's data set.
func (o *Objective) Rows() int { return o.m }

// Dim returns K*d, the number of weights.
func (o *Objective) Dim() int { return o.k * o.d }

// Outputs returns K.
func (o *Objective) Outputs() int { return o.k }

// Lambda returns the ridge strength (of a neighbour, Lambda n/m).
func (o *Objective) Lambda() float64 { return o.lambda }

// row returns row i of the view's index space: row i of X for i < n, extra
// row i - n otherwise.
func (o *Objective) row(i int) []float64 {
	if i < o.n {
		return o.x.RawRowView(i)
	}
	return o.ex.RawRowView(i - o.n)
}

// label returns the label of row i of the view's index space.
func (o *Objective) label(i int) float64 {
	if i < o.n {
		return o.y[i]
	}
	return o.ey[i-o.n]
}

// labels returns the labels of the m rows of the view's index space from
// lo on, all of x's rows or all extra rows (as the passes' blocks are).
func (o *Objective) labels(lo, m int) []float64 {
	if lo < o.n {
		return o.y[lo : lo+m]
	}
	return o.ey[lo-o.n : lo-o.n+m]
}

// capAt returns the clipping cap G/||x|| of row i of the view's index
// space (clipping only).
func (o *Objective) capAt(i int) float64 {
	if i < o.n {
		return o.caps[i]
	}
	return o.ecaps[i-o.n]
}

// viewRows calls f for the index of every row of the view, in order.
func (o *Objective) viewRows(f func(i int)) {
	for i := range o.n + o.e {
		if i != o.skip {
			f(i)
		}
	}
}

// checkLen panics unless every slice has the length of the weights: a
// programmer error.
func (o *Objective) checkLen(vs ...[]float64) {
	for _, v := range vs {
		if len(v) != o.k*o.d {
			panic(fmt.Sprintf("glm: a vector of length %d for %d weights", len(v), o.k*o.d))
		}
	}
}

// Func returns F(w), with the bits of the value FuncGrad returns.
func (o *Objective) Func(w []float64) float64 {
	o.checkLen(w)
	return o.finish(w, nil, o.rowPass(nil, w, o.gradBlock(true)), true)
}

// Grad writes grad F(w) into grad (gonum optimize's Grad), with the bits
// of FuncGrad's gradient; for the logistic loss it skips the losses'
// values (a logarithm per row).
func (o *Objective) Grad(grad, w []float64) {
	o.checkLen(grad, w)
	o.finish(w, grad, o.rowPass(grad, w, o.gradBlock(false)), true)
}

// FuncGrad writes grad F(w) into grad and returns F(w), in one pass over
// the rows with the arithmetic of a loop over them: the losses summed one
// at a time in row order, each l'(z_i)/m times x_i added into the
// gradient in row order (for K = 1 each product fused into its sum, as
// kernel.FusedAddRows does; for K > 1 rounded, as kernel.AddRows4 does),
// the margins as kernel.FusedDots (K = 1) and kernel.SeqDots4 (K > 1)
// compute them; from minPartRows rows on, per part, the parts added in
// order. Then the ridge and the linear term (skipped when zero). The
// logistic loss's rows take their parts from losses.LogisticParts (four
// rows at a time by kernel.LogisticParts), with the bits of its Grad.
func (o *Objective) FuncGrad(grad, w []float64) float64 {
	o.checkLen(grad, w)
	return o.finish(w, grad, o.rowPass(grad, w, o.gradBlock(true)), true)
}

// finish returns F(w) from the sum of the losses, and completes grad (the
// data part's sum already in it, divided by m if scaled): the mean, the
// ridge and the linear term.
func (o *Objective) finish(w, grad []float64, sum float64, scaled bool) float64 {
	mf := float64(o.m)
	f := sum / mf
	if o.lambda != 0 {
		f += o.lambda / 2 * dot(w, w)
	}
	if o.b != nil {
		f += dot(o.b, w) / mf
	}
	if grad == nil {
		return f
	}
	if !scaled {
		scale(1/mf, grad)
	}
	if o.lambda != 0 {
		axpy(o.lambda, w, grad)
	}
	if o.b != nil {
		axpy(1/mf, o.b, grad)
	}
	return f
}

// Margins writes the K margins z = W x of the row x at the weights w into
// z, each summed in column order.
func (o *Objective) Margins(z, w, x []float64) {
	for c := range o.k {
		var s float64
		for j, v := range w[c*o.d : (c+1)*o.d] {
			s += v * x[j]
		}
		z[c] = s
	}
}

// MarginGrad writes the margin gradient dl_G/dz of the row (x, y) at the
// margins z into dst (length K) and returns the loss l_G(z, y), clipped as
// Config.Clip says (the clamp's bound G/||x|| from x).
func (o *Objective) MarginGrad(dst, z, x []float64, y float64) float64 {
	if o.clip > 0 {
		c := o.capOf(x)
		dst[0] = o.deriv(z[0], y, c)
		return o.value1(z[0], y, c)
	}
	return o.loss.Grad(dst, z, y)
}

// MarginHess writes the K x K margin Hessian of l_G at the row (x, y) and
// the margins z into dst, row-major (clipped: 0 where the clamp acts).
func (o *Objective) MarginHess(dst, z, x []float64, y float64) {
	if o.clip > 0 {
		dst[0] = o.deriv2(z[0], y, o.capOf(x))
		return
	}
	o.loss.Hess(dst, z, y)
}

// rowGrad1 is MarginGrad for the row i of the view and K = 1: l_G'(z) and
// l_G(z).
func (o *Objective) rowGrad1(z, y float64, i int, g []float64) float64 {
	if o.clip > 0 {
		c := o.capAt(i)
		g[0] = o.deriv(z, y, c)
		return o.value1(z, y, c)
	}
	zi := [1]float64{z}
	return o.loss.Grad(g, zi[:], y)
}

// rowHess writes the margin Hessian of row i of the view at the margins z
// into h.
func (o *Objective) rowHess(h, z []float64, i int) {
	if o.clip > 0 {
		h[0] = o.deriv2(z[0], o.label(i), o.capAt(i))
		return
	}
	o.loss.Hess(h, z, o.label(i))
}

// rowValue returns l_G at the row i of the view with margins z.
func (o *Objective) rowValue(z []float64, i int) float64 {
	if o.clip > 0 {
		return o.value1(z[0], o.label(i), o.capAt(i))
	}
	return o.loss.Value(z, o.label(i))
}

// capOf returns the bound G/||x|| that clipping the per-example gradient
// l'(z) x to norm G puts on |l'(z)|: +Inf without clipping or for x = 0 (a
// zero row has a zero gradient whatever its loss).
func (o *Objective) capOf(x []float64) float64 {
	if o.clip == 0 {
		return math.Inf(1)
	}
	var s float64
	for _, v := range x {
		s += v * v
	}
	if s == 0 {
		return math.Inf(1)
	}
	return o.clip / math.Sqrt(s)
}
