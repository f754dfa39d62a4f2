package datasets

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
	"github.com/stabpriv/stabpriv/losses"
)

// Encoded is a table parsed against a schema: the raw feature values, the
// encoded labels and which rows are null rows.
type Encoded struct {
	// Features names the feature columns, in table order.
	Features []string
	// X holds the N x D raw feature values, row-major with rows Stride
	// apart (row i is X[i*Stride : i*Stride+D]): NaN for a missing
	// numeric cell (IsMissing).
	X []float64
	// Stride is the distance in X between the starts of two rows: D from
	// Encode and EncodeText; from EncodeInPlace the table's number of
	// columns, D+1, so that every row has room for a bias after its
	// features.
	Stride int
	// Y holds the encoded labels: -1 and +1 for a binary task, the class
	// index for a multiclass task, the value (clamped to the label bound)
	// for regression.
	Y []float64
	// Null marks the rows whose label is not declared (or, for
	// regression, not a finite number).
	Null []bool
	N, D int
	// Categories[j] lists the declared categories of feature j when it is
	// categorical (nil for a numeric feature; nil when none is): X then
	// holds the index of the cell's category among them, or -1 for a cell
	// that is not a declared category.
	Categories [][]string

	// texts holds the text of the cells of each feature (nil for a
	// feature without any), by the table's row; rows maps row i of e to
	// its row of the table (nil: row i), after Select.
	texts []*rawcsv.Texts
	rows  []int
}

// Row returns the raw feature values of row i.
func (e *Encoded) Row(i int) []float64 {
	s := e.stride()
	return e.X[i*s : i*s+e.D]
}

// Encode parses the table against the schema. Feature cells must be finite
// numbers or missing (IsMissing, kept as NaN), but in the columns the
// schema declares categorical, whose cells become the index of their
// category (matched by text as classes are) or -1 for any other text.
//
// The domain of the guarantee is well-formed files: a malformed cell is an
// error wrapping ErrFormat with a *ParseError that names its line, data
// row and column and quotes it; its message lists a few of IsMissing's
// spellings and says what to do: declare the column categorical in the
// schema (train --schema) or leave it out (train --ignore). A declared
// categorical column that the table does not have is an error wrapping
// ErrSchema. A label outside the declared classes (classification: the
// cell's text is not a class name; "1.0" is not the class "1") or not a
// finite number (regression) makes the row a null row; a regression label
// is clamped to the label bound.
func (t *Table) Encode(s Schema, task losses.Task) (*Encoded, error) {
	return t.EncodeText(s, task, TextError)
}

// TextCells says what EncodeText does with a cell of a numeric feature
// column that is neither a finite number nor missing (a text cell).
type TextCells int

const (
	// TextError refuses it (Encode).
	TextError TextCells = iota
	// TextMark keeps it as +Inf, which no number cell holds, for a step
	// that decides the column's type (privbounds.CentreCounts counts it
	// above every number).
	TextMark
	// TextMissing keeps it as NaN, a missing cell.
	TextMissing
)

// EncodeText is Encode with the text cells of the numeric feature columns
// handled as text says.
func (t *Table) EncodeText(s Schema, task losses.Task, text TextCells) (*Encoded, error) {
	e, label, cat, err := t.encodeHead(s)
	if err != nil {
		return nil, err
	}
	e.X = make([]float64, e.N*e.D)
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		x := e.X[i*e.D : (i+1)*e.D]
		copy(x, row[:label])
		copy(x[label:], row[label+1:])
		if err := t.checkRow(i, x, label, cat, text); err != nil {
			return nil, err
		}
	}
	t.encodeCategories(e, s, label, func(i, j int, v float64) { e.X[i*e.D+j] = v })
	t.encodeLabels(e, s, task, label)
	return e, nil
}

