package dp_test

import (
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// TestReviewLedgerDecimalSplit documents a trap: a budget of 0.3 refuses
// charges of 0.1 and then 0.2 (their float64 values add up to more than
// 0.3's in exact arithmetic); Rest gives the charge that fits.
func TestReviewLedgerDecimalSplit(t *testing.T) {
	l, _ := dp.NewLedger(dp.Budget{Epsilon: 0.3})
	if _, err := l.Spend(dp.Charge{Step: "a", Epsilon: 0.1}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Spend(dp.Charge{Step: "b", Epsilon: 0.2})
	t.Logf("0.1 then 0.2 from 0.3: %v; Left = %v, Rest = %v", err, l.Left().Epsilon, dp.Rest(0.3, 0.1))
	if _, err := l.Spend(dp.Charge{Step: "b", Epsilon: l.Left().Epsilon}); err != nil {
		t.Errorf("Left() does not fit: %v", err)
	}
	if _, err := l.Spend(dp.Charge{Step: "c", Epsilon: 5e-324}); err == nil {
		t.Errorf("an ulp over the budget was taken")
	}
}
