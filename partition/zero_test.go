package partition

import (
	"context"
	"errors"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/private"
	"gonum.org/v1/gonum/mat"
)

// TestZeroPlan checks that a zero or nil Plan gives errors wrapping
// private.ErrOptions (and zero values from its getters) instead of
// panicking.
func TestZeroPlan(t *testing.T) {
	ctx := context.Background()
	chunk := &datasets.Table{Columns: []string{"x", "y"}}
	for name, pl := range map[string]*Plan{"zero": {}, "nil": nil} {
		if d, p, h := pl.Dim(), pl.Partitions(), pl.Header(); d != 0 || p != 0 || h != nil {
			t.Errorf("%s Plan: Dim %d, Partitions %d, Header %v; want zero values", name, d, p, h)
		}
		if _, _, err := pl.Rows(chunk, "s.csv"); !errors.Is(err, private.ErrOptions) {
			t.Errorf("%s Plan: Rows: %v, want private.ErrOptions", name, err)
		}
		if _, err := pl.TrainPartition(ctx, 0, 1, []Row{{X: []float64{1}}}); !errors.Is(err, private.ErrOptions) {
			t.Errorf("%s Plan: TrainPartition: %v, want private.ErrOptions", name, err)
		}
		if _, err := pl.TrainSorted(ctx, 0, 1, mat.NewDense(1, 1, []float64{1}), []float64{1}); !errors.Is(err, private.ErrOptions) {
			t.Errorf("%s Plan: TrainSorted: %v, want private.ErrOptions", name, err)
		}
		if _, err := pl.Release(ctx, nil, nil); !errors.Is(err, private.ErrOptions) {
			t.Errorf("%s Plan: Release: %v, want private.ErrOptions", name, err)
		}
	}
}
