package featsel_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/featsel"
	"github.com/stabpriv/stabpriv/perturb"
)

// A binary elastic-net model with 3 informative features out of 10 is released
// with Laplace noise of scale b = 0.1 per coordinate (eps = 1, L1
// sensitivity 0.1); features are selected at the dynamic threshold that keeps
// a true-zero weight with probability 1%. The noise law comes from the
// mechanism (perturb.Noise.Marginal).
func Example() {
	weights := []float64{0.9, 0, 0, -0.6, 0, 0, 0.5, 0, 0, 0}
	mech, err := perturb.Lookup(perturb.Laplace)
	if err != nil {
		fmt.Println(err)
		return
	}
	cal, err := mech.Calibrate(1, 0, perturb.Sensitivity{L2: 0.1, L1: 0.1}, len(weights))
	if err != nil {
		fmt.Println(err)
		return
	}
	noise, err := mech.Marginal(cal)
	if err != nil {
		fmt.Println(err)
		return
	}

	// Simulated release (seeded, for the example only): w~ = w + Lap(b).
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := make([]float64, len(weights))
	for i, w := range weights {
		u := rng.Float64() - 0.5
		noisy[i] = w - cal.Scale*math.Copysign(math.Log1p(-2*math.Abs(u)), u)
	}

	r, err := featsel.NewReport(noisy, weights, 1, len(weights), featsel.DynamicThreshold(0.01), noise)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("T = b ln(1/q) = %.4f\n", r.Threshold)
	fmt.Println("selected: ", r.Selected)
	fmt.Println("reference:", r.Reference)
	fmt.Printf("precision %.2f recall %.2f F1 %.2f Jaccard %.2f\n", r.Precision, r.Recall, r.F1, r.Jaccard)
	fmt.Printf("expected flips %.3f\n", r.ExpectedFlips)

	p, _ := featsel.FlipProbability(0.5, r.Threshold, noise)
	fmt.Printf("P(weight 0.5 is lost) = %.4f\n", p)
	// Output:
	// T = b ln(1/q) = 0.4605
	// selected:  [0 3]
	// reference: [0 3 6]
	// precision 1.00 recall 0.67 F1 0.80 Jaccard 0.67
	// expected flips 0.537
	// P(weight 0.5 is lost) = 0.3369
}
