package datasets

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// The CSV dialect of every reader of this package (ReadTable, TableReader,
// ReadCSV): RFC 4180 as encoding/csv reads it with TrimLeadingSpace, every
// cell also trimmed of trailing white space, a UTF-8 byte order mark at the
// start of the input ignored. Records end at \n or \r\n, empty lines are
// skipped, a quoted field may hold commas, doubled quotes and line breaks.

// records splits CSV input into records. Lines without a double quote,
// the common case, are split in place; from the first line with a quote on,
// the rest of the input goes through encoding/csv. Both give the records
// encoding/csv gives: lines end at \n, a \r before it and a \r at the end
// of the input are dropped, empty lines are skipped.
type records struct {
	br *bufio.Reader
	// cr reads the rest of the input from the first line with a quote on;
	// its line 1 is file line offset+1.
	cr     *csv.Reader
	limit  *recordLimit // under cr
	offset int
	num    int    // the file line of the last line split in place
	long   []byte // a line longer than the buffer
	cells  []string
	// read counts the bytes split in place, for the size estimates.
	read int64
	// empty counts the empty lines since the last record (MaxEmptyRun).
	empty int
}

// The caps of a data CSV (ReadTable, TableReader, ReadCSV and the files
// they read), checked as the input is read (internal/inputcap): a longer
// line, a header of more columns or more lines is an error wrapping
// ErrFormat, found in bounded time and memory, not an unbounded
// allocation (a binary file, /dev/zero, a file without line ends). A data
// CSV has no cap on its bytes: it may be many GB.
const (
	// MaxLineBytes is the longest line (or record of quoted cells over
	// several lines) of a data CSV: room for MaxColumns cells of 64 bytes.
	MaxLineBytes = 64 * MaxColumns
	// MaxColumns is the most columns the header of a data CSV may name.
	MaxColumns = 1 << 17
	// MaxRows is the most data rows a table may hold.
	MaxRows = math.MaxInt32 - 1
	// MaxDataLines is the most lines a data CSV may hold, empty lines
	// and the lines of quoted cells counted.
	MaxDataLines = 1 << 32
	// MaxEmptyRun is the most empty lines in a row a data CSV may hold: a
	// stream of line ends alone is refused after a megabyte, not after
	// MaxDataLines.
	MaxEmptyRun = 1 << 20
)

// dataCaps are the caps of a data CSV.
var dataCaps = inputcap.Caps{Kind: "data CSV", Line: MaxLineBytes, Lines: MaxDataLines}

// OpenData opens the data CSV at path for reading: a directory is refused
// (an error wrapping ErrFormat). The caps of a data CSV (MaxLineBytes,
// MaxDataLines) are checked by the readers of this package as they read;
// a reader of another layout reads through NewDataReader.
func OpenData(path string) (*os.File, error) {
	f, err := inputcap.Open(path, dataCaps)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return f, err
}

// NewDataReader returns r read under the caps of a data CSV
// (MaxLineBytes, MaxDataLines): a read fails with an error that names the
// cap once one is passed. The readers of this package read through it, and
// a reader of another layout of data (datasets/paper) reads through it too.
func NewDataReader(r io.Reader) io.Reader { return inputcap.NewReader(r, dataCaps) }

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

// newRecords returns the records of r, a leading byte order mark skipped.
// With allQuoted every line goes through encoding/csv (the reference the
// tests compare the in-place splitting with). Input beyond the caps of a
// data CSV is an error.
func newRecords(r io.Reader, allQuoted bool) *records {
	br := bufio.NewReaderSize(NewDataReader(r), 1<<16)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	rs := &records{br: br}
	if allQuoted {
		rs.setCSV(br)
	}
	return rs
}

// setCSV reads the rest of the records from r with encoding/csv.
func (rs *records) setCSV(r io.Reader) {
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

// next returns the next record and the file line it starts on; io.EOF
// after the last. A line without quotes comes as line (its line end
// removed, not empty, valid until the next call) for the caller to split
// at the commas (split, or Table.appendLine), any other record as cells,
// trimmed of surrounding white space, valid until the next call. Other
// errors are the reader's or encoding/csv's (a *csv.ParseError with file
// lines).
func (rs *records) next() (line []byte, cells []string, num int, err error) {
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
		rs.read += int64(len(line))
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
			return nil, nil, 0, fmt.Errorf("more than %d empty lines in a row (from line %d): not a CSV file of rows", MaxEmptyRun, rs.num-MaxEmptyRun)
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

// split returns the cells of a line without quotes, trimmed of surrounding
// white space; they share the line's bytes.
func (rs *records) split(line []byte) []string {
	rs.cells = rs.cells[:0]
	for {
		i := bytes.IndexByte(line, ',')
		cell := line
		if i >= 0 {
			cell = line[:i]
		}
		rs.cells = append(rs.cells, strings.TrimSpace(bytesString(cell)))
		if i < 0 {
			return rs.cells
		}
		line = line[i+1:]
	}
}

// bytesString returns the string that shares b's bytes: it is valid as
// long as they are not changed.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// checkHeader applies the header rule of every reader of this package to
// the column names in place: each is trimmed of surrounding white space
// (and a byte order mark), and they must be at most MaxColumns, non-empty,
// distinct and names a model file can hold (CheckName). line is the
// header's file line, for the message.
func checkHeader(names []string, line int) error {
	if len(names) > MaxColumns {
		return fmt.Errorf("header (line %d): %d columns, more than the %d a data CSV may have", line, len(names), MaxColumns)
	}
	seen := make(map[string]int, len(names))
	for j := range names {
		name := strings.TrimSpace(names[j])
		if j == 0 {
			name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		}
		if name == "" {
			return fmt.Errorf("header (line %d): column %d has no name", line, j+1)
		}
		if err := CheckName(name); err != nil {
			advice := ""
			if errors.Is(err, errNotUTF8) {
				advice = ": save the file as UTF-8"
			}
			return fmt.Errorf("header (line %d): the name of column %d, %w%s", line, j+1, err, advice)
		}
		if k, dup := seen[name]; dup {
			return fmt.Errorf("header (line %d): columns %d and %d are both named %s", line, k+1, j+1, quoteName(name))
		}
		seen[name] = j
		names[j] = name
	}
	return nil
}

// sizeOf returns the number of bytes left in r when it can tell (a
// strings.Reader, a bytes.Reader, a regular file), and 0 otherwise.
func sizeOf(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case *os.File:
		st, err := v.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return 0
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0
		}
		return st.Size() - off
	}
	return 0
}

