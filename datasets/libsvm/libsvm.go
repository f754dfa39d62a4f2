package libsvm

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/categorical"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrFormat is returned (wrapped, with the line) for malformed LibSVM
// input. It wraps datasets.ErrFormat.
var ErrFormat = fmt.Errorf("%w: LibSVM", datasets.ErrFormat)

// DefaultMaxDimension is the largest feature index Read accepts
// when Options.MaxDimension is zero.
const DefaultMaxDimension = 1 << 20

// maxCells bounds the size of the dense matrix Read builds
// (2^27 float64 values, 1 GiB).
const maxCells = 1 << 27

// Options configures Read. The zero value infers the dimension
// and treats the labels as classes.
type Options struct {
	// Dimension is the number of features d; an index above it is an error.
	// Zero infers d as the largest index seen.
	Dimension int
	// MaxDimension bounds the inferred or given dimension (a guard against
	// a corrupt index allocating a huge matrix). Zero means
	// DefaultMaxDimension.
	MaxDimension int
	// Regression keeps the labels as values (Classes nil) instead of
	// encoding them as classes.
	Regression bool
	// Positive names the +1 class of a binary task, as a number ("1", "+1"
	// and "1.0" are the same class). Empty means the larger label: {0, 1}
	// and {-1, +1} both become -1/+1 in order. It must be empty for
	// multiclass tasks and for regression.
	Positive string
}

// Read reads the LibSVM / SVMlight sparse format: one example per
// line, "label index:value index:value ...", with 1-based indices in
// strictly increasing order; absent indices are zero. Blank lines are
// skipped and '#' starts a comment; SVMlight's "qid:" tokens are not
// supported (an error). Labels are numbers: with two distinct
// labels they map to -1/+1 (the smaller to -1 unless Positive says
// otherwise), with more to class indices 0..K-1 in increasing label order;
// Classes holds the labels as written by strconv.FormatFloat. Feature j is
// named "x<j>" with its 1-based index.
func Read(r io.Reader, opts Options) (*datasets.Dataset, error) {
	maxDim := opts.MaxDimension
	if maxDim <= 0 {
		maxDim = DefaultMaxDimension
	}
	if opts.Dimension < 0 || opts.Dimension > maxDim {
		return nil, fmt.Errorf("%w: dimension %d not in [0, %d]", ErrFormat, opts.Dimension, maxDim)
	}
	if opts.Regression && opts.Positive != "" {
		return nil, fmt.Errorf("%w: Positive %q given for regression", ErrFormat, opts.Positive)
	}
	type entry struct {
		idx int
		val float64
	}
	var (
		rows   [][]entry
		labels []float64
		d      = opts.Dimension
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if k := strings.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		toks := strings.Fields(text)
		if len(toks) == 0 {
			continue
		}
		label, ok := check.ParseFinite(toks[0])
		if !ok {
			return nil, fmt.Errorf("%w: line %d: label %q is not a finite number", ErrFormat, line, toks[0])
		}
		row := make([]entry, 0, len(toks)-1)
		prev := 0
		for _, tok := range toks[1:] {
			is, vs, ok := strings.Cut(tok, ":")
			if !ok {
				return nil, fmt.Errorf("%w: line %d: %q is not index:value", ErrFormat, line, tok)
			}
			idx, err := strconv.Atoi(is)
			if err != nil || idx < 1 {
				return nil, fmt.Errorf("%w: line %d: index %q is not a positive integer", ErrFormat, line, is)
			}
			if idx <= prev {
				return nil, fmt.Errorf("%w: line %d: index %d after %d, want increasing", ErrFormat, line, idx, prev)
			}
			if idx > maxDim || (opts.Dimension > 0 && idx > opts.Dimension) {
				return nil, fmt.Errorf("%w: line %d: index %d above the dimension", ErrFormat, line, idx)
			}
			v, ok := check.ParseFinite(vs)
			if !ok {
				return nil, fmt.Errorf("%w: line %d: value %q is not a finite number", ErrFormat, line, vs)
			}
			prev = idx
			row = append(row, entry{idx, v})
		}
		if prev > d {
			d = prev
		}
		rows = append(rows, row)
		labels = append(labels, label)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	n := len(rows)
	if n == 0 {
		return nil, fmt.Errorf("%w: no examples", ErrFormat)
	}
	if d == 0 {
		return nil, fmt.Errorf("%w: no features", ErrFormat)
	}
	if n > maxCells/d {
		return nil, fmt.Errorf("%w: %d x %d is too large for a dense matrix", ErrFormat, n, d)
	}
	x := mat.NewDense(n, d, nil)
	for i, row := range rows {
		dst := x.RawRowView(i)
		for _, e := range row {
			dst[e.idx-1] = e.val
		}
	}
	ds := &datasets.Dataset{X: x, Features: make([]string, d)}
	for j := range ds.Features {
		ds.Features[j] = "x" + strconv.Itoa(j+1)
	}
	if opts.Regression {
		ds.Y = labels
		return ds, nil
	}
	names := make([]string, n)
	for i, v := range labels {
		names[i] = formatLabel(v)
	}
	positive := opts.Positive
	if positive != "" {
		v, err := strconv.ParseFloat(positive, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: Positive %q is not a number", ErrFormat, positive)
		}
		positive = formatLabel(v)
	}
	y, classes, err := categorical.EncodeClasses(names, positive)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	ds.Y, ds.Classes = y, classes
	return ds, nil
}

// formatLabel writes a label in its shortest form, so that "+1", "1"
// and "1.0" name the same class.
func formatLabel(v float64) string {
	if v == 0 {
		v = 0 // -0 and 0 are one class
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
