package trainer_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

func Example() {
	// A tiny synthetic binary problem: the label is the side of the line
	// x1 + 2 x2 = 0.2, with 5% of the labels flipped; the last feature is
	// a constant bias term, and it counts in kappa.
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
		if r.Float64() < 0.05 {
			y[i] = -y[i]
		}
	}

	tr, err := trainer.New(trainer.Config{
		Loss:     losses.Logistic{},
		Reg:      regularizers.L2(1e-3),
		Schedule: trainer.BoundedInverseT,
		Passes:   20,
		Clip:     1,
		Average:  true,
		Seed:     7,
	})
	if err != nil {
		log.Fatal(err)
	}
	model, run, err := tr.Train(context.Background(), X, y)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("passes: %d of %d steps, rows clipped: %d\n", run.Stats.PassesDone, run.StepsPerPass, run.Stats.ClippedRows)
	fmt.Printf("training accuracy: %.2f\n", model.Accuracy(X, y))
	// Output:
	// passes: 20 of 200 steps, rows clipped: 0
	// training accuracy: 0.95
}
