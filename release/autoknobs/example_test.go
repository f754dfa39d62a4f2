package autoknobs_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release/autoknobs"
)

// The knobs of a gamma release at eps = 1 for 455 training rows of 31
// inputs (the embedded breast cancer data's training part, the bias
// counted), and for the same rows grouped by privacy IDs of 4 rows each.
func ExampleChoose() {
	k, err := autoknobs.Choose(455, 31, 1, perturb.Gamma, dp.Budget{Epsilon: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("lambda %.4g, clip G = %g\n", k.Lambda, k.Clip)
	fmt.Printf("per privacy ID of 4 rows: lambda %.4g\n", autoknobs.GroupScale(4)*k.Lambda)
	// Output:
	// lambda 0.004294, clip G = 0.1
	// per privacy ID of 4 rows: lambda 0.008587
}
