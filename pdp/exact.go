package pdp

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
)

// RemoveExact returns the exact sensitivity for removing row i: the
// leave-one-out minimizer found by Newton refinement from the one-step
// estimate (see refine) to the solver's tolerance, and checked against
// Lemma 13's integral identity evaluated by quadrature.
func (a *Analysis) RemoveExact(i int) (Diff, error) {
	return a.exactOne(func() (*refinement, error) { return a.removeStart(i) })
}

// AddExact is RemoveExact for adding the target (x, y).
func (a *Analysis) AddExact(x []float64, y float64) (Diff, error) {
	return a.exactOne(func() (*refinement, error) { return a.addStart(x, y) })
}

// exactOne refines the refinement start returns, with the check of
// Lemma 13.
func (a *Analysis) exactOne(start func() (*refinement, error)) (Diff, error) {
	r, err := start()
	if err != nil {
		return Diff{}, err
	}
	a.refine([]*refinement{r})
	return a.finish(r, true)
}

// removeStart returns the refinement of removing row i, at its one-step
// estimate.
func (a *Analysis) removeStart(i int) (*refinement, error) {
	start, err := a.Remove(i)
	if err != nil {
		return nil, err
	}
	v, err := a.p.neighbour(i, nil, 0)
	if err != nil {
		return nil, err
	}
	r, err := a.newRefinement(v, a.p.x.RawRowView(i), a.p.y[i], -1, start)
	if err != nil {
		return nil, fmt.Errorf("row %d: %w", i, err)
	}
	r.row = i
	return r, nil
}

// addStart is removeStart for adding the target (x, y).
func (a *Analysis) addStart(x []float64, y float64) (*refinement, error) {
	start, err := a.Add(x, y)
	if err != nil {
		return nil, err
	}
	v, err := a.p.neighbour(-1, x, y)
	if err != nil {
		return nil, err
	}
	return a.newRefinement(v, x, y, 1, start)
}

// refinement is the exact value of one neighbour under way (refine): the
// neighbour v without or with the row (px, py) (sign -1 or +1), its
// one-step estimate start, the frozen Newton solve, the iterate w and the
// gradient g of the neighbour's F there, of norm gn.
type refinement struct {
	v     view
	row   int // the removed row, -1 for an added target
	px    []float64
	py    float64
	sign  float64
	start Diff
	apply func([]float64) []float64
	w, g  []float64
	gn    float64
	steps int
	evals int
	tol   float64
}

// maxSimplified bounds the simplified Newton steps of a refinement before
// it falls back to full Newton steps.
const maxSimplified = 20

// newRefinement starts the refinement of the neighbour v at w_hat +
// start.V, with its frozen solve.
func (a *Analysis) newRefinement(v view, px []float64, py, sign float64, start Diff) (*refinement, error) {
	p := a.p
	w := make([]float64, p.dim())
	for i := range w {
		w[i] = a.sol.W[i] + start.V[i]
	}
	// Frozen Hessian of the neighbour at w_hat.
	b, err := a.pointBasis(px)
	if err != nil {
		return nil, err
	}
	apply, err := a.frozenSolve(px, py, sign, b)
	if err != nil {
		return nil, err
	}
	return &refinement{v: v, row: -1, px: px, py: py, sign: sign, start: start, apply: apply, w: w,
		g: make([]float64, p.dim()), tol: p.tol}, nil
}

// next takes the gradient just written into r.g at r.w and, unless the
// simplified Newton method is done, takes its step and reports true (it
// wants the gradient at the new r.w). It is done when the gradient is
// within the tolerance, after maxSimplified steps, or when a step
// contracts the gradient by less than 4 (or gives NaN).
func (r *refinement) next() bool {
	gn := norm2(r.g)
	r.evals++
	if r.evals > 1 && (math.IsNaN(gn) || gn > r.gn/4) {
		r.gn = gn
		return false
	}
	r.gn = gn
	if !(gn > r.tol) || r.steps >= maxSimplified {
		return false
	}
	// grad J = m grad F, m the neighbour's rows
	m := float64(r.v.obj.Rows())
	for i := range r.g {
		r.g[i] *= m
	}
	step := r.apply(r.g)
	for i := range r.w {
		r.w[i] -= step[i]
	}
	r.steps++
	return true
}

