package datasets

import (
	"fmt"
	"math"
	"strconv"

	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
	"github.com/stabpriv/stabpriv/losses"
)

// EncodeInPlace is EncodeText without a copy of the values: it writes the
// encoded features into the table's own storage and returns them as the
// X of the Encoded, with Stride the table's number of columns (row i's
// features first, in table order, then a free entry where its label was:
// room for the bias of a model input, preprocess.RowMap.RowsInPlace). It
// takes the table over: when it returns, with an error or not, t has no
// rows (Len 0; Columns and Source are kept), and the Encoded alone holds
// what it held. The results and errors are EncodeText's.
func (t *Table) EncodeInPlace(s Schema, task losses.Task, text TextCells) (*Encoded, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: no table", ErrFormat)
	}
	defer t.empty()
	e, label, cat, err := t.encodeHead(s)
	if err != nil {
		return nil, err
	}
	// The labels and the categories first: their cells are read before
	// the features of a row move over the label's.
	t.encodeLabels(e, s, task, label)
	t.encodeCategories(e, s, label, func(i, j int, v float64) {
		if j >= label {
			j++
		}
		t.vals[i*t.ncol+j] = v
	})
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		copy(row[label:], row[label+1:])
		row[e.D] = 0
		if err := t.checkRow(i, row[:e.D], label, cat, text); err != nil {
			return nil, err
		}
	}
	e.X, e.Stride = t.vals[:t.n*t.ncol], t.ncol
	return e, nil
}

// empty leaves t without rows, its header and source kept.
func (t *Table) empty() {
	t.n, t.vals, t.lines = 0, nil, nil
	t.text = make([]*rawcsv.Texts, t.ncol)
}

// HashText encodes e again as EncodeText would with TextMissing and the
// hashed columns hashed (Hashed declarations, each of a numeric feature of
// e) added to the schema: the cells of those features become the index of
// their bucket, and every other text cell of a numeric feature (+Inf
// under TextMark) becomes missing (NaN). It works in place, from the
// values of e and the texts of the table's cells (which must not have
// changed since e was encoded). A declaration that is not hashed or names
// no numeric feature of e is an error wrapping ErrSchema, before any
// change.
func (e *Encoded) HashText(hashed []Categorical) error {
	cols := make([]int, len(hashed))
	for k, c := range hashed {
		j := -1
		for i, f := range e.Features {
			if f == c.Column {
				j = i
			}
		}
		if c.Hash <= 0 || j < 0 || e.Categories != nil && e.Categories[j] != nil {
			return fmt.Errorf("%w: %q is not a hashed declaration of a numeric feature", ErrSchema, c.Column)
		}
		cols[k] = j
	}
	if len(hashed) > 0 && e.Categories == nil {
		e.Categories = make([][]string, e.D)
	}
	for k, j := range cols {
		c := hashed[k]
		var buf []byte
		for i := range e.N {
			x := &e.X[i*e.stride()+j]
			text := ""
			if code := e.texts[j].At(e.tableRow(i)); code != 0 {
				text = e.texts[j].Text(code)
			} else {
				buf = e.texts[j].AppendNumber(buf[:0], *x)
				text = rawcsv.BytesString(buf)
			}
			*x = float64(c.Index(text))
		}
		e.Categories[j] = append([]string(nil), c.Values...)
	}
	for i := range e.N {
		row := e.Row(i)
		for j, v := range row {
			if math.IsInf(v, 1) && (e.Categories == nil || e.Categories[j] == nil) {
				row[j] = math.NaN()
			}
		}
	}
	return nil
}

// stride returns Stride, D for an Encoded built without it.
func (e *Encoded) stride() int {
	if e.Stride == 0 {
		return e.D
	}
	return e.Stride
}

// tableRow returns the row of the table that row i of e was encoded from.
func (e *Encoded) tableRow(i int) int {
	if e.rows == nil {
		return i
	}
	return e.rows[i]
}

