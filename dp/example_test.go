package dp_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
)

func ExampleBudget_Validate() {
	for _, b := range []dp.Budget{{Epsilon: 1}, {Epsilon: 2, Delta: 1e-5}, {Epsilon: 0}, {Epsilon: 1, Delta: 1}} {
		fmt.Printf("%+v: pure %v, error %v\n", b, b.Pure(), b.Validate())
	}

	// Output:
	// {Epsilon:1 Delta:0}: pure true, error <nil>
	// {Epsilon:2 Delta:1e-05}: pure false, error <nil>
	// {Epsilon:0 Delta:0}: pure true, error dp: invalid budget: eps = 0, want finite > 0
	// {Epsilon:1 Delta:1}: pure false, error dp: invalid budget: delta = 1, want in [0, 1)
}

// Total adds up a ledger: the entries on one part of the rows add up, and
// disjoint parts count once (parallel composition), so a holdout
// selection at eps on the tuning rows and a release at eps on the other
// rows together are eps.
func ExampleTotal() {
	ledger := []dp.Charge{
		{Step: "selection", Epsilon: 1, Rows: "tuning rows"},
		{Step: "objective part", Epsilon: 0.99, Rows: "release rows"},
		{Step: "output part", Epsilon: 0.01, Rows: "release rows"},
	}
	fmt.Println(dp.Total(ledger))
	fmt.Println(dp.Total(append(ledger, dp.Charge{Step: "bounds, on every row", Epsilon: 0.1, Delta: 1e-6})))
	// Output:
	// {1 0}
	// {1.1 1e-06}
}

// A pipeline takes its charges from a ledger of its claim: the bounds'
// estimate, then the release with what is left. A charge that would take
// the ledger past the claim is refused, by a single ulp too.
func ExampleLedger() {
	l, err := dp.NewLedger(dp.Budget{Epsilon: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	left, _ := l.Spend(dp.Charge{Step: "bounds", Mechanism: dp.Laplace, Epsilon: 0.1})
	fmt.Printf("left after the bounds: %.17g\n", left.Epsilon)
	_, err = l.Spend(dp.Charge{Step: "release", Mechanism: dp.Gamma, Epsilon: 0.9})
	fmt.Println(err != nil)
	left, err = l.Spend(dp.Charge{Step: "release", Mechanism: dp.Gamma, Epsilon: left.Epsilon})
	fmt.Println(left.Epsilon < 1e-16, err, len(l.Charges()))
	// Output:
	// left after the bounds: 0.89999999999999991
	// true
	// true <nil> 2
}
