package publish_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/publish"
	"github.com/stabpriv/stabpriv/perturb"
)

// A summary of 1000 rows whose gradient norms (CONFIDENTIAL) are known:
// a logistic release (L = 1, beta_s = 1/4) with lambda = 1 and Gaussian
// noise. A seeded source makes the example reproducible; a publishable
// summary draws from perturb.Secure().
func ExampleSummarize() {
	const n = 1000
	g := make([]float64, n)
	for i := range g {
		g[i] = float64(i%100) / 400 // the gradient norms of the rows
	}
	p := &pdp.Publishable{
		Public: pdp.PublicConstants{N: n, Lambda: 1, Lipschitz: 1, Smoothness: 0.25, Tolerance: pdp.DefaultTolerance,
			Noise: pdp.PrivacyLoss{Kind: perturb.AnalyticGaussian, Scale: 0.01, Delta: 1e-6}, Dim: 10},
		GradNorms: g,
	}
	seed := uint64(1)
	s, err := publish.Summarize(p, publish.Config{Epsilon: 2, Quantiles: []float64{0.5, 0.9}, Levels: []float64{0.05}}, perturb.Seeded(seed), &seed)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("worst case: eps <= %.3f for every row\n", s.Derived.WorstCaseEpsilon)
	for _, q := range s.Quantiles {
		fmt.Printf("q %.1f: at least %d rows have eps <= %.2f\n", q.Q, q.RowsAtLeast, q.EpsilonAtMost)
	}
	fmt.Println("certificate:", s.Certificate.Epsilon, s.Certificate.Delta, s.Certificate.Private)
	_, why, err := publish.Verify(s)
	fmt.Println(why, err)
	// Output:
	// worst case: eps <= 0.397 for every row
	// q 0.5: at least 500 rows have eps <= 0.05
	// q 0.9: at least 900 rows have eps <= 0.09
	// certificate: 2 0 false
	// the draws came from a seeded generator whose seed (1) is published: anyone can recompute them <nil>
}
