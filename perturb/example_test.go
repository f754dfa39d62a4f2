package perturb_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/perturb"
)

func ExampleAdd() {
	// Trained weights, and their L2 sensitivity as reported by the
	// stability analysis.
	w := []float64{0.5, -1.2, 0.3}
	sens := perturb.Sensitivity{L2: 0.02, Route: "permutation SGD, convex (Wu et al. 2017)"}

	cal, err := perturb.Calibrate(perturb.AnalyticGaussian, 1, 1e-5, sens, len(w))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Seeded: experiments only; nil means perturb.Secure().
	if err := perturb.Add(w, cal, perturb.Seeded(1)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: sigma %.4f, %d weights perturbed\n", cal.Mechanism, cal.Scale, len(w))

	// Output:
	// gaussian-analytic: sigma 0.0746, 3 weights perturbed
}

func ExampleEpsilonForScale() {
	// The eps that sigma = 0.1 buys at delta = 1e-5 for two sensitivities:
	// a more stable training run (smaller sensitivity) buys a smaller eps.
	for _, l2 := range []float64{0.04, 0.02} {
		eps, err := perturb.EpsilonForScale(perturb.AnalyticGaussian, 0.1, l2, 1e-5)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("L2 sensitivity %.2f: eps %.3f\n", l2, eps)
	}
	// Output:
	// L2 sensitivity 0.04: eps 1.555
	// L2 sensitivity 0.02: eps 0.726
}
