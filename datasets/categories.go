package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// Categorical declares a categorical feature column and its categories, in
// the order of their indicator columns. Like the bounds, the categories
// are declared before the rows are read (from a data set's documentation,
// say): they are public, written into the model file, and set the model's
// dimension at no privacy cost.
//
// A hashed column (Hash > 0, Hashed) has public buckets in place of
// declared categories: a cell's category is HashBucket of its text, so
// that a column of text cells is one-hot encoded without reading its
// categories from the rows. Values then holds the buckets' names,
// HashName(0) to HashName(Hash-1).
type Categorical struct {
	Column string   `json:"column"`
	Values []string `json:"values"`
	// Hash is the number of buckets of a hashed column; 0 for declared
	// categories.
	Hash int `json:"hash,omitempty"`
}

// Hashing of text columns (Hashed). The buckets are public constants, so
// the one-hot width of a hashed column reads no row.
const (
	// DefaultHashBuckets is the number of buckets of a hashed column when
	// none is given: collisions merge categories, each bucket costs a
	// model input. On UCI Adult's eight text columns (up to 41 categories)
	// 8 buckets released as well as the declared categories at eps = 1
	// (0.833-0.844 against 0.836-0.842, three splits), 16 worse (0.78-0.80:
	// the wider rows turned the public rule to output perturbation). Judged
	// leave one table out on four raw tables with text columns (Adult,
	// carData's MplsStops and Chile, survival's flchain; 4, 8, 16 and 32
	// buckets, eps = 1, three seeded splits), 4 and 8 tie (mean 0.741 and
	// 0.739), 16 and 32 trail (0.731, 0.726), and the bucket count chosen
	// on the other three tables is within 0.02 of the best on the fourth
	// (docs/DESIGN.md, section 6).
	DefaultHashBuckets = 8
	// MaxHashBuckets is the largest number of buckets of a hashed column.
	MaxHashBuckets = 1 << 12
)

// Hashed returns the declaration of column as a hashed column of buckets
// buckets (in [2, MaxHashBuckets]; checked by ValidateCategories).
func Hashed(column string, buckets int) Categorical {
	c := Categorical{Column: column, Hash: buckets, Values: make([]string, max(buckets, 0))}
	for k := range c.Values {
		c.Values[k] = HashName(k)
	}
	return c
}

// HashName is the name of bucket k of a hashed column: "#k".
func HashName(k int) string { return "#" + strconv.Itoa(k) }

// HashBucket returns the bucket of the cell text among buckets: the
// 64-bit FNV-1a hash of its bytes modulo buckets (a public function of the
// text alone).
func HashBucket(text string, buckets int) int {
	h := uint64(14695981039346656037) // FNV-1a, 64 bits
	for i := range len(text) {
		h ^= uint64(text[i])
		h *= 1099511628211
	}
	return int(h % uint64(buckets))
}

// Index returns the index of the category of the cell text: its bucket
// for a hashed column (-1 for a missing cell, IsMissing), else its index
// among Values (-1 for a text that is not declared).
func (c Categorical) Index(text string) int {
	if c.Hash > 0 {
		if IsMissing(text) {
			return -1
		}
		return HashBucket(text, c.Hash)
	}
	return slices.Index(c.Values, text)
}

// checkCategories returns an error wrapping ErrSchema unless every
// declaration names a distinct, non-empty column with distinct,
// non-empty categories without surrounding spaces, every name one
// CheckName accepts, no column is also bounded, and the label is not among
// them.
func (s Schema) checkCategories() error {
	cols := make(map[string]bool, len(s.Categories))
	for _, c := range s.Categories {
		if cols[c.Column] {
			return fmt.Errorf("%w: column %q declared categorical twice", ErrSchema, c.Column)
		}
		if _, err := s.checkCategorical(c); err != nil {
			return fmt.Errorf("%w: %w", ErrSchema, err)
		}
		cols[c.Column] = true
	}
	return nil
}

