// Matrix releases a certified private logistic regression trained on a
// [][]float64 through the numeric front door, private.FitRows: the classes
// and a norm bound declared, the public rule choosing the mechanism and the
// knobs at eps = 1, the same pipeline and certificate as `stabpriv train` on
// a CSV file. It prints the accuracy on held-out rows, the release's
// warnings (none for a useful release) and the certificate in words.
//
// The user's code (between the markers in run) is 13 lines.
//
//	go run ./examples/matrix
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

func main() {
	// nil: the secure noise source; perturb.Seeded gives reproducible
	// releases that are not private.
	if err := run(os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// data returns n rows of 4 features in [-0.5, 0.5] and labels 0/1 of a
// noisy linear rule: the stand-in for a user's data.
func data(n int, seed uint64) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	rows, y := make([][]float64, n), make([]float64, n)
	for i := range rows {
		x := []float64{rng.Float64() - 0.5, rng.Float64() - 0.5, rng.Float64() - 0.5, rng.Float64() - 0.5}
		rows[i] = x
		if 2*x[0]-x[1]+x[2]+0.3*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return rows, y
}

func run(w io.Writer, noise perturb.Source) error {
	rows, y := data(2000, 1)
	test, testY := data(1000, 2)
	// user code: begin
	dom := private.Domain{Classes: []float64{0, 1}, Norm: 1} // public: the classes, ||x|| <= 1
	rel, err := private.FitRows(context.Background(), rows, y, dom, dp.Budget{Epsilon: 1}, private.Options{Noise: noise})
	if err != nil {
		return err // nothing was released
	}
	hits := 0
	for i, x := range test {
		if p, err := rel.Label(x); err == nil && p == testY[i] {
			hits++
		}
	}
	fmt.Fprintf(w, "test accuracy: %.3f\nwarnings: %d %q\n\n", float64(hits)/float64(len(test)), len(rel.Warnings), rel.Warnings)
	fmt.Fprint(w, rel.Certificate)
	// user code: end
	return nil
}
