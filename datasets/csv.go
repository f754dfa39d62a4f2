package datasets

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unsafe"

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
	return readCSV(r, opts, false)
}

// readCSV is ReadCSV; with allQuoted every line goes through encoding/csv
// (the reference the tests compare the in-place parsing with).
func readCSV(r io.Reader, opts CSVOptions, allQuoted bool) (*Dataset, error) {
	c := &csvRows{label: opts.Label}
	read := c.read
	if allQuoted {
		read = func(r io.Reader) error { return c.readQuoted(r, 0) }
	}
	if err := read(r); err != nil {
		return nil, err
	}
	feats, labels, lines, names, d := c.feats, c.labels, c.lines, c.names, c.ncol-1
	n := len(labels)
	if c.header == nil {
		return nil, fmt.Errorf("%w: empty file, want a header row", ErrFormat)
	}
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

// csvRows accumulates the header and the rows of a CSV file as ReadCSV reads
// them.
type csvRows struct {
	label    string
	header   []string // nil until the header is read
	names    []string
	labelCol int
	ncol     int
	feats    []float64
	labels   []string
	lines    []int             // line of each row, for error messages
	intern   map[string]string // the distinct label cells seen, up to maxIntern
}

// maxIntern bounds the label cells csvRows keeps one copy of; a regression
// label column has a new value on every row.
const maxIntern = 1024

// read reads the header and the rows of r. Lines without a double quote,
// the common case, are split and parsed in place (line); from the first
// line with a quote on, the rest of the input goes through encoding/csv
// (readQuoted). Both give the records encoding/csv gives with
// TrimLeadingSpace: lines end at \n, a \r before it and a \r at the end
// of the input are dropped, empty lines are skipped, and the cells are
// trimmed of surrounding white space.
func (c *csvRows) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	size := sizeOf(r)
	var (
		long           []byte
		read, dataFrom int64 // bytes read, and where the rows start
		rows           int
	)
	for num := 1; ; num++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%w: %w", ErrFormat, err)
		}
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if bytes.IndexByte(line, '"') >= 0 {
			rest := io.MultiReader(bytes.NewReader(bytes.Clone(line)), br)
			return c.readQuoted(rest, num-1)
		}
		eof := err == io.EOF
		read += int64(len(line))
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
			if err := c.line(line, num); err != nil {
				return err
			}
			if rows++; rows == 1 {
				dataFrom = read
			} else if rows == sizeSample+1 && size > read {
				c.reserve(size-read, float64(read-dataFrom)/sizeSample)
			}
		}
		if eof {
			return nil
		}
	}
}

// sizeSample is the number of rows whose mean length, with the size of the
// input, estimates the number of rows to reserve room for.
const sizeSample = 16

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

// reserve makes room for the rows of the rest bytes left, lines of about
// perRow bytes, so that the slices grow once instead of by doubling. The
// estimate is capped by the fewest bytes a row can have (a one-byte cell and
// a separator per column).
func (c *csvRows) reserve(rest int64, perRow float64) {
	more := int64(float64(rest)/perRow*1.05) + 16
	more = min(more, rest/int64(2*c.ncol)+1)
	c.feats = slices.Grow(c.feats, int(more)*(c.ncol-1))
	c.labels = slices.Grow(c.labels, int(more))
	c.lines = slices.Grow(c.lines, int(more))
}

// line adds the record of one line without quotes (its \n and \r\n
// removed), file line num.
func (c *csvRows) line(line []byte, num int) error {
	if c.header == nil {
		var rec []string
		for _, cell := range bytes.Split(line, []byte{','}) {
			rec = append(rec, string(cell))
		}
		return c.setHeader(rec)
	}
	if f := bytes.Count(line, []byte{','}) + 1; f != c.ncol {
		return fmt.Errorf("%w: line %d has %d fields, the header has %d", ErrFormat, num, f, c.ncol)
	}
	for j := 0; j < c.ncol; j++ {
		cell := line
		if i := bytes.IndexByte(line, ','); i >= 0 {
			cell, line = line[:i], line[i+1:]
		}
		// The string shares cell's bytes: it does not outlive this
		// iteration (cell and addLabel copy what they keep).
		if err := c.cell(unsafe.String(unsafe.SliceData(cell), len(cell)), j, num); err != nil {
			return err
		}
	}
	c.lines = append(c.lines, num)
	return nil
}

