package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/losses"
)

// ErrSchema is wrapped by every error about a schema that cannot be used:
// no label column, classes missing or repeated, bounds that are malformed
// or do not cover a feature column.
var ErrSchema = errors.New("datasets: invalid schema")

// Schema is what the user declares about the data before seeing it: the
// label column, the classes and the feature bounds. Everything in it is
// public: it is written into the model file and may shape the release
// (the number of classes sets the dimension of a softmax model) without
// costing privacy, because it does not depend on the rows.
type Schema struct {
	// Label is the name of the label column. Required.
	Label string `json:"label"`
	// Classes names the classes of a classification task, declared in
	// advance. For a binary task there are exactly two, and Classes[1] is
	// the class encoded +1; for a multiclass task Classes[k] is class index
	// k. A row whose label is not declared is kept as a null row (see
	// Fit); the classes are never read from the rows in a private run.
	// Nil for regression.
	Classes []string `json:"classes,omitempty"`
	// LabelBound is B in |y| <= B for regression: a private run clamps
	// every label to [-B, B] (a per-row map). Zero means unbounded (losses
	// whose constants do not need it only).
	LabelBound float64 `json:"label_bound,omitempty"`
	// Bounds declares, for feature columns, the interval [Lo, Hi] the
	// values are clamped to before scaling (Preprocess Bounds). Nil means
	// none declared.
	Bounds []Bound `json:"bounds,omitempty"`
	// All, when not nil, is the bound of every feature column that Bounds
	// does not name (its Column is ignored): one public range for all
	// columns. Nil means none.
	All *Bound `json:"all,omitempty"`
	// Categories declares the categorical feature columns and their
	// categories (ReadCategories). Such a column is one-hot encoded by the
	// feature map (a per-row map inside the guarantee); a cell whose text
	// is not a declared category maps to zero. Nil means none: every
	// feature is numeric.
	Categories []Categorical `json:"categories,omitempty"`
}

// Declared reports whether the schema declares feature bounds (Bounds or
// All).
func (s Schema) Declared() bool { return s.Bounds != nil || s.All != nil }

