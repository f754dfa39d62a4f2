package glm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
)

// Example minimizes a ridge-regularized logistic regression on seeded
// data, then the objective of the data set without its first row (the
// remove-one neighbour of per-instance DP, which keeps the ridge weight n
// lambda of the unnormalized objective), and reports how far that row
// moves the minimizer.
func Example() {
	r := rand.New(rand.NewPCG(1, 2))
	const n, d = 200, 3
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		x := X.RawRowView(i)
		x[0], x[1], x[2] = r.NormFloat64()/2, r.NormFloat64()/2, 0.5 // the last a bias
		y[i] = 1
		if x[0]-x[1]+0.3*r.NormFloat64() < 0 {
			y[i] = -1
		}
	}
	o, err := glm.New(X, y, glm.Config{Loss: losses.Logistic{}, Lambda: 0.01})
	if err != nil {
		fmt.Println(err)
		return
	}
	w := make([]float64, o.Dim())
	st, err := o.Minimize(context.Background(), w, glm.Settings{GradTol: 1e-10})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("reached %v: w = %.3f\n", st.Reached, w)

	nb, err := o.Neighbour(0, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	w0 := slices.Clone(w) // warm start
	if _, err := nb.Minimize(context.Background(), w0, glm.Settings{GradTol: 1e-10}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d rows, lambda %.6f: removing row 0 moves w by %.2g\n", nb.Rows(), nb.Lambda(), floats.Distance(w, w0, 2))
	// Output:
	// reached true: w = [2.849 -2.451 -0.271]
	// 199 rows, lambda 0.010050: removing row 0 moves w by 0.023
}
