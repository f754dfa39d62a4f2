package private

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// mixedTable returns a table of n rows: the label between numeric
// features, missing cells, a text column (hashed by the type decision)
// and labels outside the classes (null rows).
func mixedTable(t *testing.T, n int) *datasets.Table {
	t.Helper()
	r := rand.New(rand.NewPCG(8, 1))
	var b strings.Builder
	b.WriteString("a,y,b,kind,c\n")
	for range n {
		a := fmt.Sprint(r.NormFloat64()*2 + 1)
		if r.IntN(20) == 0 {
			a = "?"
		}
		y := "0"
		if r.Float64() < 0.3+0.4*float64(r.IntN(2)) {
			y = "1"
		}
		if r.IntN(50) == 0 {
			y = "unknown"
		}
		fmt.Fprintf(&b, "%s,%s,%g,%s,%g\n", a, y, r.ExpFloat64()*100, []string{"red", "green", "blue", "7"}[r.IntN(4)], r.Float64())
	}
	tab, err := datasets.ReadTable(strings.NewReader(b.String()), "mixed.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestFitInPlaceIsFit: FitInPlace releases what Fit releases (seeded
// noise): the weights, the certificate, the preprocessing and the
// diagnostics on the training and held-out rows, for the private default
// (estimated centres, a text column hashed), declared bounds with a
// projection and a non-private fit; Fit leaves its table as it was,
// FitInPlace leaves it without rows.
func TestFitInPlaceIsFit(t *testing.T) {
	schema := datasets.Schema{Label: "y", Classes: []string{"0", "1"}}
	declared := schema
	declared.Bounds = []datasets.Bound{{Column: "a", Lo: -5, Hi: 7}, {Column: "b", Lo: 0, Hi: 500}, {Column: "c", Lo: 0, Hi: 1}}
	declared.Categories = []datasets.Categorical{{Column: "kind", Values: []string{"red", "green", "blue"}}}
	for _, tc := range []struct {
		name   string
		schema datasets.Schema
		budget dp.Budget
		opts   Options
	}{
		{"rule", schema, dp.Budget{Epsilon: 2}, Options{Select: &selection.Config{}, Diagnostics: true}},
		{"gamma held out", schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true, TestFrac: 0.25, Diagnostics: true}},
		{"objective declared projected", declared, dp.Budget{Epsilon: 1}, Options{Mechanism: "objective", Auto: true, TestFrac: 0.1, Project: 3}},
		{"non-private stratified", schema, dp.Budget{}, Options{TestFrac: 0.3, Stratify: true, Diagnostics: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Seed = 5
			tab := mixedTable(t, 3000)
			before := tab.Clone()
			tc.opts.Noise = perturb.Seeded(3)
			want, err := Fit(context.Background(), tab, tc.schema, tc.budget, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tab.Len() {
				for j := range tab.Columns {
					if tab.Cell(i, j) != before.Cell(i, j) {
						t.Fatalf("Fit changed cell (%d, %d) of its table", i, j)
					}
				}
			}
			tc.opts.Noise = perturb.Seeded(3)
			got, err := FitInPlace(context.Background(), tab, tc.schema, tc.budget, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var gotFile, wantFile bytes.Buffer
			if err := got.Write(&gotFile); err != nil {
				t.Fatal(err)
			}
			if err := want.Write(&wantFile); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotFile.Bytes(), wantFile.Bytes()) {
				t.Errorf("FitInPlace's model file differs from Fit's:\n%s\nwant\n%s", gotFile.Bytes(), wantFile.Bytes())
			}
			if got.Diagnostics != nil {
				got.Diagnostics.Stats.Duration = want.Diagnostics.Stats.Duration // wall time
			}
			if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
				t.Errorf("FitInPlace's diagnostics\n%+v\nFit's\n%+v", got.Diagnostics, want.Diagnostics)
			}
			if d := got.Diagnostics; d != nil {
				// The metrics on the rows as the model file rebuilds them
				// from the table, by copies (modelfile.TrainingRows,
				// HeldOutRows).
				for _, c := range []struct {
					name string
					rows func(*datasets.Table) (*mat.Dense, []float64, []int, error)
					m    modelfile.Metric
				}{{"training", got.TrainingRows, d.ReleasedTrain}, {"held-out", got.HeldOutRows, d.ReleasedTest}} {
					X, y, _, err := c.rows(before)
					if err != nil {
						t.Fatal(err)
					}
					if X == nil {
						continue
					}
					n, dim := X.Dims()
					null := make([]bool, n)
					for i := range null {
						null[i] = X.At(i, dim-1) == 0 // the bias of a null row
					}
					if m := evaluate(got.Model, losses.Binary, X, y, null); m != c.m {
						t.Errorf("%s rows: %+v, rebuilt from the table %+v", c.name, c.m, m)
					}
				}
			}
			if d := want.Diagnostics; tc.opts.Diagnostics && tc.opts.TestFrac > 0 && (d == nil || d.TrainedTest.Rows == 0 || d.MajorityTest.Rows == 0) {
				t.Errorf("no diagnostics on the held-out rows: %+v", d)
			}
			if tab.Len() != 0 || tab.Source != "mixed.csv" {
				t.Errorf("FitInPlace left %d rows, source %q", tab.Len(), tab.Source)
			}
		})
	}
}

// copyBytes is what one float64 copy of the n x cols values of a table
// takes.
func copyBytes(n, cols int) uint64 { return uint64(8 * n * cols) }

// allocated returns the bytes fn allocates (runtime.MemStats.TotalAlloc:
// every allocation, freed or not).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestFitOneCopy fails if a copy of the rows comes back into the fit: a
// private fit of n = 40,000 rows of 20 values (6.4 MB a float64 copy)
// allocates less than one copy besides the table it maps in place
// (FitInPlace), and FitMatrix less than two (its table and the same). The
// fit's own arrays of a few values a row (labels, null marks, the split,
// one column at a time for the bounds, the trainer's norms and order)
// take about 0.6 of a copy, so the margin is 0.4 of one; each copy of the
// rows that the pipeline held before (the encoded features, the raw
// training rows, the mapped rows; FitMatrix's table of text cells) takes a
// whole one or more.
func TestFitOneCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 40,000 rows")
	}
	const n, d = 40000, 19
	r := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range d {
			X.Set(i, j, r.NormFloat64())
		}
		if r.IntN(2) == 0 {
			y[i] = 1
		}
	}
	one := copyBytes(n, d+1)
	opts := Options{Mechanism: perturb.Gamma, Auto: true, Noise: perturb.Seeded(1)}
	dom := Domain{Classes: []float64{0, 1}}
	var err error
	got := allocated(func() { _, err = FitMatrix(context.Background(), X, y, dom, dp.Budget{Epsilon: 1}, opts) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FitMatrix: %.2f copies of the rows", float64(got)/float64(one))
	if got > 2*one {
		t.Errorf("FitMatrix allocates %d bytes, %.2f copies of the rows: want at most 2", got, float64(got)/float64(one))
	}
	tab, schema, err := matrixTable(X, y, dom)
	if err != nil {
		t.Fatal(err)
	}
	opts.Noise = perturb.Seeded(1)
	got = allocated(func() { _, err = FitInPlace(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, opts) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FitInPlace: %.2f copies of the rows", float64(got)/float64(one))
	if got > one {
		t.Errorf("FitInPlace allocates %d bytes, %.2f copies of the rows: want at most 1", got, float64(got)/float64(one))
	}
}