// Bound is the declared range of one feature column.
type Bound struct {
	Column string  `json:"column"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Validate returns an error wrapping ErrSchema unless the schema can be
// used with a loss of the given task: a label column, the classes the task
// needs (or none declared), distinct class names without surrounding
// spaces, a finite label bound, and finite bounds lo < hi of distinct
// columns; every name (label, classes, columns) one a model file can hold
// (CheckName).
func (s Schema) Validate(task losses.Task) error {
	if strings.TrimSpace(s.Label) == "" {
		return fmt.Errorf("%w: no label column", ErrSchema)
	}
	switch task {
	case losses.Binary:
		if len(s.Classes) != 2 && s.Classes != nil {
			return fmt.Errorf("%w: a binary task declares 2 classes, have %d (%s)", ErrSchema, len(s.Classes), strings.Join(s.Classes, ", "))
		}
	case losses.Multiclass:
		if len(s.Classes) < 2 && s.Classes != nil {
			return fmt.Errorf("%w: a multiclass task declares at least 2 classes, have %d", ErrSchema, len(s.Classes))
		}
	case losses.Regression:
		if s.Classes != nil {
			return fmt.Errorf("%w: a regression task has no classes, have %s", ErrSchema, strings.Join(s.Classes, ", "))
		}
	default:
		return fmt.Errorf("%w: unknown task %v", ErrSchema, task)
	}
	if err := CheckName(s.Label); err != nil {
		return fmt.Errorf("%w: the label's name, %w", ErrSchema, err)
	}
	seen := make(map[string]bool, len(s.Classes))
	for _, c := range s.Classes {
		if strings.TrimSpace(c) != c || c == "" {
			return fmt.Errorf("%w: class name %q is empty or has surrounding spaces", ErrSchema, c)
		}
		if err := CheckName(c); err != nil {
			return fmt.Errorf("%w: class name %w", ErrSchema, err)
		}
		if seen[c] {
			return fmt.Errorf("%w: class %q declared twice", ErrSchema, c)
		}
		seen[c] = true
	}
	if math.IsNaN(s.LabelBound) || math.IsInf(s.LabelBound, 0) || s.LabelBound < 0 {
		return fmt.Errorf("%w: label bound %v, want finite >= 0", ErrSchema, s.LabelBound)
	}
	if err := s.checkCategories(); err != nil {
		return err
	}
	if a := s.All; a != nil && !validRange(a.Lo, a.Hi) {
		return fmt.Errorf("%w: the bound of every column [%v, %v]: %s", ErrSchema, a.Lo, a.Hi, rangeProblem(a.Lo, a.Hi))
	}
	cols := make(map[string]bool, len(s.Bounds))
	for _, b := range s.Bounds {
		if cols[b.Column] && b.Column != "" {
			return fmt.Errorf("%w: column %q bounded twice", ErrSchema, b.Column)
		}
		if _, err := checkBound(b); err != nil {
			return fmt.Errorf("%w: %w", ErrSchema, err)
		}
		cols[b.Column] = true
	}
	return nil
}

// checkBound returns an error, and the field of its line of a bounds file
// (1 the column, 2 the range), unless b names a column CheckName accepts
// and bounds it by a usable range (validRange).
func checkBound(b Bound) (int, error) {
	if b.Column == "" {
		return 1, errors.New("a bound without a column name")
	}
	if err := CheckName(b.Column); err != nil {
		return 1, fmt.Errorf("bounded column %w", err)
	}
	if !validRange(b.Lo, b.Hi) {
		return 2, fmt.Errorf("column %q bounds [%v, %v]: %s", b.Column, b.Lo, b.Hi, rangeProblem(b.Lo, b.Hi))
	}
	return 0, nil
}

// rangeProblem says why [lo, hi] is not a usable range (validRange).
func rangeProblem(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return "want finite numbers"
	case !(lo < hi):
		return "want lo < hi"
	case math.IsInf(hi-lo, 0):
		return fmt.Sprintf("the width hi - lo overflows float64 (above %.3g): narrow the range", math.MaxFloat64)
	}
	return fmt.Sprintf("the width hi - lo is below %.3g, too small to scale onto [-1, 1] in float64 (2/(hi - lo) overflows): widen the range", MinRangeWidth)
}

// MinRangeWidth is the smallest width hi - lo of a usable range: the map
// scales by 2/(hi - lo), which must be finite.
const MinRangeWidth = 0x1p-1020

// validRange reports whether [lo, hi] is a usable range: finite, lo < hi,
// a finite width and a finite scale 2/(hi - lo).
func validRange(lo, hi float64) bool {
	return !math.IsNaN(lo) && !math.IsNaN(hi) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && lo < hi && !math.IsInf(hi-lo, 0) && hi-lo >= MinRangeWidth
}

// Bound returns the declared bound of column name: its line of Bounds, or
// else All (with Column set to name) unless the column is categorical.
func (s Schema) Bound(name string) (Bound, bool) {
	if b, ok := s.boundOf(name); ok {
		return b, true
	}
	if _, ok := s.Categorical(name); ok {
		return Bound{}, false
	}
	if s.All != nil {
		return Bound{Column: name, Lo: s.All.Lo, Hi: s.All.Hi}, true
	}
	return Bound{}, false
}

// boundOf returns the line of Bounds that names column name.
func (s Schema) boundOf(name string) (Bound, bool) {
	i := slices.IndexFunc(s.Bounds, func(b Bound) bool { return b.Column == name })
	if i >= 0 {
		return s.Bounds[i], true
	}
	return Bound{}, false
}

// ParseRange parses "lo,hi" (a range for every column, --bounds-all).
// Errors wrap ErrSchema.
func ParseRange(text string) (Bound, error) {
	parts := strings.Split(text, ",")
	if len(parts) != 2 {
		return Bound{}, fmt.Errorf("%w: range %q, want lo,hi", ErrSchema, text)
	}
	lo, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
	hi, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
	if err1 != nil || err2 != nil {
		return Bound{}, fmt.Errorf("%w: range %q, want lo,hi finite numbers with lo < hi", ErrSchema, text)
	}
	if !validRange(lo, hi) {
		return Bound{}, fmt.Errorf("%w: range %q: %s", ErrSchema, text, rangeProblem(lo, hi))
	}
	return Bound{Lo: lo, Hi: hi}, nil
}

// The caps of a bounds file (ReadBounds, ReadBoundsFile), checked as it is
// read (a regular file's size before it is read): a bounds file is small,
// a line per column, so a larger one is not a bounds file.
const (
	// MaxBoundsBytes is the most bytes a bounds file may hold.
	MaxBoundsBytes = 16 << 20
	// MaxBoundsLineBytes is the longest line of a bounds file.
	MaxBoundsLineBytes = 1 << 20
	// MaxBoundsLines is the most lines of a bounds file, comments and
	// empty lines counted.
	MaxBoundsLines = 1 << 20
)

// boundsCaps are the caps of a bounds file.
var boundsCaps = inputcap.Caps{Kind: "bounds file", Bytes: MaxBoundsBytes, Line: MaxBoundsLineBytes, Lines: MaxBoundsLines}

// ReadBounds reads feature bounds from CSV: one line per column,
// "column,lo,hi", with an optional header line "column,lo,hi". Errors wrap
// ErrSchema and a *ParseError of the line and the field (1 the column, 2
// lo, 3 hi; 0 the whole line): too few or many fields, a bound that is not
// a number, a range Validate refuses, a column bounded twice; input beyond
// the caps (MaxBoundsBytes, MaxBoundsLineBytes, MaxBoundsLines) is refused
// once it passes them.
func ReadBounds(r io.Reader) ([]Bound, error) {
	cr := csv.NewReader(inputcap.NewReader(r, boundsCaps))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	var out []Bound
	seen := make(map[string]int)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: bounds: %w", ErrSchema, fromCSV(err))
		}
		line, _ := cr.FieldPos(0)
		b, pe := readBound(rec, line, len(out) == 0, seen)
		switch {
		case pe == errHeader:
			continue
		case pe != nil:
			return nil, fmt.Errorf("%w: bounds: %w", ErrSchema, pe)
		}
		seen[b.Column] = line
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no bounds in the file", ErrSchema)
	}
	if err := (Schema{Label: "-", Bounds: out}).Validate(losses.Regression); err != nil {
		return nil, err
	}
	return out, nil
}

// errHeader is what readBound returns for the header line.
var errHeader = &ParseError{Err: errors.New("header")}

// readBound checks the fields of line line of a bounds file (first: no
// bound read before it; seen: the lines of the columns bounded so far) and
// returns its bound, errHeader for a header line "column,lo,hi", or a
// *ParseError of the field at fault.
func readBound(rec []string, line int, first bool, seen map[string]int) (Bound, *ParseError) {
	if len(rec) != 3 {
		return Bound{}, lineErr(line, 0, "", "%d fields, want column,lo,hi", len(rec))
	}
	b := Bound{Column: strings.TrimSpace(rec[0])}
	if first && strings.EqualFold(b.Column, "column") {
		return b, errHeader
	}
	for k, v := range []*float64{&b.Lo, &b.Hi} {
		var err error
		if *v, err = strconv.ParseFloat(strings.TrimSpace(rec[k+1]), 64); err != nil {
			return b, lineErr(line, k+2, []string{"lo", "hi"}[k], "%q is not a number", rec[k+1])
		}
	}
	if prev, ok := seen[b.Column]; ok {
		return b, lineErr(line, 1, "", "column %q already bounded on line %d", b.Column, prev)
	}
	if field, err := checkBound(b); err != nil {
		return b, &ParseError{Line: line, Column: field, Err: err}
	}
	return b, nil
}

// ReadBoundsFile reads the bounds file at path with ReadBounds; a regular
// file larger than MaxBoundsBytes is refused before it is read.
func ReadBoundsFile(path string) ([]Bound, error) {
	f, err := openSmall(path, boundsCaps)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := ReadBounds(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// openSmall opens the file at path, a small input with the caps c:
// inputcap.Open, its errors but a missing or unreadable file wrapping
// ErrSchema.
func openSmall(path string, c inputcap.Caps) (*os.File, error) {
	f, err := inputcap.Open(path, c)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return f, err
}
