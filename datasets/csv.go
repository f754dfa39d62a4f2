package datasets

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets/internal/dataerr"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
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

// ReadCSV reads a data set from CSV: a header row with unique column names,
// then one example per row. Feature cells must parse as finite float64
// values; the label column is encoded as opts.Task says, and Classes lists the
// class names by label index (nil for regression). Surrounding spaces of cells
// and a UTF-8 byte order mark are ignored.
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
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a clearer message
	cr.TrimLeadingSpace = true

	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty file, want a header row", ErrFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
	}
	labelCol, names, err := parseHeader(header, opts.Label)
	if err != nil {
		return nil, err
	}
	ncol := len(header)
	d := ncol - 1

	var (
		feats  []float64
		labels []string
		lines  []int // line of each row, for error messages
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != ncol {
			return nil, fmt.Errorf("%w: line %d has %d fields, the header has %d", ErrFormat, line, len(rec), ncol)
		}
		for j, cell := range rec {
			cell = strings.TrimSpace(cell)
			if j == labelCol {
				if cell == "" {
					return nil, fmt.Errorf("%w: line %d: empty label in column %q", ErrFormat, line, opts.Label)
				}
				labels = append(labels, cell)
				lines = append(lines, line)
				continue
			}
			v, ok := check.ParseFinite(cell)
			if !ok {
				return nil, fmt.Errorf("%w: line %d, column %d (%q): %q is not a finite number", ErrFormat, line, j+1, header[j], cell)
			}
			feats = append(feats, v)
		}
	}
	n := len(labels)
	if n == 0 {
		return nil, fmt.Errorf("%w: no data rows after the header", ErrFormat)
	}
	y, classes, note, err := encodeLabels(labels, lines, opts)
	if err != nil {
		return nil, err
	}
	return &Dataset{
		X:        mat.NewDense(n, d, feats),
		Y:        y,
		Features: names,
		Classes:  classes,
		Notes:    []string{note},
	}, nil
}

// ReadCSVFile reads the CSV file at path with ReadCSV.
func ReadCSVFile(path string, opts CSVOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("datasets: %s is a directory, not a CSV file", path)
	}
	defer f.Close()
	ds, err := ReadCSV(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ds, nil
}

// parseHeader checks the header and returns the index of the label column
// and the feature names.
func parseHeader(header []string, label string) (int, []string, error) {
	seen := make(map[string]int, len(header))
	labelCol := -1
	for j := range header {
		name := strings.TrimSpace(header[j])
		if j == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		header[j] = name
		if name == "" {
			return 0, nil, fmt.Errorf("%w: header: column %d has no name", ErrFormat, j+1)
		}
		if k, dup := seen[name]; dup {
			return 0, nil, fmt.Errorf("%w: header: columns %d and %d are both named %q", ErrFormat, k+1, j+1, name)
		}
		seen[name] = j
		if name == label {
			labelCol = j
		}
	}
	if labelCol < 0 {
		return 0, nil, fmt.Errorf("%w: no label column %q; the columns are %s", ErrFormat, label, strings.Join(header, ", "))
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

// encodeLabels encodes the label cells for opts.Task and returns the labels,
// the class names (nil for regression) and a note on the encoding. lines[i]
// is the file line of cells[i].
func encodeLabels(cells []string, lines []int, opts CSVOptions) ([]float64, []string, string, error) {
	y := make([]float64, len(cells))
	if opts.Task == losses.Regression {
		for i, c := range cells {
			v, ok := check.ParseFinite(c)
			if !ok {
				return nil, nil, "", fmt.Errorf("%w: line %d: label %q in column %q is not a finite number", ErrFormat, lines[i], c, opts.Label)
			}
			y[i] = v
		}
		return y, nil, fmt.Sprintf("label %q read as a real-valued regression target", opts.Label), nil
	}
	classes := distinctSorted(cells)
	if len(classes) < 2 {
		return nil, nil, "", fmt.Errorf("%w: label column %q has a single class %q", ErrFormat, opts.Label, classes[0])
	}
	if opts.Task == losses.Multiclass {
		index := make(map[string]int, len(classes))
		for k, c := range classes {
			index[c] = k
		}
		for i, c := range cells {
			y[i] = float64(index[c])
		}
		return y, classes, fmt.Sprintf("label %q encoded as class indices 0..%d in sorted order: %s", opts.Label, len(classes)-1, strings.Join(classes, ", ")), nil
	}
	if len(classes) != 2 {
		return nil, nil, "", fmt.Errorf("%w: binary label column %q has %d classes (%s), want 2", ErrFormat, opts.Label, len(classes), strings.Join(classes, ", "))
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
	for i, c := range cells {
		y[i] = -1
		if c == classes[1] {
			y[i] = 1
		}
	}
	return y, classes, fmt.Sprintf("label %q encoded %s = -1, %s = +1", opts.Label, classes[0], classes[1]), nil
}

// distinctSorted returns the distinct values of s in the order of
// SortClassNames.
func distinctSorted(s []string) []string {
	set := make(map[string]struct{})
	for _, v := range s {
		set[v] = struct{}{}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	SortClassNames(out)
	return out
}
