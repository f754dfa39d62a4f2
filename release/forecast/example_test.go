package forecast_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/forecast"
	"github.com/stabpriv/stabpriv/trainer"
)

// A gene-expression-sized table (102 rows of 12,626 inputs) released with
// gamma noise at eps = 1 is forecast near chance, with what would help;
// an Adult-sized one (30,000 rows of 33 inputs) is not. Only public values enter.
func ExamplePredict() {
	gamma, err := release.Lookup(perturb.Gamma)
	if err != nil {
		panic(err)
	}
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2}
	for _, shape := range [][2]int{{102, 12626}, {30000, 33}} {
		f, err := forecast.Predict([]release.Method{gamma}, cfg, shape[0], shape[1], dp.Budget{Epsilon: 1})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d rows of %d inputs: ratio %.3g, level %q\n", shape[0], shape[1], f.Ratio, f.Level())
		for _, a := range f.Advice {
			fmt.Println("  what would help:", a)
		}
	}
	// Output:
	// 102 rows of 12626 inputs: ratio 248, level "useless"
	//   what would help: about 63130 training rows
	//   what would help: a delta (--delta 1e-5: gaussian-analytic, ratio 8.22)
	//   what would help: at most 12 model inputs (fewer features, or a projection)
	// 30000 rows of 33 inputs: ratio 0.0022, level ""
}
