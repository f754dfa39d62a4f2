package preprocess

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
)

// inPlaceRows returns a table of n rows, label y between the features, a
// categorical column c, some missing cells and some rows whose label is
// not a class (null rows).
func inPlaceRows(t *testing.T, n int) *datasets.Table {
	t.Helper()
	r := rand.New(rand.NewPCG(2, 9))
	var b strings.Builder
	b.WriteString("a,y,c,b,e\n")
	for range n {
		a := fmt.Sprint(r.NormFloat64() * 3)
		if r.IntN(10) == 0 {
			a = "NA"
		}
		fmt.Fprintf(&b, "%s,%s,%s,%g,%g\n", a, []string{"p", "q", "q", "other"}[r.IntN(4)], []string{"u", "v", "w", "?"}[r.IntN(4)], r.Float64()*10-5, r.ExpFloat64())
	}
	tab, err := datasets.ReadTable(strings.NewReader(b.String()), "rows.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestRowsInPlace: RowsInPlace maps the rows into the encoded rows' own
// storage when a model input fits (the plain map, a projection to fewer
// dimensions) and into new storage when it does not (one-hot blocks), and
// every way gives Rows' bits, null rows zero.
func TestRowsInPlace(t *testing.T) {
	bounds := []datasets.Bound{{Column: "a", Lo: -4, Hi: 4}, {Column: "b", Lo: -5, Hi: 5}, {Column: "e", Lo: 0, Hi: 3}}
	cats := []datasets.Categorical{{Column: "c", Values: []string{"u", "v", "w"}}}
	for _, tc := range []struct {
		name    string
		s       datasets.Schema
		project int
		shared  bool
	}{
		{"plain", datasets.Schema{Label: "y", Classes: []string{"p", "q"}, Bounds: append(bounds, datasets.Bound{Column: "c", Lo: 0, Hi: 1})}, 0, true},
		{"projected", datasets.Schema{Label: "y", Classes: []string{"p", "q"}, Bounds: bounds, Categories: cats}, 2, true},
		{"one-hot", datasets.Schema{Label: "y", Classes: []string{"p", "q"}, Bounds: bounds, Categories: cats}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := inPlaceRows(t, 200)
			if tc.name == "plain" {
				for i := range tab.Len() {
					tab.SetCell(i, 2, fmt.Sprint(i%2)) // a numeric c
				}
			}
			ref, err := tab.Encode(tc.s, losses.Binary)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := tab.EncodeInPlace(tc.s, losses.Binary, datasets.TextError)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewRowMap(Bounds, enc.Features, tc.s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.SetProjection(tc.project, 4); err != nil {
				t.Fatal(err)
			}
			idx := make([]int, ref.N)
			for i := range idx {
				idx[i] = i
			}
			want, _, _, err := p.Rows(ref, idx)
			if err != nil {
				t.Fatal(err)
			}
			store := enc.X
			got, err := p.RowsInPlace(enc, enc.N)
			if err != nil {
				t.Fatal(err)
			}
			raw := got.RawMatrix()
			if raw.Stride != p.Dim() || (&raw.Data[0] == &store[0]) != tc.shared || enc.X != nil {
				t.Errorf("stride %d (dim %d), storage shared %v (want %v), raw rows kept %v", raw.Stride, p.Dim(), &raw.Data[0] == &store[0], tc.shared, enc.X != nil)
			}
			nulls := 0
			for i := range ref.N {
				for j := range p.Dim() {
					if g, w := got.At(i, j), want.At(i, j); math.Float64bits(g) != math.Float64bits(w) {
						t.Fatalf("row %d input %d: %v, want %v", i, j, g, w)
					}
				}
				if ref.Null[i] {
					nulls++
				}
			}
			if nulls == 0 {
				t.Error("no null row: the test does not test them")
			}
		})
	}
}

// TestRowsInPlaceError: an error names the data row the row came from,
// after a Select too, and the raw rows are gone.
func TestRowsInPlaceError(t *testing.T) {
	tab := inPlaceRows(t, 20)
	s := datasets.Schema{Label: "y", Classes: []string{"p", "q", "other"}, Categories: []datasets.Categorical{{Column: "c", Values: []string{"u"}}}}
	enc, err := tab.EncodeInPlace(s, losses.Multiclass, datasets.TextError)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewRowMap(None, enc.Features, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Missing = false // a missing cell of a is then an error
	bad := -1
	for i := range enc.N {
		if math.IsNaN(enc.Row(i)[0]) {
			bad = i
			break
		}
	}
	if bad < 0 {
		t.Fatal("no missing cell")
	}
	enc.Select([]int{bad})
	_, err = p.RowsInPlace(enc, 1)
	if !errors.Is(err, datasets.ErrFormat) || !strings.Contains(err.Error(), fmt.Sprintf("data row %d:", bad+1)) || enc.X != nil {
		t.Errorf("error %v, raw rows kept %v", err, enc.X != nil)
	}
}
