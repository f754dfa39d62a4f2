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
	var cols []string
	for j := range d {
		cols = append(cols, "f"+strconv.Itoa(j))
	}
	cols = append(cols, "y")
	rows := make([][]string, n)
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
		rows[i] = append(row, classes[c])
	}
	t, err := datasets.NewTable("blobs", cols, rows)
	if err != nil {
		panic(err)
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
func Clone(t *datasets.Table) *datasets.Table { return t.Clone() }

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
	flip := func(t *datasets.Table, i, d int) {
		k := slices.Index(classes, t.Cell(i, d))
		t.SetCell(i, d, classes[(k+1)%len(classes)])
	}
	extreme := func(t *datasets.Table, i, d int, s float64) {
		for j := range d {
			t.SetCell(i, j, strconv.FormatFloat(s*1e6*float64(1-2*(j%2)), 'g', -1, 64))
		}
	}
	return []NeighbourCase{
		{"label flip, first row", func(t *datasets.Table, d int) { flip(t, 0, d) }},
		{"label flip, middle row", func(t *datasets.Table, d int) { flip(t, t.Len()/2, d) }},
		{"label flip, last row", func(t *datasets.Table, d int) { flip(t, t.Len()-1, d) }},
		{"extreme features, first row", func(t *datasets.Table, d int) { extreme(t, 0, d, 1) }},
		{"extreme features and flip, middle row", func(t *datasets.Table, d int) { extreme(t, t.Len()/2, d, -1); flip(t, t.Len()/2, d) }},
		{"undeclared label, last row", func(t *datasets.Table, d int) { t.SetCell(t.Len()-1, d, "zzz") }},
		{"zero row, middle row", func(t *datasets.Table, d int) {
			for j := range d {
				t.SetCell(t.Len()/3, j, "0")
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
