package glm

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Defaults of Settings.
const (
	// DefaultMaxNewton is the number of Newton steps when
	// Settings.MaxNewton is zero: Newton reaches a gradient norm of 1e-9
	// in a few dozen steps on every problem the tests and experiments
	// met.
	DefaultMaxNewton = 100
	// DefaultNewtonDim is the largest number of weights K*d solved by
	// Newton's method (a dense (Kd) x (Kd) Hessian) when
	// Settings.NewtonDim is zero; above it, gradient steps alone.
	DefaultNewtonDim = 4096
)

// Settings configures Minimize.
type Settings struct {
	// GradTol > 0 is the target: the first iterate with ||grad F|| <=
	// GradTol is returned. Required.
	GradTol float64
	// MaxNewton bounds the Newton steps. Zero means DefaultMaxNewton.
	MaxNewton int
	// NewtonDim is the largest K*d solved by Newton's method. Zero means
	// DefaultNewtonDim.
	NewtonDim int
	// Fallback is the number of gradient steps of size Step after the
	// Newton steps: zero for none, negative for as many as it takes (the
	// loop then ends only at GradTol, or with ctx's error).
	Fallback int
	// Step is the size of the fallback gradient steps, finite and > 0 when
	// Fallback != 0 (1/(beta + lambda) contracts the distance to the
	// minimizer of a beta-smooth, lambda-strongly convex F).
	Step float64
}

// Stats are statistics of one minimization: they depend on the data, and
// are not private.
type Stats struct {
	NewtonSteps   int
	GradientSteps int
	// GradNorm is ||grad F|| at the returned weights; Reached reports
	// GradNorm <= GradTol.
	GradNorm float64
	Reached  bool
}

// Minimize runs Newton's method with a line search from w (in place) for
// at most s.MaxNewton steps, then at most s.Fallback gradient steps of
// size s.Step (s.Fallback < 0: as many as it takes), stopping at the first
// iterate with ||grad F|| <= s.GradTol. With s.Fallback >= 0 the number of
// steps is fixed in advance and reaching GradTol or not is reported in the
// statistics; with s.Fallback < 0 the loop ends only at GradTol or when
// ctx is done (an error). A Hessian that is not positive definite in
// floating point ends the Newton steps. Errors wrap ErrConfig (settings),
// ErrNotFinite, or are ctx's.
//
// Every Newton iterate w satisfies F(w) <= F(w0) (w0 the starting point),
// so the gradient steps start from a point with F <= F(w0), within
// ||grad F(w0)||/lambda of the minimizer. A Newton step along dir is
// accepted at the first t in 1, 1/2, 1/4, ... at which either F decreases
// by at least 1e-4 t <dir, grad F> (Armijo), or ||grad F|| decreases by the
// factor 1 - 1e-4 t while F rises by no more than its rounding and stays at
// most F(w0): the Newton direction is a descent direction of both F and
// ||grad F||^2, and near the minimizer the decrease of F falls below the
// rounding of F while the gradient norm is still resolved. (This is the
// iteration budget's premise of objective perturbation's AMP variant,
// docs/DESIGN.md, section 11.)
//
// The direction solves H dir = grad F, H the Hessian at w. H is built and
// factored at the first step; then the factored Hessian of an earlier
// iterate preconditions conjugate gradients with exact Hessian-vector
// products at w, run to a relative residual of min(0.1, sqrt(||grad F||)),
// and H is built afresh when they need more than refreshCG iterations
// (refreshCG1 for K = 1) or fail. The path is deterministic: it depends
// only on the rows, the labels and the linear term. The evaluations are
// the solver's (faster than FuncGrad's, to other bits: the logistic loss's
// logarithms summed over runs of rows, the gradient scaled by 1/m at the
// end), which moves the result within the tolerance.
func (o *Objective) Minimize(ctx context.Context, w []float64, s Settings) (Stats, error) {
	o.checkLen(w)
	if !check.Positive(s.GradTol) || s.MaxNewton < 0 || s.NewtonDim < 0 || (s.Fallback != 0 && !check.Positive(s.Step)) {
		return Stats{}, fmt.Errorf("%w: settings %+v: want GradTol finite > 0, MaxNewton and NewtonDim >= 0, and a finite Step > 0 with fallback steps", ErrConfig, s)
	}
	maxNewton, newtonDim := s.MaxNewton, s.NewtonDim
	if maxNewton == 0 {
		maxNewton = DefaultMaxNewton
	}
	if newtonDim == 0 {
		newtonDim = DefaultNewtonDim
	}
	p := len(w)
	g := make([]float64, p)
	gt := make([]float64, p)
	trial := make([]float64, p)
	dir := make([]float64, p)
	var st Stats
	f := o.eval(w, g)
	f0 := f
	gn := floats.Norm(g, 2)
	newton := p <= newtonDim
	refreshAt := refreshCG
	if o.k == 1 {
		refreshAt = refreshCG1
	}
	var H *mat.SymDense
	var chol mat.Cholesky
	factored := false // chol holds the Hessian at some earlier iterate
	refresh := true   // build the Hessian at the next step
	cg := cgScratch{r: make([]float64, p), z: make([]float64, p), d: make([]float64, p), q: make([]float64, p)}
	for it := 0; newton && it < maxNewton && gn > s.GradTol; it++ {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		ok := false
		if factored && !refresh {
			o.curvature(w)
			var iters int
			iters, ok = o.newtonDirection(dir, g, &chol, false, math.Min(0.1, math.Sqrt(gn)), &cg)
			refresh = iters > refreshAt
		}
		if !ok {
			if H == nil {
				H = mat.NewSymDense(p, nil)
			}
			o.curvature(w)
			o.hessianFrom(H, o.s.hz)
			if !chol.Factorize(H) {
				break // not positive definite in floating point: gradient steps
			}
			factored, refresh = true, false
			if _, ok = o.newtonDirection(dir, g, &chol, true, 0, &cg); !ok {
				break
			}
		}
		slope := floats.Dot(dir, g)
		if !(slope > 0) {
			break
		}
		// F's rounding is relative to the size of its terms, which cancel
		// (the ridge and the linear term at a noise-dominated minimizer).
		roundF := 1e-10 * (1 + math.Abs(f) + o.lambda/2*floats.Dot(w, w))
		if o.b != nil {
			roundF += 1e-10 * math.Abs(floats.Dot(o.b, w)) / float64(o.m)
		}
		accepted := false
		for t := 1.0; t > 1e-12; t /= 2 {
			copy(trial, w)
			floats.AddScaled(trial, -t, dir)
			ft := o.eval(trial, gt)
			if ft <= f-1e-4*t*slope || (ft <= f+roundF && ft <= f0 && floats.Norm(gt, 2) <= (1-1e-4*t)*gn) {
				f = ft
				accepted = true
				break
			}
		}
		if !accepted {
			break
		}
		copy(w, trial)
		copy(g, gt)
		gn = floats.Norm(g, 2)
		st.NewtonSteps++
	}
	for i := 0; (s.Fallback < 0 || i < s.Fallback) && gn > s.GradTol; i++ {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
		floats.AddScaled(w, -s.Step, g)
		o.eval(w, g)
		gn = floats.Norm(g, 2)
		st.GradientSteps++
	}
	st.GradNorm, st.Reached = gn, gn <= s.GradTol
	if math.IsNaN(gn) || math.IsInf(gn, 0) {
		return st, fmt.Errorf("%w: the gradient norm is %v", ErrNotFinite, gn)
	}
	return st, nil
}

