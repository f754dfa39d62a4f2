package rawcsv

import (
	"slices"
	"strings"
	"unsafe"
)

// Texts keeps the text of the cells of one column of a datasets.Table that
// are not numbers (Kind Number): class names, empty cells, typos, and
// numbers spelled otherwise. Each such cell has a code, its text's index in
// a dictionary plus one; code 0 means a number, whose value gives its text.
// The codes are sparse (the rows that have one, with their codes) while
// few rows have one, and dense (one per row) from when many do.
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
// Texts, nil if none has one.
func (c *Texts) Slice(lo, hi int) *Texts {
	var out *Texts
	c.Each(lo, hi, func(i int, k int32) {
		if out == nil {
			out = new(Texts)
		}
		out.Add(i-lo, c.Text(k), hi-lo)
	})
	return out
}