// cell adds cell j of the row at file line num: a feature value or the
// label. cell is copied if kept.
func (c *csvRows) cell(cell string, j, num int) error {
	cell = strings.TrimSpace(cell)
	if j == c.labelCol {
		if cell == "" {
			return fmt.Errorf("%w: line %d: empty label in column %q", ErrFormat, num, c.label)
		}
		s, ok := c.intern[cell]
		if !ok {
			s = strings.Clone(cell)
			if len(c.intern) < maxIntern {
				c.intern[s] = s
			}
		}
		c.labels = append(c.labels, s)
		return nil
	}
	v, ok := parseFinite(cell)
	if !ok {
		return fmt.Errorf("%w: line %d, column %d (%q): %q is not a finite number", ErrFormat, num, j+1, c.header[j], cell)
	}
	c.feats = append(c.feats, v)
	return nil
}

// setHeader checks the header record and sets up the rows.
func (c *csvRows) setHeader(rec []string) error {
	labelCol, names, err := parseHeader(rec, c.label)
	if err != nil {
		return err
	}
	c.header, c.names, c.labelCol, c.ncol = rec, names, labelCol, len(rec)
	c.intern = make(map[string]string)
	return nil
}

// readQuoted reads the rest of the records with encoding/csv; its line 1
// is file line offset+1.
func (c *csvRows) readQuoted(r io.Reader, offset int) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked below, with a clearer message
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				pe.StartLine += offset
				pe.Line += offset
			}
			if c.header == nil {
				return fmt.Errorf("%w: header: %w", ErrFormat, err)
			}
			return fmt.Errorf("%w: %w", ErrFormat, err)
		}
		line, _ := cr.FieldPos(0)
		line += offset
		if c.header == nil {
			if err := c.setHeader(append([]string(nil), rec...)); err != nil {
				return err
			}
			continue
		}
		if len(rec) != c.ncol {
			return fmt.Errorf("%w: line %d has %d fields, the header has %d", ErrFormat, line, len(rec), c.ncol)
		}
		for j, cell := range rec {
			if err := c.cell(cell, j, line); err != nil {
				return err
			}
		}
		c.lines = append(c.lines, line)
	}
}

// parseFinite returns check.ParseFinite(s): the float64 strconv.ParseFloat
// gives, if it is finite. A plain decimal [+-]digits[.digits][e[+-]digits]
// with at most 19 significant digits whose value is m * 10^e with m < 2^53
// and |e| <= 22 is converted as m * 10^e or m / 10^-e, both operands exact,
// so one rounding gives the correctly rounded result that ParseFloat gives
// (Clinger's fast path, which ParseFloat also takes); anything else goes to
// ParseFloat.
func parseFinite(s string) (float64, bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var mant uint64
	digits, exp := 0, 0
	start := i
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if mant == 0 && s[i] == '0' {
			continue // a leading zero is no significant digit
		}
		mant = mant*10 + uint64(s[i]-'0')
		digits++
	}
	intDigits := i - start
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if mant == 0 && s[i] == '0' {
				exp--
				continue
			}
			mant = mant*10 + uint64(s[i]-'0')
			digits++
			exp--
		}
		fracDigits = i - f
	}
	if intDigits+fracDigits == 0 || digits > 19 {
		return check.ParseFinite(s)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		e, ed := 0, 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && ed < 4; i++ {
			e = e*10 + int(s[i]-'0')
			ed++
		}
		if ed == 0 || ed == 4 {
			return check.ParseFinite(s)
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) || mant >= 1<<53 || exp < -22 || exp > 22 {
		return check.ParseFinite(s)
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
	return v, true
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
