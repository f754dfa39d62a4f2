package privbounds_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
)

// Estimate the ranges of two columns (ages, and an amount that is mostly
// zero) from 5000 rows at eps = 0.5. The seeded source makes the example
// reproducible; a release uses perturb.Secure().
func Example() {
	X := exampleRows(5000)
	lo, hi, err := privbounds.Estimate(X, 0.5, perturb.Seeded(1))
	if err != nil {
		panic(err)
	}
	fmt.Println("rows needed:", privbounds.MinRows(2, 0.5))
	for j := range lo {
		fmt.Printf("column %d: [%g, %g]\n", j, lo[j], hi[j])
	}
	// Output:
	// rows needed: 503
	// column 0: [16, 128]
	// column 1: [-5.960464477539063e-08, 4096]
}

// Estimate the centres and spreads of the same kind of columns from 480
// rows, too few for the ranges at eps = 0.5 but enough for the centres: each
// column is then read as z = clamp(g((x - m)/s)/3, -1, 1), g(t) = sign(t)
// log2(1 + |t|), with m = (lo + hi)/2 and s = (hi - lo)/2.
func ExampleEstimateCentres() {
	X := exampleRows(480)
	fmt.Println("rows needed for the ranges:", privbounds.MinRows(2, 0.5), "for the centres:", privbounds.CentreRows(2, 0.5))
	lo, hi, _, err := privbounds.EstimateCentres(X, 0.5, perturb.Seeded(1))
	if err != nil {
		panic(err)
	}
	for j := range lo {
		fmt.Printf("column %d: centre %g, spread %g\n", j, lo[j]/2+hi[j]/2, hi[j]/2-lo[j]/2)
	}
	// Output:
	// rows needed for the ranges: 503 for the centres: 441
	// column 0: centre 49, spread 16
	// column 1: centre 0, spread 5.960464477539063e-08
}

// exampleRows returns n rows of two columns: ages, and an amount that is
// mostly zero.
func exampleRows(n int) *mat.Dense {
	X := mat.NewDense(n, 2, nil)
	for i := range n {
		amount := 0.0
		if i%5 == 0 {
			amount = float64(1000 + i%3000)
		}
		X.SetRow(i, []float64{float64(18 + i%70), amount})
	}
	return X
}
