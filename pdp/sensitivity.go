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
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
)

// Analysis is the per-instance sensitivity analysis of the exact ERM
// solution w_hat on a data set: w_hat, the Hessian H of J at w_hat and its
// Cholesky factorization, computed once (O(n d^2 + d^3) for K = 1), and,
// for a loss whose margin Hessian is Lipschitz (losses.Constants.LipHess)
// with lambda > 0, the weighted Gram matrix Gw = sum_j ||x_j|| x_j x_j^T
// that bounds the error of the one-step estimates (Diff.ErrBound).
// Its methods may be called concurrently.
type Analysis struct {
	p    *problem
	sol  *Solution
	chol *mat.Cholesky
	// tz is the loss's Lipschitz constant of the margin Hessian and gw the
	// weighted Gram matrix; gw is nil when the one-step error has no bound.
	tz float64
	gw *mat.SymDense
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
	a := &Analysis{p: p, sol: sol, chol: chol}
	if p.lipHess && p.reg > 0 {
		a.tz, a.gw = p.tz, weightedGram(p.x)
	}
	return a, nil
}

// weightedGram returns sum_j ||x_j|| x_j x_j^T over the rows of x, in
// blocks of rows (a rank-k update per block of the rows scaled by
// sqrt(||x_j||)).
func weightedGram(x *mat.Dense) *mat.SymDense {
	n, d := x.Dims()
	g := mat.NewSymDense(d, nil)
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		blk := mat.NewDense(hi-lo, d, nil)
		for i := lo; i < hi; i++ {
			row := x.RawRowView(i)
			floats.ScaleTo(blk.RawRowView(i-lo), math.Sqrt(norm2(row)), row)
		}
		g.SymRankK(g, 1, blk.T())
	}
	return g
}

// Solution returns the exact minimizer the analysis runs on.
func (a *Analysis) Solution() *Solution { return a.sol }

// Loss returns the loss of the analysed objective (Config.Loss).
func (a *Analysis) Loss() losses.Loss { return a.p.loss }

// Reg returns the ridge weight N lambda of J (Config.N, or the number of
// rows, times Config.Lambda).
func (a *Analysis) Reg() float64 { return a.p.reg }

// Tolerance returns the solver's bound on ||grad J(w)||/n at the solution
// (Config.Tolerance, or DefaultTolerance when it is zero).
func (a *Analysis) Tolerance() float64 { return a.p.tol }

// Diff is the per-instance sensitivity of w_hat for one neighbour of the
// data set (see Neighbours): the change of the minimizer when one row is
// removed, one target added, or one row replaced.
type Diff struct {
	// V is w_hat(neighbour) - w_hat(Z), length K*d.
	V []float64
	// L2 = ||V||_2 is the per-instance sensitivity Delta(Z, z); L1 = ||V||_1
	// is what the Laplace mechanism's pDP depends on.
	L2, L1 float64
	// ErrBound bounds ||V - V*||_2, V* the difference of the exact
	// minimizers of the two objectives, so that L2 + ErrBound is an upper
	// bound on the sensitivity (Upper): for a one-step estimate, the Taylor
	// remainder of the loss's gradient over strong convexity
	// (oneStepBound); for a refined difference, the solvers' gradient
	// tolerances over strong convexity. +Inf when there is no bound: lambda
	// = 0, or a loss whose curvature is not Lipschitz (huber, huber-hinge,
	// a clipped loss), whose one-step values are estimates.
	ErrBound float64
	// SCBound bounds the exact sensitivity by strong convexity alone (see
	// oneStepBound); Upper takes the smaller bound. +Inf for lambda = 0 and
	// for refined differences.
	SCBound float64
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
	// solution (exact only; NaN where RefineTop did not check it): a check
	// of the refinement.
	IdentityGap float64
}

// The kinds of a per-instance value (Diff.Kind).
const (
	KindExact    = "exact"
	KindBound    = "upper-bound"
	KindEstimate = "estimate"
)

// Kind says what the difference's sensitivity is: KindExact (refined to
// the solver's tolerance), KindBound (a one-step value with a proven error
// bound, reported through Upper) or KindEstimate (a one-step value
// without one).
func (d Diff) Kind() string {
	switch {
	case d.Exact:
		return KindExact
	case math.IsInf(d.ErrBound, 1) || math.IsNaN(d.ErrBound):
		return KindEstimate
	}
	return KindBound
}

