package graph

import (
	"context"
	"math"
	"testing"

	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestReviewGridOutsideMargins: a declared loss that matches its
// declaration (Lz = 1, Sz = 0.25, convex) on the grid [-16, 16] but not
// beyond it (l = -yz + c relu(yz - 16)^2: l” = 2c > Sz for yz > 16) is
// accepted by NewTrainer, trained on runs whose margins leave the grid
// (lambda small: ||w|| up to 1/lambda), and certified at a Delta that two
// neighbouring data sets (same seed) exceed.
func TestReviewGridOutsideMargins(t *testing.T) {
	const d, n = 2, 40
	for _, c := range []float64{0.5, 2, 10} {
		lossOf := func(z, y *gorgonia.Node) *gorgonia.Node {
			m := gorgonia.Must
			yz := m(gorgonia.HadamardProd(y, z))
			r := m(gorgonia.Rectify(m(gorgonia.Sub(yz, gorgonia.NewConstant(16.0)))))
			return m(gorgonia.Add(m(gorgonia.Neg(yz)), m(gorgonia.Mul(gorgonia.NewConstant(c), m(gorgonia.Square(r))))))
		}
		decl := &Declared{Name: "linear-below-16", Constants: losses.Constants{Lz: 1, Sz: 0.25, Convex: true, Smooth: true}}
		knobs := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Schedule: trainer.Constant, Eta: 4, Passes: 10, Seed: 1}
		X := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := range n {
			X.Set(i, 0, 1)
			y[i] = 1
		}
		X2 := mat.DenseCopyOf(X)
		X2.Set(0, 0, 0)
		X2.Set(0, 1, 1)
		train := func(X *mat.Dense) ([]float64, float64) {
			m, z := linearGraph(d, lossOf)
			tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: decl, Knobs: knobs})
			if err != nil {
				t.Fatalf("c = %g: NewTrainer: %v", c, err)
			}
			fit, err := tr.Train(context.Background(), X, y)
			if err != nil {
				t.Fatalf("c = %g: Train: %v", c, err)
			}
			delta := fit.Report().Delta
			w, err := fit.Reveal()
			if err != nil {
				t.Fatal(err)
			}
			return w.W, delta
		}
		w1, delta := train(X)
		w2, _ := train(X2)
		diff := make([]float64, len(w1))
		gfloats.SubTo(diff, w1, w2)
		dist := gfloats.Norm(diff, 2)
		t.Logf("c = %g: w = %.4g, w' = %.4g, ||w - w'|| = %.4g, Delta = %.4g", c, w1, w2, dist, delta)
		if dist > delta*(1+1e-9) || math.IsNaN(dist) {
			t.Errorf("c = %g: a loss that leaves its declaration outside [-16, 16] is certified at Delta = %.4g, realized ||w - w'|| = %.4g", c, delta, dist)
		}
	}
}
