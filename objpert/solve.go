package objpert

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
)

// SolveStats are statistics of one minimization (glm.Minimize): they depend
// on the data and the noise, and are never published.
type SolveStats = glm.Stats

// maxNewton is the number of Newton steps before the gradient steps take
// over.
const maxNewton = glm.DefaultMaxNewton

// objective returns the objective F(w) = (1/n) sum_i l(W x_i, y_i) +
// (Lambda/2)||w||^2 + <b, w>/n of pr on the rows X (b nil: no linear
// term).
func objective(X *mat.Dense, y []float64, pr Problem, b []float64) (*glm.Objective, error) {
	o, err := glm.New(X, y, glm.Config{Loss: pr.Loss, Classes: pr.K, Lambda: pr.Lambda, Linear: b})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCondition, err)
	}
	if o.Dim() != pr.K*pr.D {
		return nil, fmt.Errorf("%w: the %s loss has %d outputs, the problem K = %d", ErrCondition, pr.Loss.Name(), o.Outputs(), pr.K)
	}
	return o, nil
}

// minimize minimizes the objective of pr with the linear term b from w =
// 0 (glm.Minimize: at most maxNewton Newton steps, then fallback gradient
// steps of size step, stopping at gradient norm tol).
func minimize(ctx context.Context, X *mat.Dense, y []float64, pr Problem, b []float64, tol float64, fallback int, step float64) ([]float64, SolveStats, error) {
	o, err := objective(X, y, pr, b)
	if err != nil {
		return nil, SolveStats{}, err
	}
	w := make([]float64, o.Dim())
	st, err := o.Minimize(ctx, w, glm.Settings{GradTol: tol, MaxNewton: maxNewton, NewtonDim: MaxNewtonDim, Fallback: fallback, Step: step})
	if err != nil {
		clear(w)
		return nil, st, fmt.Errorf("objpert: %w", err)
	}
	return w, st, nil
}