// encodeHead checks the table against the schema s and returns the
// Encoded of its header (Features, N, D = Stride, Categories, the texts
// of the feature columns), the label's column and which features are
// categorical (nil when none is).
func (t *Table) encodeHead(s Schema) (e *Encoded, label int, cat []bool, err error) {
	if t == nil || len(t.Columns) == 0 {
		return nil, 0, nil, fmt.Errorf("%w: no table", ErrFormat)
	}
	label = slices.Index(t.Columns, s.Label)
	if label < 0 {
		return nil, 0, nil, noLabel(s.Label, t.Columns)
	}
	if len(t.Columns) < 2 {
		return nil, 0, nil, fmt.Errorf("%w: no feature column besides the label %q", ErrSchema, s.Label)
	}
	if len(t.Columns) != t.ncol && t.n > 0 {
		return nil, 0, nil, formatErr(t.Source, "the header has %d names for %d columns", len(t.Columns), t.ncol)
	}
	e = &Encoded{N: t.n, D: len(t.Columns) - 1, Stride: len(t.Columns) - 1}
	for j, c := range t.Columns {
		if j != label {
			e.Features = append(e.Features, c)
			e.texts = append(e.texts, t.text[j])
		}
	}
	for _, c := range s.Categories {
		if !slices.Contains(e.Features, c.Column) {
			return nil, 0, nil, fmt.Errorf("%w: the schema declares column %q categorical, but %s has no such feature column; the columns are %s", ErrSchema, c.Column, t.Source, strings.Join(t.Columns, ", "))
		}
	}
	if t.n == 0 {
		return nil, 0, nil, formatErr(t.Source, "no data rows")
	}
	if len(s.Categories) > 0 {
		cat = make([]bool, e.D)
		e.Categories = make([][]string, e.D)
		for j, f := range e.Features {
			if c, ok := s.Categorical(f); ok {
				cat[j], e.Categories[j] = true, slices.Clone(c.Values)
			}
		}
	}
	return e, label, cat, nil
}

// checkRow checks the features x of row i (its cells but the label's, in
// order; label is the label's column) and keeps the text cells of the
// numeric ones as text says: a missing cell stays NaN, a text cell
// becomes +Inf (TextMark) or NaN (TextMissing), or is refused (TextError)
// by an error that quotes it. The cells of the categorical features (cat)
// are not read.
func (t *Table) checkRow(i int, x []float64, label int, cat []bool, text TextCells) error {
	for j, v := range x {
		if !math.IsNaN(v) || cat != nil && cat[j] {
			continue
		}
		c := j
		if c >= label {
			c++
		}
		switch {
		case IsMissing(t.Cell(i, c)):
			continue // NaN: a missing cell, which the feature map reads as such
		case text == TextMark:
			x[j] = math.Inf(1)
			continue
		case text == TextMissing:
			continue
		}
		return formatErr(t.Source, "%w", t.cellErr(i, c, "%q is not a finite number (a missing cell is empty, NA, ?, null, ...): declare its column categorical or leave it out", t.Cell(i, c)))
	}
	return nil
}

// encodeCategories calls set(i, j, v) with the code v of the cell of every
// row i in every categorical feature j of e: the index of its category
// among the declared ones (s), -1 for another text. Column by column, it
// reads the cell of row i before the call for it, which may write over it.
func (t *Table) encodeCategories(e *Encoded, s Schema, label int, set func(i, j int, v float64)) {
	for j, vals := range e.Categories {
		if vals == nil {
			continue
		}
		col := j
		if col >= label {
			col++
		}
		if c, _ := s.Categorical(e.Features[j]); c.Hash > 0 {
			codes := make([]int32, t.n)
			for i := range t.n {
				codes[i] = int32(c.Index(t.cellView(i, col)))
			}
			for i, k := range codes {
				set(i, j, float64(k))
			}
			continue
		}
		for i, k := range t.match(col, vals) {
			set(i, j, float64(k))
		}
	}
}

// encodeLabels sets the labels e.Y and the null rows e.Null from the label
// column.
func (t *Table) encodeLabels(e *Encoded, s Schema, task losses.Task, label int) {
	e.Y = make([]float64, e.N)
	e.Null = make([]bool, e.N)
	if task == losses.Regression {
		for i := range t.n {
			v := t.vals[i*t.ncol+label]
			if math.IsNaN(v) {
				e.Null[i] = true
				continue
			}
			if b := s.LabelBound; b > 0 {
				v = math.Max(-b, math.Min(b, v))
			}
			e.Y[i] = v
		}
		return
	}
	for i, k := range t.match(label, s.Classes) {
		switch {
		case k < 0:
			e.Null[i] = true
			if task == losses.Binary {
				e.Y[i] = -1
			}
		case task == losses.Multiclass:
			e.Y[i] = float64(k)
		case k == 0:
			e.Y[i] = -1
		default:
			e.Y[i] = 1
		}
	}
}

