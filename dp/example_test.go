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
