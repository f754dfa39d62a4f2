// Gorgonia trains a program's own Gorgonia graph privately: a linear model
// whose margin z = <x, w> and loss, the smooth hinge
//
//	l(z, y) = (u + sqrt(1 + u^2)) / 2,  u = 1 - y z,
//
// are written with Gorgonia's operations, on the embedded Wisconsin
// breast-cancer data. The program declares the loss's constants in the
// margin (|l'| <= 1, second derivative in [0, 1/2], convex), which
// graph.NewTrainer checks on a grid; the trainer runs SGD with the
// stability knobs, the stability analysis gives beta and Delta, and the
// weights are released with eps = 1 by the gamma-norm mechanism. The same
// graph with nothing declared is trained too, not privately, and its
// release is refused.
//
//	go run ./examples/gorgonia
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/examples/internal/demo"
	"github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/trainer"
)

func main() {
	// A release draws its noise from the secure source (nil); perturb.Seeded
	// gives reproducible releases that are not private.
	if err := run(os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// smoothHinge is what the program declares of its loss: the constants in
// the margin that the stability analysis takes as given. For u = 1 - y z,
//
//	l'  = -y (1 + u/sqrt(1 + u^2))/2, in (-1, 0) times y,
//	l'' = 1/(2 (1 + u^2)^(3/2)),     in (0, 1/2].
var smoothHinge = graph.Declared{
	Name:      "smooth-hinge",
	Task:      losses.Binary,
	Constants: losses.Constants{Lz: 1, Sz: 0.5, Convex: true, Smooth: true, C2: true},
}

// buildGraph builds the program's graph for rows of d features: weights w
// (starting at zero), input x, label y, margin z = <x, w> and the smooth
// hinge of z. gorgonia.Must panics only on a programming error here (a
// shape that does not fit).
func buildGraph(d int) (*graph.Model, *gorgonia.Node) {
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	must := gorgonia.Must
	one, half := gorgonia.NewConstant(1.0), gorgonia.NewConstant(0.5)
	z := must(gorgonia.Mul(x, w))
	u := must(gorgonia.Sub(one, must(gorgonia.HadamardProd(y, z))))
	loss := must(gorgonia.Mul(half, must(gorgonia.Add(u, must(gorgonia.Sqrt(must(gorgonia.Add(one, must(gorgonia.Square(u))))))))))
	return &graph.Model{Graph: g, Params: []*gorgonia.Node{w}, Input: x, Label: y, Loss: loss}, z
}

func run(w io.Writer, noise perturb.Source) error {
	// 569 examples, 30 features, labels benign = -1 and malignant = +1;
	// 20% held out, the rows standardized with the training split's
	// statistics and mapped into the unit ball with a bias feature.
	train, test, err := demo.UnitBall()
	if err != nil {
		return err
	}
	n, d := train.X.Dims()

	// The knobs: lambda and the clipping norm G from the public n, d and
	// budget alone (autoknobs.Choose), the bounded inverse-t steps, 10
	// passes in minibatches of 4, and the average of the iterates.
	budget := dp.Budget{Epsilon: 1}
	auto, err := autoknobs.Choose(n, d, 1, perturb.Gamma, budget)
	if err != nil {
		return err
	}
	knobs := trainer.Config{
		Reg:      regularizers.ElasticNet{Lambda: auto.Lambda},
		Clip:     auto.Clip,
		Schedule: trainer.BoundedInverseT,
		Passes:   10,
		Batch:    4,
		Average:  true,
		Seed:     1,
	}
	model, margin := buildGraph(d)
	tr, err := graph.NewTrainer(graph.Config{Model: model, Margin: margin, Declared: &smoothHinge, Knobs: knobs})
	if err != nil {
		return err
	}
	fit, err := tr.Train(context.Background(), train.X, train.Y)
	if err != nil {
		return err
	}
	rep := fit.Report()
	fmt.Fprintf(w, "graph %s: n = %d, d = %d, lambda = %.4g, clip G = %g\n", smoothHinge.Name, n, d, auto.Lambda, auto.Clip)
	fmt.Fprintf(w, "stability (%s): beta = %.4g, Delta = %.4g\n", rep.Chosen, rep.Beta, rep.Delta)
	priv, cert, err := fit.Release(perturb.Gamma, budget.Epsilon, budget.Delta, noise, train.Notes...)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "released by %s: eps = %g, delta = %g, private = %v\n", cert.Mechanism, cert.Epsilon, cert.Delta, cert.Private)
	fmt.Fprintf(w, "test accuracy (private): %.3f\n", priv.Accuracy(test.X, test.Y))

	// The same graph with nothing declared of its loss: no proven bound,
	// so no private release; it trains by Gorgonia's gradients in the
	// weights (a constant step 1, no clipping: nothing bounds the run).
	model, margin = buildGraph(d)
	knobs.Schedule, knobs.Eta, knobs.Clip = trainer.Constant, 1, 0
	if tr, err = graph.NewTrainer(graph.Config{Model: model, Margin: margin, Knobs: knobs}); err != nil {
		return err
	}
	if fit, err = tr.Train(context.Background(), train.X, train.Y); err != nil {
		return err
	}
	_, _, err = fit.Release(perturb.Gamma, budget.Epsilon, budget.Delta, noise)
	if !errors.Is(err, graph.ErrNoBound) {
		return fmt.Errorf("release without a bound: %v, want graph.ErrNoBound", err)
	}
	fmt.Fprintf(w, "undeclared loss: no release: %v\n", err)
	plain, err := fit.Reveal()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "test accuracy (not private): %.3f\n", plain.Accuracy(test.X, test.Y))
	return nil
}
