package datasets

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// CSVOptions says how to read a CSV file with ReadCSV.
type CSVOptions struct {
	// Label is the name of the label column. Required. Every other column
	// is a numeric feature.
	Label string
	// Task says how to encode the labels. The zero value is losses.Binary:
	//   - losses.Binary: exactly two distinct class names, encoded -1 and +1.
	//     Without Positive, the names are sorted (numerically when all are
	//     numbers) and the first is -1, so the
	//     mapping does not depend on the order of the rows.
	//   - losses.Multiclass: K >= 2 class names, sorted (numerically when
	//     all are numbers), encoded 0..K-1.
	//   - losses.Regression: the label is parsed as a finite float64.
	Task losses.Task
	// Positive, for binary tasks, names the class encoded +1; the other
	// class is -1. Empty means the larger name in sort order is +1.
	Positive string
}

// ReadCSV reads a data set from CSV, in the format of TableReader: a
// header row with unique column names, then one example per row. Feature
// cells must parse as finite float64 values; the label column is encoded
// as opts.Task says, and Classes lists the class names by label index (nil
// for regression).
//
// Errors about the content wrap ErrFormat and give the line (1-based, the
// header is line 1) and the column where they apply.
func ReadCSV(r io.Reader, opts CSVOptions) (*Dataset, error) {
	if opts.Label == "" {
		return nil, fmt.Errorf("%w: no label column given", ErrInvalid)
	}
	switch opts.Task {
	case losses.Binary, losses.Multiclass, losses.Regression:
	default:
		return nil, fmt.Errorf("%w: unknown task %v", ErrInvalid, opts.Task)
	}
	return readCSV(r, opts, false)
}

// readCSV is ReadCSV; with allQuoted every line goes through encoding/csv
// (the reference the tests compare the in-place parsing with).
func readCSV(r io.Reader, opts CSVOptions, allQuoted bool) (*Dataset, error) {
	tr, err := newTableReader(r, "", allQuoted)
	if err != nil {
		return nil, err
	}
	label, names, err := featureColumns(tr.columns, opts.Label)
	if err != nil {
		return nil, err
	}
	t, err := tr.Read(0)
	if err == io.EOF {
		return nil, fmt.Errorf("%w: no data rows after the header", ErrFormat)
	}
	if err != nil {
		return nil, err
	}
	if err := t.checkFeatures(label, opts.Label); err != nil {
		return nil, err
	}
	y, classes, note, err := encodeLabels(t, label, opts)
	if err != nil {
		return nil, err
	}
	return &Dataset{
		X:        t.dropColumn(label),
		Y:        y,
		Features: names,
		Classes:  classes,
		Notes:    []string{note},
	}, nil
}

