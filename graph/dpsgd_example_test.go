package graph_test

import (
	"context"
	"fmt"
	"log"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// DP-SGD on a program's own graph, not a convex linear model: a
// perceptron of 3 inputs, 4 ReLU units and one logit, with the logistic
// loss of the logit. Its initial weights are the program's (public).
func ExampleTrainDPSGD() {
	X, y := separable()
	g := gorgonia.NewGraph()
	param := func(name string, v []float64, shape ...int) *gorgonia.Node {
		val := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
		return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(val))
	}
	w1 := param("w1", []float64{1, 0, 0.5, 0, 1, 0.5, -1, 0, 0.5, 0, -1, 0.5}, 4, 3)
	b1 := param("b1", make([]float64, 4), 4)
	w2 := param("w2", []float64{0.5, 0.5, -0.5, -0.5}, 1, 4)
	b2 := param("b2", []float64{0}, 1)
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"))
	label := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	must := gorgonia.Must
	hidden := must(gorgonia.Rectify(must(gorgonia.Add(must(gorgonia.Mul(w1, x)), b1))))
	logit := must(gorgonia.Add(must(gorgonia.Mul(w2, hidden)), b2))
	loss, err := graph.Expr(losses.Logistic{}, logit, label)
	if err != nil {
		log.Fatal(err)
	}
	res, err := graph.TrainDPSGD(context.Background(), graph.DPSGD{
		Model:   &graph.Model{Graph: g, Params: []*gorgonia.Node{w1, b1, w2, b2}, Input: x, Label: label, Loss: loss},
		Epsilon: 1, Delta: 1e-5, Clip: 1, Batch: 40, Passes: 5, Eta: 0.5,
		Noise: perturb.Seeded(1), // reproducible, not private: nil for a release
	}, X, y)
	if err != nil {
		log.Fatal(err)
	}
	c, rec := res.Certificate, res.Certificate.Run.DPSGD
	fmt.Printf("%s: eps = %g, delta = %g, private = %v\n", c.Mechanism, c.Epsilon, c.Delta, c.Private)
	fmt.Printf("q = %.6g, T = %d, C = %g, sigma = %.3f, %d parameters\n", rec.SampleRate, rec.Steps, c.Clip, rec.NoiseMultiplier, len(res.Model.W))
	// Output:
	// dp-sgd: eps = 1, delta = 1e-05, private = false
	// q = 0.2, T = 25, C = 1, sigma = 7.786, 21 parameters
}
