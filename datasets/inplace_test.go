package datasets

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
)

// inPlaceTable returns a CSV of n rows whose label y sits between the
// features: numbers spelled every way, missing cells, text cells in
// column t, categories in column c, classes p, q and others.
func inPlaceTable(t *testing.T, n int, seed uint64) *Table {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("a,y,c,t,z\n")
	for range n {
		cells := []string{
			randomCell(r),
			[]string{"p", "q", "p", "r", ""}[r.IntN(5)],
			[]string{"red", "green", "blue", "", "1"}[r.IntN(5)],
			[]string{"1.5", "x", "NA", "2", "-0", "y z"}[r.IntN(6)],
			strconv.FormatFloat(r.NormFloat64(), 'g', -1, 64),
		}
		if math.IsNaN(parse(cells[0])) {
			cells[0] = "?" // a missing cell for any text
		}
		b.WriteString(strings.Join(cells, ",") + "\n")
	}
	tab, err := ReadTable(strings.NewReader(b.String()), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// parse returns the value of a cell, NaN if it is not a finite number.
func parse(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(v, 0) {
		return math.NaN()
	}
	return v
}

// sameEncoded reports the first difference between the rows of two
// encodings, bit for bit (NaN equals NaN), "" when none.
func sameEncoded(a, b *Encoded) string {
	switch {
	case !slices.Equal(a.Features, b.Features) || a.N != b.N || a.D != b.D:
		return "header"
	case !slices.Equal(a.Y, b.Y) || !slices.Equal(a.Null, b.Null):
		return "labels"
	case len(a.Categories) != len(b.Categories):
		return "categories"
	}
	for j := range a.Categories {
		if !slices.Equal(a.Categories[j], b.Categories[j]) {
			return "categories of " + a.Features[j]
		}
	}
	for i := range a.N {
		for j, v := range a.Row(i) {
			if w := b.Row(i)[j]; math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
				return "row " + strconv.Itoa(i) + " feature " + a.Features[j]
			}
		}
	}
	return ""
}

// TestEncodeInPlace: EncodeInPlace gives EncodeText's rows in the table's
// own storage, a free entry after each row's features, for every way of
// reading text cells and every task; the table is left without rows.
func TestEncodeInPlace(t *testing.T) {
	cats := []Categorical{{Column: "c", Values: []string{"red", "green", "1"}}}
	for _, tc := range []struct {
		name string
		s    Schema
		task losses.Task
		text TextCells
	}{
		{"binary mark", Schema{Label: "y", Classes: []string{"p", "q"}, Categories: cats}, losses.Binary, TextMark},
		{"multiclass missing", Schema{Label: "y", Classes: []string{"p", "q", "r"}, Categories: cats}, losses.Multiclass, TextMissing},
		{"hashed", Schema{Label: "y", Classes: []string{"p", "q"}, Categories: []Categorical{Hashed("c", 5), Hashed("t", 3)}}, losses.Binary, TextError},
		{"regression", Schema{Label: "z", LabelBound: 1, Categories: append(slices.Clone(cats), Hashed("t", 4), Hashed("y", 2))}, losses.Regression, TextError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := inPlaceTable(t, 300, 7)
			want, err := tab.EncodeText(tc.s, tc.task, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			store := tab.vals
			got, err := tab.EncodeInPlace(tc.s, tc.task, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if d := sameEncoded(got, want); d != "" {
				t.Errorf("differs from EncodeText: %s", d)
			}
			if got.Stride != len(tab.Columns) || &got.X[0] != &store[0] {
				t.Errorf("stride %d, want %d, in the table's storage", got.Stride, len(tab.Columns))
			}
			for i := range got.N {
				if v := got.X[i*got.Stride+got.D]; v != 0 {
					t.Fatalf("row %d: free entry %v", i, v)
				}
			}
			if tab.Len() != 0 || len(tab.Columns) != 5 || tab.Source != "in.csv" {
				t.Errorf("the table keeps %d rows, columns %v, source %q", tab.Len(), tab.Columns, tab.Source)
			}
		})
	}
}

// TestEncodeInPlaceErrors: EncodeInPlace refuses what EncodeText refuses,
// with the same message (quoting the cell from the table's text), and
// takes the table over all the same.
func TestEncodeInPlaceErrors(t *testing.T) {
	for _, s := range []Schema{
		{Label: "y", Classes: []string{"p", "q"}}, // a text cell in t
		{Label: "w"}, // no such label
		{Label: "y", Categories: []Categorical{{Column: "v", Values: []string{"a"}}}}, // no such feature
	} {
		tab := inPlaceTable(t, 50, 3)
		_, want := tab.EncodeText(s, losses.Binary, TextError)
		_, err := tab.EncodeInPlace(s, losses.Binary, TextError)
		if want == nil || err == nil || err.Error() != want.Error() || errors.Is(err, ErrFormat) != errors.Is(want, ErrFormat) {
			t.Errorf("schema %+v: error %v, want %v", s, err, want)
		}
		if tab.Len() != 0 {
			t.Errorf("schema %+v: the table keeps %d rows", s, tab.Len())
		}
	}
	var nilTable *Table
	if _, err := nilTable.EncodeInPlace(Schema{Label: "y"}, losses.Binary, TextError); !errors.Is(err, ErrFormat) {
		t.Errorf("nil table: error %v", err)
	}
}

// TestEncodedSelect: Select keeps the chosen rows in the chosen order, in
// place, for permutations and for subsets in any order, and DataRow
// follows them.
func TestEncodedSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	s := Schema{Label: "y", Classes: []string{"p", "q"}}
	for trial := range 200 {
		n := 1 + r.IntN(40)
		idx := r.Perm(n)[:r.IntN(n+1)]
		if trial%3 == 0 {
			slices.Sort(idx) // the training rows of a split: increasing
		}
		tab := inPlaceTable(t, n, uint64(trial))
		want, err := tab.EncodeText(s, losses.Binary, TextMark)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tab.EncodeInPlace(s, losses.Binary, TextMark)
		if err != nil {
			t.Fatal(err)
		}
		got.Select(idx)
		if got.N != len(idx) || len(got.X) != len(idx)*got.Stride {
			t.Fatalf("trial %d: %d rows, %d values after selecting %d", trial, got.N, len(got.X), len(idx))
		}
		for k, i := range idx {
			if !slices.EqualFunc(got.Row(k), want.Row(i), func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) ||
				got.Y[k] != want.Y[i] || got.Null[k] != want.Null[i] || got.DataRow(k) != i+1 {
				t.Fatalf("trial %d: row %d is not row %d (data row %d)", trial, k, i, got.DataRow(k))
			}
		}
	}
	enc := &Encoded{N: 3, D: 1, X: make([]float64, 3), Y: make([]float64, 3), Null: make([]bool, 3)}
	for _, bad := range [][]int{{0, 0}, {3}, {-1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Select(%v) did not panic", bad)
				}
			}()
			enc.Select(bad)
		}()
	}
}

