package pdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
)

// DefaultTolerance is the gradient tolerance of the solver when
// Config.Tolerance is zero: ||grad F(w)|| <= 1e-10 with F = J/n.
const DefaultTolerance = 1e-10

// Neighbours states the neighbouring relation of every per-instance quantity
// of this package. Reports carry it verbatim.
const Neighbours = "pDP neighbours (Wang, Per-instance DP): Z and Z without one row z_i; " +
	"the unnormalized objective J_Z(w) = sum_j l(w, z_j) + (n lambda/2)||w||^2 loses the summand l(w, z_i) " +
	"and keeps its regularization weight n lambda (Wang's ridge setting); a target z outside Z is added the same way, " +
	"J_{Z+z} = J_Z + l(w, z). The sensitivity is ||w_hat(Z) - w_hat(neighbour)||_2"

// Config describes the regularized empirical risk minimization problem
// whose per-instance privacy is analysed, in Wang's unnormalized form
// (Per-instance DP, Section 3, eq. 1):
//
//	J(w) = sum_i l(W x_i, y_i) + (N lambda / 2) ||w||^2,
//
// W the K x d weight matrix (w its row-major flattening). This is n times
// the objective F of docs/DESIGN.md (section 1), F(w) = (1/n) sum_i l + (lambda/2)||w||^2,
// with l1_ratio = 0.
type Config struct {
	// Loss is the per-example loss. It must be smooth in Lemma 13's sense
	// (A.1 and A.2: differentiable with an absolutely continuous derivative):
	// logistic, softmax, huber, huber-hinge and squared are. Required.
	Loss losses.Loss
	// Classes is the number of classes of a multiclass loss (softmax);
	// ignored for the other losses. The zero value is valid for them.
	Classes int
	// Lambda >= 0 is the ridge strength: the penalty is (N lambda/2)||w||^2.
	// Zero leaves the problem unregularized; its Hessian must then be
	// positive definite from the data alone.
	Lambda float64
	// L1Ratio must be 0. An L1 term makes the objective non-differentiable,
	// and Lemma 13 (hence every sensitivity of this package) does not apply:
	// New returns an error wrapping ErrNotSmooth. The field exists so that a
	// caller holding an elastic-net configuration gets that error instead of
	// a silently wrong analysis.
	L1Ratio float64
	// Clip is the per-example gradient clipping norm G of a trainer that
	// clips (0: none). For a scalar margin loss (K = 1), clipping the
	// per-example gradient l'(z) x to norm G is exactly a gradient step of
	// the loss whose margin derivative is l' clamped to [-G/||x||, G/||x||]
	// (a Huberized loss, linear where the clamp is active): convex, since
	// the clamped derivative is still non-decreasing, with an absolutely
	// continuous derivative, so Lemma 13 applies to it (its second
	// derivative is l'' where |l'| < G/||x|| and 0 beyond). The analysis then
	// runs on that loss, the objective the clipped trainer minimizes. For
	// K > 1 (softmax) clipping by the norm of the margin gradient does not
	// give the gradient field of any loss, and a positive Clip is refused
	// with ErrNotSmooth. The zero value means no clipping.
	Clip float64
	// N is the n of the penalty weight N lambda. Zero means the number of
	// rows. Set it to keep the weight of a larger data set, as the pDP
	// neighbour convention does for Z without one row.
	N int
	// Tolerance bounds the gradient at the solution, ||grad J(w)|| / n <=
	// Tolerance with n the number of rows. Zero means DefaultTolerance.
	Tolerance float64
	// MaxIter bounds the Newton iterations. Zero means 100.
	MaxIter int
}

// smoothLoss reports whether the loss is one whose smoothness (Lemma 13's
// A.1 and A.2) this package has verified. A loss of another type may be
// non-differentiable (a hinge, an absolute loss), so it is refused rather
// than trusted.
func smoothLoss(l losses.Loss) bool {
	switch l.(type) {
	case losses.Logistic, losses.Softmax, losses.Huber, losses.HuberHinge, losses.Squared,
		*losses.Logistic, *losses.Softmax, *losses.Huber, *losses.HuberHinge, *losses.Squared:
		return true
	}
	return false
}

