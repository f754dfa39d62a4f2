package datasets

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
)

// Table is a data file as the user hands it over: a header of column names
// and the data rows. The pipeline's guarantee is about the rows of a Table:
// two tables are neighbours when they have the same header and the same
// number of rows and differ in one row.
//
// A Table is read before anything says which column is the label, and it
// keeps every cell: its value, in a float64 matrix (one value per cell, row
// by row), when the cell is a finite number, and its text when the value
// does not give it back as its column writes numbers (a class name, an
// empty cell, "NaN", a number spelled "1.0" or "1e3", or "0.5" in a column
// of numbers written with 6 decimals; see Cell). So a class "1" and a
// label "1.0" stay distinct, an error can quote a malformed cell, and a
// file of numbers takes about 8 bytes a cell, whether they are written as
// the shortest decimals of their values or all with p decimals ("%.6f").
//
// Read a Table with ReadTable, ReadTableFile or, in chunks of rows, a
// TableReader; build one with NewTable.
type Table struct {
	// Columns holds the header, one unique name per column. Renaming a
	// column is allowed; the number of columns is fixed.
	Columns []string
	// Source describes where the table came from (a file name), for
	// messages and the model file.
	Source string
	// First is the number of data rows of Source before the first row of
	// this table: 0 for a whole file, the position of a chunk read by a
	// TableReader. Row i of the table is data row First+i+1 (1-based) of
	// Source.
	First int

	n, ncol int
	// vals holds the n x ncol values, row-major: NaN for a cell that is
	// not a finite number.
	vals []float64
	// text keeps, per column, the text of the cells that are not numbers
	// (nil for a column without any).
	text []*rawcsv.Texts
	// lines maps rows to the file lines they start on.
	lines []lineRun
}

// newTable returns an empty table with the given columns.
func newTable(columns []string, source string, first int) *Table {
	return &Table{Columns: columns, Source: source, First: first, ncol: len(columns), text: make([]*rawcsv.Texts, len(columns))}
}

// NewTable returns the table of the given header and rows of text cells,
// as ReadTable would read them from a file holding them one row a line
// after the header: the header rule applies (names trimmed of surrounding
// white space, non-empty and distinct), every row must have as many cells
// as the header, the cells are trimmed, and there must be a row. Row i is
// on line i+2. Errors wrap ErrFormat. It copies its arguments.
func NewTable(source string, columns []string, rows [][]string) (*Table, error) {
	cols := slices.Clone(columns)
	if len(cols) == 0 {
		return nil, formatErr(source, "empty header, want column names")
	}
	if err := checkHeader(cols, 1); err != nil {
		return nil, formatErr(source, "%w", err)
	}
	if len(rows) == 0 {
		return nil, formatErr(source, "no data rows after the header")
	}
	t := newTable(cols, source, 0)
	t.vals = make([]float64, 0, len(rows)*len(cols))
	cells := make([]string, len(cols))
	for i, row := range rows {
		if len(row) != len(cols) {
			pe := lineErr(i+2, 0, "", "%d fields, the header has %d", len(row), len(cols))
			pe.Row = i + 1
			return nil, formatErr(source, "%w", pe)
		}
		for j := range row {
			cells[j] = strings.TrimSpace(row[j])
		}
		t.appendRow(cells, i+2, len(rows))
	}
	return t, nil
}

// formatErr returns an error wrapping ErrFormat about source.
func formatErr(source, format string, args ...any) error {
	msg := fmt.Errorf(format, args...)
	if source == "" {
		return fmt.Errorf("%w: %w", ErrFormat, msg)
	}
	return fmt.Errorf("%w: %s: %w", ErrFormat, source, msg)
}

// appendRow adds a row of trimmed cells (valid only during the call)
// starting on file line line; capRows is the number of rows to make room
// for.
func (t *Table) appendRow(cells []string, line, capRows int) {
	for j, s := range cells {
		v, k, p := rawcsv.ParseDecimals(s)
		t.vals = append(t.vals, v)
		t.addCell(j, s, v, k, p, capRows)
	}
	t.endRow(line)
}

// comma separates the cells of a line.
var comma = []byte{','}

// appendLine adds the row of a line without quotes that has a cell per
// column: appendRow of its cells, split at the commas and trimmed, in one
// pass over the bytes of numbers that end at a comma.
func (t *Table) appendLine(line []byte, num, capRows int) {
	rest := rawcsv.BytesString(line)
	for j := range t.ncol {
		v, k, n, p := rawcsv.ScanNumber(rest)
		if n < 0 || n < len(rest) && rest[n] != ',' {
			// Not a plain number up to the comma: the cell, trimmed.
			n = strings.IndexByte(rest, ',')
			if n < 0 {
				n = len(rest)
			}
			s := strings.TrimSpace(rest[:n])
			v, k, p = rawcsv.ParseDecimals(s)
			t.addCell(j, s, v, k, p, capRows)
		} else if c := t.text[j]; c == nil || !c.Spelling().Quick(k, p) {
			t.addCell(j, rest[:n], v, k, p, capRows)
		}
		t.vals = append(t.vals, v)
		if n < len(rest) {
			n++
		}
		rest = rest[n:]
	}
	t.endRow(num)
}

