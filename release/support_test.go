package release

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestTrainedBound trains on rows of norm 1 whose labels push the weights
// outward (all alike, and adversarially random) with the knobs and
// schedules of the certified routes, and checks that the trained weights
// never exceed trainedBound, and that the bound is attained within a
// factor 2 by a run that pushes hardest (a regression loss whose gradient
// stays at its bound L all the way: a bound far above every run would make
// the support check of certify toothless).
func TestTrainedBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d := 200, 4
	same, mixed := mat.NewDense(n, d, nil), mat.NewDense(n, d, nil)
	ySame, yMixed := make([]float64, n), make([]float64, n)
	for i := range n {
		same.SetRow(i, []float64{0.5, 0.5, 0.5, 0.5})
		ySame[i] = 1
		row := mixed.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		floats.Scale(1/floats.Norm(row, 2), row)
		yMixed[i] = float64(2*rng.IntN(2) - 1)
	}
	huber := losses.Huber{Delta: losses.DefaultHuberDelta}
	cfgs := []trainer.Config{
		{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.01}, Schedule: trainer.BoundedInverseT, Passes: 20},
		{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.01}, Schedule: trainer.InverseT, Passes: 5},
		{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.5}, Schedule: trainer.Constant, Eta: 1, Passes: 5, Batch: 8, Clip: 0.3},
		{Loss: losses.Logistic{}, Schedule: trainer.Constant, Eta: 0.5, Passes: 3, Average: true},
		{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.02}, Schedule: trainer.BoundedInverseT, Passes: 10, Dropout: 0.5, Radius: 3},
		{Loss: huber, Reg: regularizers.ElasticNet{Lambda: 0.02}, Schedule: trainer.BoundedInverseT, Passes: 10},
	}
	for i, cfg := range cfgs {
		for k, rows := range []struct {
			X *mat.Dense
			y []float64
		}{{same, ySame}, {mixed, yMixed}} {
			cfg.Kappa, cfg.Seed = 1, uint64(i)
			tr, err := TrainRows(context.Background(), rows.X, rows.y, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tr.Reveal()
			if err != nil {
				t.Fatal(err)
			}
			run := tr.Run()
			bound, got := trainedBound(&run), floats.Norm(m.W, 2)
			if !(got <= bound) {
				t.Errorf("config %d, rows %d: ||w|| = %g above the bound %g", i, k, got, bound)
			}
			if math.IsInf(bound, 0) {
				t.Errorf("config %d: no bound", i)
			}
		}
	}
	far := make([]float64, n)
	for i := range far {
		far[i] = 1e4
	}
	cfg := trainer.Config{Loss: huber, LabelBound: 1e4, Reg: regularizers.ElasticNet{Lambda: 0.01}, Schedule: trainer.BoundedInverseT, Passes: 50, Kappa: 1}
	tr, err := TrainRows(context.Background(), same, far, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := tr.Reveal()
	run := tr.Run()
	if bound, got := trainedBound(&run), floats.Norm(m.W, 2); !(got <= bound && got > bound/2) {
		t.Errorf("the hardest run reaches %g of the bound %g", got, bound)
	}
}
