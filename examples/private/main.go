// Private trains an elastic-net logistic regression on the embedded
// Wisconsin breast-cancer data, derives the L2 sensitivity of its weights
// from the stability of the SGD run, and releases the weights with gamma-norm
// noise at eps = 1 (pure DP, replace-one neighbours). It prints the
// sensitivity route, Delta, the test accuracy of the private model and the
// privacy certificate in words. It is the library version of
// `stabpriv train --lambda 0.03 --mechanism gamma`.
//
//	go run ./examples/private
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

func main() {
	// A release draws its noise from the secure source; perturb.Seeded is
	// for reproducible experiments only.
	if err := run(os.Stdout, perturb.Secure()); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, noise perturb.Source) error {
	// 569 examples, 30 features, labels benign = -1 and malignant = +1; 20%
	// held out for testing, stratified, seed 1.
	ds, err := datasets.Default()
	if err != nil {
		return err
	}
	train, test, err := datasets.Split(ds, 0.2, 1, true)
	if err != nil {
		return err
	}
	// Standardize with statistics of the training split (not privatized: the
	// data set's Notes say so and go into the certificate), then map every
	// row to x' = [x, 1]/sqrt(2) in the unit ball, so kappa = 1 holds.
	if train, test, _, err = datasets.PrepareUnitBall(train, test, datasets.UnitBallOptions{}); err != nil {
		return err
	}

	// mu = lambda*(1 - alpha) = 0.0255 > 0 and the steps
	// eta_t = min(1/beta, 1/(mu t)): the strongly convex SGD route bounds
	// the sensitivity by 2L/(mu n) after any number of passes.
	tr, err := trainer.New(trainer.Config{
		Loss:     losses.Logistic{},
		Reg:      regularizers.ElasticNet{Lambda: 0.03, L1Ratio: 0.15},
		Kappa:    1,
		Schedule: trainer.BoundedInverseT,
		Passes:   10,
		Seed:     1,
	})
	if err != nil {
		return err
	}
	model, rec, err := tr.Train(context.Background(), train.X, train.Y)
	if err != nil {
		return err
	}

	// Every route with its bound or the reason it does not apply; the
	// tightest that applies is chosen.
	rep, err := stability.Analyze(rec)
	if err != nil {
		return err
	}
	sens, notes, err := perturb.FromReport(rep)
	if err != nil {
		return err // no route applies: nothing may be released
	}
	fmt.Fprintf(w, "route %v: Delta = %.4f, beta = %.4f (2L/(mu n) = %.4f)\n", rep.Chosen, rep.Delta, rep.Beta, 2*rec.L/(rec.Mu*float64(rec.N)))

	priv, cert, err := perturb.Release(model, rec, sens, perturb.ReleaseConfig{
		Mechanism: perturb.Gamma,
		Epsilon:   1,
		Source:    noise,
		Notes:     append(notes, train.Notes...),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "test accuracy: %.3f private (non-private %.3f)\n\n", priv.Accuracy(test.X, test.Y), model.Accuracy(test.X, test.Y))
	fmt.Fprint(w, cert)
	return nil
}
