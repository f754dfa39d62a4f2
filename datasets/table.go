package datasets

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/losses"
)

// Table is a data file as the user hands it over: a header of column names
// and the data rows. The pipeline's guarantee is about the rows of a Table:
// two tables are neighbours when they have the same header and the same
// number of rows and differ in one row.
//
// A Table is read before anything says which column is the label, and it
// keeps every cell: its value, in a float64 matrix (one value per cell, row
// by row), when the cell is a finite number, and its text when the value
// does not give it back (a class name, an empty cell, "NaN", a number
// spelled "1.0" or "1e3"; see Cell). So a class "1" and a label "1.0" stay
// distinct, an error can quote a malformed cell, and a file of numbers
// takes about 8 bytes a cell.
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
	text []*columnText
	// lines maps rows to the file lines they start on.
	lines []lineRun
}

// newTable returns an empty table with the given columns.
func newTable(columns []string, source string, first int) *Table {
	return &Table{Columns: columns, Source: source, First: first, ncol: len(columns), text: make([]*columnText, len(columns))}
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
			return nil, formatErr(source, "line %d (data row %d) has %d fields, the header has %d", i+2, i+1, len(row), len(cols))
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
		v, k := parseCell(s)
		t.vals = append(t.vals, v)
		if k != number {
			t.addText(j, s, capRows)
		}
	}
	t.endRow(line)
}

// comma separates the cells of a line.
var comma = []byte{','}

// appendLine adds the row of a line without quotes that has a cell per
// column: appendRow of its cells, split at the commas and trimmed, in one
// pass over the bytes of numbers that end at a comma.
func (t *Table) appendLine(line []byte, num, capRows int) {
	rest := bytesString(line)
	for j := range t.ncol {
		v, k, n := scanNumber(rest)
		if n < 0 || n < len(rest) && rest[n] != ',' {
			// Not a plain number up to the comma: the cell, trimmed.
			n = strings.IndexByte(rest, ',')
			if n < 0 {
				n = len(rest)
			}
			s := strings.TrimSpace(rest[:n])
			if v, k = parseCell(s); k != number {
				t.addText(j, s, capRows)
			}
		} else if k != number {
			t.addText(j, rest[:n], capRows)
		}
		t.vals = append(t.vals, v)
		if n < len(rest) {
			n++
		}
		rest = rest[n:]
	}
	t.endRow(num)
}

// addText keeps text s of the cell of the row being added in column j.
func (t *Table) addText(j int, s string, capRows int) {
	c := t.text[j]
	if c == nil {
		c = new(columnText)
		t.text[j] = c
	}
	c.add(t.n, s, capRows)
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
// kept only when it is not strconv.FormatFloat(v, 'f', -1, 64); otherwise
// Cell writes it again from v.
func (t *Table) Cell(i, j int) string {
	t.check(i, j)
	if k := t.text[j].at(i); k != 0 {
		return strings.Clone(t.text[j].text(k))
	}
	return strconv.FormatFloat(t.vals[i*t.ncol+j], 'f', -1, 64)
}

// cellView is Cell without the copy of a stored text, for a caller that
// does not keep it.
func (t *Table) cellView(i, j int) string {
	if k := t.text[j].at(i); k != 0 {
		return t.text[j].text(k)
	}
	return strconv.FormatFloat(t.vals[i*t.ncol+j], 'f', -1, 64)
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
	v, k := parseCell(text)
	t.vals[i*t.ncol+j] = v
	c := t.text[j]
	if k == number {
		if c != nil {
			c.set(i, 0)
		}
		return
	}
	if c == nil {
		c = new(columnText)
		t.text[j] = c
	}
	c.set(i, c.code(text))
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
		out.text[j] = c.slice(lo, hi)
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
	cols := make([]string, len(keep))
	for k, j := range keep {
		cols[k] = t.Columns[j]
	}
	out := newTable(cols, t.Source, t.First)
	out.n = t.n
	out.vals = make([]float64, t.n*len(keep))
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		for k, j := range keep {
			out.vals[i*len(keep)+k] = row[j]
		}
	}
	for k, j := range keep {
		out.text[k] = t.text[j].slice(0, t.n)
	}
	out.lines = slices.Clone(t.lines)
	return out, nil
}