// match yields, for every row i in order, the index k in names of the
// text of its cell in column j, or -1 if no name is that text. If a text
// is named twice, the last index is given. It reads the cell of row i (if
// at all) before it yields i, so the loop may write over it.
func (t *Table) match(j int, names []string) iter.Seq2[int, int32] {
	return func(yield func(int, int32) bool) {
		byText := make(map[string]int32, len(names))
		byValue := make(map[uint64]int32, len(names))
		c := t.text[j]
		for k, name := range names {
			byText[name] = int32(k)
			if v, ok := c.Uncoded(name); ok {
				byValue[math.Float64bits(v)] = int32(k)
			}
		}
		// The rows from next to hi have no text: their value is their
		// text's.
		next := 0
		byValues := func(hi int) bool {
			for ; next < hi; next++ {
				k, ok := byValue[math.Float64bits(t.vals[next*t.ncol+j])]
				if !ok {
					k = -1
				}
				if !yield(next, k) {
					return false
				}
			}
			return true
		}
		var byCode []int32 // code -> index+1, 0 unknown, -1 none
		if c != nil {
			byCode = make([]int32, c.Len()+1)
		}
		more := true
		c.Each(0, t.n, func(i int, code int32) {
			if !more {
				return
			}
			if more = byValues(i); !more {
				return
			}
			m := byCode[code]
			if m == 0 {
				m = -1
				if k, ok := byText[c.Text(code)]; ok {
					m = k + 1
				}
				byCode[code] = m
			}
			next = i + 1
			if m < 0 {
				more = yield(i, -1)
			} else {
				more = yield(i, m-1)
			}
		})
		if more {
			byValues(t.n)
		}
	}
}

// values returns the distinct texts of column j, sorted by SortClassNames.
func (t *Table) values(j int) []string {
	c := t.text[j]
	hasText := make([]bool, t.n)
	var used map[int32]bool
	c.Each(0, t.n, func(i int, code int32) {
		if used == nil {
			used = make(map[int32]bool)
		}
		hasText[i] = true
		used[code] = true
	})
	set := make(map[string]bool)
	for code := range used {
		set[c.Text(code)] = true
	}
	nums := make(map[uint64]bool)
	for i := range t.n {
		if !hasText[i] {
			nums[math.Float64bits(t.vals[i*t.ncol+j])] = true
		}
	}
	out := make([]string, 0, len(set)+len(nums))
	for s := range set {
		out = append(out, strings.Clone(s))
	}
	for b := range nums {
		out = append(out, string(c.AppendNumber(nil, math.Float64frombits(b))))
	}
	SortClassNames(out)
	return out
}

// LabelValues returns the distinct texts of the label column, sorted by
// SortClassNames (nil without such a column). It reads the data: only a
// non-private run may call it.
func (t *Table) LabelValues(label string) []string {
	j := slices.Index(t.Columns, label)
	if j < 0 || j >= t.ncol {
		return nil
	}
	return t.values(j)
}

// ObservedClasses returns the classes of the label column as the rows show
// them, sorted (datasets.SortClassNames), for a non-private fit that has
// not declared its classes: with positive (binary only) that class is put
// last, where it is encoded +1. It reads the data, so a private fit must
// not use it: its classes would then leak which labels occur. loss nil
// means logistic for two classes and softmax for more.
func ObservedClasses(t *Table, label, positive string, loss losses.Loss) ([]string, error) {
	if slices.Index(t.Columns, label) < 0 {
		return nil, noLabel(label, t.Columns)
	}
	c := t.LabelValues(label)
	binary := loss != nil && loss.Task() == losses.Binary || loss == nil && len(c) == 2
	switch {
	case len(c) == 0:
		return nil, fmt.Errorf("%w: label column %q has no rows", ErrSchema, label)
	case len(c) < 2:
		return nil, fmt.Errorf("%w: label column %q has a single class %q", ErrSchema, label, c[0])
	case binary && len(c) != 2:
		return nil, fmt.Errorf("%w: binary label column %q has %d classes (%s), want 2 (more classes take the softmax loss)", ErrSchema, label, len(c), strings.Join(c, ", "))
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
