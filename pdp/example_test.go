package pdp_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// Example analyses a Gaussian release of an L2-regularized logistic
// regression on synthetic data: the release is calibrated to (1, 1e-6)-DP,
// and the per-instance epsilons of the rows are far below it.
func Example() {
	const n, d, lambda = 1000, 4, 1e-2
	rng := rand.New(rand.NewPCG(1, 2))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := 0; j < d-1; j++ {
			row[j] = rng.NormFloat64() / 3
		}
		row[d-1] = 0.5 // bias
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-3*row[0]+2*row[1])) {
			y[i] = 1
		}
	}
	for i := 0; i < n; i++ { // rows into the unit ball (kappa = 1)
		if nr := mat.Norm(x.RowView(i), 2); nr > 1 {
			r := x.RawRowView(i)
			for j := range r {
				r[j] /= nr
			}
		}
	}
	a, err := pdp.New(x, y, pdp.Config{Loss: losses.Logistic{}, Lambda: lambda})
	if err != nil {
		fmt.Println(err)
		return
	}
	diffs, err := a.RemoveAll() // one-step sensitivities of every row
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := a.RefineTop(diffs, 5); err != nil { // exact for the 5 most exposed
		fmt.Println(err)
		return
	}
	replace, _, _ := pdp.WorstCaseSensitivity(1, 1, lambda, n) // logistic: L_z = 1
	m, err := pdp.CalibratedLoss(perturb.AnalyticGaussian, 1, 1e-6, replace, d)
	if err != nil {
		fmt.Println(err)
		return
	}
	eps, err := m.Epsilons(diffs)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := pdp.Summarize(eps)
	fmt.Printf("Newton solution: ||grad F|| <= 1e-10: %v\n", a.Solution().GradNorm <= 1e-10)
	fmt.Printf("DP eps 1, sigma %.4f\n", m.Scale)
	fmt.Printf("pDP eps: median %.4f, p99 %.4f, max %.4f\n", s.Median, s.P99, s.Max)
	// Output:
	// Newton solution: ||grad F|| <= 1e-10: true
	// DP eps 1, sigma 0.8449
	// pDP eps: median 0.0246, p99 0.0833, max 0.1252
}
