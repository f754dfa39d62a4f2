package datasets

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
)

// Per-user privacy: every row carries a privacy ID (the text of one
// column), and the unit of privacy is the set of rows of one ID. A fit per
// privacy ID keeps at most c rows of each ID (BoundContributions), pads
// every ID to exactly c rows with null rows, and assigns all the rows of
// one ID to one partition and to one side of the split by seeded hashes of
// the ID's text (IDPartition, IDHeldOut). None of these reads a cell other
// than the ID, nor the rows of another ID.

// IDPartition returns the partition in [0, partitions) of every row of the
// privacy ID id: the seeded hash of PartitionOf, under its own domain tag,
// of the ID's text (in place of a shard name) and row 0. It reads no other
// cell, so the partition of an ID's rows does not change when the rows
// are replaced.
func IDPartition(seed uint64, id string, partitions int) int {
	hi, _ := bits.Mul64(positionHash("stabpriv/id-partition", seed, id, 0), uint64(partitions))
	return int(hi)
}

// IDHeldOut reports whether every row of the privacy ID id is held out for
// testing: a seeded hash of the ID's text, uniform in [0, 1), below
// testFrac. An ID is held out or trains as a whole.
func IDHeldOut(seed uint64, id string, testFrac float64) bool {
	if testFrac <= 0 {
		return false
	}
	u := float64(positionHash("stabpriv/id-test", seed, id, 0)>>11) / (1 << 53)
	return u < testFrac
}

// BoundContributions returns which of the m rows of the privacy ID id a fit
// that keeps at most c rows per ID keeps: their ranks in [0, m), ascending,
// where rank k is the ID's k-th row in position order (shard name, then
// data row number). All m ranks when m <= c; otherwise the c ranks whose
// seeded hash of (seed, id, rank) is smallest (a seeded uniform choice of
// c of the m rows, as Privacy on Beam bounds contributions by sampling).
//
// The choice is a function of (seed, id, m, c) alone: never of a cell, nor
// of the positions or rows of other IDs. So replacing every row of another
// ID (their number too), which shifts the row numbers of the file but not
// the order of this ID's rows, keeps the same rows of this ID. It panics
// for m < 0 or c < 1 (a programmer error: the callers check c).
func BoundContributions(seed uint64, id string, m, c int) []int {
	if m < 0 || c < 1 {
		panic(fmt.Sprintf("datasets: %d rows of an ID, at most %d kept", m, c))
	}
	ranks := make([]int, m)
	for k := range ranks {
		ranks[k] = k
	}
	if m <= c {
		return ranks
	}
	keys := make([]uint64, m)
	for k := range keys {
		keys[k] = positionHash("stabpriv/id-rows", seed, id, k)
	}
	slices.SortFunc(ranks, func(a, b int) int {
		if c := cmp.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	ranks = ranks[:c]
	slices.Sort(ranks)
	return ranks
}

// IDLayout returns the public layout of a fit per privacy ID from the
// distinct IDs (in any order), with c rows per ID: the number of rows
// c * len(ids), of training rows c * (IDs not held out) and each
// partition's size, c times its training IDs. Errors wrap ErrFormat: no
// ID, an empty or repeated ID, c < 1, or partitions outside
// [1, MaxPartitions].
func IDLayout(ids []string, seed uint64, testFrac float64, c, partitions int) (rows, train int, sizes []int, err error) {
	if partitions < 1 || partitions > MaxPartitions || len(ids) == 0 || c < 1 {
		return 0, 0, nil, fmt.Errorf("%w: %d partitions of %d privacy IDs, %d rows per ID", ErrFormat, partitions, len(ids), c)
	}
	seen := make(map[string]bool, len(ids))
	sizes = make([]int, partitions)
	for _, id := range ids {
		if id == "" || seen[id] {
			return 0, 0, nil, fmt.Errorf("%w: privacy ID %q empty or repeated", ErrFormat, id)
		}
		seen[id] = true
		if IDHeldOut(seed, id, testFrac) {
			continue
		}
		sizes[IDPartition(seed, id, partitions)] += c
		train += c
	}
	return c * len(ids), train, sizes, nil
}

// Without returns a copy of t without column j (the privacy-ID column, say,
// which is not a feature). It panics unless 0 <= j < len(t.Columns).
func (t *Table) Without(j int) *Table {
	if j < 0 || j >= len(t.Columns) {
		panic(fmt.Sprintf("datasets: column %d of %d", j, len(t.Columns)))
	}
	cols := slices.Delete(slices.Clone(t.Columns), j, j+1)
	out := newTable(cols, t.Source, t.First)
	out.n = t.n
	if t.ncol == 0 {
		return out
	}
	out.vals = make([]float64, 0, t.n*(t.ncol-1))
	for i := range t.n {
		row := t.vals[i*t.ncol : (i+1)*t.ncol]
		out.vals = append(out.vals, row[:j]...)
		out.vals = append(out.vals, row[j+1:]...)
	}
	out.text = slices.Delete(slices.Clone(t.text), j, j+1)
	for k, c := range out.text {
		out.text[k] = c.slice(0, t.n)
	}
	out.lines = slices.Clone(t.lines)
	return out
}
