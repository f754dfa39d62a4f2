package dpsgd_test

import (
	"fmt"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/release/dpsgd"
)

// ExampleCalibrate finds the noise of a DP-SGD run of 1,000 rows in
// expected batches of 32 over 5 passes at (eps, delta) = (1, 1e-5) under
// replace-one neighbours.
func ExampleCalibrate() {
	noise, err := dpsgd.Calibrate(dp.Budget{Epsilon: 1, Delta: 1e-5}, 1000, 32, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	acct, _, _ := strings.Cut(noise.Accountant, " of ")
	fmt.Printf("q = %.3f, T = %d steps, sigma = %.3f (%s)\n", noise.SampleRate, noise.Steps, noise.NoiseMultiplier, acct)
	// The accountant's add/remove guarantee: (eps/2, delta/(1 + e^(eps/2)))
	// at most, which gives (1, 1e-5) for replace-one neighbours.
	fmt.Printf("add/remove (%.4f, %.4g)\n", noise.AddRemove.Epsilon, noise.AddRemove.Delta)
	// Output:
	// q = 0.032, T = 160 steps, sigma = 3.240 (PLD)
	// add/remove (0.5000, 3.775e-06)
}
