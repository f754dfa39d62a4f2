package synthetic_test

import (
	"fmt"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets/synthetic"
)

func ExampleLogistic() {
	ds, theta, err := synthetic.Logistic(1000, 3, 42, synthetic.LogisticOptions{ThetaNorm: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	n, d := ds.X.Dims()
	fmt.Println(n, d, ds.Classes)
	fmt.Printf("||theta|| = %.1f\n", floats.Norm(theta, 2))
	// Output:
	// 1000 3 [-1 +1]
	// ||theta|| = 4.0
}
