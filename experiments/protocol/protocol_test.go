package protocol

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/synthetic"
)

func TestProtocolRowsInUnitBall(t *testing.T) {
	ds, _, err := synthetic.Logistic(500, 40, 3, synthetic.LogisticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range []RowScale{ScaleClipOnly, ScaleSqrtD} {
		p, err := New(Config{Data: ds, RowScale: rs})
		if err != nil {
			t.Fatal(err)
		}
		train, test, err := p.Split(7)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []*datasets.Dataset{train, test} {
			n, d := part.X.Dims()
			if d != DefaultComponents+1 {
				t.Fatalf("%v: %d columns, want 32 SVD components + bias", rs, d)
			}
			onSphere := 0
			for i := range n {
				norm := floats.Norm(part.X.RawRowView(i), 2)
				if norm > 1+1e-12 {
					t.Fatalf("%v: row %d has norm %v > 1", rs, i, norm)
				}
				if norm > 1-1e-9 {
					onSphere++
				}
			}
			// Clipping alone puts (nearly) every standardized row on the
			// sphere; dividing by sqrt(d) first leaves many inside.
			if frac := float64(onSphere) / float64(n); (rs == ScaleClipOnly) != (frac > 0.9) {
				t.Errorf("%v: %.2f of the rows on the unit sphere", rs, frac)
			}
		}
		if ntr, nte := len(train.Y), len(test.Y); ntr != 400 || nte != 100 {
			t.Errorf("split %d/%d, want 400/100", ntr, nte)
		}
	}
}

func TestParseRowScale(t *testing.T) {
	for _, rs := range []RowScale{ScaleClipOnly, ScaleSqrtD} {
		got, err := ParseRowScale(rs.String())
		if err != nil || got != rs {
			t.Errorf("ParseRowScale(%q) = %v, %v", rs.String(), got, err)
		}
	}
	if _, err := ParseRowScale("none"); !errors.Is(err, ErrConfig) {
		t.Errorf("error %v, want ErrConfig", err)
	}
}
