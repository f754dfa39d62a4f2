package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/internal/dataerr"
)

var (
	// ErrFormat is wrapped by every error about the content of a data file:
	// an empty file, ragged rows, a non-numeric or non-finite feature, a
	// missing or unusable label column, duplicate column names.
	ErrFormat = dataerr.ErrFormat
	// ErrInvalid is wrapped by every error about an invalid argument to a
	// function of this package (a split fraction out of range, a non-finite
	// scale, mismatched shapes).
	ErrInvalid = dataerr.ErrInvalid
)

// ParseError is where a file could not be read, as encoding/csv's
// ParseError says it: the readers of a data CSV (ReadTable, TableReader,
// NewTable, ReadCSV, Table.Encode), of a bounds file (ReadBounds) and of a
// schema file (ReadCategories) return it inside an error that wraps
// ErrFormat or ErrSchema and names the source, so errors.As finds it:
//
//	var pe *datasets.ParseError
//	if errors.As(err, &pe) { ... pe.Line, pe.Column ... }
//
// A CSV syntax error of encoding/csv becomes a ParseError of its line
// (Column 0) whose Err is the *csv.ParseError's Err, with the byte of the
// line where it was found.
type ParseError struct {
	// Line is the file line, 1-based (the header is line 1 of a file that
	// has one); 0 for a header given apart from the file.
	Line int
	// Row is the data row, 1-based, when the error is about one (Encode,
	// NewTable); 0 otherwise.
	Row int
	// Column is the field of the line, 1-based; 0 when the error is about
	// the whole line (a ragged row, a CSV syntax error).
	Column int
	// Name is the name of the column where it is known (the header's);
	// Error then names the column by it, not by its number.
	Name string
	// Err is what is wrong there.
	Err error
}

// Error returns "line L, data row R, column C: what", each part there only
// when known, the column by its quoted name when known.
func (e *ParseError) Error() string {
	var parts []string
	if e.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", e.Line))
	}
	if e.Row > 0 {
		parts = append(parts, fmt.Sprintf("data row %d", e.Row))
	}
	switch {
	case e.Name != "":
		parts = append(parts, "column "+quoteName(e.Name))
	case e.Column > 0:
		parts = append(parts, fmt.Sprintf("column %d", e.Column))
	}
	return strings.Join(parts, ", ") + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *ParseError) Unwrap() error { return e.Err }

// lineErr returns the ParseError of line line and column col (0: the whole
// line), named name when known.
func lineErr(line, col int, name, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Column: col, Name: name, Err: fmt.Errorf(format, args...)}
}

// fromCSV returns err, but a *csv.ParseError becomes a ParseError of the
// line where the error was found, its Err naming the byte of that line
// and, for a record over several lines, the line the record starts on.
func fromCSV(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	out := &ParseError{Line: pe.Line, Err: pe.Err}
	switch {
	case pe.StartLine != pe.Line && pe.Column > 0:
		out.Err = fmt.Errorf("byte %d (record from line %d): %w", pe.Column, pe.StartLine, pe.Err)
	case pe.Column > 0:
		out.Err = fmt.Errorf("byte %d: %w", pe.Column, pe.Err)
	}
	return out
}