// checkCategorical returns an error, and the index of the field of its line
// of a schema file (0 the column, k the category Values[k-1]), unless c
// names a non-empty column, not the label and not bounded, with distinct,
// non-empty categories without surrounding spaces (the names of its
// buckets when hashed), every name one CheckName accepts.
func (s Schema) checkCategorical(c Categorical) (int, error) {
	switch {
	case c.Column == "":
		return 0, errors.New("a categorical declaration without a column name")
	case c.Column == s.Label:
		return 0, fmt.Errorf("the label %q is declared a categorical feature; its classes are declared with the classes", c.Column)
	case c.Hash != 0 && (c.Hash < 2 || c.Hash > MaxHashBuckets):
		return 0, fmt.Errorf("hashed column %q has %d buckets, want 2 to %d", c.Column, c.Hash, MaxHashBuckets)
	case c.Hash != 0 && !slices.Equal(c.Values, Hashed(c.Column, c.Hash).Values):
		return 0, fmt.Errorf("hashed column %q: its categories are not the names of its %d buckets", c.Column, c.Hash)
	case len(c.Values) == 0:
		return 1, fmt.Errorf("categorical column %q has no categories", c.Column)
	}
	if err := CheckName(c.Column); err != nil {
		return 0, fmt.Errorf("categorical column %w", err)
	}
	if _, ok := s.boundOf(c.Column); ok {
		return 0, fmt.Errorf("column %q is declared categorical and bounded: a categorical column is one-hot encoded, without bounds", c.Column)
	}
	seen := make(map[string]bool, len(c.Values))
	for k, v := range c.Values {
		if v == "" || strings.TrimSpace(v) != v {
			return k + 1, fmt.Errorf("column %q: category %q is empty or has surrounding spaces", c.Column, v)
		}
		if err := CheckName(v); err != nil {
			return k + 1, fmt.Errorf("column %q: category %w", c.Column, err)
		}
		if seen[v] {
			return k + 1, fmt.Errorf("column %q: category %q declared twice", c.Column, v)
		}
		seen[v] = true
	}
	return 0, nil
}

// ValidateCategories returns an error wrapping ErrSchema unless the
// declarations name distinct, non-empty columns, each with distinct,
// non-empty categories without surrounding spaces, every name one
// CheckName accepts.
func ValidateCategories(cs []Categorical) error {
	return Schema{Label: "\x00", Categories: cs}.checkCategories()
}

// Numeric returns the features that the schema does not declare
// categorical, in order.
func (s Schema) Numeric(features []string) []string {
	var out []string
	for _, f := range features {
		if _, ok := s.Categorical(f); !ok {
			out = append(out, f)
		}
	}
	return out
}

// Categorical returns the declaration of column name, if it is declared
// categorical.
func (s Schema) Categorical(name string) (Categorical, bool) {
	i := slices.IndexFunc(s.Categories, func(c Categorical) bool { return c.Column == name })
	if i < 0 {
		return Categorical{}, false
	}
	return s.Categories[i], true
}

// The caps of a schema file (ReadCategories, ReadCategoriesFile), checked
// as it is read (a regular file's size before it is read): a line per
// categorical column, with its categories.
const (
	// MaxSchemaBytes is the most bytes a schema file may hold.
	MaxSchemaBytes = 16 << 20
	// MaxSchemaLineBytes is the longest line of a schema file (a column
	// with many categories).
	MaxSchemaLineBytes = MaxLineBytes
	// MaxSchemaLines is the most lines of a schema file, comments and
	// empty lines counted.
	MaxSchemaLines = 1 << 20
)

// schemaCaps are the caps of a schema file.
var schemaCaps = inputcap.Caps{Kind: "schema file", Bytes: MaxSchemaBytes, Line: MaxSchemaLineBytes, Lines: MaxSchemaLines}

// ReadCategories reads categorical declarations from CSV: one line per
// column, "column,category,category,...", at least one category. Cells
// are trimmed; lines starting with '#' are comments. Errors wrap ErrSchema
// and a *ParseError of the line and the field (1 the column, 2 its first
// category, ...): a line without a category, an empty or repeated
// category, a name CheckName refuses, a column declared twice, no
// declaration at all; input beyond the caps (MaxSchemaBytes,
// MaxSchemaLineBytes, MaxSchemaLines) is refused once it passes them.
func ReadCategories(r io.Reader) ([]Categorical, error) {
	cr := csv.NewReader(inputcap.NewReader(r, schemaCaps))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	var out []Categorical
	seen := make(map[string]int)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: categories: %w", ErrSchema, fromCSV(err))
		}
		line, _ := cr.FieldPos(0)
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("%w: categories: %w", ErrSchema, lineErr(line, 2, "", "%q has no category: want column,category[,category]", rec[0]))
		}
		if prev, ok := seen[rec[0]]; ok {
			return nil, fmt.Errorf("%w: categories: %w", ErrSchema, lineErr(line, 1, "", "column %q already declared on line %d", rec[0], prev))
		}
		seen[rec[0]] = line
		c := Categorical{Column: rec[0], Values: rec[1:]}
		if field, err := (Schema{Label: "\x00"}).checkCategorical(c); err != nil {
			return nil, fmt.Errorf("%w: categories: %w", ErrSchema, &ParseError{Line: line, Column: field + 1, Err: err})
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no categorical column declared in the file", ErrSchema)
	}
	return out, nil
}

// ReadCategoriesFile reads the file at path with ReadCategories; a regular
// file larger than MaxSchemaBytes is refused before it is read.
func ReadCategoriesFile(path string) ([]Categorical, error) {
	f, err := openSmall(path, schemaCaps)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := ReadCategories(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
