package datasets

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
	"github.com/stabpriv/stabpriv/losses"
)

// decimalsCSV returns a CSV of n rows of d features x0, x1, ... drawn
// uniformly from [-1, 1] and written with p decimals ("%.6f" for p = 6,
// trailing zeros and all), and a label y of 0 or 1: the short cells of a
// file written by numpy's savetxt or pandas' float_format.
func decimalsCSV(n, d, p int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	var b []byte
	for j := range d {
		b = append(b, "x"+strconv.Itoa(j)+","...)
	}
	b = append(b, "y\n"...)
	for range n {
		for range d {
			b = strconv.AppendFloat(b, 2*r.Float64()-1, 'f', p, 64)
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(r.IntN(2)), 10)
		b = append(b, '\n')
	}
	return b
}

// TestReadDecimalsKeepsNoTexts: a file of numbers written with a fixed
// number of decimals (a tenth of them end in 0, which the shortest
// decimal would not write) is read as its values alone: each column's
// spelling gives every cell back, no text is kept, and the reader
// allocates about one float64 copy of the cells (the room it reserves
// from the file's size, a quarter more at most, and a few lines of
// buffers). It kept a text a cell that ends in 0 before, 1.3 copies more.
func TestReadDecimalsKeepsNoTexts(t *testing.T) {
	const n, d = 20000, 20
	data := decimalsCSV(n, d, 6, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tab, err := ReadTable(bytes.NewReader(data), "in.csv")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	copies := float64(after.TotalAlloc-before.TotalAlloc) / float64(8*n*(d+1))
	t.Logf("read %d rows of %d cells: %.2f float64 copies of the cells allocated", n, d+1, copies)
	if copies > 1.4 {
		t.Errorf("the reader allocated %.2f float64 copies of the cells, want at most 1.4", copies)
	}
	for j, c := range tab.text {
		want := rawcsv.Decimals(6)
		if j == d {
			want = rawcsv.Decimals(0)
		}
		if c.Spelling() != want || c.Len() != 0 {
			t.Errorf("column %d: spelling %d with %d texts, want %d with none", j, c.Spelling(), c.Len(), want)
		}
	}
	lines := strings.Split(string(data), "\n")[1:]
	for i := range n {
		for j, cell := range strings.Split(lines[i], ",") {
			if got := tab.Cell(i, j); got != cell {
				t.Fatalf("cell (%d, %d) %q, want %q", i, j, got, cell)
			}
		}
	}
}

// spellingColumns are columns of cells, each with the spelling a reader
// gives it and the number of texts it keeps: numbers with a fixed number
// of decimals, a shortest decimal among them (the column is then
// Shortest, the decimals before it kept as texts), text cells before and
// among the numbers, spelled numbers, and a decimal of more than 15
// digits that only writing its value tells.
var spellingColumns = []struct {
	cells []string
	spell rawcsv.Spelling
	texts int
}{
	{[]string{"0.500000", "1.250000", "-0.000000", "3.000000", "0.500000"}, rawcsv.Decimals(6), 0},
	{[]string{"0.500000", "1.250000", "0.25", "1.000000", "0.5"}, rawcsv.Shortest, 3},
	{[]string{"1e3", "0.50", "0.5", "+1", "2"}, rawcsv.Shortest, 3},
	{[]string{"x", "", "0.50", "0.25", "x"}, rawcsv.Decimals(2), 2},
	{[]string{"0.10", "+1", "1.5e2", "1234567890123456.00", "007"}, rawcsv.Decimals(2), 3},
	{[]string{"7", "12", "-3", "2.5", "-0"}, rawcsv.Shortest, 0},
	{[]string{"1.0", "2.0", "NaN", "1.00", "2.0"}, rawcsv.Decimals(1), 2},
	{[]string{"0.12345678901234567", "0.5", "0.50", "1", "1.0"}, rawcsv.Shortest, 3},
}

// spellingTable returns the table of spellingColumns, column j named cj,
// read from a file with quoted cells when quoted (encoding/csv's path) or
// in place.
func spellingTable(t *testing.T, quoted bool) *Table {
	t.Helper()
	var b strings.Builder
	for j := range spellingColumns {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString("c" + strconv.Itoa(j))
	}
	b.WriteByte('\n')
	for i := range spellingColumns[0].cells {
		for j, c := range spellingColumns {
			if j > 0 {
				b.WriteByte(',')
			}
			if quoted {
				b.WriteString(`"` + c.cells[i] + `"`)
			} else {
				b.WriteString(c.cells[i])
			}
		}
		b.WriteByte('\n')
	}
	tab, err := ReadTable(strings.NewReader(b.String()), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestTableSpelling: each column of spellingColumns gets its spelling and
// keeps just the texts it does not give back, read in place or through
// encoding/csv, whole or in chunks; every cell's text comes back (Cell),
// and the distinct texts (LabelValues), the matching of names (match: a
// name matches the cells of its very text, "0.5" no cell "0.500000"), a
// cell set anew (SetCell), the copies (Slice, Without, DropInPlace) and
// the hashed buckets (HashText) follow the texts.
func TestTableSpelling(t *testing.T) {
	for _, quoted := range []bool{false, true} {
		tab := spellingTable(t, quoted)
		for j, c := range spellingColumns {
			if got := tab.text[j]; got.Spelling() != c.spell || got.Len() != c.texts {
				t.Errorf("quoted %v, column %d: spelling %d with %d texts, want %d with %d", quoted, j, got.Spelling(), got.Len(), c.spell, c.texts)
			}
			checkSpelledColumn(t, tab, j, c.cells)
		}
	}
	tab := spellingTable(t, false)
	sameCells := func(how string, got *Table, cols []int, lo int) {
		t.Helper()
		for k, j := range cols {
			for i := range got.Len() {
				if want := spellingColumns[j].cells[lo+i]; got.Cell(i, k) != want {
					t.Errorf("%s: cell (%d, %d) %q, want %q", how, i, k, got.Cell(i, k), want)
				}
			}
		}
	}
	sameCells("Slice", tab.Slice(1, 4), []int{0, 1, 2, 3, 4, 5, 6, 7}, 1)
	sameCells("Without", tab.Without(1), []int{0, 2, 3, 4, 5, 6, 7}, 0)
	dropped := tab.Clone()
	if err := dropped.DropInPlace([]string{"c2"}); err != nil {
		t.Fatal(err)
	}
	sameCells("DropInPlace", dropped, []int{0, 1, 3, 4, 5, 6, 7}, 0)

	// SetCell: the shortest decimal in a column of decimals is a text of
	// its own, a decimal that the spelling writes is not.
	for _, s := range []string{"0.5", "2.000000", "0.50000", "q"} {
		tab.SetCell(0, 0, s)
		if tab.Cell(0, 0) != s || tab.text[0].Spelling() != rawcsv.Decimals(6) {
			t.Errorf("SetCell %q: cell %q, spelling %d", s, tab.Cell(0, 0), tab.text[0].Spelling())
		}
	}
	tab.SetCell(0, 0, "2.000000")
	if tab.text[0].Len() > 0 && tab.text[0].At(0) != 0 {
		t.Errorf("SetCell 2.000000 in a column of 6 decimals kept its text")
	}

	// HashText buckets a cell by its text, as the file writes it.
	tab = spellingTable(t, false)
	enc, err := tab.EncodeInPlace(Schema{Label: "c7"}, losses.Regression, TextMark)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.HashText([]Categorical{Hashed("c0", 64)}); err != nil {
		t.Fatal(err)
	}
	for i, cell := range spellingColumns[0].cells {
		if got, want := enc.X[i*enc.Stride], float64(HashBucket(cell, 64)); got != want {
			t.Errorf("HashText of %q: bucket %v, want %v", cell, got, want)
		}
	}
}

// checkSpelledColumn checks column j of tab against its cells: the text
// of every cell, the distinct texts and the matching of names.
func checkSpelledColumn(t *testing.T, tab *Table, j int, cells []string) {
	t.Helper()
	for i, s := range cells {
		if got := tab.Cell(i, j); got != s {
			t.Errorf("column %d: cell %d %q, want %q", j, i, got, s)
		}
	}
	distinct := slices.Clone(cells)
	SortClassNames(distinct)
	distinct = slices.Compact(distinct)
	if got := tab.values(j); !slices.Equal(got, distinct) {
		t.Errorf("column %d: values %q, want %q", j, got, distinct)
	}
	// Names: the texts, and other spellings of their values.
	names := slices.Clone(distinct)
	for _, s := range distinct {
		if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) {
			names = append(names, strconv.FormatFloat(v, 'f', -1, 64), strconv.FormatFloat(v, 'f', 6, 64))
		}
	}
	for i, k := range tab.match(j, names) {
		want := int32(-1)
		for m, name := range names {
			if name == cells[i] {
				want = int32(m)
			}
		}
		if k != want {
			t.Errorf("column %d: cell %d %q matched name %d of %q, want %d", j, i, cells[i], k, names, want)
		}
	}
}