// position names data row i for messages: its file line and its data row
// number in the source.
func (t *Table) position(i int) string {
	return fmt.Sprintf("line %d, data row %d", t.Line(i), t.First+i+1)
}

// ReadTable reads a table from CSV (see TableReader for the format): a
// header row, then at least one data row. Errors wrap ErrFormat and give
// the source and the line.
func ReadTable(r io.Reader, source string) (*Table, error) {
	tr, err := NewTableReader(r, source)
	if err != nil {
		return nil, err
	}
	t, err := tr.Read(0)
	if err == io.EOF {
		return nil, formatErr(source, "no data rows after the header")
	}
	return t, err
}

// ReadTableFile reads the CSV file at path with ReadTable, streaming it
// (the file is not held in memory, only the table).
func ReadTableFile(path string) (*Table, error) { return ReadTableFileHeader(path, nil) }

// ReadTableFileHeader reads the CSV file at path as ReadTableFile does, or,
// when columns is not nil, as a file without a header row whose columns
// are named by columns (the header rule applies to them: trimmed,
// non-empty, distinct); its first record is then a data row.
func ReadTableFileHeader(path string, columns []string) (*Table, error) {
	f, err := OpenData(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var tr *TableReader
	if columns == nil {
		tr, err = NewTableReader(f, path)
	} else {
		tr, err = NewTableReaderHeader(f, path, columns)
	}
	if err != nil {
		return nil, err
	}
	t, err := tr.Read(0)
	if err == io.EOF {
		return nil, formatErr(path, "no data rows")
	}
	return t, err
}

// NewTableReaderHeader returns a TableReader of r, a CSV file without a
// header row, whose columns are named by columns (trimmed; they must be
// non-empty and distinct, errors wrap ErrFormat).
func NewTableReaderHeader(r io.Reader, source string, columns []string) (*TableReader, error) {
	cols := make([]string, len(columns))
	for j, c := range columns {
		cols[j] = strings.TrimSpace(c)
	}
	if len(cols) == 0 {
		return nil, formatErr(source, "no column names for a file without a header")
	}
	if err := checkHeader(cols, 0); err != nil {
		return nil, formatErr(source, "the given header: %w", err)
	}
	return &TableReader{columns: cols, source: source, size: sizeOf(r), rs: newRecords(r, false)}, nil
}

// TableReader reads a table from CSV in chunks of rows, for a file too
// large to hold at once or a shard of a distributed reader. The format is
// RFC 4180 as encoding/csv reads it: fields separated by commas, records
// ending at \n or \r\n, empty lines skipped, quoted fields that may hold
// commas, doubled quotes and line breaks. Every cell is trimmed of
// surrounding white space and a UTF-8 byte order mark at the start is
// ignored. The first record is the header: the column names, non-empty and
// distinct once trimmed. Every data row must have as many cells as the
// header. Cells are not interpreted beyond telling numbers from text: the
// schema gives them a meaning later (Table.Encode).
type TableReader struct {
	columns []string
	source  string
	rs      *records
	size    int64 // bytes of the input, 0 if unknown
	rows    int   // data rows read
	err     error // the first error, returned again
}

// NewTableReader reads the header from r. source names r in messages and
// becomes the Source of the tables read. An empty input or a header that
// breaks the rule is an error wrapping ErrFormat.
func NewTableReader(r io.Reader, source string) (*TableReader, error) {
	return newTableReader(r, source, false)
}

// newTableReader is NewTableReader; with allQuoted every line goes through
// encoding/csv (the reference the tests compare the in-place parsing with).
func newTableReader(r io.Reader, source string, allQuoted bool) (*TableReader, error) {
	tr := &TableReader{source: source, size: sizeOf(r), rs: newRecords(r, allQuoted)}
	raw, rec, line, err := tr.rs.next()
	switch {
	case err == io.EOF:
		return nil, formatErr(source, "empty file, want a header row")
	case err != nil:
		return nil, formatErr(source, "header: %w", err)
	case raw != nil && bytes.Count(raw, comma) >= MaxColumns:
		// Refused before it is split into names.
		return nil, formatErr(source, "header (line %d): more than the %d columns a data CSV may have", line, MaxColumns)
	case raw != nil:
		rec = tr.rs.split(raw)
	}
	cols := make([]string, len(rec))
	for j := range rec {
		cols[j] = strings.Clone(rec[j])
	}
	if err := checkHeader(cols, line); err != nil {
		return nil, formatErr(source, "%w", err)
	}
	tr.columns = cols
	return tr, nil
}

// Columns returns the header.
func (tr *TableReader) Columns() []string { return slices.Clone(tr.columns) }

// Read reads the next chunk of at most limit data rows (all the rest for
// limit <= 0) as a Table whose First is the number of rows read before
// it. After the last row it returns io.EOF. Errors (a CSV syntax error, a
// ragged row, a read error) wrap ErrFormat and name the line; the reader
// then returns the same error.
func (tr *TableReader) Read(limit int) (*Table, error) {
	if tr.err != nil {
		return nil, tr.err
	}
	t := newTable(slices.Clone(tr.columns), tr.source, tr.rows)
	capRows := 1024
	if limit > 0 {
		capRows = min(limit, capRows)
	}
	t.vals = make([]float64, 0, capRows*t.ncol)
	start := tr.rs.read
	for limit <= 0 || t.n < limit {
		raw, cells, line, err := tr.rs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tr.err = formatErr(tr.source, "%w", err)
			return nil, tr.err
		}
		fields := len(cells)
		if raw != nil {
			fields = bytes.Count(raw, comma) + 1
		}
		if fields != t.ncol {
			tr.err = formatErr(tr.source, "line %d has %d fields, the header has %d", line, fields, t.ncol)
			return nil, tr.err
		}
		if tr.rows+t.n >= MaxRows {
			tr.err = formatErr(tr.source, "line %d: more than %d data rows, the most a table may hold", line, MaxRows)
			return nil, tr.err
		}
		if tr.size > 0 && tr.rs.cr == nil && (t.n == sizeSample || t.n > sizeSample && len(t.vals)+t.ncol > cap(t.vals)) {
			// Room for the rows the rest of the input holds, estimated
			// from the length of the rows so far.
			capRows = t.reserve(tr.size-tr.rs.read, float64(tr.rs.read-start)/float64(t.n), limit)
		}
		if raw != nil {
			t.appendLine(raw, line, capRows)
		} else {
			t.appendRow(cells, line, capRows)
		}
	}
	if t.n == 0 {
		return nil, io.EOF
	}
	tr.rows += t.n
	return t, nil
}