// addCell keeps what column j needs of the cell of the row being added:
// text s, of value v, kind k and decimals p (rawcsv.ScanNumber). The
// column's first number sets its spelling: Decimals(p) for a number of p
// decimals, else Shortest. A number that the spelling does not write back
// keeps its text, unless it is the shortest decimal in a column of
// decimals: the column then becomes Shortest (the rows before that it
// does not write back get their texts).
func (t *Table) addCell(j int, s string, v float64, k rawcsv.Kind, p, capRows int) {
	c := t.text[j]
	if k != rawcsv.Text {
		if c.Spelling() == rawcsv.Unset {
			if c == nil {
				c = new(rawcsv.Texts)
				t.text[j] = c
			}
			c.Spell(rawcsv.Decimals(p))
		}
		sp := c.Spelling()
		if sp.Writes(s, v, k, p) {
			return
		}
		if sp > 0 && k == rawcsv.Number {
			t.text[j] = c.Shortest(t.n, capRows, func(i int) float64 { return t.vals[i*t.ncol+j] })
			return
		}
	}
	t.addText(j, s, capRows)
}

// addText keeps text s of the cell of the row being added in column j.
func (t *Table) addText(j int, s string, capRows int) {
	c := t.text[j]
	if c == nil {
		c = new(rawcsv.Texts)
		t.text[j] = c
	}
	c.Add(t.n, s, capRows)
}

// endRow ends the row being added, which starts on file line line.
func (t *Table) endRow(line int) {
	if m := len(t.lines); m == 0 || t.lines[m-1].line+t.n-t.lines[m-1].row != line {
		t.lines = append(t.lines, lineRun{row: t.n, line: line})
	}
	t.n++
}

// Len returns the number of data rows.
func (t *Table) Len() int { return t.n }

// Line returns the file line data row i starts on.
func (t *Table) Line(i int) int {
	t.check(i, 0)
	r, ok := slices.BinarySearchFunc(t.lines, i, func(l lineRun, i int) int { return l.row - i })
	if !ok {
		r--
	}
	return t.lines[r].line + i - t.lines[r].row
}

// check panics unless (i, j) is a cell of t.
func (t *Table) check(i, j int) {
	if i < 0 || i >= t.n || j < 0 || j >= t.ncol {
		panic(fmt.Sprintf("datasets: cell (%d, %d) of a %d x %d table", i, j, t.n, t.ncol))
	}
}

// missingTokens are the texts of a missing numeric cell besides the empty
// cell: the spellings of R, pandas, SAS and the UCI files.
var missingTokens = []string{"?", ".", "NA", "N/A", "na", "n/a", "NaN", "nan", "null", "NULL", "None", "none"}

// IsMissing reports whether the text of a numeric cell (trimmed, as Cell
// gives it) stands for a missing value: the empty cell, or one of "?",
// ".", "NA", "N/A", "na", "n/a", "NaN", "nan", "null", "NULL", "None",
// "none". Encode keeps such a cell as NaN, and a feature map
// (preprocess.RowMap.Missing) reads it as the middle of the feature's map.
// The list is public and fixed: it reads no other row.
func IsMissing(text string) bool { return text == "" || slices.Contains(missingTokens, text) }

// Cell returns the text of the cell in row i and column j, as the file
// holds it (trimmed of surrounding white space). The text of a number v is
// kept only when the column's spelling of numbers does not give it back;
// otherwise Cell writes it again from v. That spelling is
// strconv.FormatFloat(v, 'f', -1, 64), or FormatFloat(v, 'f', p, 64) in a
// column whose first number has p digits after the point (as "%.6f"
// writes 0.5: 0.500000) and whose shortest decimals all have p too.
func (t *Table) Cell(i, j int) string {
	t.check(i, j)
	return strings.Clone(t.cellView(i, j))
}

// cellView is Cell without the copy of a stored text, for a caller that
// does not keep it.
func (t *Table) cellView(i, j int) string {
	c := t.text[j]
	if k := c.At(i); k != 0 {
		return c.Text(k)
	}
	return string(c.AppendNumber(nil, t.vals[i*t.ncol+j]))
}

// Value returns the value of the cell in row i and column j and true if it
// is a finite number (strconv.ParseFloat reads it, finite), else NaN and
// false.
func (t *Table) Value(i, j int) (float64, bool) {
	t.check(i, j)
	v := t.vals[i*t.ncol+j]
	return v, !math.IsNaN(v)
}

