package datasets

import (
	"errors"
	"fmt"
	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// The caps of a data CSV (ReadTable, TableReader, ReadCSV and the files
// they read), checked as the input is read (internal/inputcap): a longer
// line, a header of more columns or more lines is an error wrapping
// ErrFormat, found in bounded time and memory, not an unbounded
// allocation (a binary file, /dev/zero, a file without line ends). A data
// CSV has no cap on its bytes: it may be many GB.
const (
	// MaxLineBytes is the longest line (or record of quoted cells over
	// several lines) of a data CSV: room for MaxColumns cells of 64 bytes.
	MaxLineBytes = rawcsv.MaxLineBytes
	// MaxColumns is the most columns the header of a data CSV may name.
	MaxColumns = rawcsv.MaxColumns
	// MaxRows is the most data rows a table may hold.
	MaxRows = math.MaxInt32 - 1
	// MaxDataLines is the most lines a data CSV may hold, empty lines
	// and the lines of quoted cells counted.
	MaxDataLines = 1 << 32
	// MaxEmptyRun is the most empty lines in a row a data CSV may hold: a
	// stream of line ends alone is refused after a megabyte, not after
	// MaxDataLines.
	MaxEmptyRun = rawcsv.MaxEmptyRun
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

// checkHeader applies the header rule of every reader of this package to
// the column names in place: each is trimmed of surrounding white space
// (and a byte order mark), and they must be at most MaxColumns, non-empty,
// distinct and names a model file can hold (CheckName). line is the
// header's file line (0 for a header given apart from the file); the
// error is a *ParseError.
func checkHeader(names []string, line int) error {
	if len(names) > MaxColumns {
		return lineErr(line, 0, "", "a header of %d columns, more than the %d a data CSV may have", len(names), MaxColumns)
	}
	seen := make(map[string]int, len(names))
	for j := range names {
		name := strings.TrimSpace(names[j])
		if j == 0 {
			name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		}
		if name == "" {
			return lineErr(line, j+1, "", "no name in the header")
		}
		if err := CheckName(name); err != nil {
			advice := ""
			if errors.Is(err, errNotUTF8) {
				advice = ": save the file as UTF-8"
			}
			return &ParseError{Line: line, Column: j + 1, Err: fmt.Errorf("the header's name %w%s", err, advice)}
		}
		if k, dup := seen[name]; dup {
			return lineErr(line, j+1, "", "columns %d and %d are both named %s", k+1, j+1, quoteName(name))
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

// lineRun says that data rows row, row+1, ... of a table are on file lines
// line, line+1, ... up to the next run.
type lineRun struct{ row, line int }

// newRecords returns the records of r read under the caps of a data CSV,
// a leading byte order mark skipped; with allQuoted every line goes
// through encoding/csv (the reference the tests compare the in-place
// splitting with).
func newRecords(r io.Reader, allQuoted bool) *rawcsv.Records {
	return rawcsv.NewRecords(NewDataReader(r), allQuoted)
}
