package cliptest_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/internal/clip/cliptest"
)

func ExampleNorm() {
	fmt.Println(cliptest.Norm(cliptest.One, []float64{3, 4}), cliptest.Norm([]float64{2}, []float64{3, 4}))
	// Output: 5 10
}
