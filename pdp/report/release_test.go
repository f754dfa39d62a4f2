package report

import (
	"errors"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/pdp"
)

func TestCompareCertified(t *testing.T) {
	ids := []int{4, 9, 2, 7}
	diffs := []pdp.Diff{{L2: 0.1}, {L2: 0.5}, {L2: 0.5}, {L2: 0}}
	eps := []float64{0.2, 1, 1, 0}
	c, err := CompareCertified(ids, diffs, eps, 1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	// Strictly below: 0.2 and 0; the worst of the two ties is the smaller id.
	if c.Below != 2 || c.ShareBelow != 0.5 || c.Worst.ID != 2 || c.Worst.Epsilon != 1 || c.WorstRatio != 1 || c.Delta != 1e-6 {
		t.Errorf("%+v", c)
	}
	for _, bad := range []struct {
		eps  []float64
		cert float64
	}{{eps[:3], 1}, {eps, 0}, {eps, math.Inf(1)}, {[]float64{0, math.NaN(), 0, 0}, 1}} {
		if _, err := CompareCertified(ids, diffs, bad.eps, bad.cert, 0); !errors.Is(err, pdp.ErrInput) {
			t.Errorf("eps %v, certified %v: %v, want ErrInput", bad.eps, bad.cert, err)
		}
	}
}