// cellKind says what a cell holds.
type cellKind uint8

const (
	// number: a finite number written as strconv.FormatFloat(v, 'f', -1,
	// 64) writes it (the shortest decimal that reads back as v, without
	// an exponent): the value gives back the text.
	number cellKind = iota
	// spelled: a finite number written another way ("1.0", "+1", "1e3",
	// "0.10"); its text is kept.
	spelled
	// text: not a finite number (a class name, an empty cell, "NaN").
	text
)

// parseCell returns the value of cell s (NaN unless it is a finite number,
// check.ParseFinite deciding) and its kind.
func parseCell(s string) (float64, cellKind) {
	v, k, n := scanNumber(s)
	switch n {
	case len(s):
		return v, k
	case noDigits:
		// strconv.ParseFloat reads no finite number without a digit
		// before an exponent or the end ("inf" and "nan" are not finite).
		return math.NaN(), text
	}
	return parseSlow(s)
}

// The lengths scanNumber returns when it reads no number.
const (
	noDigits = -2 // no digit where the number starts: no finite number
	slowPath = -1 // a number beyond the fast path, or none: ask ParseFloat
)

// scanNumber reads the number at the start of s: a plain decimal
// [+-]digits[.digits][e[+-]digits] with at most 19 significant digits
// whose value is m * 10^e with m < 2^53 and |e| <= 22. It returns its
// value, its kind and its length in bytes, or a length noDigits or
// slowPath. The value is m * 10^e or m / 10^-e, both operands exact, so one
// rounding gives the correctly rounded result that strconv.ParseFloat
// gives (Clinger's fast path, which ParseFloat also takes). A decimal
// -?(0|[1-9][0-9]*)(.[0-9]*[1-9])? with at most 15 significant digits is
// the shortest that reads back as its value (two decimals of 15 digits
// read as distinct float64 values), so it is a number without being
// formatted again.
func scanNumber(s string) (float64, cellKind, int) {
	i, neg, plain := 0, false, true
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		plain = neg
		i++
	}
	// mant collects the digits from the first that is not 0; past 19 of
	// them it wraps, and the count sends the cell to the slow path.
	var mant uint64
	start := i
	for i < len(s) && s[i] == '0' {
		i++
	}
	sig := i
	for ; i < len(s) && s[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(s[i]-'0')
	}
	digits, intDigits := i-sig, i-start
	if intDigits == 0 || intDigits > 1 && s[start] == '0' {
		plain = false
	}
	exp, fracDigits := 0, 0
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		if mant == 0 {
			for i < len(s) && s[i] == '0' {
				i++
			}
		}
		sig := i
		for ; i < len(s) && s[i]-'0' <= 9; i++ {
			mant = mant*10 + uint64(s[i]-'0')
		}
		digits += i - sig
		fracDigits = i - f
		exp = -fracDigits
		if fracDigits == 0 || s[i-1] == '0' {
			plain = false
		}
	}
	if intDigits+fracDigits == 0 {
		return 0, text, noDigits
	}
	if digits > 19 {
		return 0, text, slowPath
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		plain = false
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		e, ed := 0, 0
		for ; i < len(s) && s[i]-'0' <= 9 && ed < 4; i++ {
			e = e*10 + int(s[i]-'0')
			ed++
		}
		if ed == 0 || ed == 4 {
			return 0, text, slowPath
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant >= 1<<53 || exp < -22 || exp > 22 {
		return 0, text, slowPath
	}
	v := float64(mant)
	if exp >= 0 {
		v *= pow10[exp]
	} else {
		v /= pow10[-exp]
	}
	if neg {
		v = -v
	}
	switch {
	case !plain:
		return v, spelled, i
	case digits <= 15:
		return v, number, i
	}
	return v, kindOf(s[:i], v), i
}

// parseSlow is parseCell by strconv.ParseFloat.
func parseSlow(s string) (float64, cellKind) {
	v, ok := check.ParseFinite(s)
	if !ok {
		return math.NaN(), text
	}
	return v, kindOf(s, v)
}

// kindOf returns number if s is the text strconv.FormatFloat(v, 'f', -1,
// 64) gives, and spelled otherwise.
func kindOf(s string, v float64) cellKind {
	var buf [32]byte
	if string(strconv.AppendFloat(buf[:0], v, 'f', -1, 64)) == s {
		return number
	}
	return spelled
}

// parseFinite returns check.ParseFinite(s) by parseCell.
func parseFinite(s string) (float64, bool) {
	v, k := parseCell(s)
	return v, k != text
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
