package datasets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
)

// refTable reads input as encoding/csv reads it in the dialect of
// TableReader (TrimLeadingSpace, cells trimmed, a leading byte order mark
// skipped), applies the header rule and the shape checks, and returns the
// header, the data records and the line of each, or ok false if the input
// is not a well-formed table.
func refTable(input string) (header []string, rows [][]string, lines []int, ok bool) {
	cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(input, "\ufeff")))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, false
		}
		line, _ := cr.FieldPos(0)
		for j := range rec {
			rec[j] = strings.TrimSpace(rec[j])
		}
		if header == nil {
			header = rec
			if checkHeader(header, line) != nil {
				return nil, nil, nil, false
			}
			continue
		}
		if len(rec) != len(header) {
			return nil, nil, nil, false
		}
		rows = append(rows, rec)
		lines = append(lines, line)
	}
	return header, rows, lines, len(rows) > 0
}

// sameAsCSV checks that ReadTable reads input as refTable does: the same
// header, cells (Cell gives the trimmed text of every cell, Value its
// number) and lines, or an error wrapping ErrFormat for an input that is
// not a well-formed table. A TableReader reads it alike in chunks of rows,
// with the same error.
func sameAsCSV(t *testing.T, input string) {
	t.Helper()
	header, rows, lines, ok := refTable(input)
	tab, err := ReadTable(strings.NewReader(input), "in.csv")
	if !ok {
		if err == nil || !errors.Is(err, ErrFormat) {
			t.Fatalf("input %q: ReadTable error %v, want one wrapping ErrFormat", input, err)
		}
	} else if err != nil {
		t.Fatalf("input %q: %v", input, err)
	} else {
		checkTable(t, input, tab, header, rows, lines, 0)
	}
	want := err
	same := func(how string, err error) {
		t.Helper()
		if (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
			t.Fatalf("input %q, %s: error %v, ReadTable's %v", input, how, err, want)
		}
	}
	for _, size := range []int{1, 2, 3, 7} {
		how := fmt.Sprintf("chunks of %d rows", size)
		tr, err := NewTableReader(strings.NewReader(input), "in.csv")
		if err != nil {
			same(how, err)
			continue
		}
		first := 0
		for {
			chunk, err := tr.Read(size)
			if err == io.EOF {
				err = nil
				if first == 0 {
					err = formatErr("in.csv", "no data rows after the header")
				}
				same(how, err)
				break
			}
			if err != nil {
				same(how, err)
				break
			}
			if chunk.Len() > size || chunk.First != first {
				t.Fatalf("input %q, %s: a chunk of %d rows from %d, want at most %d from %d", input, how, chunk.Len(), chunk.First, size, first)
			}
			hi := first + chunk.Len()
			if ok {
				checkTable(t, input, chunk, header, rows[first:hi], lines[first:hi], first)
			}
			first = hi
		}
		if ok && first != len(rows) {
			t.Fatalf("input %q, %s: %d rows, want %d", input, how, first, len(rows))
		}
	}
}

// checkTable checks tab against the records of refTable.
func checkTable(t *testing.T, input string, tab *Table, header []string, rows [][]string, lines []int, first int) {
	t.Helper()
	if !slices.Equal(tab.Columns, header) || tab.Len() != len(rows) || tab.First != first || tab.Source != "in.csv" {
		t.Fatalf("input %q: header %q, %d rows from %d; want %q, %d rows from %d", input, tab.Columns, tab.Len(), tab.First, header, len(rows), first)
	}
	for i, rec := range rows {
		if tab.Line(i) != lines[i] {
			t.Fatalf("input %q: row %d on line %d, want %d", input, i, tab.Line(i), lines[i])
		}
		for j, cell := range rec {
			if got := tab.Cell(i, j); got != cell {
				t.Fatalf("input %q: cell (%d, %d) %q, want %q", input, i, j, got, cell)
			}
			v, ok := tab.Value(i, j)
			w, wok := check.ParseFinite(cell)
			if ok != wok || ok && math.Float64bits(v) != math.Float64bits(w) {
				t.Fatalf("input %q: cell (%d, %d) %q has value %v, %v; want %v, %v", input, i, j, cell, v, ok, w, wok)
			}
		}
	}
}