// sizeSample is the number of rows whose mean length, with the size of the
// input, estimates the number of rows to reserve room for.
const sizeSample = 16

// reserve makes room in t for the rows of the rest bytes left, lines of
// about perRow bytes, at most limit-Len() if limit > 0, and returns the
// number of rows there is room for. The estimate has a margin, so that the
// matrix is allocated once rather than grown by copies (room never written
// costs address space, not memory), and it is capped by the fewest bytes a
// row can have (a one-byte cell and a separator per column).
func (t *Table) reserve(rest int64, perRow float64, limit int) int {
	more := int64(float64(rest)/perRow*1.25) + 16
	more = max(1, min(more, rest/int64(2*t.ncol)+1))
	if limit > 0 {
		more = min(more, int64(limit-t.n))
	}
	t.vals = slices.Grow(t.vals, int(more)*t.ncol)
	return t.n + int(more)
}

// DefaultTable returns the embedded Wisconsin diagnostic breast cancer
// table, the UCI file without its reference sample (497 rows, 30 features,
// label "diagnosis"), and its schema: classes benign and malignant (+1), and
// the shipped public feature bounds (DefaultBounds), computed from the
// reference sample, rows the table does not hold.
func DefaultTable() (*Table, Schema, error) {
	text, _ := splitReference(wdbcCSV)
	t, err := ReadTable(bytes.NewReader(text), "embedded Wisconsin diagnostic breast cancer data (497 rows: the UCI file without every 8th row, the public sample of its bounds)")
	if err != nil {
		return nil, Schema{}, err
	}
	return t, Schema{Label: DefaultLabel, Classes: []string{"benign", "malignant"}, Bounds: DefaultBounds()}, nil
}

