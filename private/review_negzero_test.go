package private_test

import (
	"context"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/private"
)

// TestReviewNegativeZeroLabel: y = -0.0 equals the declared class 0
// (FitMatrix's own check accepts it), so it must train as class 0, not as a
// null row: a non-private fit of the same labels written as -0 and as +0
// gives the same weights.
func TestReviewNegativeZeroLabel(t *testing.T) {
	rows, y := reviewRows(200, 3)
	yneg := append([]float64(nil), y...)
	for i := range yneg {
		if yneg[i] == 0 {
			yneg[i] = math.Copysign(0, -1)
		}
	}
	dom := private.Domain{Classes: []float64{0, 1}, Norm: 1}
	opts := private.Options{Diagnostics: true}
	a, err := private.FitRows(context.Background(), rows, y, dom, dp.Budget{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := private.FitRows(context.Background(), rows, yneg, dom, dp.Budget{}, opts)
	if err != nil {
		t.Fatalf("-0 label refused: %v", err)
	}
	if b.Diagnostics.NullRows != a.Diagnostics.NullRows {
		t.Errorf("labels -0 make %d null rows, +0 make %d", b.Diagnostics.NullRows, a.Diagnostics.NullRows)
	}
	for j := range a.Model.W {
		if a.Model.W[j] != b.Model.W[j] {
			t.Fatalf("weights differ: %v vs %v", a.Model.W, b.Model.W)
		}
	}
}
