package selection_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

func ExampleSelect() {
	// 400 rows of norm at most 1 whose label is the sign of the first
	// feature, split by position into a training and a validation part.
	n := 400
	X := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		y[i] = float64(2*(i%2) - 1)
		X.Set(i, 0, 0.5*y[i]*float64(1+i%5)/5)
		X.Set(i, 1, 0.5)
	}
	train, val, err := selection.ValidationSplit(n, 0.25, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	rows := func(idx []int) (*mat.Dense, []float64) {
		Xs, ys := mat.NewDense(len(idx), 2, nil), make([]float64, len(idx))
		for r, i := range idx {
			Xs.SetRow(r, X.RawRowView(i))
			ys[r] = y[i]
		}
		return Xs, ys
	}
	Xtr, ytr := rows(train)
	Xval, yval := rows(val)
	var cands []selection.Candidate
	for _, lambda := range []float64{0.01, 0.1} {
		cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Reg: regularizers.ElasticNet{Lambda: lambda}, Schedule: trainer.BoundedInverseT, Passes: 3, Seed: 1}
		tr, err := release.TrainRows(context.Background(), Xtr, ytr, cfg, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		cands = append(cands, selection.FromTrained(fmt.Sprintf("gamma, lambda %g", lambda), tr, perturb.Gamma))
	}
	sel, err := selection.Select(context.Background(), cands, Xval, yval, dp.Budget{Epsilon: 4},
		selection.SelectOptions{Noise: perturb.Seeded(2)}) // nil Noise: the secure source
	if err != nil {
		fmt.Println(err)
		return
	}
	c := sel.Certificate
	fmt.Printf("eps %g = %.4g (selection) + %.4g (release)\n", c.Epsilon, c.Ledger[0].Epsilon, c.Ledger[1].Epsilon)

	// Output:
	// eps 4 = 2 (selection) + 2 (release)
}

func ExampleRuleSetting() {
	// Ten classes, 65 inputs and a delta: the public rule releases AMP on
	// 200 rows and DP-SGD on 1438 (n eps >= DPSGDFirstRows at eps 1); a
	// pure budget never takes DP-SGD.
	softmax := losses.Softmax{}
	withDelta := dp.Budget{Epsilon: 1, Delta: 1e-5}
	fmt.Println(selection.RuleSetting(withDelta, softmax, 10, 200, 65, 1).Mechanism)
	fmt.Println(selection.RuleSetting(withDelta, softmax, 10, 1438, 65, 1).Mechanism)
	fmt.Println(selection.RuleSetting(dp.Budget{Epsilon: 1}, softmax, 10, 1438, 65, 1).Mechanism)

	// Output:
	// amp
	// dp-sgd
	// objective
}