// problem is a validated data set and objective. skip >= 0 removes that row
// from every sum; extra, when non-nil, is one more row added to them.
type problem struct {
	x       *mat.Dense
	y       []float64
	loss    losses.Loss
	margin  losses.Margin // non-nil for scalar losses with a Margin view
	n, d, k int
	reg     float64 // N lambda
	clip    float64 // G, 0: none (K = 1 only)
	tol     float64
	maxIter int
	classes int
}

// newProblem validates the data and the configuration.
func newProblem(x *mat.Dense, y []float64, cfg Config) (*problem, error) {
	if cfg.Loss == nil {
		return nil, fmt.Errorf("%w: no loss", ErrInput)
	}
	if !smoothLoss(cfg.Loss) {
		return nil, fmt.Errorf("%w: loss %q is not one of logistic, softmax, huber, huber-hinge, squared, whose smoothness is verified", ErrNotSmooth, cfg.Loss.Name())
	}
	if cfg.L1Ratio != 0 {
		return nil, fmt.Errorf("%w: l1_ratio = %v; the L1 term |w| has no derivative at 0, so Lemma 13 fails (compute the pDP of an elastic net on its active set, with the result marked approximate, or set l1_ratio = 0)", ErrNotSmooth, cfg.L1Ratio)
	}
	if !check.NonNegative(cfg.Lambda) {
		return nil, fmt.Errorf("%w: lambda = %v, want finite >= 0", ErrInput, cfg.Lambda)
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows", ErrInput)
	}
	n, d := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d rows but %d labels", ErrInput, n, len(y))
	}
	for i := 0; i < n; i++ {
		if j := check.FirstNonFinite(x.RawRowView(i)); j >= 0 {
			return nil, fmt.Errorf("%w: X[%d,%d] = %v", ErrInput, i, j, x.At(i, j))
		}
		if err := cfg.Loss.CheckLabel(y[i], cfg.Classes); err != nil {
			return nil, fmt.Errorf("%w: row %d: %w", ErrInput, i, err)
		}
	}
	if !check.NonNegative(cfg.Clip) {
		return nil, fmt.Errorf("%w: clipping norm G = %v, want finite >= 0 (0: none)", ErrInput, cfg.Clip)
	}
	if cfg.N < 0 || math.IsNaN(cfg.Tolerance) || cfg.Tolerance < 0 || cfg.MaxIter < 0 {
		return nil, fmt.Errorf("%w: N = %d, tolerance = %v, max iterations = %d", ErrInput, cfg.N, cfg.Tolerance, cfg.MaxIter)
	}
	p := &problem{x: x, y: y, loss: cfg.Loss, n: n, d: d, k: cfg.Loss.Outputs(cfg.Classes), classes: cfg.Classes}
	if p.k < 1 {
		return nil, fmt.Errorf("%w: loss %s has %d outputs", ErrInput, cfg.Loss.Name(), p.k)
	}
	if m, ok := cfg.Loss.(losses.Margin); ok && p.k == 1 {
		p.margin = m
	}
	if cfg.Clip > 0 {
		if p.margin == nil {
			return nil, fmt.Errorf("%w: per-example clipping (G = %v) of the %d-output loss %s: scaling the margin gradient by min(1, G/(||l'(z)|| ||x||)) is not the gradient of any loss, so there is no objective for Lemma 13 (analyse an unclipped run, or one whose G is at least L_z kappa, where clipping never acts)", ErrNotSmooth, cfg.Clip, p.k, cfg.Loss.Name())
		}
		p.clip = cfg.Clip
	}
	nn := cfg.N
	if nn == 0 {
		nn = n
	}
	p.reg = float64(nn) * cfg.Lambda
	p.tol = cfg.Tolerance
	if p.tol == 0 {
		p.tol = DefaultTolerance
	}
	p.maxIter = cfg.MaxIter
	if p.maxIter == 0 {
		p.maxIter = 100
	}
	return p, nil
}

// dim is the number of weights, K*d.
func (p *problem) dim() int { return p.k * p.d }

// margins writes z = W x into z (length K).
func (p *problem) marginOf(z, w, x []float64) {
	for c := 0; c < p.k; c++ {
		var s float64
		wc := w[c*p.d : (c+1)*p.d]
		for j, v := range x {
			s += wc[j] * v
		}
		z[c] = s
	}
}

