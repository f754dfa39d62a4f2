// Featsel selects features privately from a [][]float64: an elastic-net
// logistic regression released with gamma-norm noise at eps = 1
// (private.FitRows), then the features whose released weight clears the
// dynamic threshold that the release's noise law sets (featsel.SelectReleased
// reads it from the certificate: a null feature survives with probability
// 1%). The
// selection is post-processing of the release: it costs no privacy beyond
// the certificate's. Of the 8 features, the first 3 carry the signal.
//
// The user's code (between the markers in run) is 12 lines.
//
//	go run ./examples/featsel
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/featsel"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

func main() {
	// nil: the secure noise source; perturb.Seeded gives reproducible
	// releases that are not private.
	if err := run(os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// data returns n rows of 8 features in [-0.5, 0.5] and labels 0/1 that
// depend on the first 3 only: the stand-in for a user's data.
func data(n int) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows, y := make([][]float64, n), make([]float64, n)
	for i := range rows {
		x := make([]float64, 8)
		for j := range x {
			x[j] = rng.Float64() - 0.5
		}
		rows[i] = x
		if 3*x[0]-3*x[1]+3*x[2]+0.3*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return rows, y
}

func run(w io.Writer, noise perturb.Source) error {
	rows, y := data(5000)
	// user code: begin
	knobs := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.02, L1Ratio: 0.5}, Schedule: trainer.BoundedInverseT, Passes: 10}
	// Gamma on purpose: without a Mechanism the public rule may choose objective perturbation,
	// whose noise is not added to the weights, and SelectReleased then refuses the release.
	opts := private.Options{Mechanism: perturb.Gamma, Trainer: knobs, Noise: noise}
	rel, err := private.FitRows(context.Background(), rows, y, private.Domain{Classes: []float64{0, 1}, Norm: 1}, dp.Budget{Epsilon: 1}, opts)
	if err != nil {
		return err
	}
	// The threshold from the release's noise law (public): a null feature survives with probability 1%.
	spec := featsel.ThresholdSpec{Kind: featsel.Dynamic, Rate: 0.01, PerFeature: true}
	selected, t, err := featsel.SelectReleased(rel.Model.W, rel.Model.K, rel.Model.D, &rel.Certificate.Claim, spec)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "selected %v at T = %.3g\n", selected, t)
	// user code: end
	fmt.Fprintf(w, "released weights %.3f (bias last), Delta = %.3g, warnings %q\n", rel.Model.W, rel.Certificate.L2Sensitivity, rel.Warnings)
	return nil
}
