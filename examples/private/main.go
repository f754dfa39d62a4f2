// Private releases a logistic regression trained on the embedded Wisconsin
// breast-cancer data with pure eps = 1 differential privacy, through the
// certified pipeline private.Fit: the declared classes and the shipped
// public feature bounds, a split by row position, the automatic knobs
// (lambda and the clipping norm from n, d and eps alone), the stability
// analysis and a gamma-norm release. It prints the route, Delta, a
// prediction and the certificate in words, and writes nothing else about
// the data. It is the library version of `stabpriv train --mechanism gamma`.
//
//	go run ./examples/private
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"slices"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

func main() {
	// A release draws its noise from the secure source (nil); perturb.Seeded
	// gives reproducible releases that are not private.
	if err := run(os.Stdout, nil, 0); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, noise perturb.Source, noiseSeed uint64) error {
	// The table as a user hands it over, with its schema: the label column,
	// the classes benign and malignant (+1), and public bounds per feature.
	table, schema, err := datasets.DefaultTable()
	if err != nil {
		return err
	}
	r, err := private.Fit(context.Background(), table, schema, dp.Budget{Epsilon: 1}, private.Options{
		Mechanism: perturb.Gamma,
		Noise:     noise,
		TestFrac:  0.2,
		Seed:      1,
		Auto:      true,
	})
	if err != nil {
		return err // nothing was released
	}
	c := r.Certificate
	fmt.Fprintf(w, "route %s: Delta = %.4f, lambda = %.4g, clip G = %g\n", c.SensitivityRoute, c.L2Sensitivity, c.Lambda, c.Clip)
	// A prediction on a raw row (the first row of the data file).
	x := make([]float64, len(r.Features()))
	for j, f := range r.Features() {
		x[j], _ = table.Value(0, slices.Index(table.Columns, f))
	}
	label, err := r.Predict(x)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "prediction for the first row: %s\n\n", label)
	fmt.Fprint(w, c)
	return nil
}