// adversarialCSV are inputs at the edges of the format: quotes, line ends,
// white space, byte order marks, ragged rows, numbers spelled many ways.
var adversarialCSV = []string{
	"",
	"\n\n",
	"a,y\n",
	"a,y\n1,p\n2,q\n",
	"a,y\r\n1,p\r\n2,q",
	"a,y\r\n1,p\r\n2,q\r",
	"a,y\n1,p\n2,q\r\r",
	"\n\na,y\n\n1,p\n\r\n2,q\n\n",
	"\ufeffa , y\n 1 ,\tp \n2,  q\n",
	"\ufeff\"a\",y\n1,p\n",
	"a,y\n1,p\n   \n2,q\n",
	"a,y\n1,p,3\n2,q\n",
	"a,y\n1\n",
	"a,a\n1,2\n",
	",y\n1,2\n",
	"a, \ny\n1,2\n",
	"a\n1\n2\n",
	"a,y\n\"1,5\",\"p,q\"\n2,\"say \"\"hi\"\"\"\n",
	"a,y\n1,\"multi\nline\"\n2,q\n",
	"a,y\r\n1,\"multi\r\nline\"\r\n2,q\r\n",
	"a,y\n1,p\n2,q\"\n",
	"a,y\n1,\"p\n",
	"a,y\n \"1\" ,p\n",
	"a,y\n1,\"\"\n2,q\n",
	"a,y\n1,1\n1.0,1.0\n+1,01\n1e0,1E+00\n-0,0\n0.10,.5\n5.,1_0\n0x1p-2,inf\nNaN,-Inf\n1e400,1e-400\n",
	"a,y\n9007199254740993,0.1000000000000000055511151231257827\n123456789012345678901234567890,1.7976931348623157e308\n",
	"a,y\n0.30000000000000004,100000000000000000000000\n1234567.5,-0.000001\n",
	"a,y\n1,\u00a0p\u00a0\n2,\u3000q\n",
	"a,y\n1,p\n2,q\n\"3\",r\n4,s\n",
}

func TestReadTableAsEncodingCSV(t *testing.T) {
	for _, c := range adversarialCSV {
		sameAsCSV(t, c)
	}
	parts := []string{"a", "y", ",", ",", "\n", "\n", "\r\n", "\r", " ", "\t", "\"", "\"\"", "1", "-2.5", "1e3", "1.0", "0", "-0",
		"p", "NaN", "", "\ufeff", "007", ".5"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("a,y\n")
		}
		for k := r.IntN(40); k > 0; k-- {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		sameAsCSV(t, b.String())
	}
	// Well-formed tables of random cells, quoted or not.
	for range 300 {
		var b strings.Builder
		ncol := 1 + r.IntN(4)
		for j := range ncol {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString("c" + strconv.Itoa(j))
		}
		b.WriteString("\r\n")
		for range 1 + r.IntN(20) {
			for j := range ncol {
				if j > 0 {
					b.WriteByte(',')
				}
				cell := randomCell(r)
				if r.IntN(5) == 0 {
					cell = `"` + strings.ReplaceAll(cell, `"`, `""`) + `"`
				}
				b.WriteString(cell)
			}
			b.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
		}
		sameAsCSV(t, b.String())
	}
}