// TestHashText: hashing the text columns in place, after a Select too,
// gives what encoding the table with those columns hashed and
// TextMissing gives.
func TestHashText(t *testing.T) {
	cats := []Categorical{{Column: "c", Values: []string{"red", "green"}}}
	s := Schema{Label: "y", Classes: []string{"p", "q"}, Categories: cats}
	for _, hashed := range [][]Categorical{nil, {Hashed("t", 4)}, {Hashed("t", 3), Hashed("a", 2)}} {
		tab := inPlaceTable(t, 200, 11)
		hs := s
		hs.Categories = slices.Concat(cats, hashed)
		want, err := tab.EncodeText(hs, losses.Binary, TextMissing)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tab.EncodeInPlace(s, losses.Binary, TextMark)
		if err != nil {
			t.Fatal(err)
		}
		idx := rand.New(rand.NewPCG(1, 1)).Perm(200)[:150]
		got.Select(idx)
		if err := got.HashText(hashed); err != nil {
			t.Fatal(err)
		}
		want.Select(idx)
		if d := sameEncoded(got, want); d != "" {
			t.Errorf("hashed %v: differs from EncodeText: %s", hashed, d)
		}
	}
	tab := inPlaceTable(t, 10, 1)
	enc, err := tab.EncodeInPlace(s, losses.Binary, TextMark)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Categorical{Hashed("c", 2), Hashed("w", 2), {Column: "t", Values: []string{"x"}}} {
		if err := enc.HashText([]Categorical{bad}); !errors.Is(err, ErrSchema) {
			t.Errorf("%+v: error %v", bad, err)
		}
	}
}