// DefaultReference returns the public reference sample of the embedded
// breast cancer file: its data rows at positions 0, ReferenceStride, ...
// (72 rows), from which the shipped bounds were computed; DefaultTable
// holds the others.
func DefaultReference() (*Table, error) {
	_, ref := splitReference(wdbcCSV)
	return ReadTable(bytes.NewReader(ref), "reference sample of the embedded Wisconsin diagnostic breast cancer data (every 8th row of the UCI file)")
}

// splitReference splits a CSV text without quoted line breaks into the
// header with the data rows outside the reference sample, and the header
// with the reference rows (positions 0, ReferenceStride, ...).
func splitReference(text []byte) (table, ref []byte) {
	lines := bytes.SplitAfter(text, []byte("\n"))
	table, ref = bytes.Clone(lines[0]), bytes.Clone(lines[0])
	for i, l := range lines[1:] {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if i%ReferenceStride == 0 {
			ref = append(ref, l...)
		} else {
			table = append(table, l...)
		}
	}
	return table, ref
}

// Encoded is a table parsed against a schema: the raw feature values, the
// encoded labels and which rows are null rows.
type Encoded struct {
	// Features names the feature columns, in table order.
	Features []string
	// X holds the N x D raw feature values, row-major: NaN for a missing
	// numeric cell (IsMissing).
	X []float64
	// Y holds the encoded labels: -1 and +1 for a binary task, the class
	// index for a multiclass task, the value (clamped to the label bound)
	// for regression.
	Y []float64
	// Null marks the rows whose label is not declared (or, for
	// regression, not a finite number).
	Null []bool
	N, D int
	// Categories[j] lists the declared categories of feature j when it is
	// categorical (nil for a numeric feature; nil when none is): X then
	// holds the index of the cell's category among them, or -1 for a cell
	// that is not a declared category.
	Categories [][]string
}

// Row returns the raw feature values of row i.
func (e *Encoded) Row(i int) []float64 { return e.X[i*e.D : (i+1)*e.D] }

// Encode parses the table against the schema. Feature cells must be finite
// numbers or missing (IsMissing, kept as NaN; the domain of the guarantee
// is well-formed files: a malformed cell is an error wrapping ErrFormat
// that names its line, data row and column and quotes it), but in the
// columns the schema declares
// categorical, whose cells become the index of their category (matched by
// text as classes are) or -1 for any other text; a declared categorical
// column that the table does not have is an error wrapping ErrSchema. A label outside the declared classes
// (classification: the cell's text is not a class name; "1.0" is not the
// class "1") or not a finite number (regression) makes the row a null row;
// a regression label is clamped to the label bound.
func (t *Table) Encode(s Schema, task losses.Task) (*Encoded, error) {
	return t.EncodeText(s, task, TextError)
}

// TextCells says what EncodeText does with a cell of a numeric feature
// column that is neither a finite number nor missing (a text cell).
type TextCells int

const (
	// TextError refuses it (Encode).
	TextError TextCells = iota
	// TextMark keeps it as +Inf, which no number cell holds, for a step
	// that decides the column's type (privbounds.CentreCounts counts it
	// above every number).
	TextMark
	// TextMissing keeps it as NaN, a missing cell.
	TextMissing
)