// randomCell returns a cell: a number written one of many ways, or text.
func randomCell(r *rand.Rand) string {
	v := r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
	switch r.IntN(8) {
	case 0:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case 1:
		return strconv.FormatFloat(v, 'g', 1+r.IntN(17), 64)
	case 2:
		return strconv.FormatFloat(v, 'e', r.IntN(18), 64)
	case 3:
		return strconv.FormatFloat(v, 'f', r.IntN(20), 64)
	case 4:
		return strconv.Itoa(r.IntN(21) - 10)
	case 5:
		return []string{"", "p", "q r", "1.0", "+1", "a\"b", "x,y", " 1 ", "-", "."}[r.IntN(10)]
	case 6:
		return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func FuzzReadTable(f *testing.F) {
	for _, c := range adversarialCSV {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, input string) {
		sameAsCSV(t, input)
	})
}

// TestParseCellKind checks that rawcsv.ParseCell calls a cell a number exactly
// when strconv.FormatFloat(v, 'f', -1, 64) gives its text back.
func TestParseCellKind(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	try := func(s string) {
		t.Helper()
		v, k := rawcsv.ParseCell(s)
		w, ok := check.ParseFinite(s)
		want := rawcsv.Text
		if ok {
			want = rawcsv.Spelled
			if strconv.FormatFloat(w, 'f', -1, 64) == s {
				want = rawcsv.Number
			}
		}
		if k != want || ok && math.Float64bits(v) != math.Float64bits(w) || !ok && !math.IsNaN(v) {
			t.Fatalf("rawcsv.ParseCell(%q) = %v, %v; want %v, %v", s, v, k, w, want)
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "1", "1.0", "01", "+1", "1.", ".5", "0.5", "1e0", "10", "100", "0.05",
		"123456789012345", "1234567890123456", "9007199254740993", "0.1", "0.10000000000000001", "0.30000000000000004",
		"1e22", "10000000000000000000000", "100000000000000000000000", "0.0000000000000000000001", "5e-324", "NaN", "", "p"} {
		try(s)
	}
	for range 200000 {
		try(randomCell(r))
	}
}

// TestParseDecimals checks the decimals rawcsv.ParseDecimals reports: p >=
// 0 only for a cell strconv.FormatFloat(v, 'f', p, 64) writes, and for
// every such cell of at most 15 significant digits and 22 decimals (the
// fast path's), NoDecimals only for a number no decimals write.
func TestParseDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	try := func(s string) {
		t.Helper()
		v, k, p := rawcsv.ParseDecimals(s)
		writes := -1 // the decimals that write s, if any
		for q := range 30 {
			if k != rawcsv.Text && strconv.FormatFloat(v, 'f', q, 64) == s {
				writes = q
			}
		}
		digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
		_, frac, _ := strings.Cut(s, ".")
		switch {
		case p >= 0 && p != writes, p == rawcsv.NoDecimals && k != rawcsv.Text && writes >= 0,
			writes >= 0 && len(digits) <= 15 && len(frac) <= 22 && p != writes:
			t.Fatalf("rawcsv.ParseDecimals(%q) = %v, %v, %d; FormatFloat writes it with %d decimals", s, v, k, p, writes)
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.000000", "1.50", "1.5", "0.500000", "01.5", "+1.5", "1.", ".5", "1e3",
		"1234567890123456.00", "123456789012345.0", "0.100000000000000005551", "NaN", ""} {
		try(s)
	}
	for range 20000 {
		try(randomCell(r))
		try(strconv.FormatFloat(2*r.Float64()-1, 'f', r.IntN(12), 64))
	}
}

func FuzzParseCell(f *testing.F) {
	for _, s := range []string{"1", "1.0", "-0", "0.30000000000000004", "1e22", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, k := rawcsv.ParseCell(s)
		w, ok := check.ParseFinite(s)
		if (k != rawcsv.Text) != ok || ok && math.Float64bits(v) != math.Float64bits(w) {
			t.Fatalf("rawcsv.ParseCell(%q) = %v, %v; ParseFinite gives %v, %v", s, v, k, w, ok)
		}
		if (k == rawcsv.Number) != (ok && strconv.FormatFloat(w, 'f', -1, 64) == s) {
			t.Fatalf("rawcsv.ParseCell(%q): kind %v, FormatFloat gives %q", s, k, strconv.FormatFloat(w, 'f', -1, 64))
		}
	})
}

// TestTableSetCell edits tables at random, cell by cell, and checks every
// cell against a table of strings edited alike: a column goes from numbers
// to text and back, sparse and dense.
func TestTableSetCell(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 30 {
		n, ncol := 1+r.IntN(300), 1+r.IntN(3)
		cols := make([]string, ncol)
		for j := range cols {
			cols[j] = "c" + strconv.Itoa(j)
		}
		want := make([][]string, n)
		for i := range want {
			want[i] = make([]string, ncol)
			for j := range want[i] {
				want[i][j] = strconv.Itoa(r.IntN(100))
				if r.IntN(10) == 0 {
					want[i][j] = strings.TrimSpace(randomCell(r))
				}
			}
		}
		tab, err := NewTable("t", cols, want)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 * n {
			i, j := r.IntN(n), r.IntN(ncol)
			cell := randomCell(r)
			if r.IntN(3) == 0 {
				cell = strconv.Itoa(r.IntN(100))
			}
			tab.SetCell(i, j, " "+cell+"\t")
			want[i][j] = strings.TrimSpace(cell)
		}
		for i := range want {
			for j := range want[i] {
				if got := tab.Cell(i, j); got != want[i][j] {
					t.Fatalf("cell (%d, %d) = %q, want %q", i, j, got, want[i][j])
				}
			}
		}
		clone := tab.Clone()
		lo := r.IntN(n)
		hi := lo + r.IntN(n-lo+1)
		part := tab.Slice(lo, hi)
		tab.SetCell(0, 0, "changed")
		if clone.Cell(0, 0) != want[0][0] {
			t.Fatal("a clone shares its cells with the table")
		}
		for i := range hi - lo {
			if part.Line(i) != lo+i+2 {
				t.Fatalf("row %d of a slice from %d is on line %d, want %d", i, lo, part.Line(i), lo+i+2)
			}
			for j := range ncol {
				if part.Cell(i, j) != want[lo+i][j] || clone.Cell(lo+i, j) != want[lo+i][j] {
					t.Fatalf("cell (%d, %d) of a slice from %d or a clone differs", i, j, lo)
				}
			}
		}
	}
}

// TestEncodeClassText checks that classes are matched by text: "1.0" is
// not the class "1", nor "01" or "1e0", whichever is declared.
func TestEncodeClassText(t *testing.T) {
	labels := []string{"1", "1.0", "01", "+1", "1e0", "2", "-0", "0", "x"}
	rows := make([][]string, len(labels))
	for i, l := range labels {
		rows[i] = []string{strconv.Itoa(i), l}
	}
	tab, err := NewTable("t", []string{"a", "y"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		classes []string
		task    losses.Task
		y       []float64
		null    []int
	}{
		{[]string{"1", "2"}, losses.Binary, []float64{-1, -1, -1, -1, -1, 1, -1, -1, -1}, []int{1, 2, 3, 4, 6, 7, 8}},
		{[]string{"2", "1"}, losses.Binary, []float64{1, -1, -1, -1, -1, -1, -1, -1, -1}, []int{1, 2, 3, 4, 6, 7, 8}},
		{[]string{"1.0", "1e0", "x", "0", "-0"}, losses.Multiclass, []float64{0, 0, 0, 0, 1, 0, 4, 3, 2}, []int{0, 2, 3, 5}},
		{[]string{"01", "+1"}, losses.Binary, []float64{-1, -1, -1, 1, -1, -1, -1, -1, -1}, []int{0, 1, 4, 5, 6, 7, 8}},
	} {
		e, err := tab.Encode(Schema{Label: "y", Classes: c.classes}, c.task)
		if err != nil {
			t.Fatal(err)
		}
		var null []int
		for i, b := range e.Null {
			if b {
				null = append(null, i)
			}
		}
		if !slices.Equal(e.Y, c.y) || !slices.Equal(null, c.null) {
			t.Errorf("classes %q: y %v, null rows %v; want %v, %v", c.classes, e.Y, null, c.y, c.null)
		}
	}
	want := []string{"-0", "0", "01", "1", "+1", "1.0", "1e0", "2", "x"}
	SortClassNames(want)
	if got := tab.LabelValues("y"); !slices.Equal(got, want) {
		t.Errorf("LabelValues = %q, want %q", got, want)
	}
	// Regression reads the values: every number is a label, "x" a null row.
	e, err := tab.Encode(Schema{Label: "y", LabelBound: 1.5}, losses.Regression)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.Y, []float64{1, 1, 1, 1, 1, 1.5, 0, 0, 0}) || slices.Index(e.Null, true) != 8 || slices.Index(e.Null[:8], true) >= 0 {
		t.Errorf("regression: y %v, null %v", e.Y, e.Null)
	}
}

// TestEncodeErrors checks that a feature cell that is neither a finite
// number nor missing is refused with its line, data row, column and text,
// in a chunk too.
func TestEncodeErrors(t *testing.T) {
	const data = "a,b,y\n1,2,p\n\n3,\"x\ny\",q\n4,Inf,p\n"
	tab, err := ReadTable(strings.NewReader(data), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	s := Schema{Label: "y", Classes: []string{"p", "q"}}
	_, err = tab.Encode(s, losses.Binary)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `d.csv: line 4, data row 2, column "b": "x\ny" is not a finite number`) {
		t.Errorf("error %v", err)
	}
	_, err = tab.Slice(2, 3).Encode(s, losses.Binary)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `line 6, data row 3, column "b": "Inf"`) {
		t.Errorf("chunk: error %v", err)
	}
	if _, err := tab.Encode(Schema{Label: "z"}, losses.Binary); !errors.Is(err, ErrSchema) {
		t.Errorf("no label column: error %v", err)
	}
	one, err := NewTable("t", []string{"y"}, [][]string{{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Encode(Schema{Label: "y"}, losses.Binary); !errors.Is(err, ErrSchema) {
		t.Errorf("only a label column: error %v", err)
	}
}

// TestReadTableErrors checks the messages of malformed files: each names
// the line, and the column where it applies.
func TestReadTableErrors(t *testing.T) {
	for _, c := range []struct{ data, msg string }{
		{"", "in.csv: empty file, want a header row"},
		{"\n\r\n", "empty file"},
		{"a,y\n", "no data rows after the header"},
		{"a,,y\n1,2,p\n", "line 1, column 2: no name in the header"},
		{"\n a,b , a\n1,2,3\n", `line 2, column 3: columns 1 and 3 are both named "a"`},
		{"a,y\n1,p\n\n2,q,3\n", "line 4: 3 fields, the header has 2"},
		{"a,y\n1,p\n2,\"q\n", `line 3: byte 6: extraneous or missing " in quoted-field`},
		{"a,y\n1,p\n2,q\"\n", `line 3: byte 4: bare " in non-quoted-field`},
		{"a,\"y\n1,p\n", "header: line 2: byte 5 (record from line 1): extraneous"},
	} {
		_, err := ReadTable(strings.NewReader(c.data), "in.csv")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("input %q: error %v, want one saying %q", c.data, err, c.msg)
		}
	}
	for _, c := range []struct {
		cols []string
		rows [][]string
		msg  string
	}{
		{nil, [][]string{{"1"}}, "empty header"},
		{[]string{"a", " a "}, [][]string{{"1", "2"}}, `both named "a"`},
		{[]string{"a", "y"}, nil, "no data rows"},
		{[]string{"a", "y"}, [][]string{{"1", "p"}, {"2"}}, "line 3, data row 2: 1 fields, the header has 2"},
	} {
		_, err := NewTable("t", c.cols, c.rows)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("NewTable(%q, %q): error %v, want one saying %q", c.cols, c.rows, err, c.msg)
		}
	}
	dir := t.TempDir()
	if _, err := ReadTableFile(dir); !errors.Is(err, ErrFormat) {
		t.Errorf("a directory: error %v", err)
	}
	if _, err := ReadTableFile(filepath.Join(dir, "none.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: error %v", err)
	}
}

// TestReadTableMemory checks that a table of numbers takes about 8 bytes a
// cell: a table of 20,000 rows of 20 numbers and a text label read from CSV
// holds less than 1.1 times its cells' 8 bytes besides the room its matrix
// has left (reserved once from the size of the input, at most half its
// size, and never written), and keeps no text of the numbers.
func TestReadTableMemory(t *testing.T) {
	data := benchLabels(20000, 20, "neg", "pos")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tab, err := ReadTable(bytes.NewReader(data), "bench")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	cells := 8 * int64(len(tab.vals))
	room := 8 * int64(cap(tab.vals)-len(tab.vals))
	t.Logf("%d bytes of CSV, %d bytes of cells, %d held, %d of them room; %d allocated", len(data), cells, held, room, after.TotalAlloc-before.TotalAlloc)
	if held-room > cells*11/10 || room > cells/2 {
		t.Errorf("a table of %d bytes of cells holds %d bytes, %d of them room", cells, held, room)
	}
	for j, c := range tab.text[:20] {
		n := 0
		c.Each(0, tab.Len(), func(int, int32) { n++ })
		if n > tab.Len()/100 {
			t.Errorf("column %d keeps the text of %d cells", j, n)
		}
	}
	runtime.KeepAlive(tab)
	runtime.KeepAlive(data)
}

// TestReadTableLongLine: an input without line ends (a binary file,
// /dev/zero) is refused once a line passes MaxLineBytes, in bounded memory,
// on both paths (a quoted field too).
func TestReadTableLongLine(t *testing.T) {
	for _, head := range []string{"a,b\n1,", "a,b\n\"1,"} {
		r := io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, 2*MaxLineBytes))
		_, err := ReadTable(r, "zeros")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "longer than") {
			t.Errorf("%q then zeros: %v, want ErrFormat naming the long line", head, err)
		}
	}
	long := "a\n" + strings.Repeat("1", 1000) + "\n"
	if _, err := ReadTable(strings.NewReader(long), "long"); err != nil {
		t.Errorf("a 1000-byte line: %v", err)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestDrop checks that Drop keeps the other columns' values, texts and
// lines, shares nothing with the original, and refuses a name that is not
// a column.
func TestDrop(t *testing.T) {
	tab, err := ReadTable(strings.NewReader("id,a,b,y\nu1,1,,p\n\nu2,2.50,x,q\n"), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	d, err := tab.Drop([]string{"id", "id"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Columns, []string{"a", "b", "y"}) || d.Len() != 2 || d.Cell(1, 0) != "2.50" || d.Cell(0, 1) != "" || d.Cell(1, 1) != "x" || d.Line(1) != 4 {
		t.Errorf("dropped: %v, cells %q %q %q, line %d", d.Columns, d.Cell(1, 0), d.Cell(0, 1), d.Cell(1, 1), d.Line(1))
	}
	d.SetCell(1, 1, "changed")
	if tab.Cell(1, 2) != "x" {
		t.Errorf("Drop shares its cells with the original: %q", tab.Cell(1, 2))
	}
	if _, err := tab.Drop([]string{"zz"}); !errors.Is(err, ErrSchema) {
		t.Errorf("an unknown column: %v", err)
	}
}

func TestTableWithout(t *testing.T) {
	tab, err := NewTable("t.csv", []string{"a", "id", "b"}, [][]string{{"1", "u1", "x"}, {"2.5", "7", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	w := tab.Without(1)
	if !slices.Equal(w.Columns, []string{"a", "b"}) || w.Len() != 2 || w.Cell(0, 1) != "x" || w.Cell(1, 0) != "2.5" || w.Cell(1, 1) != "3" || w.Line(1) != 3 {
		t.Errorf("without column 1: %v, rows %d, cells %q %q %q", w.Columns, w.Len(), w.Cell(0, 1), w.Cell(1, 0), w.Cell(1, 1))
	}
	if tab.Cell(0, 1) != "u1" {
		t.Error("Without changed the table")
	}
}