// lockstep is the number of refinements that refineTop runs in lockstep:
// each pass over the rows gives the gradients of all of them
// (glm.Grads), reading the rows once. At 80,000 x 20 (logistic, the top
// 100: BenchmarkExactTop100_80kx20) 8 took about 0.8 of the CPU time of 4,
// and 16 about as much as 8, with less balanced last batches.
const lockstep = 8

// refine runs the simplified Newton steps of the refinements rs in
// lockstep: the gradients of those still under way in one pass over the
// rows (glm.Grads, each with its own Grad's bits), then each one's step.
// Each neighbour's minimizer is found from w_hat + start.V, its steps
// solving with the neighbour's Hessian frozen at w_hat (the one-step
// matrix, applied by the Woodbury identity at O(K^2 d^2) per step): a
// simplified Newton method, which contracts the gradient by a factor of
// order L_H Delta / mu per step, about Delta, so it converges in one to
// three steps from the one-step estimate. When a step contracts the
// gradient by less than 4, finish switches to full Newton steps with the
// Hessian at the iterate and a line search (Solve's method). Every step
// costs one gradient, O(n K d), for all the refinements at once.
func (a *Analysis) refine(rs []*refinement) {
	obs, gs, ws := make([]*glm.Objective, 0, len(rs)), make([][]float64, 0, len(rs)), make([][]float64, 0, len(rs))
	for len(rs) > 0 {
		obs, gs, ws = obs[:0], gs[:0], ws[:0]
		for _, r := range rs {
			obs, gs, ws = append(obs, r.v.obj), append(gs, r.g), append(ws, r.w)
		}
		glm.Grads(obs, gs, ws)
		rs = slices.DeleteFunc(rs, func(r *refinement) bool { return !r.next() })
	}
}

// finish completes a refinement that refine left: by full Newton steps
// (Solve's method) unless its gradient is within the tolerance, then its
// Diff, and with check set the check of Lemma 13 (second form; about as
// costly as the refinement itself): with w_s the minimizer of the smaller
// data set and w_b that of the larger (the row p added), w_s - w_b =
// [int_0^1 H_s(w_b + t(w_s - w_b)) dt]^{-1} grad l_p(w_b), where H_s is
// the Hessian of the smaller objective. (The lemma prints this form with
// a minus sign; subtracting the two stationarity conditions, grad
// J_s(w_b) = -grad l_p(w_b) and grad J_s(w_s) = 0, gives the plus sign,
// and the first form of the lemma agrees with it. Only the norm enters
// the pDP, which the sign does not change.) The integral is taken row by
// row on the margin curvature: for a scalar loss in closed form, int_0^1
// D2l(z0 + t(z1-z0)) dt = (Dl(z1) - Dl(z0))/(z1 - z0) (Dl, the first
// derivative, is absolutely continuous, assumption A.2), and otherwise
// (softmax, or |z1 - z0| too small for that quotient) by 5-point
// Gauss-Lobatto quadrature, whose nodes include both endpoints t = 0 and
// t = 1.
func (a *Analysis) finish(r *refinement, check bool) (Diff, error) {
	d, err := a.finishRefinement(r, check)
	if err != nil && r.row >= 0 {
		return Diff{}, fmt.Errorf("row %d: %w", r.row, err)
	}
	return d, err
}

// finishRefinement is finish without the row in its errors.
func (a *Analysis) finishRefinement(r *refinement, check bool) (Diff, error) {
	p := a.p
	dim := p.dim()
	w, gn, steps, v := r.w, r.gn, r.steps, r.v
	if !(gn <= p.tol) {
		sol, err := p.solve(v, w)
		if err != nil {
			return Diff{}, err
		}
		steps += sol.Iterations
		w, gn = sol.W, sol.GradNorm
	}
	m := float64(v.obj.Rows())
	d := Diff{V: make([]float64, dim), Dim: dim, Leverage: r.start.Leverage, Residual: r.start.Residual, Exact: true, Steps: steps, ErrBound: math.Inf(1)}
	for i := range w {
		d.V[i] = w[i] - a.sol.W[i]
	}
	d.L2, d.L1 = norm2(d.V), norm1(d.V)
	if p.reg > 0 {
		// Both objectives are n lambda strongly convex: each solution is
		// within its gradient's norm (in J's scale) over n lambda of the
		// exact minimizer.
		d.ErrBound = (m*gn + float64(p.n)*a.sol.GradNorm) / p.reg
	}

	if !check {
		d.IdentityGap = math.NaN()
		return d, nil
	}
	// Lemma 13 at the refined solution. The smaller data set of an added
	// target is Z itself, on an objective of its own: the Analysis's is
	// shared by concurrent calls, and SegmentHess writes its scratch.
	// The preconditioner is the small objective's Hessian at w_hat: the
	// frozen one for a removed row, H for an added target.
	small, ws, wb, pre := v, w, a.sol.W, r.apply
	if r.sign > 0 {
		var err error
		if small, err = a.p.neighbour(-1, nil, 0); err != nil {
			return Diff{}, err
		}
		ws, wb, pre = a.sol.W, w, a.solveH
	}
	id, err := a.identity(small, r.px, r.py, ws, wb, pre)
	if err != nil {
		return Diff{}, err
	}
	var gap float64
	for i := range id {
		e := id[i] - (ws[i] - wb[i])
		gap += e * e
	}
	d.IdentityGap = math.Sqrt(gap)
	return d, nil
}