// EncodeText is Encode with the text cells of the numeric feature columns
// handled as text says.
func (t *Table) EncodeText(s Schema, task losses.Task, text TextCells) (*Encoded, error) {
	if t == nil || len(t.Columns) == 0 {
		return nil, fmt.Errorf("%w: no table", ErrFormat)
	}
	label := slices.Index(t.Columns, s.Label)
	if label < 0 {
		return nil, fmt.Errorf("%w: no label column %q; the columns are %s", ErrSchema, s.Label, strings.Join(t.Columns, ", "))
	}
	if len(t.Columns) < 2 {
		return nil, fmt.Errorf("%w: no feature column besides the label %q", ErrSchema, s.Label)
	}
	if len(t.Columns) != t.ncol && t.n > 0 {
		return nil, formatErr(t.Source, "the header has %d names for %d columns", len(t.Columns), t.ncol)
	}
	e := &Encoded{N: t.n, D: len(t.Columns) - 1}
	for j, c := range t.Columns {
		if j != label {
			e.Features = append(e.Features, c)
		}
	}
	for _, c := range s.Categories {
		if !slices.Contains(e.Features, c.Column) {
			return nil, fmt.Errorf("%w: the schema declares column %q categorical, but %s has no such feature column; the columns are %s", ErrSchema, c.Column, t.Source, strings.Join(t.Columns, ", "))
		}
	}
	if t.n == 0 {
		return nil, formatErr(t.Source, "no data rows")
	}
	var cat []bool // by feature
	if len(s.Categories) > 0 {
		cat = make([]bool, e.D)
		e.Categories = make([][]string, e.D)
		for j, f := range e.Features {
			if c, ok := s.Categorical(f); ok {
				cat[j], e.Categories[j] = true, slices.Clone(c.Values)
			}
		}
	}
	e.X = make([]float64, e.N*e.D)
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		x := e.X[i*e.D : (i+1)*e.D]
		copy(x, row[:label])
		copy(x[label:], row[label+1:])
		for j, v := range x {
			if math.IsNaN(v) && (cat == nil || !cat[j]) {
				c := j
				if c >= label {
					c++
				}
				switch {
				case IsMissing(t.Cell(i, c)):
					continue // NaN: a missing cell, which the feature map reads as such
				case text == TextMark:
					x[j] = math.Inf(1)
					continue
				case text == TextMissing:
					continue
				}
				return nil, formatErr(t.Source, "%s, column %q: %q is not a finite number (a missing cell is empty or one of %s; declare a column of categories in the schema, or leave the column out: train --schema, --ignore)", t.position(i), t.Columns[c], t.Cell(i, c), strings.Join(missingTokens, " "))
			}
		}
	}
	for j, vals := range e.Categories {
		if vals == nil {
			continue
		}
		col := j
		if col >= label {
			col++
		}
		if c, _ := s.Categorical(e.Features[j]); c.Hash > 0 {
			for i := range t.n {
				e.X[i*e.D+j] = float64(c.Index(t.cellView(i, col)))
			}
			continue
		}
		for i, k := range t.match(col, vals) {
			e.X[i*e.D+j] = float64(k)
		}
	}
	e.Y = make([]float64, e.N)
	e.Null = make([]bool, e.N)
	if task == losses.Regression {
		for i := range t.n {
			v := t.vals[i*t.ncol+label]
			if math.IsNaN(v) {
				e.Null[i] = true
				continue
			}
			if b := s.LabelBound; b > 0 {
				v = math.Max(-b, math.Min(b, v))
			}
			e.Y[i] = v
		}
		return e, nil
	}
	for i, k := range t.match(label, s.Classes) {
		switch {
		case k < 0:
			e.Null[i] = true
			if task == losses.Binary {
				e.Y[i] = -1
			}
		case task == losses.Multiclass:
			e.Y[i] = float64(k)
		case k == 0:
			e.Y[i] = -1
		default:
			e.Y[i] = 1
		}
	}
	return e, nil
}

