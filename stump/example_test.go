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

// A multiclass stump on 9 rows of 2 mapped features and 3 classes, which
// the first feature orders: the released weights are a model of 3 outputs
// on [z, 1], whose argmax is the stump's class.
func ExampleFitMulti() {
	Z := mat.NewDense(9, 2, []float64{
		-0.9, 0.2,
		-0.7, -0.4,
		-0.6, 0.8,
		-0.1, -0.3,
		0.1, 0.5,
		0.2, -0.9,
		0.6, 0.1,
		0.8, -0.6,
		0.9, 0.4,
	})
	y := []float64{0, 0, 0, 1, 1, 1, 2, 2, 2}
	m, err := stump.FitMulti(Z, y, nil, 3, stump.Config{Epsilon: 8, Grid: 3}, perturb.Seeded(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("feature %d, threshold %g: class %d below, %d above\n", m.Feature, stump.Threshold(m.Index, 3), m.Lo, m.Hi)
	fmt.Println("weights on [z, 1]:", m.Weights(2, 3, 3))
	fmt.Println("class of z = (0.7, 0):", m.Predict([]float64{0.7, 0}, 3))
	// Output:
	// feature 0, threshold 0: class 0 below, 2 above
	// weights on [z, 1]: [-1 0 0 0 0 -1 1 0 0]
	// class of z = (0.7, 0): 2
}

// A pair on 8 rows of 2 mapped features whose difference separates the
// labels (the log of a ratio on the public log map) while neither
// feature alone does: FitBinary draws from the one-feature stumps and the
// pairs, which the class holds where their guarantee does
// (stump.PairsUseful: here a large eps).
func ExampleFitBinary() {
	Z := mat.NewDense(8, 2, []float64{
		0.20, 0.10,
		0.40, 0.30,
		0.60, 0.50,
		0.80, 0.70,
		0.10, 0.20,
		0.30, 0.40,
		0.50, 0.60,
		0.70, 0.80,
	})
	y := []float64{1, 1, 1, 1, -1, -1, -1, -1}
	c, err := stump.FitBinary(Z, y, nil, stump.Config{Epsilon: 40, Grid: 3}, perturb.Seeded(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("pair (%d, %d), threshold %g, sign %+d\n", c.Pair.A, c.Pair.B, stump.Threshold(c.Pair.Index, 3), c.Pair.Sign)
	fmt.Println("weights on [z, 1]:", c.Weights(2, 3))
	// Output:
	// pair (0, 1), threshold 0, sign +1
	// weights on [z, 1]: [1 -1 0]
}