// solveH returns H^{-1} r, H the Hessian of J at w_hat (r itself if the
// factor fails, which a factor that New accepted does not).
func (a *Analysis) solveH(r []float64) []float64 {
	var hr mat.VecDense
	if err := a.chol.SolveVecTo(&hr, mat.NewVecDense(len(r), r)); err != nil {
		return append([]float64(nil), r...)
	}
	return hr.RawVector().Data
}

// frozenSolve returns r -> (H + sign U S U^T)^{-1} r at w_hat for the row
// (x, y), B = H^{-1}U, by the Woodbury identity
// H^{-1} r - sign B (I + sign S M)^{-1} S B^T r.
func (a *Analysis) frozenSolve(x []float64, y, sign float64, b *mat.Dense) (func(r []float64) []float64, error) {
	p := a.p
	k := p.k
	z := make([]float64, k)
	s := make([]float64, k*k)
	p.obj.Margins(z, a.sol.W, x)
	p.obj.MarginHess(s, z, x, y)
	sm := mat.NewDense(k, k, s)
	var m mat.Dense
	u := mat.NewDense(p.dim(), k, nil)
	for c := 0; c < k; c++ {
		for j, v := range x {
			u.Set(c*p.d+j, c, v)
		}
	}
	m.Mul(u.T(), b)
	var ism mat.Dense
	ism.Mul(sm, &m)
	ism.Scale(sign, &ism)
	for c := 0; c < k; c++ {
		ism.Set(c, c, ism.At(c, c)+1)
	}
	var lu mat.LU
	lu.Factorize(&ism)
	if lu.Det() == 0 {
		return nil, fmt.Errorf("%w: the neighbour's Hessian at w_hat is singular", ErrSingular)
	}
	dim := p.dim()
	return func(r []float64) []float64 {
		var hr mat.VecDense
		if err := a.chol.SolveVecTo(&hr, mat.NewVecDense(dim, r)); err != nil {
			return r
		}
		var btr, sbtr, c mat.VecDense
		btr.MulVec(b.T(), mat.NewVecDense(dim, r))
		sbtr.MulVec(sm, &btr)
		if err := lu.SolveVecTo(&c, false, &sbtr); err != nil {
			return hr.RawVector().Data
		}
		var corr mat.VecDense
		corr.MulVec(b, &c)
		out := make([]float64, dim)
		for i := range out {
			out[i] = hr.AtVec(i) - sign*corr.AtVec(i)
		}
		return out
	}, nil
}

