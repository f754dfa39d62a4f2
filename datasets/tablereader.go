package datasets

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
)

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
// non-empty, distinct); its first record is then a data row. A first
// record that repeats the names (a header row) is an error wrapping
// ErrFormat.
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
	if err == nil && columns != nil && repeatsNames(t) {
		return nil, formatErr(path, "%w", lineErr(t.Line(0), 0, "", "the first line repeats the given column names: the file has a header row, read it without --header"))
	}
	return t, err
}

// repeatsNames reports whether the first data row of t holds its column
// names, cell by cell: a file with a header row read as one without.
func repeatsNames(t *Table) bool {
	for j, c := range t.Columns {
		if t.cellView(0, j) != c {
			return false
		}
	}
	return true
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
	rs      *rawcsv.Records
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
	raw, rec, line, err := tr.rs.Next()
	switch {
	case err == io.EOF:
		return nil, formatErr(source, "empty file, want a header row")
	case err != nil:
		return nil, formatErr(source, "header: %w", fromCSV(err))
	case raw != nil && bytes.Count(raw, comma) >= MaxColumns:
		// Refused before it is split into names.
		return nil, formatErr(source, "%w", lineErr(line, 0, "", "a header of more than the %d columns a data CSV may have", MaxColumns))
	case raw != nil:
		rec = tr.rs.Split(raw)
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
	start := tr.rs.InPlace
	for limit <= 0 || t.n < limit {
		raw, cells, line, err := tr.rs.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tr.err = formatErr(tr.source, "%w", fromCSV(err))
			return nil, tr.err
		}
		fields := len(cells)
		if raw != nil {
			fields = bytes.Count(raw, comma) + 1
		}
		if fields != t.ncol {
			tr.err = formatErr(tr.source, "%w", lineErr(line, 0, "", "%d fields, the header has %d", fields, t.ncol))
			return nil, tr.err
		}
		if tr.rows+t.n >= MaxRows {
			tr.err = formatErr(tr.source, "%w", lineErr(line, 0, "", "more than %d data rows, the most a table may hold", MaxRows))
			return nil, tr.err
		}
		if tr.size > 0 && !tr.rs.Quoted() && (t.n == sizeSample || t.n > sizeSample && len(t.vals)+t.ncol > cap(t.vals)) {
			// Room for the rows the rest of the input holds, estimated
			// from the length of the rows so far.
			capRows = t.reserve(tr.size-tr.rs.InPlace, float64(tr.rs.InPlace-start)/float64(t.n), limit)
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
// matrix is allocated once rather than grown by copies, and it is capped
// by the fewest bytes a row can have (a one-byte cell and a separator per
// column). The room is made, not grown: make takes a large slice's pages
// from the operating system as they come, zero until written, where
// slices.Grow would clear them all; so room never written costs address
// space, not memory. Nor is it advised onto huge pages (hugepage.Advise):
// each first write to a huge page then clears 2 MiB, which took a third
// more CPU time to read a file of 4,000,000 rows than on 4 kB pages.
func (t *Table) reserve(rest int64, perRow float64, limit int) int {
	more := int64(float64(rest)/perRow*1.25) + 16
	more = max(1, min(more, rest/int64(2*t.ncol)+1))
	if limit > 0 {
		more = min(more, int64(limit-t.n))
	}
	if want := len(t.vals) + int(more)*t.ncol; want > cap(t.vals) {
		vals := make([]float64, len(t.vals), want)
		copy(vals, t.vals)
		t.vals = vals
	}
	return t.n + int(more)
}
