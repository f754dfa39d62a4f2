package datasets

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/losses"
)

// Table is a data file as the user hands it over: a header of column names
// and the data rows as text cells. The pipeline's guarantee is about the
// rows of a Table: two tables are neighbours when they have the same header
// and the same number of rows and differ in one row.
type Table struct {
	// Columns holds the header, one unique name per column.
	Columns []string
	// Rows holds the data rows; every row has len(Columns) cells.
	Rows [][]string
	// Source describes where the table came from (a file name), for
	// messages and the model file.
	Source string
}

// ReadTable reads a table from CSV: a header row with unique, non-empty
// column names, then the data rows, each with as many cells as the header.
// Cells are trimmed of surrounding spaces; a UTF-8 byte order mark is
// ignored. Only the shape is checked here: the cells are parsed by Fit
// against the Schema. Errors wrap ErrFormat and give the line.
func ReadTable(r io.Reader, source string) (*Table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: %s: empty file, want a header row", ErrFormat, source)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: header: %w", ErrFormat, source, err)
	}
	seen := make(map[string]int, len(header))
	for j := range header {
		name := strings.TrimSpace(header[j])
		if j == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		if name == "" {
			return nil, fmt.Errorf("%w: %s: header: column %d has no name", ErrFormat, source, j+1)
		}
		if k, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: %s: header: columns %d and %d are both named %q", ErrFormat, source, k+1, j+1, name)
		}
		seen[name] = j
		header[j] = name
	}
	t := &Table{Columns: header, Source: source}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFormat, source, err)
		}
		if len(rec) != len(header) {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("%w: %s: line %d has %d fields, the header has %d", ErrFormat, source, line, len(rec), len(header))
		}
		for j := range rec {
			rec[j] = strings.TrimSpace(rec[j])
		}
		t.Rows = append(t.Rows, rec)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%w: %s: no data rows after the header", ErrFormat, source)
	}
	return t, nil
}

// ReadTableFile reads the CSV file at path with ReadTable.
func ReadTableFile(path string) (*Table, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%w: %s is a directory, not a CSV file", ErrFormat, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadTable(bytes.NewReader(data), path)
}

// DefaultTable returns the embedded Wisconsin diagnostic breast cancer data
// (569 rows, 30 features, label "diagnosis") as a Table, and its schema:
// classes benign and malignant (+1), and the shipped public feature bounds
// (DefaultBounds).
func DefaultTable() (*Table, Schema, error) {
	t, err := ReadTable(bytes.NewReader(DefaultCSV()), "embedded Wisconsin diagnostic breast cancer data")
	if err != nil {
		return nil, Schema{}, err
	}
	return t, Schema{Label: DefaultLabel, Classes: []string{"benign", "malignant"}, Bounds: DefaultBounds()}, nil
}

// Encoded is a table parsed against a schema: the raw feature values, the
// encoded labels and which rows are null rows.
type Encoded struct {
	// Features names the feature columns, in table order.
	Features []string
	// X holds the N x D raw feature values, row-major.
	X []float64
	// Y holds the encoded labels: -1 and +1 for a binary task, the class
	// index for a multiclass task, the value (clamped to the label bound)
	// for regression.
	Y []float64
	// Null marks the rows whose label is not declared (or, for
	// regression, not a finite number).
	Null []bool
	N, D int
}

// Row returns the raw feature values of row i.
func (e *Encoded) Row(i int) []float64 { return e.X[i*e.D : (i+1)*e.D] }

// Encode parses the table against the schema. Feature cells must be finite
// numbers (the domain of the guarantee is well-formed files: a malformed
// cell is an error that names its line). A label outside the declared
// classes (classification) or not a finite number (regression) makes the
// row a null row; a regression label is clamped to the label bound.
func (t *Table) Encode(s Schema, task losses.Task) (*Encoded, error) {
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
	e := &Encoded{N: len(t.Rows), D: len(t.Columns) - 1}
	for j, c := range t.Columns {
		if j != label {
			e.Features = append(e.Features, c)
		}
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%w: %s: no data rows", ErrFormat, t.Source)
	}
	index := make(map[string]float64, len(s.Classes))
	for k, c := range s.Classes {
		switch {
		case task == losses.Multiclass:
			index[c] = float64(k)
		case k == 0:
			index[c] = -1
		default:
			index[c] = 1
		}
	}
	e.X = make([]float64, 0, e.N*e.D)
	e.Y = make([]float64, e.N)
	e.Null = make([]bool, e.N)
	for i, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("%w: %s: data row %d has %d cells, the header has %d", ErrFormat, t.Source, i+1, len(row), len(t.Columns))
		}
		for j, cell := range row {
			if j == label {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: %s: data row %d, column %q: %q is not a finite number", ErrFormat, t.Source, i+1, t.Columns[j], cell)
			}
			e.X = append(e.X, v)
		}
		cell := row[label]
		if task == losses.Regression {
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				e.Null[i] = true
				continue
			}
			if b := s.LabelBound; b > 0 {
				v = math.Max(-b, math.Min(b, v))
			}
			e.Y[i] = v
			continue
		}
		v, ok := index[cell]
		if !ok {
			e.Null[i] = true
			if task == losses.Binary {
				v = -1
			}
		}
		e.Y[i] = v
	}
	return e, nil
}

// LabelValues returns the distinct values of the label column, sorted by
// SortClassNames (nil without such a column). It reads the data: only a
// non-private run may call it.
func (t *Table) LabelValues(label string) []string {
	j := slices.Index(t.Columns, label)
	if j < 0 {
		return nil
	}
	set := make(map[string]bool)
	for _, r := range t.Rows {
		set[r[j]] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	SortClassNames(out)
	return out
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