// identity returns [int_0^1 H_small(wb + t(ws - wb)) dt]^{-1} grad l_p(wb),
// which Lemma 13 says equals ws - wb (see refine for the sign), A the mean
// Hessian of J_small = m F_small along the segment (glm.Objective.
// SegmentHess, which integrates the margin curvature row by row).
//
// It solves with A by preconditioned conjugate gradients, A applied
// without forming it (glm.Objective.SegmentHessVec, O(n K d) per
// product) and preconditioned by pre, the small objective's Hessian at
// w_hat (factored, or a Woodbury update of the factor): A differs from it
// by O(L_H Delta), so a few iterations reach the solver's precision, where
// forming A and factoring it cost O(n K^2 d^2 + K^3 d^3) per row. If the
// iteration stalls, it forms and factors A.
func (a *Analysis) identity(small view, px []float64, py float64, ws, wb []float64, pre func([]float64) []float64) ([]float64, error) {
	p := a.p
	k := p.k
	// grad l_p(wb) = U g.
	dim := p.dim()
	z0 := make([]float64, k)
	gz := make([]float64, k)
	p.obj.Margins(z0, wb, px)
	p.obj.MarginGrad(gz, z0, px, py)
	gp := make([]float64, dim)
	for c := 0; c < k; c++ {
		for j, v := range px {
			gp[c*p.d+j] = gz[c] * v
		}
	}
	m := float64(small.obj.Rows())
	mul := func(dst, v []float64) {
		small.obj.SegmentHessVec(dst, wb, ws, v)
		for i := range dst {
			dst[i] *= m
		}
	}
	if u, ok := pcg(mul, pre, gp, 1e-10, 50); ok {
		return u, nil
	}
	var h mat.SymDense
	small.obj.SegmentHess(&h, wb, ws)
	h.ScaleSym(m, &h)
	chol, err := factor(&h, "the integrated Hessian of Lemma 13")
	if err != nil {
		return nil, err
	}
	var sol mat.VecDense
	if err := chol.SolveVecTo(&sol, mat.NewVecDense(dim, gp)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	return sol.RawVector().Data, nil
}

// pcg solves A u = b for a symmetric positive definite A (mul writes A v)
// by conjugate gradients preconditioned by pre (an approximation of
// A^{-1}), from u = 0, until ||b - A u|| <= tol ||b||. It reports false
// when maxIter iterations do not get there or a curvature v^T A v is not
// positive.
func pcg(mul func(dst, v []float64), pre func([]float64) []float64, b []float64, tol float64, maxIter int) ([]float64, bool) {
	n := len(b)
	bn := norm2(b)
	u := make([]float64, n)
	if bn == 0 {
		return u, true
	}
	r := append([]float64(nil), b...)
	z := pre(r)
	d := append([]float64(nil), z...)
	rz := floats.Dot(r, z)
	ad := make([]float64, n)
	for it := 0; it < maxIter; it++ {
		if norm2(r) <= tol*bn {
			return u, true
		}
		mul(ad, d)
		curv := floats.Dot(d, ad)
		if !(curv > 0) {
			return nil, false
		}
		alpha := rz / curv
		floats.AddScaled(u, alpha, d)
		floats.AddScaled(r, -alpha, ad)
		z = pre(r)
		rzNext := floats.Dot(r, z)
		beta := rzNext / rz
		rz = rzNext
		for i := range d {
			d[i] = z[i] + beta*d[i]
		}
	}
	return u, norm2(r) <= tol*bn
}

// RefineTop replaces, in diffs (as returned by RemoveAll), the k entries
// with the largest upper sensitivity (Diff.Upper, the one-step value for an
// estimate) by their exact values (RemoveExact, the same bits), 8 at a
// time in lockstep (one pass over the rows gives the gradients of all of
// them), the batches on GOMAXPROCS goroutines in all.
// Lemma 13's identity is checked on the first of them, the most exposed
// (its IdentityGap; NaN for the others): the refinement is exact by its
// gradient tolerance alone, and the check costs as much again. It returns
// the refined row indices, most exposed first.
func (a *Analysis) RefineTop(diffs []Diff, k int) ([]int, error) {
	if len(diffs) != a.p.n {
		return nil, fmt.Errorf("%w: %d sensitivities for %d rows", ErrInput, len(diffs), a.p.n)
	}
	return a.refineTop(diffs, k, a.removeStart)
}

// RefineTopTargets is RefineTop for the differences of added targets (as
// returned by AddAll on x and y), refined by AddExact.
func (a *Analysis) RefineTopTargets(diffs []Diff, x *mat.Dense, y []float64, k int) ([]int, error) {
	n, err := a.checkTargets(x, y)
	if err != nil {
		return nil, err
	}
	if len(diffs) != n {
		return nil, fmt.Errorf("%w: %d sensitivities for %d targets", ErrInput, len(diffs), n)
	}
	return a.refineTop(diffs, k, func(i int) (*refinement, error) { return a.addStart(x.RawRowView(i), y[i]) })
}

// refineTop replaces the k entries of diffs with the largest upper
// sensitivity by their exact values, the refinements start(i) finished,
// checked for the first, in batches of lockstep entries in order of
// exposure, and returns their indices, most exposed first. The batches
// run on GOMAXPROCS goroutines divided by those of a pass over the rows
// (glm.Objective.Parallel), at least one: more would only take turns on
// the cores, each evicting the others' rows from the cache.
func (a *Analysis) refineTop(diffs []Diff, k int, start func(i int) (*refinement, error)) ([]int, error) {
	up := make([]float64, len(diffs))
	for i, d := range diffs {
		up[i], _, _ = d.Upper()
	}
	top := linalg.Top(len(diffs), k, func(i, j int) bool { return up[i] > up[j] })
	k = len(top)
	errs := make([]error, k)
	res := make([]Diff, k)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)/a.p.obj.Parallel()) {
		wg.Go(func() {
			for t0 := range next {
				batch := make([]*refinement, 0, lockstep)
				idx := make([]int, 0, lockstep)
				for t := t0; t < min(t0+lockstep, k); t++ {
					r, err := start(top[t])
					if errs[t] = err; err == nil {
						batch, idx = append(batch, r), append(idx, t)
					}
				}
				a.refine(slices.Clone(batch))
				for b, r := range batch {
					t := idx[b]
					res[t], errs[t] = a.finish(r, t == 0)
				}
			}
		})
	}
	for t := 0; t < k; t += lockstep {
		next <- t
	}
	close(next)
	wg.Wait()
	for t, err := range errs {
		if err != nil {
			return nil, err
		}
		diffs[top[t]] = res[t]
	}
	return append([]int(nil), top...), nil
}