// Upper returns upper bounds on the L2 and L1 norms of the exact
// difference, min(L2 + ErrBound, SCBound) and min(L1 + sqrt(K d)
// ErrBound, sqrt(K d) SCBound), and true; for an estimate without a bound
// (Kind), the one-step L2 and L1 and false. An exact difference without a
// tolerance bound (lambda = 0) returns its own norms and true.
func (d Diff) Upper() (l2, l1 float64, ok bool) {
	switch d.Kind() {
	case KindEstimate:
		return d.L2, d.L1, false
	case KindExact:
		if math.IsInf(d.ErrBound, 1) || math.IsNaN(d.ErrBound) {
			return d.L2, d.L1, true
		}
	}
	r := math.Sqrt(float64(len(d.V)))
	l2, l1 = d.L2+d.ErrBound, d.L1+r*d.ErrBound
	if d.SCBound > 0 && !d.Exact { // 0: the zero value, no bound computed
		l2, l1 = math.Min(l2, d.SCBound), math.Min(l1, r*d.SCBound)
	}
	return l2, l1, true
}

// nbRow is a row by which a neighbour's objective differs from J: the
// point pts[pt] of its spec with the label y, added (sign +1) or removed
// (sign -1).
type nbRow struct {
	pt      int
	y, sign float64
}

// nbSpec describes one or more neighbours that share points: each set of
// rows is one neighbour, J plus sum over its rows of sign l(., (x, y)).
type nbSpec struct {
	pts  [][]float64
	sets [][]nbRow
}

