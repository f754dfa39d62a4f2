package pdp

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
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
// labels y, by Newton's method with a line search (glm.Objective.Minimize:
// the Hessian factored, then preconditioned conjugate gradients with exact
// Hessian-vector products), started at w = 0 and stopped when
// ||grad J(w)||/n <= cfg.Tolerance. Newton converges quadratically near
// the minimizer of a strongly convex smooth objective, which is what lets
// the tolerance be 1e-10.
//
// Errors: ErrInput, ErrNotSmooth (an L1 term or a loss that is not
// smooth), ErrSingular (a Hessian that is not positive definite: lambda =
// 0 with rank-deficient rows or separable classes), ErrNoConvergence.
func Solve(x *mat.Dense, y []float64, cfg Config) (*Solution, error) {
	p, err := newProblem(x, y, cfg)
	if err != nil {
		return nil, err
	}
	return p.solve(p.full(), make([]float64, p.dim()))
}

// solve minimizes the objective of v from w0 (overwritten).
func (p *problem) solve(v view, w []float64) (*Solution, error) {
	st, err := v.obj.Minimize(context.Background(), w, glm.Settings{GradTol: p.tol, MaxNewton: p.maxIter, NewtonDim: math.MaxInt})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoConvergence, err)
	}
	if !st.Reached {
		// Newton stops early at a Hessian that is not positive definite,
		// or whose line search fails.
		if _, err := factor(hessianJ(v, w), "the Hessian of the objective"); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: ||grad F|| = %.3g > %.3g after %d Newton steps (lambda = 0 with separable classes has no minimizer)", ErrNoConvergence, st.GradNorm, p.tol, st.NewtonSteps)
	}
	if err := p.checkSeparable(v, w); err != nil {
		return nil, err
	}
	return &Solution{W: w, K: p.k, D: p.d, N: v.obj.Rows(), Objective: v.obj.Func(w), GradNorm: st.GradNorm, Iterations: st.NewtonSteps}, nil
}

// checkSeparable returns an error wrapping ErrSingular when the objective
// is unregularized, the loss is a classification loss (losses.Binary or
// losses.Multiclass) and w classifies every row correctly: the classes are
// then linearly separable, and the loss does not grow along w scaled up,
// so the minimizer is not unique (a loss that vanishes beyond a margin,
// the smoothed hinge) or does not exist (a loss that only tends to 0, the
// logistic and softmax losses, for which Newton stops because the
// gradient vanishes at infinity).
func (p *problem) checkSeparable(v view, w []float64) error {
	if task := p.loss.Task(); p.reg != 0 || (task != losses.Binary && task != losses.Multiclass) {
		return nil
	}
	z := make([]float64, p.k)
	separated := true
	p.rows(v, func(x []float64, y float64) {
		if !separated {
			return
		}
		p.obj.Margins(z, w, x)
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
		return fmt.Errorf("%w: lambda = 0 and the classes are linearly separable: the %s loss has no unique finite minimizer (use lambda > 0)", ErrSingular, p.loss.Name())
	}
	return nil
}