// SetCell replaces the cell in row i and column j by the cell the text
// would be in a file (trimmed of surrounding white space): the tests of
// the pipeline build neighbouring tables with it.
func (t *Table) SetCell(i, j int, text string) {
	t.check(i, j)
	text = strings.TrimSpace(text)
	c := t.text[j]
	v, number := c.Uncoded(text)
	t.vals[i*t.ncol+j] = v
	if number {
		if c != nil {
			c.Set(i, 0)
		}
		return
	}
	if c == nil {
		c = new(rawcsv.Texts)
		t.text[j] = c
	}
	c.Set(i, c.Code(text))
}

// Slice returns a copy of rows [lo, hi) as a table of the same header and
// source, with First moved by lo: the chunk of those rows. It panics
// unless 0 <= lo <= hi <= Len.
func (t *Table) Slice(lo, hi int) *Table {
	if lo < 0 || hi < lo || hi > t.n {
		panic(fmt.Sprintf("datasets: rows [%d, %d) of a table of %d", lo, hi, t.n))
	}
	out := newTable(slices.Clone(t.Columns), t.Source, t.First+lo)
	out.n = hi - lo
	out.vals = slices.Clone(t.vals[lo*t.ncol : hi*t.ncol])
	for j, c := range t.text {
		out.text[j] = c.Slice(lo, hi)
	}
	if hi > lo {
		out.lines = []lineRun{{0, t.Line(lo)}}
		for _, l := range t.lines {
			if l.row > lo && l.row < hi {
				out.lines = append(out.lines, lineRun{l.row - lo, l.line})
			}
		}
	}
	return out
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table { return t.Slice(0, t.n) }

// Drop returns a copy of t without the columns names (a name repeated
// counts once): the columns a run leaves out (an ID, free text), chosen by
// their names alone, so without reading a row. A name that is not a column
// is an error wrapping ErrSchema.
func (t *Table) Drop(names []string) (*Table, error) {
	keep, err := t.keep(names)
	if err != nil {
		return nil, err
	}
	out := newTable(nil, t.Source, t.First)
	out.n = t.n
	out.vals = make([]float64, t.n*len(keep))
	t.dropInto(out, keep)
	return out, nil
}

// DropInPlace is Drop without a copy: it leaves the columns names out of t
// itself, the cells kept moved within the rows' storage. On an error t is
// left as it was.
func (t *Table) DropInPlace(names []string) error {
	keep, err := t.keep(names)
	if err != nil {
		return err
	}
	t.dropInto(t, keep)
	return nil
}

// keep returns the columns of t that names does not name, in order.
func (t *Table) keep(names []string) ([]int, error) {
	drop := make([]bool, len(t.Columns))
	for _, name := range names {
		j := slices.Index(t.Columns, name)
		if j < 0 {
			return nil, fmt.Errorf("%w: no column %q to leave out; the columns are %s", ErrSchema, name, strings.Join(t.Columns, ", "))
		}
		drop[j] = true
	}
	var keep []int
	for j := range t.Columns {
		if !drop[j] {
			keep = append(keep, j)
		}
	}
	return keep, nil
}

// dropInto writes the columns keep of t into out, t itself or a table of
// t's rows with room for their values: the header, the cells (row by
// row, forward, so that t's storage can be out's), their texts and lines.
func (t *Table) dropInto(out *Table, keep []int) {
	cols := make([]string, len(keep))
	text := make([]*rawcsv.Texts, len(keep))
	for k, j := range keep {
		cols[k], text[k] = t.Columns[j], t.text[j]
		if out != t {
			text[k] = t.text[j].Slice(0, t.n)
		}
	}
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		for k, j := range keep {
			out.vals[i*len(keep)+k] = row[j]
		}
	}
	if out != t {
		out.lines = slices.Clone(t.lines)
	} else {
		out.vals = out.vals[:t.n*len(keep)]
	}
	out.Columns, out.ncol, out.text = cols, len(keep), text
}

// cellErr returns the ParseError of the cell in row i and column j: its
// file line, its data row in the source and its column.
func (t *Table) cellErr(i, j int, format string, args ...any) *ParseError {
	pe := lineErr(t.Line(i), j+1, t.Columns[j], format, args...)
	pe.Row = t.First + i + 1
	return pe
}

// Without returns a copy of t without column j (the privacy-ID column, say,
// which is not a feature). It panics unless 0 <= j < len(t.Columns).
func (t *Table) Without(j int) *Table {
	if j < 0 || j >= len(t.Columns) {
		panic(fmt.Sprintf("datasets: column %d of %d", j, len(t.Columns)))
	}
	cols := slices.Delete(slices.Clone(t.Columns), j, j+1)
	out := newTable(cols, t.Source, t.First)
	out.n = t.n
	if t.ncol == 0 {
		return out
	}
	out.vals = make([]float64, 0, t.n*(t.ncol-1))
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		out.vals = append(out.vals, row[:j]...)
		out.vals = append(out.vals, row[j+1:]...)
	}
	out.text = slices.Delete(slices.Clone(t.text), j, j+1)
	for k, c := range out.text {
		out.text[k] = c.Slice(0, t.n)
	}
	out.lines = slices.Clone(t.lines)
	return out
}