// pointBasis returns B = H^{-1} [U_1 ... U_r] (Kd x rK), U_q = I_K kron
// x_q, the columns of H^{-1} restricted to the points.
func (a *Analysis) pointBasis(pts ...[]float64) (*mat.Dense, error) {
	p := a.p
	rhs := mat.NewDense(p.dim(), len(pts)*p.k, nil)
	for q, x := range pts {
		for c := 0; c < p.k; c++ {
			for j, v := range x {
				rhs.Set(c*p.d+j, q*p.k+c, v)
			}
		}
	}
	var b mat.Dense
	if err := a.chol.SolveTo(&b, rhs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	return &b, nil
}

// update returns the one-step estimate of the change of w_hat for the
// neighbour whose objective is J + sum_q sign_q l(., (x_q, y_q)) over rows
// (points of pts), given B: the K columns from col0 + K pt of b hold
// H^{-1} U for the point pt. It also returns
// own = sum_q sign_q ||x_q|| ||U_q^T V||^2, the rows' share of the sum in
// oneStepBound.
//
// The neighbour's Hessian at w_hat is H + U D U^T, U the rows' U_q side by
// side and D = diag(sign_q S_q) (S_q the K x K margin Hessian of row q);
// by the Woodbury identity its inverse times U is B (I + D M)^{-1} with
// M = U^T B, so no inverse of D is needed (the softmax S is singular). One
// Newton step from w_hat on the neighbour's objective, whose gradient at
// w_hat is U gd with gd = (sign_q g_q) (g_q the margin gradient), moves by
// -B (I + D M)^{-1} gd. Leverage and Residual describe the first row.
func (a *Analysis) update(pts [][]float64, rows []nbRow, b *mat.Dense, col0 int) (Diff, float64, error) {
	p := a.p
	k, d := p.k, p.d
	r := len(rows) * k
	z, g, s := make([]float64, k), make([]float64, k), make([]float64, k*k)
	gd := make([]float64, r)
	dm := make([]float64, r*r)
	var s0, g0 []float64
	for q, row := range rows {
		x := pts[row.pt]
		p.obj.Margins(z, a.sol.W, x)
		p.obj.MarginGrad(g, z, x, row.y)
		p.obj.MarginHess(s, z, x, row.y)
		for c := range k {
			gd[q*k+c] = row.sign * g[c]
			for e := range k {
				dm[(q*k+c)*r+q*k+e] = row.sign * s[c*k+e]
			}
		}
		if q == 0 {
			s0, g0 = append([]float64(nil), s...), append([]float64(nil), g...)
		}
	}
	// M[(q,c),(q2,c2)] = x_q . B[block c, column of (q2, c2)].
	m := make([]float64, r*r)
	for q, row := range rows {
		x := pts[row.pt]
		for c := range k {
			for q2, row2 := range rows {
				for c2 := range k {
					col := col0 + row2.pt*k + c2
					var acc float64
					for j, v := range x {
						acc += v * b.At(c*d+j, col)
					}
					m[(q*k+c)*r+q2*k+c2] = acc
				}
			}
		}
	}
	coef := make([]float64, r)
	if r == 1 {
		den := 1 + dm[0]*m[0]
		if !(den > 1e-12) {
			return Diff{}, 0, fmt.Errorf("%w: removing the row leaves a singular Hessian (1 - D2l x^T H^{-1} x = %.3g); with lambda = 0 no other row spans its direction", ErrSingular, den)
		}
		coef[0] = gd[0] / den
	} else {
		am := mat.NewDense(r, r, nil)
		for i := range r {
			for j := range r {
				var acc float64
				for e := range r {
					acc += dm[i*r+e] * m[e*r+j]
				}
				if i == j {
					acc++
				}
				am.Set(i, j, acc)
			}
		}
		var lu mat.LU
		lu.Factorize(am)
		if c := lu.Cond(); !(c < linalg.MaxCond) {
			return Diff{}, 0, fmt.Errorf("%w: the neighbour's Hessian at w_hat is singular (condition %.3g of I + D M)", ErrSingular, c)
		}
		var cv mat.VecDense
		if err := lu.SolveVecTo(&cv, false, mat.NewVecDense(r, gd)); err != nil {
			return Diff{}, 0, fmt.Errorf("%w: the neighbour's Hessian is singular: %w", ErrSingular, err)
		}
		copy(coef, cv.RawVector().Data)
	}
	dim := p.dim()
	diff := Diff{V: make([]float64, dim), Leverage: math.NaN()}
	for i := 0; i < dim; i++ {
		var acc float64
		for q, row := range rows {
			for c := range k {
				acc += b.At(i, col0+row.pt*k+c) * coef[q*k+c]
			}
		}
		diff.V[i] = -acc
	}
	diff.L2, diff.L1 = norm2(diff.V), norm1(diff.V)
	if k == 1 {
		diff.Leverage = s0[0] * m[0]
		diff.Residual = -g0[0]
	} else {
		diff.Residual = norm2(g0)
	}
	var own float64
	grad := make([]float64, dim)
	for q, row := range rows {
		x := pts[row.pt]
		p.obj.Margins(z, diff.V, x)
		own += row.sign * norm2(x) * floats.Dot(z, z)
		for c := range k {
			floats.AddScaled(grad[c*d:(c+1)*d], gd[q*k+c], x)
		}
	}
	// ||grad J'(w_hat) - grad J(w_hat)||, scaled by oneStepBound.
	diff.SCBound = norm2(grad)
	return diff, own, nil
}

// oneStepBound sets d.ErrBound for a one-step difference V with
// base = sum_c V_c^T Gw V_c (the K blocks of V) and own from update.
//
// Claim: with mu = n lambda and Tz the loss's Lipschitz constant of the
// margin Hessian (losses.Constants.LipHess), the one-step point
// w1 = w_hat + V and the exact minimizers w*, w'* of J and of the
// neighbour's J' satisfy
//
//	||(w1 - w_hat) - (w'* - w*)|| <= ((Tz/2) Q + 2 ||grad J(w_hat)||) / mu,
//	Q = sum over the neighbour's rows j of ||x_j|| ||U_j^T V||^2 = base + own.
//
// Proof: J' is mu-strongly convex (the ridge weight is kept), so
// ||w1 - w'*|| <= ||grad J'(w1)||/mu, and ||w_hat - w*|| <=
// ||grad J(w_hat)||/mu likewise. V solves H' V = -grad J'(w_hat) +
// grad J(w_hat) exactly (H' the Hessian of J' at w_hat, by Woodbury), so
// grad J'(w1) = grad J(w_hat) + sum_j (U_j r_j), r_j = g_j(z_j + delta_j) -
// g_j(z_j) - S_j(z_j) delta_j the margin gradient's Taylor remainder at
// delta_j = U_j^T V, of norm at most (Tz/2)||delta_j||^2; the ridge term is
// quadratic and leaves none; ||U_j r_j|| = ||x_j|| ||r_j||. (Wang's
// Lemma 13 is the exact form of the same expansion.) TestOneStepBound
// checks it against retraining.
//
// It also turns d.SCBound, as update leaves it (the norm g of the gradient
// of the differing terms at w_hat), into the strong convexity bound
// (g + 2 ||grad J(w_hat)||)/mu on the exact sensitivity: ||w'* - w_hat|| <=
// ||grad J'(w_hat)||/mu <= (g + ||grad J(w_hat)||)/mu, and w_hat is within
// ||grad J(w_hat)||/mu of w*.
func (a *Analysis) oneStepBound(d *Diff, base, own float64) {
	gj := float64(a.p.n) * a.sol.GradNorm
	raw := d.SCBound
	d.ErrBound, d.SCBound = math.Inf(1), math.Inf(1)
	if a.p.reg == 0 {
		return
	}
	d.SCBound = (raw + 2*gj) / a.p.reg
	if a.gw == nil {
		return
	}
	q := math.Max(0, base+own)
	d.ErrBound = (a.tz/2*q + 2*gj) / a.p.reg
}

// quadGw returns sum_c V_c^T Gw V_c over the K blocks of v.
func (a *Analysis) quadGw(v []float64) float64 {
	d := a.p.d
	var s float64
	for c := 0; c < a.p.k; c++ {
		vc := mat.NewVecDense(d, v[c*d:(c+1)*d])
		s += mat.Inner(vc, a.gw, vc)
	}
	return s
}

// single returns the one-step differences of the neighbours of one spec,
// with their error bounds.
func (a *Analysis) single(sp nbSpec) ([]Diff, error) {
	b, err := a.pointBasis(sp.pts...)
	if err != nil {
		return nil, err
	}
	out := make([]Diff, len(sp.sets))
	for t, rows := range sp.sets {
		d, own, err := a.update(sp.pts, rows, b, 0)
		if err != nil {
			return nil, err
		}
		if a.gw != nil {
			a.oneStepBound(&d, a.quadGw(d.V), own)
		} else {
			a.oneStepBound(&d, 0, 0)
		}
		out[t] = d
	}
	return out, nil
}

// Remove returns the one-step estimate of the sensitivity for removing row
// i: Lemma 13 with the integrated Hessian replaced by the leave-one-out
// Hessian at w_hat, H - U S U^T, inverted by a Sherman-Morrison (K = 1) or
// Woodbury (rank K) update of H. It is one Newton step from w_hat on the
// leave-one-out objective, so its error is second order in the
// sensitivity; Diff.ErrBound bounds it (oneStepBound) when the loss's
// curvature is Lipschitz. It is exact for the squared loss (ridge
// regression), whose Hessian is constant.
func (a *Analysis) Remove(i int) (Diff, error) {
	p := a.p
	if i < 0 || i >= p.n {
		return Diff{}, fmt.Errorf("%w: row %d of %d", ErrInput, i, p.n)
	}
	ds, err := a.single(a.removeSpec(i))
	if err != nil {
		return Diff{}, fmt.Errorf("row %d: %w", i, err)
	}
	return ds[0], nil
}

// removeSpec is the neighbour without row i.
func (a *Analysis) removeSpec(i int) nbSpec {
	return nbSpec{pts: [][]float64{a.p.x.RawRowView(i)}, sets: [][]nbRow{{{0, a.p.y[i], -1}}}}
}

// Add returns the one-step estimate of the sensitivity for adding the
// target (x, y) to the data set (a point outside Z), with the rank-K
// update H + U S U^T; see Remove for its accuracy.
func (a *Analysis) Add(x []float64, y float64) (Diff, error) {
	if err := a.checkTarget(x, y); err != nil {
		return Diff{}, err
	}
	ds, err := a.single(nbSpec{pts: [][]float64{x}, sets: [][]nbRow{{{0, y, 1}}}})
	if err != nil {
		return Diff{}, err
	}
	return ds[0], nil
}

// Replace returns the one-step estimate of the change of w_hat when row i
// is replaced by (x, y) (replace-one neighbours, the DP certificates'
// relation), with the rank-2K update H - U_i S_i U_i^T + U S U^T; see
// Remove for its accuracy.
func (a *Analysis) Replace(i int, x []float64, y float64) (Diff, error) {
	p := a.p
	if i < 0 || i >= p.n {
		return Diff{}, fmt.Errorf("%w: row %d of %d", ErrInput, i, p.n)
	}
	if err := a.checkTarget(x, y); err != nil {
		return Diff{}, err
	}
	ds, err := a.single(nbSpec{pts: [][]float64{p.x.RawRowView(i), x}, sets: [][]nbRow{{{0, p.y[i], -1}, {1, y, 1}}}})
	if err != nil {
		return Diff{}, fmt.Errorf("row %d: %w", i, err)
	}
	return ds[0], nil
}

// FlipLabel returns the label of the adversarial copy of the row (x, y)
// that ReplaceFlip puts in its place: the other class of a binary loss;
// for a multiclass loss the class of the smallest margin at w_hat; for a
// regression loss, the end of [-B, B] (Config.LabelBound) farther from the
// prediction, or without a bound the label reflected about it, 2<w, x> - y.
func (a *Analysis) FlipLabel(x []float64, y float64) float64 {
	p := a.p
	z := make([]float64, p.k)
	p.obj.Margins(z, a.sol.W, x)
	switch p.loss.Task() {
	case losses.Binary:
		return -y
	case losses.Multiclass:
		return float64(floats.MinIdx(z))
	}
	if b := p.labelBound; b > 0 {
		if z[0] > 0 {
			return -b
		}
		return b
	}
	return 2*z[0] - y
}

// ReplaceFlip returns the one-step estimate of the change of w_hat when
// row i is replaced by its copy with the label FlipLabel: a replace-one
// neighbour that moves the minimizer far (a label-flipped copy moves it
// much further than removing the row does; see RemoveAll).
func (a *Analysis) ReplaceFlip(i int) (Diff, error) {
	p := a.p
	if i < 0 || i >= p.n {
		return Diff{}, fmt.Errorf("%w: row %d of %d", ErrInput, i, p.n)
	}
	ds, err := a.single(a.flipSpec(i))
	if err != nil {
		return Diff{}, fmt.Errorf("row %d: %w", i, err)
	}
	return ds[0], nil
}

// flipSpec is the neighbour with row i replaced by its flipped copy.
func (a *Analysis) flipSpec(i int) nbSpec {
	x, y := a.p.x.RawRowView(i), a.p.y[i]
	return nbSpec{pts: [][]float64{x}, sets: [][]nbRow{{{0, y, -1}, {0, a.FlipLabel(x, y), 1}}}}
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

// batch returns the one-step differences of count specs (spec(i)), with
// their error bounds, in order: out[i][t] is neighbour t of spec i. Per
// chunk of specs, one triangular solve pair for all their points, the
// updates at O(r^2 K^2 d) each, and one product of Gw with all their
// differences for the bounds: O(count K^2 d^2) in all, spread over
// GOMAXPROCS goroutines.
func (a *Analysis) batch(count int, spec func(i int) (nbSpec, error)) ([][]Diff, error) {
	p := a.p
	out := make([][]Diff, count)
	type job struct{ lo, hi int }
	jobs := make(chan job)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for jb := range jobs {
				specs := make([]nbSpec, 0, jb.hi-jb.lo)
				var pts [][]float64
				for i := jb.lo; i < jb.hi; i++ {
					sp, err := spec(i)
					if err != nil {
						errs[i] = err
						break
					}
					specs = append(specs, sp)
					pts = append(pts, sp.pts...)
				}
				if len(specs) < jb.hi-jb.lo {
					continue
				}
				b, err := a.pointBasis(pts...)
				if err != nil {
					errs[jb.lo] = err
					continue
				}
				var owns []float64
				col, failed := 0, false
				for s, sp := range specs {
					i := jb.lo + s
					out[i] = make([]Diff, len(sp.sets))
					for t, rows := range sp.sets {
						d, own, err := a.update(sp.pts, rows, b, col)
						if err != nil {
							errs[i], failed = fmt.Errorf("row %d: %w", i, err), true
							break
						}
						out[i][t] = d
						owns = append(owns, own)
					}
					col += len(sp.pts) * p.k
				}
				if !failed {
					a.boundChunk(out[jb.lo:jb.hi], owns)
				}
			}
		})
	}
	for lo := 0; lo < count; lo += chunkRows {
		jobs <- job{lo, min(lo+chunkRows, count)}
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

// boundChunk sets the error bounds of a chunk's differences (owns in the
// order of the differences): the quadratic forms of Gw as one matrix
// product, Gw [V_c ...], over every block of every difference.
func (a *Analysis) boundChunk(diffs [][]Diff, owns []float64) {
	if a.gw == nil {
		for _, ds := range diffs {
			for t := range ds {
				a.oneStepBound(&ds[t], 0, 0)
			}
		}
		return
	}
	p := a.p
	cols := 0
	for _, ds := range diffs {
		cols += len(ds) * p.k
	}
	if cols == 0 {
		return
	}
	vd := mat.NewDense(p.d, cols, nil)
	c := 0
	for _, ds := range diffs {
		for _, d := range ds {
			for blk := 0; blk < p.k; blk++ {
				vd.SetCol(c, d.V[blk*p.d:(blk+1)*p.d])
				c++
			}
		}
	}
	var gv mat.Dense
	gv.Mul(a.gw, vd)
	c, o := 0, 0
	for _, ds := range diffs {
		for t := range ds {
			var base float64
			for range p.k {
				base += mat.Dot(vd.ColView(c), gv.ColView(c))
				c++
			}
			a.oneStepBound(&ds[t], base, owns[o])
			o++
		}
	}
}

// RemoveAll returns the one-step estimate (see Remove) for every row, in
// row order, with its error bound (batch).
func (a *Analysis) RemoveAll() ([]Diff, error) {
	return a.firstOfAll(a.p.n, func(i int) (nbSpec, error) { return a.removeSpec(i), nil })
}

// FlipAll returns ReplaceFlip for every row, in row order (batch).
func (a *Analysis) FlipAll() ([]Diff, error) {
	return a.firstOfAll(a.p.n, func(i int) (nbSpec, error) { return a.flipSpec(i), nil })
}

// AddAll returns Add for every row of x (labels y), in order (batch).
func (a *Analysis) AddAll(x *mat.Dense, y []float64) ([]Diff, error) {
	n, err := a.checkTargets(x, y)
	if err != nil {
		return nil, err
	}
	return a.firstOfAll(n, func(i int) (nbSpec, error) {
		return nbSpec{pts: [][]float64{x.RawRowView(i)}, sets: [][]nbRow{{{0, y[i], 1}}}}, nil
	})
}

// ReplaceAll returns Replace(rows[t], x_t, y_t) for every row t of x, in
// order (batch).
func (a *Analysis) ReplaceAll(rows []int, x *mat.Dense, y []float64) ([]Diff, error) {
	n, err := a.checkTargets(x, y)
	if err != nil {
		return nil, err
	}
	if len(rows) != n {
		return nil, fmt.Errorf("%w: %d rows to replace by %d", ErrInput, len(rows), n)
	}
	p := a.p
	return a.firstOfAll(n, func(t int) (nbSpec, error) {
		i := rows[t]
		if i < 0 || i >= p.n {
			return nbSpec{}, fmt.Errorf("%w: row %d of %d", ErrInput, i, p.n)
		}
		return nbSpec{pts: [][]float64{p.x.RawRowView(i), x.RawRowView(t)}, sets: [][]nbRow{{{0, p.y[i], -1}, {1, y[t], 1}}}}, nil
	})
}

// firstOfAll is batch for specs of one neighbour each.
func (a *Analysis) firstOfAll(count int, spec func(i int) (nbSpec, error)) ([]Diff, error) {
	all, err := a.batch(count, spec)
	if err != nil {
		return nil, err
	}
	out := make([]Diff, count)
	for i, ds := range all {
		out[i] = ds[0]
	}
	return out, nil
}

// checkTargets checks a matrix of targets and their labels and returns
// their number.
func (a *Analysis) checkTargets(x *mat.Dense, y []float64) (int, error) {
	if x == nil || x.IsEmpty() {
		return 0, nil
	}
	n, _ := x.Dims()
	if len(y) != n {
		return 0, fmt.Errorf("%w: %d targets with %d labels", ErrInput, n, len(y))
	}
	for i := range n {
		if err := a.checkTarget(x.RawRowView(i), y[i]); err != nil {
			return 0, fmt.Errorf("target %d: %w", i, err)
		}
	}
	return n, nil
}

// RemoveExact returns the exact sensitivity for removing row i: the
// leave-one-out minimizer found by Newton refinement from the one-step
// estimate (see refine) to the solver's tolerance, and checked against
// Lemma 13's integral identity evaluated by quadrature.
func (a *Analysis) RemoveExact(i int) (Diff, error) { return a.removeExact(i, true) }

// removeExact is RemoveExact, with the check of Lemma 13 when check is
// set (IdentityGap NaN otherwise).
func (a *Analysis) removeExact(i int, check bool) (Diff, error) {
	start, err := a.Remove(i)
	if err != nil {
		return Diff{}, err
	}
	p := a.p
	v, err := p.neighbour(i, nil, 0)
	if err != nil {
		return Diff{}, err
	}
	d, err := a.refine(v, p.x.RawRowView(i), p.y[i], -1, start, check)
	if err != nil {
		return Diff{}, fmt.Errorf("row %d: %w", i, err)
	}
	return d, nil
}

// AddExact is RemoveExact for adding the target (x, y).
func (a *Analysis) AddExact(x []float64, y float64) (Diff, error) { return a.addExact(x, y, true) }

// addExact is AddExact, with the check of Lemma 13 when check is set.
func (a *Analysis) addExact(x []float64, y float64, check bool) (Diff, error) {
	start, err := a.Add(x, y)
	if err != nil {
		return Diff{}, err
	}
	v, err := a.p.neighbour(-1, x, y)
	if err != nil {
		return Diff{}, err
	}
	return a.refine(v, x, y, 1, start, check)
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
// With check set, the result is then checked against Wang's Lemma 13
// (second form; about as costly as the refinement itself): with
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
func (a *Analysis) refine(v view, px []float64, py, sign float64, start Diff, check bool) (Diff, error) {
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
		w, gn = sol.W, sol.GradNorm
	}
	d := Diff{V: make([]float64, dim), Leverage: start.Leverage, Residual: start.Residual, Exact: true, Steps: steps, ErrBound: math.Inf(1)}
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
// estimate) by their exact values (RemoveExact), computed on GOMAXPROCS
// goroutines. Lemma 13's identity is checked on the first of them, the
// most exposed (its IdentityGap; NaN for the others): the refinement is
// exact by its gradient tolerance alone, and the check costs as much again.
// It returns the refined row indices, most exposed first.
func (a *Analysis) RefineTop(diffs []Diff, k int) ([]int, error) {
	if len(diffs) != a.p.n {
		return nil, fmt.Errorf("%w: %d sensitivities for %d rows", ErrInput, len(diffs), a.p.n)
	}
	return refineTop(diffs, k, a.removeExact)
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
	return refineTop(diffs, k, func(i int, check bool) (Diff, error) { return a.addExact(x.RawRowView(i), y[i], check) })
}

// refineTop replaces the k entries of diffs with the largest upper
// sensitivity by exact(i, check), checked for the first, on GOMAXPROCS
// goroutines, and returns their indices, most exposed first.
func refineTop(diffs []Diff, k int, exact func(i int, check bool) (Diff, error)) ([]int, error) {
	order := make([]int, len(diffs))
	up := make([]float64, len(diffs))
	for i, d := range diffs {
		order[i] = i
		up[i], _, _ = d.Upper()
	}
	sort.SliceStable(order, func(i, j int) bool { return up[order[i]] > up[order[j]] })
	k = max(0, min(k, len(order)))
	top := order[:k]
	errs := make([]error, k)
	res := make([]Diff, k)
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for t := range next {
				res[t], errs[t] = exact(top[t], t == 0)
			}
		})
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
