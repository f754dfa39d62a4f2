package pdp

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestClippedSolveIsTrainerFixedPoint checks that the objective of
// Config.Clip is the one a clipping trainer minimizes: full-batch gradient
// descent with per-example clipping (trainer, native engine) converges to
// the minimizer Solve finds, and the exact leave-one-out difference under
// clipping equals retraining.
func TestClippedSolveIsTrainerFixedPoint(t *testing.T) {
	const n, d, lambda, clip = 120, 4, 0.05, 0.15
	x, y := pdptest.Synth(n, d, losses.Logistic{}, 0, 5)
	cfg := Config{Loss: losses.Logistic{}, Lambda: lambda, Clip: clip}
	a := mustAnalysis(t, x, y, cfg)
	w := a.Solution().W
	// The clamp acts on some rows at the solution, or the test is void.
	active := 0
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		var z float64
		for j, v := range r {
			z += w[j] * v
		}
		if math.Abs(losses.Logistic{}.Deriv(z, y[i]))*mat.Norm(mat.NewVecDense(d, r), 2) > clip {
			active++
		}
	}
	if active < n/10 {
		t.Fatalf("clipping acts on %d of %d rows at the solution", active, n)
	}
	unclipped := mustAnalysis(t, x, y, Config{Loss: losses.Logistic{}, Lambda: lambda})
	if pdptest.Dist(unclipped.Solution().W, w) < 1e-3 {
		t.Fatalf("clipping did not move the minimizer")
	}

	tr, err := trainer.New(trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: lambda}, Kappa: 1,
		Clip: clip, Batch: n, Passes: 4000, Schedule: trainer.Constant, Eta: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := tr.Train(context.Background(), x, y)
	if err != nil {
		t.Fatal(err)
	}
	if e := pdptest.Dist(m.W, w); e > 1e-8 {
		t.Errorf("clipped full-batch descent ends %g from the clipped minimizer (unclipped minimizer %g away)", e, pdptest.Dist(m.W, unclipped.Solution().W))
	}

	for _, i := range []int{0, 33, n - 1} {
		ex, err := a.RemoveExact(i)
		if err != nil {
			t.Fatal(err)
		}
		xo, yo := pdptest.Without(x, y, i)
		ref, err := Solve(xo, yo, Config{Loss: losses.Logistic{}, Lambda: lambda, Clip: clip, N: n})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, len(w))
		for k := range want {
			want[k] = ref.W[k] - w[k]
		}
		if e := pdptest.Dist(ex.V, want); e > 1e-8 {
			t.Errorf("row %d: exact difference off retraining by %g (Delta %g)", i, e, ex.L2)
		}
		if ex.IdentityGap > 1e-8 {
			t.Errorf("row %d: Lemma 13 identity gap %g", i, ex.IdentityGap)
		}
		// Remove-one under clipping: ||V|| <= G / (n lambda).
		if ex.L2 > clip/(n*lambda)*(1+1e-12) {
			t.Errorf("row %d: ||V|| = %g above G/(n lambda) = %g", i, ex.L2, clip/(n*lambda))
		}
	}
}

// TestClipRefused checks the refusals of Config.Clip: softmax with a
// positive G, and a G that is not finite >= 0.
func TestClipRefused(t *testing.T) {
	x, y := pdptest.Synth(30, 3, losses.Softmax{}, 3, 1)
	if _, err := New(x, y, Config{Loss: losses.Softmax{}, Classes: 3, Lambda: 0.1, Clip: 0.5}); !errors.Is(err, ErrNotSmooth) {
		t.Errorf("softmax with clipping: %v, want ErrNotSmooth", err)
	}
	xb, yb := pdptest.Synth(30, 3, losses.Logistic{}, 0, 1)
	for _, g := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := New(xb, yb, Config{Loss: losses.Logistic{}, Lambda: 0.1, Clip: g}); !errors.Is(err, ErrInput) {
			t.Errorf("G = %v: %v, want ErrInput", g, err)
		}
	}
}
