package pdp

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Analysis is the per-instance sensitivity analysis of the exact ERM
// solution w_hat on a data set: w_hat, the Hessian H of J at w_hat and its
// Cholesky factorization, computed once (O(n d^2 + d^3) for K = 1).
// Its methods may be called concurrently.
type Analysis struct {
	p    *problem
	sol  *Solution
	chol *mat.Cholesky
}

// New solves the problem of cfg on (x, y) (see Solve) and factorizes the
// Hessian at the solution. x and y must not be modified while the Analysis
// is in use.
func New(x *mat.Dense, y []float64, cfg Config) (*Analysis, error) {
	p, err := newProblem(x, y, cfg)
	if err != nil {
		return nil, err
	}
	sol, err := p.solve(p.full(), make([]float64, p.dim()))
	if err != nil {
		return nil, err
	}
	chol, err := factor(hessianJ(p.full(), sol.W), "the Hessian at the solution")
	if err != nil {
		return nil, err
	}
	return &Analysis{p: p, sol: sol, chol: chol}, nil
}

// Solution returns the exact minimizer the analysis runs on.
func (a *Analysis) Solution() *Solution { return a.sol }

// Diff is the per-instance sensitivity of w_hat for one neighbour of the
// data set (see Neighbours): the change of the minimizer when one row is
// removed or one target added.
type Diff struct {
	// V is w_hat(neighbour) - w_hat(Z), length K*d.
	V []float64
	// L2 = ||V||_2 is the per-instance sensitivity Delta(Z, z); L1 = ||V||_1
	// is what the Laplace mechanism's pDP depends on.
	L2, L1 float64
	// Leverage is the generalized leverage D2l(z) x^T H^{-1} x of the row at
	// w_hat (H the Hessian of J on Z). For the squared loss it is the ridge
	// leverage score x^T (X^T X + n lambda I)^{-1} x (Wang, eq. 4 and
	// Theorem 14: in-sample for a row of Z, out-of-sample for a target).
	// NaN for K > 1.
	Leverage float64
	// Residual is the pseudo-residual -l'(z) at w_hat (y - <w, x> for the
	// squared loss), clamped to [-G/||x||, G/||x||] under Config.Clip; for
	// K > 1, the norm of the margin gradient.
	Residual float64
	// Exact reports a leave-one-out (or add-one) solution refined to the
	// solver's tolerance; otherwise V is the one-step estimate.
	Exact bool
	// Steps counts the refinement iterations (exact only).
	Steps int
	// IdentityGap is the distance between V and the difference given by
	// Lemma 13's integral identity evaluated by quadrature at the refined
	// solution (exact only): a check of the refinement.
	IdentityGap float64
}