// capOf returns the bound G/||x|| that clipping the per-example gradient
// l'(z) x to norm G puts on |l'(z)| for the row x: +Inf without clipping
// or for x = 0 (a zero row has a zero gradient whatever its loss).
func (p *problem) capOf(x []float64) float64 {
	if p.clip == 0 {
		return math.Inf(1)
	}
	nx := norm2(x)
	if nx == 0 {
		return math.Inf(1)
	}
	return p.clip / nx
}

// deriv returns the margin derivative of the (clipped) scalar loss: l'
// clamped to [-c, c].
func (p *problem) deriv(z, y, c float64) float64 {
	return math.Max(-c, math.Min(c, p.margin.Deriv(z, y)))
}

// deriv2 returns the second margin derivative of the clipped scalar loss:
// that of l where |l'| <= c, 0 where the clamp is active.
func (p *problem) deriv2(z, y, c float64) float64 {
	if math.Abs(p.margin.Deriv(z, y)) > c {
		return 0
	}
	return p.margin.Deriv2(z, y)
}

// value1 returns the clipped scalar loss: l(z) where |l'(z)| <= c, and
// beyond the point b where the clamp starts (|l'(b)| = c, found by
// bisection on the monotone l'), its linear extension l(b) + l'_c (z - b).
// It is NaN when no such b exists within 2^64 of z, which the verified
// losses never give: their derivative takes every value strictly between
// its infimum and supremum, and 0 lies between them.
func (p *problem) value1(z, y, c float64) float64 {
	g := p.margin.Deriv(z, y)
	if math.Abs(g) <= c {
		return p.margin.Value1(z, y)
	}
	level := math.Copysign(c, g)
	// b lies on the side of z where l' moves towards the level: below z
	// for g > c (l' non-decreasing), above for g < -c.
	dir := -1.0
	if g < 0 {
		dir = 1
	}
	inside := func(t float64) bool { return math.Abs(p.margin.Deriv(t, y)) <= c }
	near, far := z, z
	found := false
	for s := 1.0; s < 0x1p64; s *= 2 {
		far = z + dir*s
		if inside(far) {
			found = true
			break
		}
		near = far
	}
	if !found {
		return math.NaN()
	}
	// Bisect between near (clamped) and far (inside) to the last float.
	for {
		mid := near + (far-near)/2
		if mid == near || mid == far {
			break
		}
		if inside(mid) {
			far = mid
		} else {
			near = mid
		}
	}
	return p.margin.Value1(far, y) + level*(z-far)
}

// rowGrad writes the margin gradient of l (clipped, see Config.Clip) at
// the row (x, y) with margins z into g (length K) and returns the loss.
func (p *problem) rowGrad(g, z, x []float64, y float64) float64 {
	if p.margin != nil {
		c := p.capOf(x)
		g[0] = p.deriv(z[0], y, c)
		return p.value1(z[0], y, c)
	}
	return p.loss.Grad(g, z, y)
}

// rowValue returns the loss (clipped, see Config.Clip) at the row (x, y)
// with margins z.
func (p *problem) rowValue(z, x []float64, y float64) float64 {
	if p.margin != nil {
		return p.value1(z[0], y, p.capOf(x))
	}
	return p.loss.Value(z, y)
}

// rowHess writes the K x K margin Hessian of the row (x, y) into h.
func (p *problem) rowHess(h, z, x []float64, y float64) {
	if p.margin != nil {
		h[0] = p.deriv2(z[0], y, p.capOf(x))
		return
	}
	p.loss.Hess(h, z, y)
}

// view is the objective of a neighbour of the data set: all rows except
// skip (skip < 0 keeps all), plus the row extra (nil for none).
type view struct {
	p      *problem
	skip   int
	extraX []float64
	extraY float64
}

func (p *problem) full() view { return view{p: p, skip: -1} }

// rows calls f for every row of the view, in order.
func (v view) rows(f func(i int, x []float64, y float64)) {
	p := v.p
	for i := 0; i < p.n; i++ {
		if i == v.skip {
			continue
		}
		f(i, p.x.RawRowView(i), p.y[i])
	}
	if v.extraX != nil {
		f(p.n, v.extraX, v.extraY)
	}
}

