package pdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
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
	// (A.1 and A.2: differentiable with an absolutely continuous
	// derivative), which its constants state (losses.Constants.Smooth):
	// logistic, softmax, huber, huber-hinge and squared are; a loss whose
	// derivative jumps (a hinge, an absolute loss) has no Hessian identity.
	// Required. The Hessian of the K x d weights must fit in a dense matrix
	// (glm.MaxHessianWeights); project wider rows first.
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
	// a silently wrong analysis. (The pDP of an elastic net can be computed
	// on its active set, the result marked approximate; this package does
	// not.)
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
	// K > 1 (softmax) clipping by the norm of the margin gradient, scaling
	// it by min(1, G/(||l'(z)|| ||x||)), does not give the gradient field of
	// any loss, so there is no objective for Lemma 13, and a positive Clip
	// is refused with ErrNotSmooth: analyse an unclipped run, or one whose G
	// is at least L_z kappa, where clipping never acts. The zero value
	// means no clipping.
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
	// LabelBound is the bound B of a regression loss's labels, |y| <= B,
	// when the data were clipped to one (0: none); it names the adversarial
	// replacement label of Analysis.FlipLabel and nothing else.
	LabelBound float64
}

// problem is a validated data set and objective: J = n F with F the
// objective of package glm on the rows (glm.Objective), whose
// neighbours (glm.Objective.Neighbour) keep the ridge weight reg.
type problem struct {
	x       *mat.Dense
	y       []float64
	loss    losses.Loss
	obj     *glm.Objective // F = J/n on all the rows
	n, d, k int
	reg     float64 // N lambda
	tol     float64
	maxIter int
	classes int
	// lipHess and tz: the loss's margin Hessian is tz-Lipschitz
	// (losses.Constants.LipHess), and no clipping breaks it.
	lipHess    bool
	tz         float64
	labelBound float64
}

// newProblem validates the data and the configuration.
func newProblem(x *mat.Dense, y []float64, cfg Config) (*problem, error) {
	if cfg.Loss == nil {
		return nil, fmt.Errorf("%w: no loss", ErrInput)
	}
	// Smooth is a property of the loss, the same on every domain: a
	// bounded one serves a loss whose constants need it (squared).
	cons, err := cfg.Loss.Constants(losses.Domain{Kappa: 1, Radius: 1, LabelBound: 1, Classes: cfg.Classes})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if !cons.Smooth {
		return nil, fmt.Errorf("%w: the %q loss does not say it is smooth (losses.Constants.Smooth: a Lipschitz derivative)", ErrNotSmooth, cfg.Loss.Name())
	}
	if cfg.L1Ratio != 0 {
		return nil, fmt.Errorf("%w: l1_ratio = %v; the L1 term |w| has no derivative at 0: set l1_ratio = 0", ErrNotSmooth, cfg.L1Ratio)
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
	if k := max(1, cfg.Loss.Outputs(cfg.Classes)); k*d > glm.MaxHessianWeights {
		return nil, fmt.Errorf("%w: %d weights (%d x %d), more than the %d whose Hessian is held (glm.MaxHessianWeights): project the rows (--project k)", ErrInput, k*d, k, d, glm.MaxHessianWeights)
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
	if !check.NonNegative(cfg.LabelBound) {
		return nil, fmt.Errorf("%w: label bound %v, want finite >= 0", ErrInput, cfg.LabelBound)
	}
	p := &problem{x: x, y: y, loss: cfg.Loss, n: n, d: d, k: cfg.Loss.Outputs(cfg.Classes), classes: cfg.Classes,
		lipHess: cons.LipHess && cfg.Clip == 0, tz: cons.Tz, labelBound: cfg.LabelBound}
	if p.k < 1 {
		return nil, fmt.Errorf("%w: loss %s has %d outputs", ErrInput, cfg.Loss.Name(), p.k)
	}
	if _, ok := cfg.Loss.(losses.Margin); cfg.Clip > 0 && (p.k != 1 || !ok) {
		return nil, fmt.Errorf("%w: per-example clipping (G = %v) of the %d-output loss %s minimizes no objective; analyse an unclipped run", ErrNotSmooth, cfg.Clip, p.k, cfg.Loss.Name())
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
	p.obj, err = glm.New(x, y, glm.Config{Loss: cfg.Loss, Classes: cfg.Classes, Lambda: p.reg / float64(n), Clip: cfg.Clip})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return p, nil
}

// dim is the number of weights, K*d.
func (p *problem) dim() int { return p.k * p.d }

// view is a neighbour of the data set: all rows except skip (skip < 0
// keeps all), plus the row extra (nil for none), with its objective.
type view struct {
	obj    *glm.Objective
	skip   int
	extraX []float64
	extraY float64
}

// full returns the view of all the rows.
func (p *problem) full() view { return view{obj: p.obj, skip: -1} }

// neighbour returns the view without row skip (skip < 0: none) and with
// the row (x, y) (x nil: none).
func (p *problem) neighbour(skip int, x []float64, y float64) (view, error) {
	var ex *mat.Dense
	var ey []float64
	if x != nil {
		ex, ey = mat.NewDense(1, p.d, x), []float64{y}
	}
	obj, err := p.obj.Neighbour(skip, ex, ey)
	if err != nil {
		return view{}, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return view{obj: obj, skip: skip, extraX: x, extraY: y}, nil
}

// rows calls f for every row of the view, in order.
func (p *problem) rows(v view, f func(x []float64, y float64)) {
	for i := 0; i < p.n; i++ {
		if i != v.skip {
			f(p.x.RawRowView(i), p.y[i])
		}
	}
	if v.extraX != nil {
		f(v.extraX, v.extraY)
	}
}

// hessianJ returns the Hessian of J = m F at w on the view (m its rows).
func hessianJ(v view, w []float64) *mat.SymDense {
	var h mat.SymDense
	v.obj.Hess(&h, w)
	h.ScaleSym(float64(v.obj.Rows()), &h)
	return &h
}

// factor returns the Cholesky factorization of h, or an error wrapping
// ErrSingular when h is not numerically positive definite.
func factor(h *mat.SymDense, what string) (*mat.Cholesky, error) {
	return linalg.Factor(h, what, ErrSingular)
}

func norm2(v []float64) float64 { return linalg.Norm2(v) }

func norm1(v []float64) float64 { return linalg.Norm1(v) }
