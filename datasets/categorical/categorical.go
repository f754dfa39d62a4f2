package categorical

import (
	"fmt"
	"sort"

	"github.com/stabpriv/stabpriv/datasets"
)

// ErrUnknownCategory is returned when a value to encode was not seen when the
// encoder was fitted. It wraps datasets.ErrFormat.
var ErrUnknownCategory = fmt.Errorf("%w: unknown category", datasets.ErrFormat)

// OneHotEncoder maps categorical columns to indicator columns. The category
// order is deterministic: the distinct values of each column, sorted
// (byte-wise), so the same data always gives the same feature layout
// whatever the order of its rows.
type OneHotEncoder struct {
	// Names names the categorical columns.
	Names []string
	// Categories[j] lists the categories of column j in output order.
	Categories [][]string

	index []map[string]int // category -> position within its column's block
}

// FitOneHot returns an encoder for the categorical columns named by names,
// fitted on rows (each row holds one value per column). Fitting on all of the
// data a caller will encode (for example train and test together) keeps the
// columns the same for every split; a category seen only at encoding time is
// an error (ErrUnknownCategory).
func FitOneHot(names []string, rows [][]string) (*OneHotEncoder, error) {
	seen := make([]map[string]struct{}, len(names))
	for j := range seen {
		seen[j] = make(map[string]struct{})
	}
	for i, row := range rows {
		if len(row) != len(names) {
			return nil, fmt.Errorf("datasets: one-hot row %d has %d values, want %d", i, len(row), len(names))
		}
		for j, v := range row {
			seen[j][v] = struct{}{}
		}
	}
	e := &OneHotEncoder{
		Names:      append([]string(nil), names...),
		Categories: make([][]string, len(names)),
		index:      make([]map[string]int, len(names)),
	}
	for j := range names {
		cats := make([]string, 0, len(seen[j]))
		for v := range seen[j] {
			cats = append(cats, v)
		}
		sort.Strings(cats)
		e.Categories[j] = cats
		e.index[j] = make(map[string]int, len(cats))
		for k, c := range cats {
			e.index[j][c] = k
		}
	}
	return e, nil
}

// Width returns the number of indicator columns.
func (e *OneHotEncoder) Width() int {
	w := 0
	for _, c := range e.Categories {
		w += len(c)
	}
	return w
}

// FeatureNames returns the names of the indicator columns, "column=category".
func (e *OneHotEncoder) FeatureNames() []string {
	names := make([]string, 0, e.Width())
	for j, cats := range e.Categories {
		for _, c := range cats {
			names = append(names, e.Names[j]+"="+c)
		}
	}
	return names
}

// Encode writes the indicators of row into dst, which must have length
// Width(); it zeroes dst first.
func (e *OneHotEncoder) Encode(dst []float64, row []string) error {
	if len(dst) != e.Width() {
		return fmt.Errorf("datasets: one-hot destination has length %d, want %d", len(dst), e.Width())
	}
	if len(row) != len(e.Names) {
		return fmt.Errorf("datasets: one-hot row has %d values, want %d", len(row), len(e.Names))
	}
	for i := range dst {
		dst[i] = 0
	}
	off := 0
	for j, v := range row {
		k, ok := e.index[j][v]
		if !ok {
			return fmt.Errorf("%w: %q in column %q", ErrUnknownCategory, v, e.Names[j])
		}
		dst[off+k] = 1
		off += len(e.Categories[j])
	}
	return nil
}

// EncodeClasses maps class names to labels for a classification task.
// Classes are the distinct names sorted by datasets.SortClassNames
// (numerically when every name parses as a number, else byte-wise). With
// two classes the labels are -1/+1 and positive (if not empty) names the
// +1 class, by default the second sorted class; with more classes the
// labels are the class indices 0..K-1 and positive must be empty. A single
// class is an error.
func EncodeClasses(names []string, positive string) (y []float64, classes []string, err error) {
	set := make(map[string]struct{})
	for _, n := range names {
		set[n] = struct{}{}
	}
	classes = make([]string, 0, len(set))
	for n := range set {
		classes = append(classes, n)
	}
	datasets.SortClassNames(classes)
	switch {
	case len(classes) < 2:
		return nil, nil, fmt.Errorf("datasets: need at least two classes, found %d", len(classes))
	case len(classes) == 2:
		if positive != "" {
			switch positive {
			case classes[1]:
			case classes[0]:
				classes[0], classes[1] = classes[1], classes[0]
			default:
				return nil, nil, fmt.Errorf("datasets: positive class %q not among %q", positive, classes)
			}
		}
		y = make([]float64, len(names))
		for i, n := range names {
			y[i] = -1
			if n == classes[1] {
				y[i] = 1
			}
		}
		return y, classes, nil
	default:
		if positive != "" {
			return nil, nil, fmt.Errorf("datasets: positive class %q given for a task with %d classes", positive, len(classes))
		}
		idx := make(map[string]int, len(classes))
		for k, c := range classes {
			idx[c] = k
		}
		y = make([]float64, len(names))
		for i, n := range names {
			y[i] = float64(idx[n])
		}
		return y, classes, nil
	}
}
