package report

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/pdp"
)

// TestWriteCSVFormat checks pdp.csv and targets.csv against the rows
// formatted field by field with fmt (the files' format): with and without
// replace-one bounds and flips, leverages NaN (K > 1) or not, every kind.
func TestWriteCSVFormat(t *testing.T) {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	lev := func(d pdp.Diff) string {
		if math.IsNaN(d.Leverage) {
			return ""
		}
		return g(d.Leverage)
	}
	diffs := []pdp.Diff{
		{L2: 0.00123456789012, ErrBound: 1e-9, SCBound: math.Inf(1), Leverage: 3.5e-5, Residual: -0.75},
		{L2: 2.5, ErrBound: math.Inf(1), SCBound: math.Inf(1), Leverage: math.NaN(), Residual: 1e-300},
		{L2: 1.0 / 3, Exact: true, ErrBound: 1e-12, SCBound: math.Inf(1), Leverage: 0, Residual: 123456789.123},
	}
	for _, full := range []bool{true, false} {
		r := &Result{IDs: []int{1, 70, 123456}, Diffs: diffs, Epsilons: []float64{0.1, 2.0 / 3, 5e-7},
			TargetIDs: []int{9, 10, 11}, TargetDiffs: diffs, TargetEpsilons: []float64{1, 2, 3}}
		if full {
			r.Replace, r.ReplaceEpsilons, r.FlipSensitivities = []float64{0.5, 0.25, 1e10}, []float64{3, 4, 5}, []float64{7, 8.125, 9}
		}
		var want, wantT strings.Builder
		want.WriteString(strings.Join(CSVColumns, ",") + "\n")
		wantT.WriteString(strings.Join(TargetColumns, ",") + "\n")
		for i, d := range diffs {
			up, _, _ := d.Upper()
			rep, repEps, flip := "", "", ""
			if full {
				rep, repEps, flip = g(r.Replace[i]), g(r.ReplaceEpsilons[i]), g(r.FlipSensitivities[i])
			}
			fmt.Fprintf(&want, "%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%t\n", r.IDs[i], g(up), g(r.Epsilons[i]), d.Kind(), g(d.L2), rep, repEps, flip, lev(d), g(d.Residual), d.Exact)
			fmt.Fprintf(&wantT, "%d,%s,%s,%s,%s,%s,%s\n", r.TargetIDs[i], g(up), g(r.TargetEpsilons[i]), d.Kind(), g(d.L2), lev(d), g(d.Residual))
		}
		var got, gotT bytes.Buffer
		if err := r.writeCSV(&got); err != nil {
			t.Fatal(err)
		}
		if err := r.writeTargets(&gotT); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("pdp.csv (bounds %v):\n%s\nwant\n%s", full, got.String(), want.String())
		}
		if gotT.String() != wantT.String() {
			t.Errorf("targets.csv (bounds %v):\n%s\nwant\n%s", full, gotT.String(), wantT.String())
		}
	}
}
