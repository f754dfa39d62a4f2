package check_test

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

func Example() {
	fmt.Println(check.Finite(1), check.Finite(math.NaN()), check.Positive(0))
	fmt.Println(check.FirstNonFinite([]float64{1, math.Inf(1), 2}))
	v, ok := check.ParseFinite("1e999")
	fmt.Println(v, ok)
	// Output:
	// true false false
	// 1
	// +Inf false
}
