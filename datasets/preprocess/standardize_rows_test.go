package preprocess

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// atOnly hides a matrix's RawRowView: FitStandardizer reads it through At.
type atOnly struct{ mat.Matrix }

// TestFitStandardizerRowsBits checks that reading the rows as slices gives
// the statistics of reading the columns through At, bit for bit, and the
// same error at a non-finite entry (the first in column order).
func TestFitStandardizerRowsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const n, d = 1031, 7
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			v := rng.NormFloat64()*math.Pow(10, float64(j)) + float64(j)
			switch j {
			case 2:
				v = 4.25 // constant
			case 3:
				v *= 1e200 // squares overflow
			case 4:
				v = 0
			}
			x.Set(i, j, v)
		}
	}
	for _, missing := range []bool{false, true} {
		m := x
		if missing {
			m = mat.DenseCopyOf(x)
			for i := 0; i < n; i += 3 {
				m.Set(i, i%d, math.NaN())
			}
			for i := range n {
				m.Set(i, 5, math.NaN()) // a column with no entries
			}
		}
		got, err := fitStandardizer(m, missing)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fitStandardizer(atOnly{m}, missing)
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			if math.Float64bits(got.Mean[j]) != math.Float64bits(want.Mean[j]) || math.Float64bits(got.Scale[j]) != math.Float64bits(want.Scale[j]) {
				t.Errorf("missing %v, column %d: rows give (%v, %v), columns (%v, %v)", missing, j, got.Mean[j], got.Scale[j], want.Mean[j], want.Scale[j])
			}
		}
	}
	// Two bad entries: the one of the lower column is named, whatever
	// its row.
	bad := mat.DenseCopyOf(x)
	bad.Set(5, 6, math.Inf(1))
	bad.Set(900, 1, math.NaN())
	_, err := FitStandardizer(bad)
	_, want := FitStandardizer(atOnly{bad})
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("error %v, want %v", err, want)
	}
	if want := "X[900,1]"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}
