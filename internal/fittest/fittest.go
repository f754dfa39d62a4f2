// Package fittest holds the tables that the tests of the certified pipeline
// (private, partition, selection, modelfile) train on.
package fittest

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/stabpriv/stabpriv/datasets"
)

// Blobs returns a table of n rows with d features (f0, f1, ...) and the
// label column y, around one center per class (class c at +2 in feature
// c mod d), seeded. Row i has class i mod len(classes).
func Blobs(n, d int, classes []string, seed uint64) *datasets.Table {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := &datasets.Table{Source: "blobs"}
	for j := range d {
		t.Columns = append(t.Columns, "f"+strconv.Itoa(j))
	}
	t.Columns = append(t.Columns, "y")
	for i := range n {
		c := i % len(classes)
		row := make([]string, 0, d+1)
		for j := range d {
			v := rng.NormFloat64()
			if j == c%d {
				v += 2
			}
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		t.Rows = append(t.Rows, append(row, classes[c]))
	}
	return t
}

// BoundsFor returns the bound [lo, hi] for every column of t but the last
// (the label of Blobs).
func BoundsFor(t *datasets.Table, lo, hi float64) []datasets.Bound {
	var b []datasets.Bound
	for _, c := range t.Columns[:len(t.Columns)-1] {
		b = append(b, datasets.Bound{Column: c, Lo: lo, Hi: hi})
	}
	return b
}

// Clone returns a deep copy of t.
func Clone(t *datasets.Table) *datasets.Table {
	out := &datasets.Table{Columns: slices.Clone(t.Columns), Source: t.Source}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, slices.Clone(r))
	}
	return out
}

// NeighbourCase replaces one row of a table.
type NeighbourCase struct {
	Name string
	// Edit replaces a row of t, whose label is column d.
	Edit func(t *datasets.Table, d int)
}

// NeighbourCases are replace-one edits, random and adversarial: a label
// flip, extreme features (far outside the bounds), a label outside the
// declared classes, at the first, a middle and the last row.
func NeighbourCases(classes []string) []NeighbourCase {
	flip := func(row []string) {
		i := slices.Index(classes, row[len(row)-1])
		row[len(row)-1] = classes[(i+1)%len(classes)]
	}
	extreme := func(row []string, s float64) {
		for j := range len(row) - 1 {
			row[j] = strconv.FormatFloat(s*1e6*float64(1-2*(j%2)), 'g', -1, 64)
		}
	}
	return []NeighbourCase{
		{"label flip, first row", func(t *datasets.Table, d int) { flip(t.Rows[0]) }},
		{"label flip, middle row", func(t *datasets.Table, d int) { flip(t.Rows[len(t.Rows)/2]) }},
		{"label flip, last row", func(t *datasets.Table, d int) { flip(t.Rows[len(t.Rows)-1]) }},
		{"extreme features, first row", func(t *datasets.Table, d int) { extreme(t.Rows[0], 1) }},
		{"extreme features and flip, middle row", func(t *datasets.Table, d int) { extreme(t.Rows[len(t.Rows)/2], -1); flip(t.Rows[len(t.Rows)/2]) }},
		{"undeclared label, last row", func(t *datasets.Table, d int) { t.Rows[len(t.Rows)-1][d] = "zzz" }},
		{"zero row, middle row", func(t *datasets.Table, d int) {
			r := t.Rows[len(t.Rows)/3]
			for j := range d {
				r[j] = "0"
			}
		}},
	}
}

// MustFloat parses a cell of a table made by Blobs.
func MustFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}