// match returns, for every row, the index in names of the text of its
// cell in column j, or -1 if no name is that text. If a text is named
// twice, the last index is given.
func (t *Table) match(j int, names []string) []int32 {
	byText := make(map[string]int32, len(names))
	byValue := make(map[uint64]int32, len(names))
	for k, name := range names {
		byText[name] = int32(k)
		if v, kind := parseCell(name); kind == number {
			byValue[math.Float64bits(v)] = int32(k)
		}
	}
	out := make([]int32, t.n)
	for i := range t.n {
		out[i] = -1
		// A cell with a text (a NaN value, or a number spelled
		// otherwise) is matched by the text below.
		if k, ok := byValue[math.Float64bits(t.vals[i*t.ncol+j])]; ok {
			out[i] = k
		}
	}
	c := t.text[j]
	if c == nil {
		return out
	}
	byCode := make([]int32, len(c.ends)+1) // code -> index+1, 0 unknown
	c.each(0, t.n, func(i int, code int32) {
		m := byCode[code]
		if m == 0 {
			m = -1
			if k, ok := byText[c.text(code)]; ok {
				m = k + 1
			}
			byCode[code] = m
		}
		if m < 0 {
			out[i] = -1
		} else {
			out[i] = m - 1
		}
	})
	return out
}

// values returns the distinct texts of column j, sorted by SortClassNames.
func (t *Table) values(j int) []string {
	c := t.text[j]
	hasText := make([]bool, t.n)
	var used map[int32]bool
	c.each(0, t.n, func(i int, code int32) {
		if used == nil {
			used = make(map[int32]bool)
		}
		hasText[i] = true
		used[code] = true
	})
	set := make(map[string]bool)
	for code := range used {
		set[c.text(code)] = true
	}
	nums := make(map[uint64]bool)
	for i := range t.n {
		if !hasText[i] {
			nums[math.Float64bits(t.vals[i*t.ncol+j])] = true
		}
	}
	out := make([]string, 0, len(set)+len(nums))
	for s := range set {
		out = append(out, strings.Clone(s))
	}
	for b := range nums {
		out = append(out, strconv.FormatFloat(math.Float64frombits(b), 'f', -1, 64))
	}
	SortClassNames(out)
	return out
}

// LabelValues returns the distinct texts of the label column, sorted by
// SortClassNames (nil without such a column). It reads the data: only a
// non-private run may call it.
func (t *Table) LabelValues(label string) []string {
	j := slices.Index(t.Columns, label)
	if j < 0 || j >= t.ncol {
		return nil
	}
	return t.values(j)
}

// ObservedClasses returns the classes of the label column as the rows show
// them, sorted (datasets.SortClassNames), for a non-private fit that has
// not declared its classes: with positive (binary only) that class is put
// last, where it is encoded +1. It reads the data, so a private fit must
// not use it: its classes would then leak which labels occur. loss nil
// means logistic for two classes and softmax for more.
func ObservedClasses(t *Table, label, positive string, loss losses.Loss) ([]string, error) {
	if slices.Index(t.Columns, label) < 0 {
		return nil, fmt.Errorf("%w: no label column %q; the columns are %s", ErrSchema, label, strings.Join(t.Columns, ", "))
	}
	c := t.LabelValues(label)
	binary := loss != nil && loss.Task() == losses.Binary || loss == nil && len(c) == 2
	switch {
	case len(c) == 0:
		return nil, fmt.Errorf("%w: label column %q has no rows", ErrSchema, label)
	case len(c) < 2:
		return nil, fmt.Errorf("%w: label column %q has a single class %q", ErrSchema, label, c[0])
	case binary && len(c) != 2:
		return nil, fmt.Errorf("%w: binary label column %q has %d classes (%s), want 2", ErrSchema, label, len(c), strings.Join(c, ", "))
	case positive != "" && !binary:
		return nil, fmt.Errorf("%w: a positive class applies to binary tasks", ErrSchema)
	case positive != "":
		i := slices.Index(c, positive)
		if i < 0 {
			return nil, fmt.Errorf("%w: positive class %q is not in label column %q (classes %s)", ErrSchema, positive, label, strings.Join(c, ", "))
		}
		c[0], c[1] = c[1-i], positive
	}
	return c, nil
}
