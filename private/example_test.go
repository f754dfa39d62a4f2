package private_test

import (
	"context"
	"fmt"
	"log"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

// A certified private model from a [][]float64: two classes, rows of norm
// at most 1 declared, the public rule choosing the mechanism and the knobs.
// The seeded noise makes the output reproducible and the release not
// private (the certificate says so); leave Noise nil for a private one.
func ExampleFitRows() {
	var rows [][]float64
	var y []float64
	for i := range 400 {
		a, b := float64(i%20)/20-0.5, float64(i%7)/7-0.5
		rows = append(rows, []float64{a, b})
		y = append(y, map[bool]float64{false: 0, true: 1}[a+b > 0])
	}
	dom := private.Domain{Classes: []float64{0, 1}, Norm: 1}
	rel, err := private.FitRows(context.Background(), rows, y, dom, dp.Budget{Epsilon: 1}, private.Options{Seed: 1, Noise: perturb.Seeded(1)})
	if err != nil {
		log.Fatal(err)
	}
	p, _ := rel.Predict([]float64{0.4, 0.3})
	q, _ := rel.Predict([]float64{-0.4, -0.3})
	fmt.Println(rel.Certificate.Mechanism, rel.Certificate.Epsilon, p, q, len(rel.Warnings))
	// Output:
	// objective 1 1 0 0
}
