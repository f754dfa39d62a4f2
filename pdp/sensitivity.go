package pdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
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
	// V is w_hat(neighbour) - w_hat(Z), length K*d; nil where only the
	// norms were kept (RemoveNorms, FlipNorms).
	V []float64
	// Dim is the number of weights K*d (len(V) where V is kept); zero in
	// a Diff made by hand, which then counts len(V).
	Dim int
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
	r := math.Sqrt(float64(d.dim()))
	l2, l1 = d.L2+d.ErrBound, d.L1+r*d.ErrBound
	if d.SCBound > 0 && !d.Exact { // 0: the zero value, no bound computed
		l2, l1 = math.Min(l2, d.SCBound), math.Min(l1, r*d.SCBound)
	}
	return l2, l1, true
}

// dim returns the number of weights of the difference (Dim, or len(V)).
func (d Diff) dim() int {
	if d.Dim > 0 {
		return d.Dim
	}
	return len(d.V)
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
	bt, err := a.basisRows(sp.pts)
	if err != nil {
		return nil, err
	}
	out := make([]Diff, len(sp.sets))
	var sc updScratch
	for t, rows := range sp.sets {
		d, own, err := a.update(sp.pts, rows, bt, 0, &sc, make([]float64, a.p.dim()))
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

// removeFlipSpec is removeSpec's and flipSpec's neighbours of row i in
// one spec, on the row's one point: removed (set 0), flipped (set 1).
func (a *Analysis) removeFlipSpec(i int) nbSpec {
	x, y := a.p.x.RawRowView(i), a.p.y[i]
	return nbSpec{pts: [][]float64{x}, sets: [][]nbRow{{{0, y, -1}}, {{0, y, -1}, {0, a.FlipLabel(x, y), 1}}}}
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
