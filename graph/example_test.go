package graph_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	_ "github.com/stabpriv/stabpriv/graph" // registers trainer.Graph
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// Training with the graph engine: importing package graph registers it, and
// a seeded run gives the native engine's weights up to rounding.
func Example() {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200
	X := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x1, x2 := r.Float64()*2-1, r.Float64()*2-1
		X.SetRow(i, []float64{x1 / 2, x2 / 2, 0.5})
		y[i] = 1
		if x1+2*x2 < 0.2 {
			y[i] = -1
		}
	}
	cfg := trainer.Config{
		Loss: losses.Logistic{}, Reg: regularizers.L2(1e-3),
		Passes: 20, Batch: 16, Clip: 1, Seed: 7,
	}
	weights := map[trainer.Engine][]float64{}
	for _, e := range []trainer.Engine{trainer.Native, trainer.Graph} {
		cfg.Engine = e
		tr, err := trainer.New(cfg)
		if err != nil {
			log.Fatal(err)
		}
		m, run, err := tr.Train(context.Background(), X, y)
		if err != nil {
			log.Fatal(err)
		}
		weights[e] = m.W
		fmt.Printf("%s: accuracy %.2f\n", run.Engine, m.Accuracy(X, y))
	}
	var diff float64
	for j, v := range weights[trainer.Native] {
		diff = math.Max(diff, math.Abs(v-weights[trainer.Graph][j]))
	}
	fmt.Println("same weights to 1e-10:", diff <= 1e-10)
	// Output:
	// native: accuracy 0.97
	// graph: accuracy 0.97
	// same weights to 1e-10: true
}
