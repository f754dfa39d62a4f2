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

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
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
	// 569 examples, 30 features, labels benign = -1 and malignant = +1.
	ds, err := datasets.Default()
	if err != nil {
		return err
	}

	// Hold out 20% for testing, keeping the class proportions; seed 1.
	train, test, err := datasets.Split(ds, 0.2, 1, true)
	if err != nil {
		return err
	}

	// Standardize with statistics of the training split only, then map each
	// row to x' = [x, 1]/sqrt(2) inside the unit ball, so kappa = 1 holds
	// with the bias feature counted in it.
	if train, test, _, err = preprocess.PrepareUnitBall(train, test, preprocess.UnitBallOptions{}); err != nil {
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
