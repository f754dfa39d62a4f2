package dp_test

import (
	"errors"
	"math"
	"strings"
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

// TestLedgerDecimalSplit: a budget of 0.3 refuses charges of 0.1 and then
// 0.2 (their float64 values add up to more than 0.3's in exact
// arithmetic); the refusal names what is left and to charge it, which
// fits, and nothing more does.
func TestLedgerDecimalSplit(t *testing.T) {
	l, _ := dp.NewLedger(dp.Budget{Epsilon: 0.3})
	if _, err := l.Spend(dp.Charge{Step: "a", Epsilon: 0.1}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Spend(dp.Charge{Step: "b", Epsilon: 0.2})
	want := "dp: invalid budget: the charge of b (eps 0.2, delta 0) exceeds the rest (eps 0.19999999999999998, delta 0); charge Left() (dp.Rest) last"
	if !errors.Is(err, dp.ErrBudget) || err.Error() != want {
		t.Errorf("0.1 then 0.2 from 0.3: %v, want %q", err, want)
	}
	if left := l.Left().Epsilon; left != dp.Rest(0.3, 0.1) {
		t.Errorf("Left %v, Rest %v", left, dp.Rest(0.3, 0.1))
	}
	if _, err := l.Spend(dp.Charge{Step: "b", Epsilon: l.Left().Epsilon}); err != nil {
		t.Errorf("Left() does not fit: %v", err)
	}
	if _, err := l.Spend(dp.Charge{Step: "c", Epsilon: 5e-324}); err == nil || !strings.Contains(err.Error(), "exceeds the rest (eps 0, delta 0)") {
		t.Errorf("an ulp over the budget: %v", err)
	}
}
