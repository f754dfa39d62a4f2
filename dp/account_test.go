package dp_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// TestLedgerSpend checks that a ledger takes charges up to its budget in
// exact arithmetic and refuses the one that would pass it by one ulp,
// leaving the ledger as it was.
func TestLedgerSpend(t *testing.T) {
	l, err := dp.NewLedger(dp.Budget{Epsilon: 1, Delta: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	left, err := l.Spend(dp.Charge{Step: "bounds", Mechanism: dp.Laplace, Epsilon: 0.1})
	if err != nil || left.Epsilon != dp.Rest(1, 0.1) || left.Delta != 1e-6 {
		t.Fatalf("after 0.1: left %v, %v", left, err)
	}
	over := dp.Charge{Step: "release", Mechanism: dp.Gamma, Epsilon: math.Nextafter(left.Epsilon, 2)}
	if _, err := l.Spend(over); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("a charge one ulp over the rest: %v, want ErrBudget", err)
	}
	if got := l.Charges(); len(got) != 1 {
		t.Errorf("a refused charge was taken: %v", got)
	}
	if left, err := l.Spend(dp.Charge{Step: "release", Mechanism: dp.Gamma, Epsilon: left.Epsilon}); err != nil || left.Epsilon > 1e-16 || left.Delta != 1e-6 {
		t.Errorf("the rest: left %v, %v", left, err)
	}
	if err := l.Budget().Covers(l.Charges()); err != nil {
		t.Errorf("the ledger's charges exceed its budget: %v", err)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := dp.NewLedger(dp.Budget{Epsilon: 1}, dp.Charge{Step: "bad", Epsilon: bad}); !errors.Is(err, dp.ErrBudget) {
			t.Errorf("a charge of eps = %v: %v, want ErrBudget", bad, err)
		}
	}
}

// TestLedgerParts checks parallel composition: charges on disjoint parts
// of the rows each take up to the budget.
func TestLedgerParts(t *testing.T) {
	l, err := dp.NewLedger(dp.Budget{Epsilon: 1},
		dp.Charge{Step: "selection", Epsilon: 1, Rows: "tuning rows"},
		dp.Charge{Step: "release", Epsilon: 1, Rows: "release rows"})
	if err != nil {
		t.Fatal(err)
	}
	if left := l.Left(); left != (dp.Budget{}) {
		t.Errorf("left %v, want nothing", left)
	}
	if _, err := l.Spend(dp.Charge{Step: "on all rows", Epsilon: 0x1p-60}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("a charge on all the rows after both parts spent all: %v, want ErrBudget", err)
	}
	var c dp.Claim
	c.Account(l)
	if c.Epsilon != 1 || len(c.Ledger) != 2 {
		t.Errorf("Account: claim %v with ledger %v", c.Epsilon, c.Ledger)
	}
	c.Ledger[0].Epsilon = 3
	if l.Charges()[0].Epsilon != 1 {
		t.Error("the claim's ledger aliases the Ledger's charges")
	}
}
