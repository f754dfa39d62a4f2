package protocol

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMatrix checks the encoding of the labels (two classes: -1/+1 in
// increasing order; more: indices) and the refusals.
func TestMatrix(t *testing.T) {
	X := mat.NewDense(4, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	p, err := Matrix("m", X, []float64{5, 0, 5, 0})
	if err != nil {
		t.Fatal(err)
	}
	if ds := p.Data; !reflect.DeepEqual(ds.Y, []float64{1, -1, 1, -1}) || !reflect.DeepEqual(ds.Classes, []string{"0", "5"}) || p.Dataset != "m" {
		t.Errorf("labels %v, classes %v, name %q", ds.Y, ds.Classes, p.Dataset)
	}
	if p, _ := Matrix("", X, []float64{2, 0, 1, 0.5}); !reflect.DeepEqual(p.Data.Y, []float64{3, 0, 2, 1}) {
		t.Errorf("multiclass labels %v", p.Data.Y)
	}
	for _, tc := range []struct {
		y    []float64
		want string
	}{
		{[]float64{1, 1, 1, 1}, "take 1 value(s)"},
		{[]float64{1, 0, 1}, "4 rows of features but 3 labels"},
		{[]float64{1, 0, math.NaN(), 0}, "y[2] = NaN"},
	} {
		if _, err := Matrix("m", X, tc.y); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("labels %v: err %v, want %q", tc.y, err, tc.want)
		}
	}

	X.Set(1, 1, math.Inf(-1))
	if _, err := Matrix("m", X, []float64{1, 0, 1, 0}); err == nil || !strings.Contains(err.Error(), "X[1][1] = -Inf") {
		t.Errorf("an infinite feature: %v", err)
	}
}
