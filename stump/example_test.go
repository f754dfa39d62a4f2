package stump_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stump"
)

// A stump on 8 rows of 3 mapped features, the second of which separates
// the labels at 0. Seeded noise makes the example reproducible; a release
// uses perturb.Secure() (or nil).
func Example() {
	Z := mat.NewDense(8, 3, []float64{
		0.3, -0.8, 0.1,
		-0.6, -0.5, 0.4,
		0.9, -0.3, -0.2,
		-0.1, -0.9, 0.7,
		0.2, 0.6, -0.5,
		-0.7, 0.8, 0.3,
		0.5, 0.4, 0.9,
		-0.4, 0.7, -0.6,
	})
	y := []float64{-1, -1, -1, -1, 1, 1, 1, 1}
	s, err := stump.Fit(Z, y, nil, stump.Config{Epsilon: 8, Grid: 3}, perturb.Seeded(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("feature %d, threshold %g, sign %+d\n", s.Feature, stump.Threshold(s.Index, 3), s.Sign)
	fmt.Println("weights on [z, 1]:", s.Weights(3, 3))
	// Output:
	// feature 1, threshold 0, sign +1
	// weights on [z, 1]: [0 1 0 0]
}
