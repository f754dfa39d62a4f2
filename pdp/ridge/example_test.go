package ridge_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/pdp/ridge"
	"github.com/stabpriv/stabpriv/perturb"
)

// Example fits ridge regression on synthetic rows, reads the exact
// remove-one sensitivities and the per-instance epsilons of one posterior
// sample, and draws the sample with a seeded source.
func Example() {
	const n, d = 200, 3
	rng := rand.New(rand.NewPCG(5, 6))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = rng.Float64()*2 - 1
		}
		y[i] = 0.5*row[0] - row[1] + 0.1*rng.NormFloat64()
	}
	r, err := ridge.FitRidge(x, y, 0.05)
	if err != nil {
		fmt.Println(err)
		return
	}
	eps, err := r.OPSEpsilon(1, 1e-6)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := r.SampleOPS(1, perturb.Seeded(7))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("w = %.3f\n", r.W)
	fmt.Printf("largest sensitivity %.4f, largest OPS eps %.3f\n", slices.Max(r.Sensitivity), slices.Max(eps))
	fmt.Printf("one sample: %.3f\n", w)
	// Output:
	// w = [0.426 -0.885 -0.002]
	// largest sensitivity 0.0051, largest OPS eps 0.568
	// one sample: [0.405 -0.923 0.091]
}
