// Stability sweeps the stability knobs on a feature matrix: for every
// split, lambda and knob setting (the clipping norm G and the minibatch
// size b here) it trains once, bounds the sensitivity Delta of the run by
// its stability, and releases the weights at each eps with noise
// calibrated to it (experiments.Sweep on protocol.Matrix). It prints
// the best test accuracy per eps, the winning settings and the frontier by
// knob family: how much each knob buys at each privacy level. The noise is
// seeded (experiments are reproducible, not releases), and the best
// setting is chosen on the test accuracy, which is optimistic.
//
// The user's code (between the markers in run) is 18 lines.
//
//	go run ./examples/stability
package main

import (
	"context"
	"io"
	"log"
	"math/rand/v2"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/experiments"
	"github.com/stabpriv/stabpriv/experiments/protocol"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// data returns n rows of 6 features and labels 0/1 of a noisy linear rule:
// the stand-in for a user's matrix.
func data(n int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	X, y := mat.NewDense(n, 6, nil), make([]float64, n)
	for i := range n {
		for j := range 6 {
			X.Set(i, j, rng.NormFloat64())
		}
		if X.At(i, 0)-X.At(i, 1)+0.5*X.At(i, 2)+0.5*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return X, y
}

func run(w io.Writer) error {
	X, y := data(1500)
	// user code: begin
	proto, err := protocol.Matrix("my data", X, y)
	if err != nil {
		return err
	}
	rows, err := experiments.Sweep(context.Background(), experiments.SweepConfig{
		Protocol:   proto,
		Splits:     2,
		Lambdas:    []float64{1e-3, 1e-2, 1e-1},
		Epsilons:   []float64{0.5, 2},
		Knobs:      experiments.Knobs{Clips: []float64{0, 0.2}, Batches: []int{1, 10}},
		Passes:     5,
		Seed:       1,
		FixedScale: -1, // no fixed-scale releases (the paper's Figure 2)
	})
	if err != nil {
		return err
	}
	return experiments.Summarize(rows, proto.Notes()...).WriteTable(w)
	// user code: end
}