// DataRow returns the 1-based number of the table's data row that row i
// of e was encoded from: i+1 until Select moves the rows.
func (e *Encoded) DataRow(i int) int { return e.tableRow(i) + 1 }

// Select keeps the rows idx of e, in that order, in place: row r becomes
// the row idx[r] was (features, label, null mark and DataRow), and N
// becomes len(idx). The rows not kept are dropped; their storage stays in
// X, unused. It panics unless the indices are distinct rows of e (a
// programmer's error). It moves each row at most twice, with room for two
// rows and a few bytes a row besides.
func (e *Encoded) Select(idx []int) {
	const none = -1
	dest := make([]int32, e.N) // the new position of each row, or none
	for i := range dest {
		dest[i] = none
	}
	for r, i := range idx {
		if i < 0 || i >= e.N || dest[i] != none {
			panic(fmt.Sprintf("datasets: Select of row %d of %d, or twice", i, e.N))
		}
		dest[i] = int32(r)
	}
	s := e.stride()
	row := func(i int) []float64 { return e.X[i*s : (i+1)*s] }
	moved := make([]bool, e.N)
	carry, held := make([]float64, s), make([]float64, s)
	for i := range e.N {
		if dest[i] == none || moved[i] {
			continue
		}
		// Carry row i to its place, picking up the kept row there (not
		// moved yet) and carrying it on, until a free place takes it.
		moved[i] = true
		copy(carry, row(i))
		j := int(dest[i])
		for dest[j] != none && !moved[j] {
			moved[j] = true
			copy(held, row(j))
			copy(row(j), carry)
			carry, held = held, carry
			j = int(dest[j])
		}
		copy(row(j), carry)
	}
	y, null, rows := make([]float64, len(idx)), make([]bool, len(idx)), make([]int, len(idx))
	for r, i := range idx {
		y[r], null[r], rows[r] = e.Y[i], e.Null[i], e.tableRow(i)
	}
	e.Y, e.Null, e.rows, e.N = y, null, rows, len(idx)
	e.X = e.X[:len(idx)*s]
}

// NewTableValues returns the table of the given header whose cell (i, j)
// is vals[i*len(columns)+j], as NewTable would read it from the text
// strconv.FormatFloat(v, 'f', -1, 64) of each value v: a finite value is a
// number cell (-0 is 0), NaN the missing cell "NaN", and an infinite
// value the text cell "+Inf" or "-Inf". It takes vals over as the table's
// storage, without a copy: the caller must not use it afterwards. The
// header rule applies and there must be a row, as for NewTable; errors
// wrap ErrFormat.
func NewTableValues(source string, columns []string, vals []float64) (*Table, error) {
	cols := append([]string(nil), columns...)
	if len(cols) == 0 {
		return nil, formatErr(source, "empty header, want column names")
	}
	if err := checkHeader(cols, 1); err != nil {
		return nil, formatErr(source, "%w", err)
	}
	if len(vals) == 0 || len(vals)%len(cols) != 0 {
		return nil, formatErr(source, "%d values for rows of %d columns, want a positive multiple", len(vals), len(cols))
	}
	t := newTable(cols, source, 0)
	t.vals = vals
	n := len(vals) / len(cols)
	for i := range n {
		for j, v := range vals[i*t.ncol : (i+1)*t.ncol] {
			switch {
			case v == 0:
				vals[i*t.ncol+j] = 0 // +0 for -0
			case math.IsNaN(v):
				vals[i*t.ncol+j] = math.NaN()
				t.addText(j, "NaN", n)
			case math.IsInf(v, 0):
				vals[i*t.ncol+j] = math.NaN()
				t.addText(j, strconv.FormatFloat(v, 'f', -1, 64), n)
			}
		}
		t.n++
	}
	t.lines = []lineRun{{row: 0, line: 2}}
	return t, nil
}
