// Quickstart trains an elastic-net logistic regression on the embedded
// Wisconsin breast-cancer data with the stabpriv library and prints its test
// accuracy. It is the library version of `stabpriv train`.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/stabpriv/stabpriv/examples/internal/demo"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	// 569 examples, 30 features, labels benign = -1 and malignant = +1;
	// 20% held out for testing (stratified, seed 1); the rows standardized
	// with statistics of the training split only, then mapped to
	// x' = [x, 1]/sqrt(2) inside the unit ball, so kappa = 1 holds with the
	// bias feature counted in it (examples/internal/demo shows the three
	// calls: datasets.Default, datasets.Split, preprocess.PrepareUnitBall).
	train, test, err := demo.UnitBall()
	if err != nil {
		return err
	}

	// Logistic loss with elastic net lambda*((1-alpha)/2 ||w||^2 + alpha ||w||_1),
	// 10 passes of SGD at the default step 1/beta.
	tr, err := trainer.New(trainer.Config{
		Loss:   losses.Logistic{},
		Reg:    regularizers.ElasticNet{Lambda: 1e-3, L1Ratio: 0.15},
		Kappa:  1,
		Passes: 10,
		Seed:   1,
	})
	if err != nil {
		return err
	}
	model, rec, err := tr.Train(context.Background(), train.X, train.Y)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "trained on n = %d examples, d = %d features (mu = %g, eta = %.4g)\n", rec.N, rec.D, rec.Mu, rec.Eta)
	fmt.Fprintf(w, "test accuracy: %.3f\n", model.Accuracy(test.X, test.Y))
	return nil
}