// maxCG bounds the conjugate-gradient iterations of one Newton direction
// with an earlier Hessian as the preconditioner, and refreshCG is the
// count above which the next step builds the Hessian afresh (for softmax
// one build costs about as much as 50 Hessian-vector products).
const (
	maxCG     = 50
	refreshCG = 25
	// refreshCG1 is refreshCG for K = 1, where a build costs about 5
	// products at Adult's d = 33 and the earlier Hessian soon needs more.
	refreshCG1 = 2
)

// newtonDirection solves H(w) dir = g for the Newton direction at w.
// fresh reports that chol factors H(w); otherwise chol factors the Hessian
// at an earlier iterate and serves as the preconditioner of conjugate
// gradients on H(w) (products by hessVec, after curvature at w), stopped
// when the residual is at most eta ||g||. It returns the number of
// conjugate-gradient iterations and whether they met eta within maxCG.
func (o *Objective) newtonDirection(dir, g []float64, chol *mat.Cholesky, fresh bool, eta float64, s *cgScratch) (int, bool) {
	p := len(g)
	dv := mat.NewVecDense(p, dir)
	if fresh {
		if err := chol.SolveVecTo(dv, mat.NewVecDense(p, g)); err != nil {
			return 0, false
		}
		return 0, true
	}
	clear(dir)
	copy(s.r, g)
	zv := mat.NewVecDense(p, s.z)
	if err := chol.SolveVecTo(zv, mat.NewVecDense(p, s.r)); err != nil {
		return 0, false
	}
	copy(s.d, s.z)
	rz := floats.Dot(s.r, s.z)
	target := eta * floats.Norm(g, 2)
	for it := 1; it <= maxCG; it++ {
		o.hessVec(s.q, s.d)
		dq := floats.Dot(s.d, s.q)
		if !(dq > 0) || !(rz > 0) {
			return it, false
		}
		alpha := rz / dq
		floats.AddScaled(dir, alpha, s.d)
		floats.AddScaled(s.r, -alpha, s.q)
		if floats.Norm(s.r, 2) <= target {
			return it, true
		}
		if err := chol.SolveVecTo(zv, mat.NewVecDense(p, s.r)); err != nil {
			return it, false
		}
		rzNew := floats.Dot(s.r, s.z)
		beta := rzNew / rz
		rz = rzNew
		floats.AddScaledTo(s.d, s.z, beta, s.d)
	}
	return maxCG, false
}

// cgScratch holds the vectors of newtonDirection's conjugate gradients.
type cgScratch struct{ r, z, d, q []float64 }
