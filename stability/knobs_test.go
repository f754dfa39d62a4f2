package stability

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/trainer"
)

// signRows returns a data set maker of rows with entries +-1/2 (norm 1 for
// d = 4, and norm exactly 1/2 after s = 0.5 dropout drops two coordinates)
// and random labels.
func signRows(seed uint64, n, d int) func() (*mat.Dense, []float64) {
	return func() (*mat.Dense, []float64) {
		r := rand.New(rand.NewPCG(seed, 3))
		X := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			for j := 0; j < d; j++ {
				X.Set(i, j, float64(2*r.IntN(2)-1)/2)
			}
			y[i] = float64(2*r.IntN(2) - 1)
		}
		return X, y
	}
}

// TestKnobBoundsAttained gives the knob adjustments of the convex SGD route
// teeth: per-example clipping (L -> min(G, L), also with b > 1), s-dropout
// (L -> s L), both at once, and a short last minibatch (divided by b, not by
// its own size). On the smoothed hinge with a small step every run stays in
// the loss's linear part, so the flipped-label neighbour moves the weights
// by exactly the bound: some neighbour must reach more than 0.9 of Delta
// (runScenario asserts that none exceeds it). A bound that used G instead of
// min(G, s L), s^2 L instead of s L, or a trainer that clipped at 2G or
// divided a short batch by its own size fails here.
func TestKnobBoundsAttained(t *testing.T) {
	hh := huberHinge(0.25)
	tests := []struct {
		sc  scenario
		min float64
	}{
		{scenario{name: "clipping", n: 100, d: 4, dataSet: signRows(51, 100, 4), routes: []RouteID{RouteConvexSGD},
			cfg: trainer.Config{Loss: hh, Eta: 0.01, Clip: 0.5, Passes: 3, Seed: 51}}, 0.9},
		{scenario{name: "clipping b 3", n: 100, d: 4, dataSet: signRows(52, 100, 4), routes: []RouteID{RouteConvexSGD},
			cfg: trainer.Config{Loss: hh, Eta: 0.01, Clip: 0.5, Batch: 3, Passes: 3, Seed: 52}}, 0.9},
		{scenario{name: "dropout", n: 100, d: 4, dataSet: signRows(53, 100, 4), routes: []RouteID{RouteConvexSGD},
			cfg: trainer.Config{Loss: hh, Eta: 0.01, Dropout: 0.5, Passes: 1, Seed: 53}}, 0.9},
		{scenario{name: "dropout+clip", n: 100, d: 4, dataSet: signRows(54, 100, 4), routes: []RouteID{RouteConvexSGD},
			cfg: trainer.Config{Loss: hh, Eta: 0.01, Dropout: 0.5, Clip: 0.4, Passes: 1, Seed: 54}}, 0.9},
		{scenario{name: "short last batch", n: 10, d: 4, dataSet: signRows(55, 10, 4), routes: []RouteID{RouteConvexSGD},
			cfg: trainer.Config{Loss: hh, Eta: 0.01, Batch: 7, Passes: 3, Seed: 55}}, 0.9},
	}
	for _, tc := range tests {
		t.Run(tc.sc.name, func(t *testing.T) {
			o := runScenario(t, tc.sc)
			r := o.ratio[RouteConvexSGD]
			t.Logf("ratio %.3f", r)
			if !(r > tc.min) {
				t.Errorf("largest realized/Delta = %.3f, want > %.2f", r, tc.min)
			}
		})
	}
}
