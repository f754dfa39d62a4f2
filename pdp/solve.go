package pdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Solution is the exact minimizer of J found by Solve.
type Solution struct {
	// W holds the weights, the K x d matrix row-major (K = 1 for scalar
	// losses).
	W []float64
	// K and D are the number of outputs and of features; N the number of
	// rows.
	K, D, N int
	// Objective is F(W) = J(W)/N.
	Objective float64
	// GradNorm is ||grad F(W)|| = ||grad J(W)||/N, at most the tolerance.
	GradNorm float64
	// Iterations is the number of Newton steps taken.
	Iterations int
}

// Solve returns the minimizer of J (see Config) on the rows of x and the
// labels y, by Newton's method with a backtracking (Armijo) line search,
// started at w = 0 and stopped when ||grad J(w)||/n <= cfg.Tolerance.
// Newton converges quadratically near the minimizer of a strongly convex
// smooth objective, which is what lets the tolerance be 1e-10.
//
// Errors: ErrInput, ErrNotSmooth (an L1 term or an unverified loss),
// ErrSingular (a Hessian that is not positive definite: lambda = 0 with
// rank-deficient rows or separable classes), ErrNoConvergence.
func Solve(x *mat.Dense, y []float64, cfg Config) (*Solution, error) {
	p, err := newProblem(x, y, cfg)
	if err != nil {
		return nil, err
	}
	return p.solve(p.full(), make([]float64, p.dim()))
}

// solve minimizes the objective of v from w0 (overwritten).
func (p *problem) solve(v view, w []float64) (*Solution, error) {
	n := float64(v.count())
	dim := p.dim()
	g := make([]float64, dim)
	trial := make([]float64, dim)
	gt := make([]float64, dim)
	step := mat.NewVecDense(dim, nil)
	f := v.grad(g, w)
	for it := 0; ; it++ {
		if !check.Finite(f) {
			return nil, fmt.Errorf("%w: objective %v at iteration %d", ErrNoConvergence, f, it)
		}
		gn := norm2(g) / n
		if gn <= p.tol {
			if err := p.checkSeparable(v, w); err != nil {
				return nil, err
			}
			return &Solution{W: w, K: p.k, D: p.d, N: v.count(), Objective: f / n, GradNorm: gn, Iterations: it}, nil
		}
		if it >= p.maxIter {
			return nil, fmt.Errorf("%w: ||grad F|| = %.3g > %.3g after %d Newton steps (lambda = 0 with separable classes has no minimizer)", ErrNoConvergence, gn, p.tol, it)
		}
		chol, err := p.factor(v.hessianAt(w), "the Hessian of the objective")
		if err != nil {
			return nil, err
		}
		if err := chol.SolveVecTo(step, mat.NewVecDense(dim, g)); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSingular, err)
		}
		// Armijo backtracking along -step; the directional derivative is
		// -g.step < 0 since the Hessian is positive definite.
		slope := -mat.Dot(step, mat.NewVecDense(dim, g))
		t := 1.0
		var ft float64
		for {
			for i := range trial {
				trial[i] = w[i] - t*step.AtVec(i)
			}
			ft = v.grad(gt, trial)
			if ft <= f+1e-4*t*slope || t < 1e-10 {
				break
			}
			// Near the minimizer the decrease is below the rounding of
			// J: accept a step that reduces the gradient instead.
			if math.Abs(ft-f) <= 1e-14*math.Abs(f) && norm2(gt) < norm2(g) {
				break
			}
			t /= 2
		}
		if t < 1e-10 {
			return nil, fmt.Errorf("%w: line search failed at ||grad F|| = %.3g", ErrNoConvergence, gn)
		}
		copy(w, trial)
		copy(g, gt)
		f = ft
	}
}

// checkSeparable returns an error wrapping ErrSingular when the objective
// is unregularized, the loss is the logistic or softmax loss, and w
// classifies every row correctly: the classes are then linearly separable,
// the loss tends to 0 along w scaled up, and there is no finite minimizer
// (Newton stops only because the gradient vanishes at infinity).
func (p *problem) checkSeparable(v view, w []float64) error {
	if p.reg != 0 {
		return nil
	}
	name := p.loss.Name()
	if name != "logistic" && name != "softmax" {
		return nil
	}
	z := make([]float64, p.k)
	separated := true
	v.rows(func(_ int, x []float64, y float64) {
		if !separated {
			return
		}
		p.marginOf(z, w, x)
		if p.k == 1 {
			separated = y*z[0] > 0
			return
		}
		c := int(y)
		for j, zj := range z {
			if j != c && zj >= z[c] {
				separated = false
				return
			}
		}
	})
	if separated {
		return fmt.Errorf("%w: lambda = 0 and the classes are linearly separable: the %s loss has no finite minimizer (use lambda > 0)", ErrSingular, name)
	}
	return nil
}
