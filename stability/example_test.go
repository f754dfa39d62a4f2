package stability_test

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// The record of a logistic-regression run: n = 1000 rows of norm <= 1, L2
// penalty mu = 0.01, minibatches of 10 and the steps min(1/beta, 1/(mu t))
// for 5 passes. Route 4 gives 2L/(mu n) = 0.2; routes 1 and 2 need
// full-batch passes (b = n) with a constant step, which this run did not do.
func Example() {
	const n, b, passes, mu = 1000, 10, 5, 0.01
	run := &trainer.Run{
		Loss: "logistic", N: n, D: 10, K: 1, Kappa: 1,
		Lz: 1, Sz: 0.25, L: 1, BetaS: 0.25, Convex: true,
		Lambda: mu, Mu: mu, Schedule: trainer.BoundedInverseT.String(),
		Passes: passes, Batch: b, StepsPerPass: n / b, Dropout: 1,
	}
	// The step of minibatch step t, as the trainer computes it.
	eta := func(t int) float64 { return math.Min(1/(0.25+mu), 1/(mu*float64(t))) }
	run.Eta = eta(1)
	for j := 0; j < passes; j++ {
		run.PassMaxStep = append(run.PassMaxStep, eta(j*n/b+1))
		run.PassMinStep = append(run.PassMinStep, eta((j+1)*n/b))
	}

	rep, err := stability.Analyze(run)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Routes {
		if r.Applies {
			fmt.Printf("%-20s Delta = %.4f\n", r.Route, r.Delta)
		} else {
			fmt.Printf("%-20s not applicable: %s\n", r.Route, r.Reason)
		}
	}
	fmt.Printf("chosen: %v, Delta = %.4f, beta = %.4f\n", rep.Chosen, rep.Delta, rep.Beta)

	// Corollary 13: noise calibrated for the convex route buys a smaller eps.
	base, _ := rep.Lookup(stability.RouteConvexSGD)
	eps, _ := stability.EnhancedEpsilon(1, base.Delta, rep.Delta)
	fmt.Printf("eps 1 at Delta %.4f is eps %.4f at Delta %.4f\n", base.Delta, eps, rep.Delta)
	// Output:
	// erm                  not applicable: minibatch 10 < n = 1000: the distance to the minimizer is bounded for full-batch passes (b = n) only
	// theorem7             not applicable: minibatch 10 < n = 1000: the distance to the minimizer is bounded for full-batch passes (b = n) only
	// convex-sgd           Delta = 1.1831
	// strongly-convex-sgd  Delta = 0.2000
	// chosen: strongly-convex-sgd, Delta = 0.2000, beta = 0.2000
	// eps 1 at Delta 1.1831 is eps 0.1691 at Delta 0.2000
}

// ProxGDPasses fixes, before seeing the data, the number of full-batch
// passes after which route 1's bound is within 1% of the exact minimizer's
// 2L/(mu n). The record is that of a logistic regression on n = 1000 rows of
// norm <= 1 (L = 1, beta_s = 1/4) with mu = 0.01, run with trainer.Config{
// Batch: n, Passes: k} and the default step 1/(beta_s + mu); it releases
// whether or not the run converged, because the bound uses only settings.
func ExampleProxGDPasses() {
	const n, mu, betaS = 1000, 0.01, 0.25
	k, err := stability.ProxGDPasses(betaS, mu, n, 0.01)
	if err != nil {
		fmt.Println(err)
		return
	}
	eta := 1 / (betaS + mu)
	run := &trainer.Run{
		Loss: "logistic", N: n, D: 10, K: 1, Kappa: 1,
		Lz: 1, Sz: 0.25, L: 1, BetaS: betaS, Convex: true,
		Lambda: mu, Mu: mu, Schedule: trainer.Constant.String(), Eta: eta,
		Passes: k, Batch: n, StepsPerPass: 1, Dropout: 1,
	}
	for j := 0; j < k; j++ {
		run.PassMaxStep = append(run.PassMaxStep, eta)
		run.PassMinStep = append(run.PassMinStep, eta)
	}
	rep, err := stability.Analyze(run)
	if err != nil {
		fmt.Println(err)
		return
	}
	erm, _ := rep.Lookup(stability.RouteERM)
	fmt.Printf("passes: %d\n", k)
	fmt.Printf("2L/(mu n) = %.4f, route erm Delta = %.4f\n", 2/(mu*n), erm.Delta)
	fmt.Printf("chosen: %v, Delta = %.4f\n", rep.Chosen, rep.Delta)
	// Output:
	// passes: 294
	// 2L/(mu n) = 0.2000, route erm Delta = 0.2020
	// chosen: strongly-convex-sgd, Delta = 0.2000
}
