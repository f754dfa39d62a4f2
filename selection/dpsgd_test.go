package selection

import (
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
)

// TestDPSGDFirst checks each branch of the rule's choice of DP-SGD: a
// multiclass model with a delta below 1/n and n eps >= DPSGDFirstRows
// takes it; a pure budget, two classes, a delta of 1/n or more, a zero
// eps and n eps below the threshold do not. Where it holds, RuleSetting
// releases DP-SGD per row (a budget dp-sgd accepts) and the output family
// per group.
func TestDPSGDFirst(t *testing.T) {
	n := int(DPSGDFirstRows) // n eps at the threshold for eps = 1
	for _, tc := range []struct {
		name string
		b    dp.Budget
		k, n int
		want bool
	}{
		{"at the threshold", dp.Budget{Epsilon: 1, Delta: 1e-6}, 3, n, true},
		{"above it, 18 classes", dp.Budget{Epsilon: 2, Delta: 1e-5}, 18, 6099, true},
		{"one row short", dp.Budget{Epsilon: 1, Delta: 1e-6}, 3, n - 1, false},
		{"eps below n eps", dp.Budget{Epsilon: 0.5, Delta: 1e-6}, 10, n, false},
		{"pure budget", dp.Budget{Epsilon: 1}, 10, 100000, false},
		{"two classes (one output)", dp.Budget{Epsilon: 1, Delta: 1e-6}, 1, 100000, false},
		{"softmax over two classes", dp.Budget{Epsilon: 1, Delta: 1e-6}, 2, 100000, false},
		{"delta = 1/n", dp.Budget{Epsilon: 1, Delta: 1.0 / 1000}, 3, 1000, false},
		{"delta above 1/n", dp.Budget{Epsilon: 1, Delta: 0.01}, 3, 1000, false},
		{"zero eps", dp.Budget{Delta: 1e-6}, 3, 100000, false},
		{"no rows", dp.Budget{Epsilon: 1, Delta: 1e-6}, 3, 0, false},
	} {
		if got := DPSGDFirst(tc.b, tc.k, tc.n); got != tc.want {
			t.Errorf("%s: DPSGDFirst(%+v, k = %d, n = %d) = %v, want %v", tc.name, tc.b, tc.k, tc.n, got, tc.want)
		}
		loss := losses.Loss(losses.Softmax{})
		if tc.k == 1 {
			loss = losses.Logistic{}
		}
		if !(tc.b.Epsilon > 0) || tc.n < 1 {
			continue
		}
		s := RuleSetting(tc.b, loss, tc.k, tc.n, 30, 1)
		if (s.Mechanism == perturb.DPSGD) != tc.want {
			t.Errorf("%s: RuleSetting = %v, want dp-sgd: %v", tc.name, s, tc.want)
		}
		if tc.want {
			m, err := release.Lookup(s.Mechanism)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.CheckBudget(tc.b); err != nil {
				t.Errorf("%s: the rule's dp-sgd refuses its budget: %v", tc.name, err)
			}
			if g := RuleSetting(tc.b, loss, tc.k, tc.n, 30, 4); g.Mechanism != OutputFamily(tc.b) {
				t.Errorf("%s: per group of 4 rows the rule gives %v, want the output family %s", tc.name, g, OutputFamily(tc.b))
			}
		}
	}
}
