package graph_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/graph" // registers trainer.Graph
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// separable returns 200 seeded rows of 3 features, the last a bias, in
// the unit ball, labelled by the side of a line.
func separable() (*mat.Dense, []float64) {
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
	return X, y
}

// Training with the graph engine: importing package graph registers it, and
// a seeded run gives the native engine's weights up to rounding.
func Example() {
	X, y := separable()
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

// A program's own Gorgonia graph of a linear model, trained with the
// stability knobs and released with eps = 1: the margin z = <x, w> is
// declared (Config.Margin), and the loss is the built-in logistic loss's
// expression, so that its constants are known and release.Method.Rebuild
// (what `stabpriv certify` runs) rebuilds the certificate. A loss of the program's own is declared with
// Config.Declared instead (examples/gorgonia); without either, the graph
// trains but has no release.
func ExampleNewTrainer() {
	const d = 3
	X, y := separable()

	// The program's graph: weights, one example's input and label, the
	// margin and the loss.
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	label := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	z := gorgonia.Must(gorgonia.Mul(x, w))
	loss, err := graph.Expr(losses.Logistic{}, z, label)
	if err != nil {
		log.Fatal(err)
	}

	tr, err := graph.NewTrainer(graph.Config{
		Model:  &graph.Model{Graph: g, Params: []*gorgonia.Node{w}, Input: x, Label: label, Loss: loss},
		Margin: z,
		Knobs: trainer.Config{
			Loss: losses.Logistic{}, Reg: regularizers.L2(0.05), Schedule: trainer.BoundedInverseT,
			Passes: 10, Batch: 4, Clip: 0.5, Seed: 7,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fit, err := tr.Train(context.Background(), X, y)
	if err != nil {
		log.Fatal(err)
	}
	rep := fit.Report()
	fmt.Printf("%s: beta = %.4f, Delta = %.4f\n", rep.Chosen, rep.Beta, rep.Delta)
	priv, cert, err := fit.Release(perturb.Gamma, 1, 0, perturb.Seeded(1)) // nil: the secure source
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, eps = %g: accuracy %.2f\n", cert.Mechanism, cert.Epsilon, priv.Accuracy(X, y))
	fmt.Println("weight node holds the release:", w.Value().Data().([]float64)[0] == priv.W[0])
	// Output:
	// strongly-convex-sgd: beta = 0.1000, Delta = 0.1000
	// gamma, eps = 1: accuracy 0.95
	// weight node holds the release: true
}