// AddBoundAll returns a bound, given this data set, on how far adding any
// row z with ||grad l(w_hat, z)|| <= lzk (L_z kappa for rows of norm at
// most kappa and a loss L_z Lipschitz in the margin) can move the
// minimizer: the sensitivity behind the data-dependent "pDP for all" of
// Wang's Figure 1 (Per-instance DP, Section 2.2), where
// WorstCaseSensitivity's lzk/(n lambda) holds for every data set.
//
// With H the Hessian of J at w_hat, lambda_min its smallest eigenvalue and
// L_H = Tz lambda_max(Gw) a Lipschitz constant of the Hessian of J in the
// spectral norm (||sum_j (S_j(a) - S_j(b)) kron x_j x_j^T|| <=
// Tz ||a - b|| sup_u sum_j ||x_j|| ||U_j^T u||^2), Lemma 13's first form
// gives r = ||w(Z + z) - w_hat|| <= lzk / lambda_min(int_0^1 H_{Z+z}) and
// the integrated Hessian is at least H - (L_H r/2) I, so
// r (lambda_min - L_H r/2) <= lzk. Along the path that adds z with weight
// t from 0 to 1 the minimizer moves continuously from r = 0 and the
// inequality holds throughout with t lzk, so r stays below the smaller
// root, r <= (lambda_min - sqrt(lambda_min^2 - 2 L_H lzk))/L_H (lzk /
// lambda_min for L_H = 0), when lambda_min^2 > 2 L_H lzk; the result is
// the smaller of that and lzk/(n lambda), plus the solver's tolerance
// 2 ||grad J(w_hat)||/(n lambda). It needs a loss with a Lipschitz
// curvature and lambda > 0 (an error otherwise, or when the root does not
// exist).
func (a *Analysis) AddBoundAll(lzk float64) (float64, error) {
	p := a.p
	if a.gw == nil {
		return 0, fmt.Errorf("%w: no data-dependent bound for all targets: the loss's curvature is not Lipschitz or lambda = 0", ErrNoBound)
	}
	if !check.Positive(lzk) {
		return 0, fmt.Errorf("%w: L_z kappa = %v", ErrInput, lzk)
	}
	var h mat.SymDense
	a.chol.ToSym(&h)
	var es mat.EigenSym
	if !es.Factorize(&h, false) {
		return 0, fmt.Errorf("%w: eigenvalues of the Hessian did not converge", ErrSingular)
	}
	lmin := es.Values(nil)[0]
	if !es.Factorize(a.gw, false) {
		return 0, fmt.Errorf("%w: eigenvalues of the weighted Gram matrix did not converge", ErrSingular)
	}
	gv := es.Values(nil)
	lh := a.tz * gv[len(gv)-1]
	tol := 2 * float64(p.n) * a.sol.GradNorm / p.reg
	r := lzk / p.reg
	switch {
	case lh == 0:
		r = math.Min(r, lzk/lmin)
	case lmin*lmin > 2*lh*lzk:
		// The smaller root, in the form that keeps its digits.
		r = math.Min(r, 2*lzk/(lmin+math.Sqrt(lmin*lmin-2*lh*lzk)))
	}
	return r + tol, nil
}
