package objpert

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// newObjective returns the objective of a problem with K outputs, ridge
// lambda and the linear term b (nil: none) on the rows X; package glm's
// tests check its passes, Hessians and solver on their own.
func newObjective(tb testing.TB, X *mat.Dense, y []float64, loss losses.Loss, k int, lambda float64, b []float64) *glm.Objective {
	tb.Helper()
	n, d := X.Dims()
	o, err := objective(X, y, Problem{Loss: loss, N: n, D: d, K: k, Kappa: 1, Lambda: lambda}, b)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// hessian returns the Hessian of o at w.
func hessian(o *glm.Objective, w []float64) *mat.SymDense {
	var H mat.SymDense
	o.Hess(&H, w)
	return &H
}

// TestMinimizeReachesThreshold checks that the solver reaches GradTol by
// Newton steps alone (no gradient steps) on softmax and logistic problems
// with the noise of objective and amp, at lambda at the floor and above,
// that the gradient norm it reports is the one at the returned weights
// (to rounding),
// and that every Newton iterate is at least as good as the start
// (F(w) <= F(0)), the premise of amp's iteration budget.
func TestMinimizeReachesThreshold(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		n, d, k int
		m       dp.Mechanism
		eps     float64
		above   float64 // lambda = above * floor
	}{
		{400, 6, 1, perturb.Objective, 1, 1},
		{16384 + 1000, 8, 1, perturb.Objective, 0.5, 2}, // row parts on goroutines (glm), the K = 1 refresh
		{400, 6, 1, perturb.AMP, 1, 3},
		{1500, 12, 6, perturb.Objective, 1, 1},
		{1500, 12, 6, perturb.Objective, 5, 30},
		{1500, 12, 6, perturb.AMP, 2, 1},
		{800, 9, 12, perturb.Objective, 0.5, 10},
	} {
		var X *mat.Dense
		var y []float64
		loss := losses.Loss(losses.Logistic{})
		if tt.k > 1 {
			loss = losses.Softmax{}
			X, y = plantedSoftmax(tt.n, tt.d, tt.k, uint64(tt.n))
		} else {
			X, y = rows(tt.n, tt.d, 1, 4)
			X.Scale(0.999, X)
		}
		delta := 0.0
		if tt.m == perturb.AMP {
			delta = 1e-5
		}
		pr := problem(loss, X, tt.k, 1)
		c0, err := Calibrate(tt.m, tt.eps, delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		pr.Lambda = tt.above * c0.LambdaFloor * (1 + 1e-9)
		c, err := Calibrate(tt.m, tt.eps, delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(3) {
			b := make([]float64, c.P)
			if tt.m == perturb.AMP {
				err = perturb.Seeded(seed).AddGaussian(b, c.Sigma1)
			} else {
				err = perturb.Seeded(seed).AddGammaNorm(b, 2*c.L, c.EpsNoise)
			}
			if err != nil {
				t.Fatal(err)
			}
			o := newObjective(t, X, y, loss, tt.k, pr.Lambda, b)
			w := make([]float64, c.P)
			f0 := o.Func(w)
			st, err := o.Minimize(ctx, w, glm.Settings{GradTol: c.GradTol})
			name := fmt.Sprintf("%s n = %d, d = %d, K = %d, eps = %v, lambda = %.3g, seed %d", tt.m, tt.n, tt.d, tt.k, tt.eps, pr.Lambda, seed)
			if err != nil || !st.Reached || st.GradientSteps != 0 || st.NewtonSteps > 30 {
				t.Errorf("%s: %+v, %v", name, st, err)
				continue
			}
			g := make([]float64, c.P)
			f := o.FuncGrad(g, w)
			// FuncGrad rounds otherwise than the solver's passes (package
			// glm checks the solver's report bit for bit): the norms agree to
			// the rounding of the gradient's terms, about 1e-16 of L.
			if gn := floats.Norm(g, 2); math.Abs(gn-st.GradNorm) > 1e-14 || gn > GradTol {
				t.Errorf("%s: gradient norm %v at the weights, reported %v", name, gn, st.GradNorm)
			}
			if f > f0 {
				t.Errorf("%s: F = %v above F(0) = %v", name, f, f0)
			}
		}
	}
}

// TestMinimizeLastFMSized is the LastFM-sized softmax problem (n = 6100, d
// = 33, K = 18) with objective's noise at eps = 1 just above the floor,
// where the minimizer is dominated by the noise (||w|| in the hundreds):
// the decrease of F of the last Newton steps is below the rounding of F,
// and the solver must still reach GradTol by Newton steps.
func TestMinimizeLastFMSized(t *testing.T) {
	if testing.Short() {
		t.Skip("a LastFM-sized solve")
	}
	o, c := lastfmSized(t, 1, 3.1623e-4, 1)
	w := make([]float64, o.Dim())
	st, err := o.Minimize(context.Background(), w, glm.Settings{GradTol: c.GradTol})
	if err != nil || !st.Reached || st.GradientSteps != 0 || st.NewtonSteps > 20 {
		t.Errorf("%+v, %v (||w|| = %.3g)", st, err, floats.Norm(w, 2))
	}
}
