// Gorgonia-mlp trains a program's own non-convex Gorgonia graph privately
// by DP-SGD: a 2-layer perceptron (30 features and a bias -> 16 tanh units
// -> one logit, the logistic loss of the logit) on the embedded Wisconsin
// breast-cancer data, at eps = 1, delta = 1e-5 (below 1/n). The stability
// bounds of output perturbation need a convex loss, DP-SGD does not:
// graph.TrainDPSGD runs the graph once per sampled example for its
// gradient in all the parameters, clips it to norm C, adds Gaussian noise
// calibrated by the accountant to every step's sum, and returns the
// trained parameters (also set into the graph's nodes) with their
// certificate. The program then evaluates its graph on the test rows.
//
//	go run ./examples/gorgonia-mlp
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/examples/internal/demo"
	"github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// hidden is the number of hidden units.
const hidden = 16

func main() {
	// DP-SGD draws its noise and sampling coins from the secure source
	// (nil); perturb.Seeded gives reproducible runs that are not private.
	if err := run(os.Stdout, nil, 1); err != nil {
		log.Fatal(err)
	}
}

// mlp is the program's graph and the nodes it evaluates.
type mlp struct {
	model *graph.Model
	logit *gorgonia.Node
}

// buildMLP builds the perceptron for rows of d features. Its initial
// weights are drawn from a generator seeded by initSeed (Glorot-style
// scale 1/sqrt(fan-in)), never from the rows: they are public.
// gorgonia.Must panics only on a programming error here (a shape that
// does not fit).
func buildMLP(d int, initSeed uint64) (*mlp, error) {
	r := rand.New(rand.NewPCG(initSeed, 0))
	// normal draws a parameter's initial values: N(0, 1/fanIn).
	normal := func(fanIn int) gorgonia.InitWFn {
		return func(_ tensor.Dtype, shape ...int) interface{} {
			v := make([]float64, tensor.Shape(shape).TotalSize())
			for i := range v {
				v[i] = r.NormFloat64() / math.Sqrt(float64(fanIn))
			}
			return v
		}
	}
	g := gorgonia.NewGraph()
	layer := func(name string, in, out int) (w, b *gorgonia.Node) {
		w = gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(out, in), gorgonia.WithName("w"+name), gorgonia.WithInit(normal(in)))
		b = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(out), gorgonia.WithName("b"+name), gorgonia.WithInit(normal(in)))
		return w, b
	}
	w1, b1 := layer("1", d, hidden)
	w2, b2 := layer("2", hidden, 1)
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	must := gorgonia.Must
	// logit = w2 tanh(w1 x + b1) + b2, a vector of one element.
	logit := must(gorgonia.Add(must(gorgonia.Mul(w2, must(gorgonia.Tanh(must(gorgonia.Add(must(gorgonia.Mul(w1, x)), b1)))))), b2))
	// The logistic loss log(1 + exp(-y z)) of the logit, as the library
	// builds it (graph.Expr of losses.Logistic).
	loss, err := graph.Expr(losses.Logistic{}, logit, y)
	if err != nil {
		return nil, err
	}
	m := &graph.Model{Graph: g, Params: []*gorgonia.Node{w1, b1, w2, b2}, Input: x, Label: y, Loss: loss}
	return &mlp{model: m, logit: logit}, nil
}

// accuracy evaluates the graph's logit on every row of X (its parameter
// nodes hold the trained values) and returns the share of rows whose
// sign agrees with the label.
func (m *mlp) accuracy(X mat.Matrix, y []float64) (float64, error) {
	n, d := X.Dims()
	row := make([]float64, d)
	if err := gorgonia.Let(m.model.Input, tensor.New(tensor.WithShape(d), tensor.WithBacking(row))); err != nil {
		return 0, err
	}
	vm := gorgonia.NewTapeMachine(m.model.Graph.ExactSubgraphRoots(m.logit))
	defer vm.Close()
	right := 0
	for i := range n {
		mat.Row(row, i, X)
		if err := vm.RunAll(); err != nil {
			return 0, err
		}
		z := m.logit.Value().Data().([]float64)[0]
		if (z > 0) == (y[i] > 0) {
			right++
		}
		vm.Reset()
	}
	return float64(right) / float64(n), nil
}

func run(w io.Writer, noise perturb.Source, initSeed uint64) error {
	// 569 examples, 30 features, labels benign = -1 and malignant = +1;
	// 20% held out, the rows standardized with the training split's
	// statistics and mapped into the unit ball with a bias feature.
	train, test, err := demo.UnitBall()
	if err != nil {
		return err
	}
	n, d := train.X.Dims()
	net, err := buildMLP(d, initSeed)
	if err != nil {
		return err
	}
	// The knobs, public (chosen without the rows): clipping norm C = 1,
	// the expected batch b = 64 (q = b/n), 5 passes (T = 5 ceil(n/b)
	// steps), the constant step 1. The larger the batch, the smaller the
	// noise of the mean gradient (sigma C / b) at the same budget.
	res, err := graph.TrainDPSGD(context.Background(), graph.DPSGD{
		Model: net.model, Epsilon: 1, Delta: 1e-5, Clip: 1, Batch: 64, Passes: 5, Eta: 1,
		Noise: noise, Notes: train.Notes,
	}, train.X, train.Y)
	if err != nil {
		return err
	}
	c, rec := res.Certificate, res.Certificate.Run.DPSGD
	fmt.Fprintf(w, "mlp %d -> %d tanh -> 1: n = %d, %d parameters\n", d, hidden, n, len(res.Model.W))
	fmt.Fprintf(w, "dp-sgd: eps = %g, delta = %g, sigma = %.4g, q = %.4g, T = %d, C = %g, private = %v\n", c.Epsilon, c.Delta, rec.NoiseMultiplier, rec.SampleRate, rec.Steps, c.Clip, c.Private)
	fmt.Fprintf(w, "accountant: replace-one eps = %.4g (add/remove %.4g by %.3s)\n", rec.ReplaceOneEpsilon, rec.AddRemoveEpsilon, rec.Accountant)
	acc, err := net.accuracy(test.X, test.Y)
	if err != nil {
		return err
	}
	pos := 0
	for _, v := range test.Y {
		if v > 0 {
			pos++
		}
	}
	majority := math.Max(float64(pos), float64(len(test.Y)-pos)) / float64(len(test.Y))
	fmt.Fprintf(w, "test accuracy (private): %.3f (majority class %.3f)\n", acc, majority)
	return nil
}