// count returns the number of rows of the view.
func (v view) count() int {
	c := v.p.n
	if v.skip >= 0 {
		c--
	}
	if v.extraX != nil {
		c++
	}
	return c
}

// grad writes grad J(w) into g and returns J(w).
func (v view) grad(g, w []float64) float64 {
	p := v.p
	for i := range g {
		g[i] = 0
	}
	z := make([]float64, p.k)
	gz := make([]float64, p.k)
	var val float64
	v.rows(func(_ int, x []float64, y float64) {
		p.marginOf(z, w, x)
		val += p.rowGrad(gz, z, x, y)
		for c, gc := range gz {
			if gc == 0 {
				continue
			}
			dst := g[c*p.d : (c+1)*p.d]
			for j, xj := range x {
				dst[j] += gc * xj
			}
		}
	})
	var ww float64
	for i, wi := range w {
		g[i] += p.reg * wi
		ww += wi * wi
	}
	return val + p.reg/2*ww
}

// hessian returns sum over the rows of S_i kron x_i x_i^T plus reg I, where
// S_i (K x K, row-major) is given by weight(i, x, y, S_i) for each row.
func (v view) hessian(weight func(i int, x []float64, y float64, s []float64)) *mat.SymDense {
	p := v.p
	m := v.count()
	kk := p.k * p.k
	rows := make([]int, 0, m)
	s := make([]float64, m*kk)
	r := 0
	v.rows(func(i int, x []float64, y float64) {
		weight(i, x, y, s[r*kk:(r+1)*kk])
		rows = append(rows, i)
		r++
	})
	// X_v holds the rows of the view; WX the rows scaled by one entry of S.
	xv := mat.NewDense(m, p.d, nil)
	for r, i := range rows {
		if i == p.n {
			xv.SetRow(r, v.extraX)
		} else {
			xv.SetRow(r, p.x.RawRowView(i))
		}
	}
	dim := p.dim()
	h := mat.NewSymDense(dim, nil)
	wx := mat.NewDense(m, p.d, nil)
	var blk mat.Dense
	for a := 0; a < p.k; a++ {
		for b := a; b < p.k; b++ {
			for r := 0; r < m; r++ {
				sw := s[r*kk+a*p.k+b]
				src := xv.RawRowView(r)
				dst := wx.RawRowView(r)
				for j, xj := range src {
					dst[j] = sw * xj
				}
			}
			blk.Reset()
			blk.Mul(xv.T(), wx)
			for i := 0; i < p.d; i++ {
				for j := 0; j < p.d; j++ {
					ri, cj := a*p.d+i, b*p.d+j
					if ri <= cj {
						h.SetSym(ri, cj, blk.At(i, j))
					}
				}
			}
		}
	}
	for i := 0; i < dim; i++ {
		h.SetSym(i, i, h.At(i, i)+p.reg)
	}
	return h
}

// hessianAt returns the Hessian of J at w.
func (v view) hessianAt(w []float64) *mat.SymDense {
	p := v.p
	z := make([]float64, p.k)
	return v.hessian(func(_ int, x []float64, y float64, s []float64) {
		p.marginOf(z, w, x)
		p.rowHess(s, z, x, y)
	})
}

// maxCond is the largest condition number of a Hessian treated as
// invertible: beyond it, rounding (about 1e-16 relative) would leave the
// solution with no correct digit.
const maxCond = 1e13

// factor returns the Cholesky factorization of h, or an error wrapping
// ErrSingular when h is not numerically positive definite.
func (p *problem) factor(h *mat.SymDense, what string) (*mat.Cholesky, error) {
	var c mat.Cholesky
	if !c.Factorize(h) {
		return nil, fmt.Errorf("%w: %s is not positive definite; with lambda = 0 the rows must span R^d and, for a classification loss, the classes must not be separable (use lambda > 0)", ErrSingular, what)
	}
	if cond := c.Cond(); !(cond < maxCond) {
		return nil, fmt.Errorf("%w: %s has condition number %.3g (> %g); with lambda = 0 the rows must span R^d and, for a classification loss, the classes must not be separable (use lambda > 0)", ErrSingular, what, cond, maxCond)
	}
	return &c, nil
}

func norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func norm1(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	return s
}