// pointBasis returns B = H^{-1} U (Kd x K), U = I_K kron x, the columns of
// H^{-1} restricted to the row x.
func (a *Analysis) pointBasis(x []float64) (*mat.Dense, error) {
	p := a.p
	dim := p.dim()
	rhs := mat.NewDense(dim, p.k, nil)
	for c := 0; c < p.k; c++ {
		for j, v := range x {
			rhs.Set(c*p.d+j, c, v)
		}
	}
	var b mat.Dense
	if err := a.chol.SolveTo(&b, rhs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	return &b, nil
}

// oneStep returns the one-step estimate of the change of w_hat when the
// row (x, y) is removed (sign = -1) or added (sign = +1), given
// B = H^{-1}U for that row in the columns col0..col0+K-1 of b.
//
// The neighbour's Hessian at w_hat is H + sign U S U^T (S the K x K margin
// Hessian of the row); by the Woodbury identity its inverse times U is
// B (I + sign S M)^{-1} with M = U^T B, so no inverse of S is needed (the
// softmax S is singular). One Newton step from w_hat on the neighbour's
// objective, whose gradient at w_hat is sign U g, moves by
// -sign B (I + sign S M)^{-1} g.
func (a *Analysis) oneStep(x []float64, y, sign float64, b *mat.Dense, col0 int) (Diff, error) {
	p := a.p
	k, d := p.k, p.d
	z := make([]float64, k)
	g := make([]float64, k)
	s := make([]float64, k*k)
	p.obj.Margins(z, a.sol.W, x)
	p.obj.MarginGrad(g, z, x, y)
	p.obj.MarginHess(s, z, x, y)
	// M[c][c'] = x . B[block c, column c'].
	m := make([]float64, k*k)
	for c := 0; c < k; c++ {
		for c2 := 0; c2 < k; c2++ {
			var acc float64
			for j, v := range x {
				acc += v * b.At(c*d+j, col0+c2)
			}
			m[c*k+c2] = acc
		}
	}
	coef := make([]float64, k)
	if k == 1 {
		den := 1 + sign*s[0]*m[0]
		if !(den > 1e-12) {
			return Diff{}, fmt.Errorf("%w: removing the row leaves a singular Hessian (1 - D2l x^T H^{-1} x = %.3g); with lambda = 0 no other row spans its direction", ErrSingular, den)
		}
		coef[0] = g[0] / den
	} else {
		a := mat.NewDense(k, k, nil)
		for c := 0; c < k; c++ {
			for c2 := 0; c2 < k; c2++ {
				var acc float64
				for e := 0; e < k; e++ {
					acc += s[c*k+e] * m[e*k+c2]
				}
				v := sign * acc
				if c == c2 {
					v++
				}
				a.Set(c, c2, v)
			}
		}
		var cv mat.VecDense
		if err := cv.SolveVec(a, mat.NewVecDense(k, g)); err != nil {
			return Diff{}, fmt.Errorf("%w: the neighbour's Hessian is singular: %w", ErrSingular, err)
		}
		for c := range coef {
			coef[c] = cv.AtVec(c)
		}
	}
	dim := p.dim()
	diff := Diff{V: make([]float64, dim), Leverage: math.NaN()}
	for r := 0; r < dim; r++ {
		var acc float64
		for c := 0; c < k; c++ {
			acc += b.At(r, col0+c) * coef[c]
		}
		diff.V[r] = -sign * acc
	}
	diff.L2, diff.L1 = norm2(diff.V), norm1(diff.V)
	if k == 1 {
		diff.Leverage = s[0] * m[0]
		diff.Residual = -g[0]
	} else {
		diff.Residual = norm2(g)
	}
	return diff, nil
}

// Remove returns the one-step estimate of the sensitivity for removing row
// i: Lemma 13 with the integrated Hessian replaced by the leave-one-out
// Hessian at w_hat, H - U S U^T, inverted by a Sherman-Morrison (K = 1) or
// Woodbury (rank K) update of H. It is one Newton step from w_hat on the
// leave-one-out objective, so its error is second order in the
// sensitivity: at most (L_H / (2 mu)) Delta^2 for a Hessian that is L_H
// Lipschitz along the way and mu = n lambda strongly convex. It is exact
// for the squared loss (ridge regression), whose Hessian is constant.
func (a *Analysis) Remove(i int) (Diff, error) {
	p := a.p
	if i < 0 || i >= p.n {
		return Diff{}, fmt.Errorf("%w: row %d of %d", ErrInput, i, p.n)
	}
	x := p.x.RawRowView(i)
	b, err := a.pointBasis(x)
	if err != nil {
		return Diff{}, err
	}
	d, err := a.oneStep(x, p.y[i], -1, b, 0)
	if err != nil {
		return Diff{}, fmt.Errorf("row %d: %w", i, err)
	}
	return d, nil
}

// Add returns the one-step estimate of the sensitivity for adding the
// target (x, y) to the data set (a point outside Z), with the rank-K
// update H + U S U^T; see Remove for its accuracy.
func (a *Analysis) Add(x []float64, y float64) (Diff, error) {
	if err := a.checkTarget(x, y); err != nil {
		return Diff{}, err
	}
	b, err := a.pointBasis(x)
	if err != nil {
		return Diff{}, err
	}
	return a.oneStep(x, y, 1, b, 0)
}

func (a *Analysis) checkTarget(x []float64, y float64) error {
	if len(x) != a.p.d {
		return fmt.Errorf("%w: target of %d features, want %d", ErrInput, len(x), a.p.d)
	}
	if j := check.FirstNonFinite(x); j >= 0 {
		return fmt.Errorf("%w: target feature %d = %v", ErrInput, j, x[j])
	}
	if err := a.p.loss.CheckLabel(y, a.p.classes); err != nil {
		return fmt.Errorf("%w: target: %w", ErrInput, err)
	}
	return nil
}

// chunkRows is the number of rows whose H^{-1} U are solved together.
const chunkRows = 2048

// RemoveAll returns the one-step estimate (see Remove) for every row, in
// row order: one triangular solve pair per chunk of rows and O(K^2 d) per
// row after it, O(n K^2 d^2) in all, spread over GOMAXPROCS goroutines.
func (a *Analysis) RemoveAll() ([]Diff, error) {
	p := a.p
	out := make([]Diff, p.n)
	dim := p.dim()
	type job struct{ lo, hi int }
	jobs := make(chan job)
	errs := make([]error, p.n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jb := range jobs {
				m := jb.hi - jb.lo
				rhs := mat.NewDense(dim, m*p.k, nil)
				for r := 0; r < m; r++ {
					x := p.x.RawRowView(jb.lo + r)
					for c := 0; c < p.k; c++ {
						for j, v := range x {
							rhs.Set(c*p.d+j, r*p.k+c, v)
						}
					}
				}
				var b mat.Dense
				if err := a.chol.SolveTo(&b, rhs); err != nil {
					errs[jb.lo] = fmt.Errorf("%w: %w", ErrSingular, err)
					continue
				}
				for r := 0; r < m; r++ {
					i := jb.lo + r
					d, err := a.oneStep(p.x.RawRowView(i), p.y[i], -1, &b, r*p.k)
					if err != nil {
						errs[i] = fmt.Errorf("row %d: %w", i, err)
						continue
					}
					out[i] = d
				}
			}
		}()
	}
	for lo := 0; lo < p.n; lo += chunkRows {
		jobs <- job{lo, min(lo+chunkRows, p.n)}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RemoveExact returns the exact sensitivity for removing row i: the
// leave-one-out minimizer found by Newton refinement from the one-step
// estimate (see refine) to the solver's tolerance, and checked against
// Lemma 13's integral identity evaluated by quadrature.
func (a *Analysis) RemoveExact(i int) (Diff, error) {
	start, err := a.Remove(i)
	if err != nil {
		return Diff{}, err
	}
	p := a.p
	v, err := p.neighbour(i, nil, 0)
	if err != nil {
		return Diff{}, err
	}
	d, err := a.refine(v, p.x.RawRowView(i), p.y[i], -1, start)
	if err != nil {
		return Diff{}, fmt.Errorf("row %d: %w", i, err)
	}
	return d, nil
}

// AddExact is RemoveExact for adding the target (x, y).
func (a *Analysis) AddExact(x []float64, y float64) (Diff, error) {
	start, err := a.Add(x, y)
	if err != nil {
		return Diff{}, err
	}
	v, err := a.p.neighbour(-1, x, y)
	if err != nil {
		return Diff{}, err
	}
	return a.refine(v, x, y, 1, start)
}

// refine finds the minimizer of the neighbour objective v from w_hat +
// start.V. Its steps solve with the neighbour's Hessian frozen at w_hat
// (the one-step matrix, applied by the Woodbury identity at O(K^2 d^2) per
// step): a simplified Newton method, which contracts the gradient by a
// factor of order L_H Delta / mu per step, about Delta, so it converges in
// two or three steps from the one-step estimate. When a step contracts the
// gradient by less than 4, it switches to full Newton steps with the
// Hessian at the iterate and a line search (Solve's method). Every step
// costs one gradient, O(n K d).
//
// The result is then checked against Wang's Lemma 13 (second form): with
// w_s the minimizer of the smaller data set and w_b that of the larger (the
// row p added), w_s - w_b = [int_0^1 H_s(w_b + t(w_s - w_b)) dt]^{-1}
// grad l_p(w_b), where H_s is the Hessian of the smaller objective. (The
// lemma prints this form with a minus sign; subtracting the two
// stationarity conditions, grad J_s(w_b) = -grad l_p(w_b) and
// grad J_s(w_s) = 0, gives the plus sign, and the first form of the lemma
// agrees with it. Only the norm enters the pDP, which the sign does not
// change.) The integral is taken
// row by row on the margin curvature: for a scalar loss in closed form,
// int_0^1 D2l(z0 + t(z1-z0)) dt = (Dl(z1) - Dl(z0))/(z1 - z0) (Dl, the first derivative, is
// absolutely continuous, assumption A.2), and otherwise (softmax, or
// |z1 - z0| too small for that quotient) by 5-point Gauss-Lobatto
// quadrature, whose nodes include both endpoints t = 0 and t = 1.
func (a *Analysis) refine(v view, px []float64, py, sign float64, start Diff) (Diff, error) {
	p := a.p
	dim := p.dim()
	w := make([]float64, dim)
	for i := range w {
		w[i] = a.sol.W[i] + start.V[i]
	}
	// Frozen Hessian of the neighbour at w_hat.
	b, err := a.pointBasis(px)
	if err != nil {
		return Diff{}, err
	}
	apply, err := a.frozenSolve(px, py, sign, b)
	if err != nil {
		return Diff{}, err
	}
	// grad J = m grad F, m the neighbour's rows
	m := float64(v.obj.Rows())
	g := make([]float64, dim)
	v.obj.FuncGrad(g, w)
	gn := norm2(g)
	steps := 0
	for gn > p.tol {
		if steps >= 20 {
			break
		}
		for i := range g {
			g[i] *= m
		}
		stepv := apply(g)
		for i := range w {
			w[i] -= stepv[i]
		}
		steps++
		v.obj.FuncGrad(g, w)
		next := norm2(g)
		if math.IsNaN(next) || next > gn/4 {
			gn = next
			break
		}
		gn = next
	}
	if !(gn <= p.tol) {
		sol, err := p.solve(v, w)
		if err != nil {
			return Diff{}, err
		}
		steps += sol.Iterations
		w = sol.W
	}
	d := Diff{V: make([]float64, dim), Leverage: start.Leverage, Residual: start.Residual, Exact: true, Steps: steps}
	for i := range w {
		d.V[i] = w[i] - a.sol.W[i]
	}
	d.L2, d.L1 = norm2(d.V), norm1(d.V)

	// Lemma 13 at the refined solution. The smaller data set of an added
	// target is Z itself, on an objective of its own: the Analysis's is
	// shared by concurrent calls, and SegmentHess writes its scratch.
	// The preconditioner is the small objective's Hessian at w_hat: the
	// frozen one for a removed row, H for an added target.
	small, ws, wb, pre := v, w, a.sol.W, apply
	if sign > 0 {
		if small, err = a.p.neighbour(-1, nil, 0); err != nil {
			return Diff{}, err
		}
		ws, wb, pre = a.sol.W, w, a.solveH
	}
	id, err := a.identity(small, px, py, ws, wb, pre)
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
	if u, ok := pcg(mul, pre, gp, 1e-12, 50); ok {
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
// with the largest one-step sensitivity by their exact values
// (RemoveExact), computed on GOMAXPROCS goroutines. It returns the
// refined row indices, most exposed first.
func (a *Analysis) RefineTop(diffs []Diff, k int) ([]int, error) {
	if len(diffs) != a.p.n {
		return nil, fmt.Errorf("%w: %d sensitivities for %d rows", ErrInput, len(diffs), a.p.n)
	}
	order := make([]int, len(diffs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return diffs[order[i]].L2 > diffs[order[j]].L2 })
	k = max(0, min(k, len(order)))
	top := order[:k]
	errs := make([]error, k)
	res := make([]Diff, k)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				res[t], errs[t] = a.RemoveExact(top[t])
			}
		}()
	}
	for t := range top {
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
