package release_test

import (
	"context"
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
	"gonum.org/v1/gonum/mat"
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

func ExampleLookup() {
	// Rows of norm at most 1 (the last feature a bias) and their labels.
	X := mat.NewDense(6, 2, []float64{
		0.6, 0.5, 0.5, 0.5, 0.7, 0.5,
		-0.6, 0.5, -0.5, 0.5, -0.7, 0.5,
	})
	y := []float64{1, 1, 1, -1, -1, -1}
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Reg: regularizers.ElasticNet{Lambda: 0.1}, Schedule: trainer.BoundedInverseT, Passes: 5, Seed: 1}

	budget := dp.Budget{Epsilon: 1}
	for _, name := range []dp.Mechanism{perturb.Gamma, perturb.Objective} {
		m, err := release.Lookup(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		p, err := m.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg}, budget)
		if err != nil {
			fmt.Println(err)
			return
		}
		out, err := p.Release(context.Background(), perturb.Seeded(1)) // nil: the secure source
		if err != nil {
			fmt.Println(err)
			return
		}
		c := out.Certificate
		fmt.Printf("%s: pure %v, %d weights, eps %g, ledger of %d part(s), stability analysis %v\n", c.Mechanism, m.Name().Pure(), len(out.Model.W), c.Epsilon, len(c.Ledger), p.Stability() != nil)
	}

	// Output:
	// gamma: pure true, 2 weights, eps 1, ledger of 1 part(s), stability analysis true
	// objective: pure true, 2 weights, eps 1, ledger of 2 part(s), stability analysis false
}
