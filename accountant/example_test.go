package accountant_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
)

// The setting of TF Privacy's MNIST tutorial: batches of 256 expected rows
// out of 60,000, noise multiplier 1.1, 60 epochs; delta = 1e-5. The
// classical conversion gives the tutorial's eps of about 3.01, the
// improved one about 2.60, the PLD accountant 2.38; NoiseMultiplier finds
// the noise for eps = 2 by RDP, NoiseMultiplierPLD by PLD.
func Example() {
	g := accountant.SampledGaussian{SampleRate: 256.0 / 60000, NoiseMultiplier: 1.1, Steps: 60 * 60000 / 256}
	for _, c := range []accountant.Conversion{accountant.Classical, accountant.Improved} {
		r, err := g.Epsilon(1e-5, c, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: eps = %.2f at order %v\n", c, r.Epsilon, r.Order)
	}
	sigma, r, err := accountant.NoiseMultiplier(g.SampleRate, g.Steps, dp.Budget{Epsilon: 2, Delta: 1e-5}, accountant.Improved, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("eps <= 2: noise multiplier %.3f (eps = %.4f)\n", sigma, r.Epsilon)
	fmt.Printf("replace-one: %+.3v\n", r.ReplaceOne())
	p, err := accountant.PLD{}.Epsilon(g, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v: eps = %.4f (remove %.4f, add %.4f)\n", p.PLD, p.Epsilon, p.Remove, p.Add)
	sigma, p, err = accountant.NoiseMultiplierPLD(g.SampleRate, g.Steps, dp.Budget{Epsilon: 2, Delta: 1e-5}, accountant.PLD{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("eps <= 2 by PLD: noise multiplier %.3f (eps = %.4f)\n", sigma, p.Epsilon)
	// Output:
	// classical: eps = 3.01 at order 8.8
	// improved: eps = 2.60 at order 8.1
	// eps <= 2: noise multiplier 1.295 (eps = 2.0000)
	// replace-one: {Epsilon:4 Delta:8.39e-05}
	// PLD (pessimistic, interval 0.0001, tail 1e-15): eps = 2.3817 (remove 2.3817, add 2.2437)
	// eps <= 2 by PLD: noise multiplier 1.224 (eps = 2.0000)
}
