package rawcsv

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// The CSV dialect of every reader of package datasets (ReadTable,
// TableReader, ReadCSV): RFC 4180 as encoding/csv reads it with TrimLeadingSpace, every
// cell also trimmed of trailing white space, a UTF-8 byte order mark at the
// start of the input ignored. Records end at \n or \r\n, empty lines are
// skipped, a quoted field may hold commas, doubled quotes and line breaks.

// Records splits CSV input into records. Lines without a double quote,
// the common case, are split in place; from the first line with a quote on,
// the rest of the input goes through encoding/csv. Both give the records
// encoding/csv gives: lines end at \n, a \r before it and a \r at the end
// of the input are dropped, empty lines are skipped.
type Records struct {
	br *bufio.Reader
	// cr reads the rest of the input from the first line with a quote on;
	// its line 1 is file line offset+1.
	cr     *csv.Reader
	limit  *recordLimit // under cr
	offset int
	num    int    // the file line of the last line split in place
	long   []byte // a line longer than the buffer
	cells  []string
	// InPlace counts the bytes split in place, for the size estimates.
	InPlace int64
	// empty counts the empty lines since the last record (MaxEmptyRun).
	empty int
}

// The caps the splitter checks (datasets documents them as its
// MaxColumns, MaxLineBytes and MaxEmptyRun).
const (
	// MaxColumns is the most columns the header of a data CSV may name.
	MaxColumns = 1 << 17
	// MaxLineBytes is the longest line (or record of quoted cells over
	// several lines) of a data CSV: room for MaxColumns cells of 64 bytes.
	MaxLineBytes = 64 * MaxColumns
	// MaxEmptyRun is the most empty lines in a row a data CSV may hold.
	MaxEmptyRun = 1 << 20
)

// recordLimit fails once more than MaxLineBytes, plus the read-ahead of
// encoding/csv, are read for one record on the encoding/csv path: a quoted
// cell that never closes, over lines of any length, is refused.
type recordLimit struct {
	r io.Reader
	n int // bytes read since the last record ended
}

// errLongRecord is the error of a record longer than MaxLineBytes on the
// encoding/csv path.
var errLongRecord = fmt.Errorf("a record of quoted cells is longer than %s, the most a line of a data CSV may hold: is a quote not closed?", inputcap.Size(MaxLineBytes))

// errEmptyRun is the error of more than MaxEmptyRun empty lines in a row,
// in a *csv.ParseError whose Line is the first of them.
var errEmptyRun = fmt.Errorf("more than %d empty lines in a row: not a CSV file of rows", MaxEmptyRun)

// csvReadAhead bounds what encoding/csv reads ahead of a record (the
// buffer of its bufio.Reader).
const csvReadAhead = 4096

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.n > MaxLineBytes+csvReadAhead {
		return 0, errLongRecord
	}
	n, err := l.r.Read(p)
	l.n += n
	return n, err
}

// NewRecords returns the records of r, a leading byte order mark skipped.
// With allQuoted every line goes through encoding/csv (the reference the
// tests compare the in-place splitting with). r is read under the caps of
// a data CSV (datasets.NewDataReader).
func NewRecords(r io.Reader, allQuoted bool) *Records {
	br := bufio.NewReaderSize(r, 1<<16)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	rs := &Records{br: br}
	if allQuoted {
		rs.setCSV(br)
	}
	return rs
}

// Quoted reports whether the rest of the input goes through encoding/csv
// (from the first line with a quote on): then InPlace no longer grows.
func (rs *Records) Quoted() bool { return rs.cr != nil }

// setCSV reads the rest of the records from r with encoding/csv.
func (rs *Records) setCSV(r io.Reader) {
	rs.limit = &recordLimit{r: r}
	rs.cr = newCSVReader(rs.limit)
}

func newCSVReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // the callers check, with a clearer message
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	return cr
}

// Next returns the next record and the file line it starts on; io.EOF
// after the last. A line without quotes comes as line (its line end
// removed, not empty, valid until the next call) for the caller to split
// at the commas (Split, or datasets' Table.appendLine), any other record as cells,
// trimmed of surrounding white space, valid until the next call. Other
// errors are the reader's or a *csv.ParseError with file lines (one of
// encoding/csv, or a run of more than MaxEmptyRun empty lines).
func (rs *Records) Next() (line []byte, cells []string, num int, err error) {
	for rs.cr == nil {
		line, err := rs.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			rs.long = append(rs.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = rs.br.ReadSlice('\n')
				rs.long = append(rs.long, line...)
			}
			line = rs.long
		}
		if err != nil && err != io.EOF {
			return nil, nil, 0, err
		}
		if len(line) == 0 && err == io.EOF {
			return nil, nil, 0, io.EOF
		}
		rs.num++
		if bytes.IndexByte(line, '"') >= 0 {
			rs.setCSV(io.MultiReader(bytes.NewReader(bytes.Clone(line)), rs.br))
			rs.offset = rs.num - 1
			break
		}
		rs.InPlace += int64(len(line))
		eof := err == io.EOF
		switch n := len(line); {
		case n > 0 && line[n-1] == '\n':
			line = line[:n-1]
			if n >= 2 && line[n-2] == '\r' {
				line = line[:n-2]
			}
		case eof && n > 0 && line[n-1] == '\r':
			line = line[:n-1]
		}
		if len(line) > 0 {
			rs.empty = 0
			return line, nil, rs.num, nil
		}
		if eof {
			return nil, nil, 0, io.EOF
		}
		if rs.empty++; rs.empty > MaxEmptyRun {
			from := rs.num - MaxEmptyRun
			return nil, nil, 0, &csv.ParseError{StartLine: from, Line: from, Err: errEmptyRun}
		}
	}
	rec, err := rs.cr.Read()
	rs.limit.n = 0
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			pe.StartLine += rs.offset
			pe.Line += rs.offset
		}
		return nil, nil, 0, err
	}
	num, _ = rs.cr.FieldPos(0)
	for j := range rec {
		rec[j] = strings.TrimSpace(rec[j])
	}
	return nil, rec, num + rs.offset, nil
}

// Split returns the cells of a line without quotes, trimmed of surrounding
// white space; they share the line's bytes.
func (rs *Records) Split(line []byte) []string {
	rs.cells = rs.cells[:0]
	for {
		i := bytes.IndexByte(line, ',')
		cell := line
		if i >= 0 {
			cell = line[:i]
		}
		rs.cells = append(rs.cells, strings.TrimSpace(BytesString(cell)))
		if i < 0 {
			return rs.cells
		}
		line = line[i+1:]
	}
}

// BytesString returns the string that shares b's bytes: it is valid as
// long as they are not changed.
func BytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