// TestNewTableValues: the table of values is the table NewTable reads from
// their text, cell for cell, and it uses the values' storage.
func TestNewTableValues(t *testing.T) {
	vals := []float64{1.5, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -2.5e-300, 0.1, 3}
	rows := make([][]string, 3)
	for i := range rows {
		for _, v := range vals[i*3 : i*3+3] {
			text := strconv.FormatFloat(v, 'f', -1, 64)
			if v == 0 {
				text = "0"
			}
			rows[i] = append(rows[i], text)
		}
	}
	want, err := NewTable("m", []string{"a", "b", "y"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewTableValues("m", []string{"a", "b", "y"}, vals)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 3 || &got.vals[0] != &vals[0] {
		t.Fatalf("%d rows, storage shared %v", got.Len(), &got.vals[0] == &vals[0])
	}
	for i := range 3 {
		if got.Line(i) != want.Line(i) {
			t.Errorf("row %d on line %d, want %d", i, got.Line(i), want.Line(i))
		}
		for j := range 3 {
			gv, gok := got.Value(i, j)
			wv, wok := want.Value(i, j)
			if got.Cell(i, j) != want.Cell(i, j) || gok != wok || gok && math.Float64bits(gv) != math.Float64bits(wv) {
				t.Errorf("cell (%d, %d): %q %v, want %q %v", i, j, got.Cell(i, j), gv, want.Cell(i, j), wv)
			}
		}
	}
	for _, bad := range []struct {
		cols []string
		vals []float64
	}{{nil, vals}, {[]string{"a", "a"}, []float64{1, 2}}, {[]string{"a", "b"}, []float64{1, 2, 3}}, {[]string{"a"}, nil}} {
		if _, err := NewTableValues("m", bad.cols, bad.vals); !errors.Is(err, ErrFormat) {
			t.Errorf("%v, %v: error %v", bad.cols, bad.vals, err)
		}
	}
}

// TestDropInPlace: DropInPlace leaves the table Drop returns, cell for
// cell and line for line, in the table's own storage; an unknown column
// leaves it as it was.
func TestDropInPlace(t *testing.T) {
	for _, names := range [][]string{{"y"}, {"a", "z"}, {"t", "c", "t"}, {}} {
		tab := inPlaceTable(t, 100, 2)
		want, err := tab.Drop(names)
		if err != nil {
			t.Fatal(err)
		}
		store := tab.vals
		if err := tab.DropInPlace(names); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tab.Columns, want.Columns) || tab.Len() != want.Len() || &tab.vals[0] != &store[0] {
			t.Fatalf("%v: columns %v, want %v; storage kept %v", names, tab.Columns, want.Columns, &tab.vals[0] == &store[0])
		}
		for i := range tab.Len() {
			for j := range tab.Columns {
				if tab.Cell(i, j) != want.Cell(i, j) || tab.Line(i) != want.Line(i) {
					t.Fatalf("%v: cell (%d, %d) %q line %d, want %q line %d", names, i, j, tab.Cell(i, j), tab.Line(i), want.Cell(i, j), want.Line(i))
				}
			}
		}
	}
	tab := inPlaceTable(t, 5, 2)
	if err := tab.DropInPlace([]string{"a", "nope"}); !errors.Is(err, ErrSchema) || len(tab.Columns) != 5 || tab.Cell(0, 0) != inPlaceTable(t, 5, 2).Cell(0, 0) {
		t.Errorf("unknown column: error %v, columns %v", err, tab.Columns)
	}
}
