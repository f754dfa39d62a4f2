package report_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/perturb"
)

// Example simulates a Gaussian release, calibrated to (1, 1e-6)-DP, of an
// L2-regularized logistic regression on synthetic data, and reads the
// report: the per-instance epsilons of the training rows against the DP
// epsilon. The values are confidential: they describe the data set.
func Example() {
	const n, d = 500, 3
	rng := rand.New(rand.NewPCG(3, 4))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-2*row[0]+row[1])) {
			y[i] = 1
		}
	}
	ds := &datasets.Dataset{X: x, Y: y, Classes: []string{"no", "yes"}}
	res, err := report.Simulate(ds, report.Simulation{
		Rows: report.Rows{ExactTop: 5, Top: 3}, Loss: losses.Logistic{}, Lambda: 1e-2,
		Mechanism: perturb.AnalyticGaussian, Epsilon: 1, Delta: 1e-6,
		TestFrac: 0.2, Seed: 1, Standardize: true, Bias: true, Kappa: 1, Source: "synthetic",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := res.Report
	fmt.Printf("%d training rows, %d targets\n", len(res.IDs), len(res.TargetIDs))
	fmt.Printf("pDP eps: median %.4f, max %.4f (DP eps %g)\n", r.Epsilon.Median, r.Epsilon.Max, *r.DPEpsilon)
	fmt.Printf("most exposed row: %d\n", r.Top[0].ID)
	// Output:
	// 400 training rows, 100 targets
	// pDP eps: median 0.0219, max 0.0939 (DP eps 1)
	// most exposed row: 434
}
