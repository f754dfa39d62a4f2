package linalg_test

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
)

// Example factors a positive definite matrix and refuses a singular one.
func Example() {
	errSingular := errors.New("singular")
	c, err := linalg.Factor(mat.NewSymDense(2, []float64{4, 1, 1, 3}), "H", errSingular)
	fmt.Println(c != nil, err)
	_, err = linalg.Factor(mat.NewSymDense(2, []float64{1, 1, 1, 1}), "H", errSingular)
	fmt.Println(errors.Is(err, errSingular))
	fmt.Println(linalg.Norm2([]float64{3, -4}), linalg.Norm1([]float64{3, -4}))
	// Output:
	// true <nil>
	// true
	// 5 7
}
