package release_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

func ExampleWeights() {
	// A trained binary model and its run record, as returned by the trainer.
	m := &trainer.Model{Loss: "logistic", Task: losses.Binary, K: 1, D: 3, W: []float64{0.5, -1.2, 0.3}}
	run := &trainer.Run{Loss: "logistic", Task: "binary", N: 1000, D: 3, K: 1, Kappa: 1, L: 1, Convex: true}
	// The L2 sensitivity as reported by the stability analysis.
	sens := perturb.Sensitivity{L2: 0.02, Beta: 0.02, Route: "permutation SGD, convex (Wu et al. 2017)"}

	priv, cert, err := release.Weights(m, run, sens, release.Config{
		Mechanism: perturb.AnalyticGaussian,
		Epsilon:   1,
		Delta:     1e-5,
		Source:    perturb.Seeded(1), // experiments only; nil means perturb.Secure()
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("released weights:", len(priv.W))
	fmt.Printf("mechanism %s, eps %g, delta %g, sigma %.4f\n", cert.Mechanism, cert.Epsilon, cert.Delta, cert.NoiseScale)
	fmt.Println("source:", cert.Source, "private:", cert.Private)

	// Output:
	// released weights: 3
	// mechanism gaussian-analytic, eps 1, delta 1e-05, sigma 0.0746
	// source: seeded: not for release private: false
}