// ReadCSVFile reads the CSV file at path with ReadCSV.
func ReadCSVFile(path string, opts CSVOptions) (*Dataset, error) {
	f, err := OpenData(path)
	if errors.Is(err, ErrFormat) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	ds, err := ReadCSV(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ds, nil
}

// noLabel is the error, wrapping ErrSchema, of a label that names no
// column of the header: it lists the columns and, for a header of one
// column holding a ';' or a tab, says the file is not comma-separated,
// and for a header of a quarter numbers or more, that it may be a data row.
func noLabel(label string, header []string) error {
	hint := ""
	numbers := 0
	for _, c := range header {
		if _, err := strconv.ParseFloat(strings.TrimSpace(c), 64); err == nil {
			numbers++
		}
	}
	switch {
	case len(header) == 1 && strings.ContainsAny(header[0], ";\t"):
		hint = " (one column: the file is separated by ';' or tabs, not commas; save it as CSV)"
	case 4*numbers >= len(header):
		hint = " (the first line holds numbers: if it is a data row, name the columns, as with train --header a,b,...)"
	}
	return fmt.Errorf("%w: no label column %q; the columns are %s%s", ErrSchema, label, strings.Join(header, ", "), hint)
}

// featureColumns returns the index of the label column of a header and
// the feature names.
func featureColumns(header []string, label string) (int, []string, error) {
	labelCol := slices.Index(header, label)
	if labelCol < 0 {
		return 0, nil, noLabel(label, header)
	}
	if len(header) < 2 {
		return 0, nil, fmt.Errorf("%w: header: no feature column besides the label %q", ErrFormat, label)
	}
	names := make([]string, 0, len(header)-1)
	for j, name := range header {
		if j != labelCol {
			names = append(names, name)
		}
	}
	return labelCol, names, nil
}

// checkFeatures returns an error about the first cell, in file order, that
// is a feature cell but not a finite number or an empty label.
func (t *Table) checkFeatures(label int, name string) error {
	empty := -1
	if c := t.text[label]; c != nil {
		c.Each(0, t.n, func(i int, k int32) {
			if empty < 0 && c.Text(k) == "" {
				empty = i
			}
		})
	}
	for i := range t.n {
		if i == empty {
			for j := range label {
				if math.IsNaN(t.vals[i*t.ncol+j]) {
					return t.cellError(i, j)
				}
			}
			return formatErr("", "%w", lineErr(t.Line(i), label+1, name, "empty label"))
		}
		for j, v := range t.vals[i*t.ncol : (i+1)*t.ncol] {
			if math.IsNaN(v) && j != label {
				return t.cellError(i, j)
			}
		}
	}
	return nil
}

// cellError says that cell (i, j) is not a finite number, and that this
// reader takes numbers only.
func (t *Table) cellError(i, j int) error {
	return formatErr("", "%w", lineErr(t.Line(i), j+1, t.Columns[j], "%q is not a finite number (this reader takes numeric features, none missing)", t.Cell(i, j)))
}

// dropColumn returns the matrix of the table's values without column j,
// in the table's storage: t is left without rows.
func (t *Table) dropColumn(j int) *mat.Dense {
	n, c, d := t.n, t.ncol, t.ncol-1
	v := t.vals
	for i := range n {
		copy(v[i*d:i*d+j], v[i*c:i*c+j])
		copy(v[i*d+j:(i+1)*d], v[i*c+j+1:(i+1)*c])
	}
	*t = *newTable(t.Columns, t.Source, t.First)
	return mat.NewDense(n, d, v[:n*d:n*d])
}

// encodeLabels encodes the cells of label column j of t for opts.Task and
// returns the labels, the class names (nil for regression) and a note on
// the encoding.
func encodeLabels(t *Table, j int, opts CSVOptions) ([]float64, []string, string, error) {
	y := make([]float64, t.n)
	if opts.Task == losses.Regression {
		for i := range t.n {
			v, ok := t.Value(i, j)
			if !ok {
				return nil, nil, "", formatErr("", "%w", lineErr(t.Line(i), j+1, opts.Label, "label %q is not a finite number", t.Cell(i, j)))
			}
			y[i] = v
		}
		return y, nil, fmt.Sprintf("label %q read as a real-valued regression target", opts.Label), nil
	}
	classes := t.values(j)
	if len(classes) < 2 {
		return nil, nil, "", fmt.Errorf("%w: label column %q has a single class %q", ErrFormat, opts.Label, classes[0])
	}
	if opts.Task == losses.Multiclass {
		for i, k := range t.match(j, classes) {
			y[i] = float64(k)
		}
		return y, classes, fmt.Sprintf("label %q encoded as class indices 0..%d in sorted order: %s", opts.Label, len(classes)-1, strings.Join(classes, ", ")), nil
	}
	if len(classes) != 2 {
		return nil, nil, "", fmt.Errorf("%w: binary label column %q has %d classes (%s), want 2 (more classes take the softmax loss)", ErrFormat, opts.Label, len(classes), strings.Join(classes, ", "))
	}
	if opts.Positive != "" {
		switch opts.Positive {
		case classes[1]:
		case classes[0]:
			classes[0], classes[1] = classes[1], classes[0]
		default:
			return nil, nil, "", fmt.Errorf("%w: positive class %q is not in label column %q (classes %s)", ErrFormat, opts.Positive, opts.Label, strings.Join(classes, ", "))
		}
	}
	for i, k := range t.match(j, classes) {
		y[i] = float64(2*k - 1)
	}
	return y, classes, fmt.Sprintf("label %q encoded %s = -1, %s = +1", opts.Label, classes[0], classes[1]), nil
}
