package rawcsv

import (
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Texts keeps the text of the cells of one column of a datasets.Table that
// its numbers' spelling does not give back: class names, empty cells,
// typos, and numbers spelled otherwise. Each such cell has a code, its
// text's index in a dictionary plus one; code 0 means a number, whose
// value written as the column spells its numbers (Spelling; the shortest
// decimal, as for a nil Texts, unless set) gives its text. The codes are
// sparse (the rows that have one, with their codes) while few rows have
// one, and dense (one per row) from when many do.
type Texts struct {
	// dense holds the code of rows 0, 1, ..., len(dense)-1 once dense;
	// rows after them have code 0.
	dense []int32
	// rows, increasing, and codes are the rows with a code while sparse.
	rows, codes []int32
	// buf holds the texts back to back; text k (code k+1) ends at ends[k].
	buf  []byte
	ends []int
	// index finds the code of the first maxIntern distinct texts; later
	// ones are added as they come (a column of many distinct texts is
	// stored once, not indexed).
	index map[string]int32
	// spell is how the column writes a number without a code.
	spell Spelling
}

// Spelling says how a column writes its numbers: the text of a number
// without a code is its value written so. The zero value, Unset, is a
// column whose reader has not decided it yet (it decides at the column's
// first number): its numbers are written as Shortest writes them, but it
// Writes none.
type Spelling int8

const (
	// Unset: no spelling decided.
	Unset Spelling = 0
	// Shortest: strconv.FormatFloat(v, 'f', -1, 64), the shortest
	// decimal that reads back as v (Kind Number).
	Shortest Spelling = -1
)

// Decimals returns the spelling of numbers written with p >= 0 digits
// after the point, strconv.FormatFloat(v, 'f', p, 64) ("%.6f" writes
// 0.5 as 0.500000), or Shortest when p is negative or over MaxDecimals.
func Decimals(p int) Spelling {
	if p < 0 || p > MaxDecimals {
		return Shortest
	}
	return Spelling(p + 1)
}

// MaxDecimals is the most digits after the point that a Spelling of
// Decimals holds (ScanNumber reports at most 22).
const MaxDecimals = 100

// Append appends v written in spelling s to buf.
func (s Spelling) Append(buf []byte, v float64) []byte {
	return strconv.AppendFloat(buf, v, 'f', max(int(s)-1, -1), 64)
}

// Writes reports whether spelling s, decided (not Unset), writes the
// number v, of kind k and decimals p (ScanNumber's results), as text:
// whether a cell of the column can go without a code.
func (s Spelling) Writes(text string, v float64, k Kind, p int) bool {
	switch {
	case s.Quick(k, p):
		return true
	case k == Text || s <= 0 || p != MaybeDecimals:
		return false
	}
	var buf [64]byte
	return string(s.Append(buf[:0], v)) == text
}

// Quick is the part of Writes told without writing v: when it is true,
// so is Writes.
func (s Spelling) Quick(k Kind, p int) bool {
	return s > 0 && int(s) == p+1 || s < 0 && k == Number
}

// Spelling returns the column's spelling of numbers (Unset for nil).
func (c *Texts) Spelling() Spelling {
	if c == nil {
		return Unset
	}
	return c.spell
}

// Spell sets the column's spelling of numbers. The codes do not change:
// the caller gives the cells that s does not write back a code first.
func (c *Texts) Spell(s Spelling) { c.spell = s }

// AppendNumber appends the text of a cell of value v without a code.
func (c *Texts) AppendNumber(buf []byte, v float64) []byte {
	return c.Spelling().Append(buf, v)
}

// Uncoded returns the value of text s and whether a cell of that text
// goes without a code: a finite number the column's spelling (Shortest if
// Unset) writes as s.
func (c *Texts) Uncoded(s string) (float64, bool) {
	v, k, p := ParseDecimals(s)
	sp := c.Spelling()
	if sp == Unset {
		sp = Shortest
	}
	return v, sp.Writes(s, v, k, p)
}

// Shortest returns the codes of rows [0, n) of the column under spelling
// Shortest, for a column whose numbers had c's spelling: the rows with a
// code keep their text, and a number that c's spelling writes otherwise
// than Shortest gets its text as c wrote it. value gives the value of a
// row without a code; capRows is as for Add.
func (c *Texts) Shortest(n, capRows int, value func(i int) float64) *Texts {
	out := &Texts{spell: Shortest}
	var a, b []byte
	r := 0 // the next sparse code
	for i := range n {
		k := int32(0)
		switch {
		case c.dense != nil && i < len(c.dense):
			k = c.dense[i]
		case c.dense == nil && r < len(c.rows) && int(c.rows[r]) == i:
			k = c.codes[r]
			r++
		}
		if k != 0 {
			out.Add(i, c.Text(k), capRows)
			continue
		}
		v := value(i)
		a, b = c.AppendNumber(a[:0], v), strconv.AppendFloat(b[:0], v, 'f', -1, 64)
		if string(a) != string(b) {
			out.Add(i, BytesString(a), capRows)
		}
	}
	return out
}

// maxIntern bounds the distinct texts of a column that Texts finds
// again instead of storing anew.
const maxIntern = 4096

// sparseMin is the number of sparse codes below which a column stays
// sparse whatever its share of the rows.
const sparseMin = 64

// Code returns the code of text s, adding s to the dictionary if needed.
func (c *Texts) Code(s string) int32 {
	if k, ok := c.index[s]; ok {
		return k
	}
	c.buf = append(c.buf, s...)
	c.ends = append(c.ends, len(c.buf))
	k := int32(len(c.ends))
	if len(c.index) < maxIntern {
		if c.index == nil {
			c.index = make(map[string]int32)
		}
		c.index[strings.Clone(s)] = k
	}
	return k
}

// Text returns the text of code k > 0. The string shares the dictionary's
// bytes, which are never changed: it is valid as long as c is.
func (c *Texts) Text(k int32) string {
	lo := 0
	if k > 1 {
		lo = c.ends[k-2]
	}
	b := c.buf[lo:c.ends[k-1]]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Add gives row i, after every row with a code, the text s. capRows is
// the number of rows the table has room for.
func (c *Texts) Add(i int, s string, capRows int) {
	k := c.Code(s)
	if c.dense != nil {
		for len(c.dense) < i {
			c.dense = append(c.dense, 0)
		}
		c.dense = append(c.dense, k)
		return
	}
	c.rows = append(c.rows, int32(i))
	c.codes = append(c.codes, k)
	if len(c.rows) > sparseMin && 2*len(c.rows) > i+1 {
		// 4 bytes a row cost less than 8 a code.
		c.densify(i+1, capRows)
	}
}

// Len returns the number of codes: the distinct texts stored.
func (c *Texts) Len() int { return len(c.ends) }

// densify makes the codes dense for rows 0..n-1, with room for capRows.
func (c *Texts) densify(n, capRows int) {
	c.dense = make([]int32, n, max(n, capRows))
	for r, i := range c.rows {
		c.dense[i] = c.codes[r]
	}
	c.rows, c.codes = nil, nil
}

// At returns the code of row i.
func (c *Texts) At(i int) int32 {
	if c == nil {
		return 0
	}
	if c.dense != nil {
		if i < len(c.dense) {
			return c.dense[i]
		}
		return 0
	}
	if r, ok := slices.BinarySearch(c.rows, int32(i)); ok {
		return c.codes[r]
	}
	return 0
}

// Set sets the code of row i to k (0: a number).
func (c *Texts) Set(i int, k int32) {
	if c.dense != nil {
		if i >= len(c.dense) {
			if k == 0 {
				return
			}
			c.dense = append(c.dense, make([]int32, i+1-len(c.dense))...)
		}
		c.dense[i] = k
		return
	}
	r, ok := slices.BinarySearch(c.rows, int32(i))
	switch {
	case ok && k == 0:
		c.rows = slices.Delete(c.rows, r, r+1)
		c.codes = slices.Delete(c.codes, r, r+1)
	case ok:
		c.codes[r] = k
	case k != 0:
		c.rows = slices.Insert(c.rows, r, int32(i))
		c.codes = slices.Insert(c.codes, r, k)
	}
}

// Each calls fn for every row in [lo, hi) with a code, in row order.
func (c *Texts) Each(lo, hi int, fn func(i int, k int32)) {
	if c == nil {
		return
	}
	if c.dense != nil {
		for i := lo; i < min(hi, len(c.dense)); i++ {
			if k := c.dense[i]; k != 0 {
				fn(i, k)
			}
		}
		return
	}
	r, _ := slices.BinarySearch(c.rows, int32(lo))
	for ; r < len(c.rows) && int(c.rows[r]) < hi; r++ {
		fn(int(c.rows[r]), c.codes[r])
	}
}

// Slice returns the codes of rows [lo, hi) as rows 0..hi-lo-1 of a new
// Texts of the same spelling, nil if none has a code and the spelling
// writes the shortest decimal.
func (c *Texts) Slice(lo, hi int) *Texts {
	var out *Texts
	if c.Spelling() > 0 {
		out = &Texts{spell: c.spell}
	}
	c.Each(lo, hi, func(i int, k int32) {
		if out == nil {
			out = &Texts{spell: c.spell}
		}
		out.Add(i-lo, c.Text(k), hi-lo)
	})
	return out
}
