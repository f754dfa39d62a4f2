package placement

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/stabpriv/stabpriv/datasets"
)

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
		panic(fmt.Sprintf("placement: %d rows of an ID, at most %d kept", m, c))
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

// IDCounts is the public layout of a set of distinct privacy IDs: how many
// there are (held out or not) and, for each partition, how many train
// there. It is a count, not a list: a fit of any size carries it in one
// small value, and the counts of disjoint sets of IDs add up (Add), so it
// is built from one ID at a time (CountID) in any order, by any number of
// workers. The zero value counts no ID.
type IDCounts struct {
	// IDs is the number of distinct privacy IDs.
	IDs int
	// Train holds the number of training IDs (not held out) of each
	// partition.
	Train []int
}

// badID is the error for an ID that cannot be counted: empty, or (in a
// list of IDs) repeated.
func badID(id string) error {
	return fmt.Errorf("%w: privacy ID %q empty or repeated", datasets.ErrFormat, id)
}

// CountID returns the counts of the one privacy ID id: one ID, training in
// partition IDPartition(seed, id, partitions) unless IDHeldOut(seed, id,
// testFrac). Errors wrap datasets.ErrFormat: an empty ID, or partitions outside
// [1, MaxPartitions].
func CountID(id string, seed uint64, testFrac float64, partitions int) (IDCounts, error) {
	var n IDCounts
	err := n.AddID(id, seed, testFrac, partitions)
	return n, err
}

// AddID adds to n the privacy ID id, which n does not count: n.Add(CountID(
// id, ...)) without its allocation. Errors wrap datasets.ErrFormat, and leave n as
// it was: an empty ID, partitions outside [1, MaxPartitions], or n counted
// in another number of partitions.
func (n *IDCounts) AddID(id string, seed uint64, testFrac float64, partitions int) error {
	switch {
	case partitions < 1 || partitions > MaxPartitions:
		return fmt.Errorf("%w: %d partitions of privacy IDs, want 1 to %d", datasets.ErrFormat, partitions, MaxPartitions)
	case id == "":
		return badID(id)
	case n.Train != nil && len(n.Train) != partitions:
		return fmt.Errorf("%w: a privacy ID of %d partitions added to counts of %d", datasets.ErrFormat, partitions, len(n.Train))
	}
	if n.Train == nil {
		n.Train = make([]int, partitions)
	}
	n.IDs++
	if !IDHeldOut(seed, id, testFrac) {
		n.Train[IDPartition(seed, id, partitions)]++
	}
	return nil
}

// CountIDs returns the counts of the distinct IDs ids (in any order): the
// sum of their CountID. Errors wrap datasets.ErrFormat: an empty or repeated ID, or
// partitions outside [1, MaxPartitions].
func CountIDs(ids []string, seed uint64, testFrac float64, partitions int) (IDCounts, error) {
	var n IDCounts
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return IDCounts{}, badID(id)
		}
		seen[id] = true
		if err := n.AddID(id, seed, testFrac, partitions); err != nil {
			return IDCounts{}, err
		}
	}
	return n, nil
}

// Add adds the counts of m, a set of IDs disjoint from n's, to n. The sum
// is exact and does not depend on the order the counts are added in.
// Counts of different numbers of partitions add over the longer one
// (Layout refuses the sum).
func (n *IDCounts) Add(m IDCounts) {
	n.IDs += m.IDs
	if len(m.Train) > len(n.Train) {
		n.Train = append(n.Train, make([]int, len(m.Train)-len(n.Train))...)
	}
	for p, k := range m.Train {
		n.Train[p] += k
	}
}

// Layout returns the public layout of a fit per privacy ID of the counted
// IDs with c rows per ID: the number of rows c * IDs, of training rows
// c * (IDs not held out) and each partition's size, c times its training
// IDs. Errors wrap datasets.ErrFormat: no ID, c < 1, partitions outside
// [1, MaxPartitions], counts of another number of partitions, or counts
// that no set of IDs has (negative, more training IDs than IDs, c * IDs
// beyond an int).
func (n IDCounts) Layout(c, partitions int) (rows, train int, sizes []int, err error) {
	if partitions < 1 || partitions > MaxPartitions || n.IDs < 1 || c < 1 {
		return 0, 0, nil, fmt.Errorf("%w: %d partitions of %d privacy IDs, %d rows per ID", datasets.ErrFormat, partitions, n.IDs, c)
	}
	if len(n.Train) != partitions {
		return 0, 0, nil, fmt.Errorf("%w: privacy IDs counted in %d partitions, laid out in %d", datasets.ErrFormat, len(n.Train), partitions)
	}
	if n.IDs > math.MaxInt/c {
		return 0, 0, nil, fmt.Errorf("%w: %d privacy IDs of %d rows each overflow the row count", datasets.ErrFormat, n.IDs, c)
	}
	ids := 0
	for _, k := range n.Train {
		if k < 0 || k > n.IDs-ids {
			return 0, 0, nil, fmt.Errorf("%w: %d privacy IDs with training IDs %v per partition", datasets.ErrFormat, n.IDs, n.Train)
		}
		ids += k
	}
	sizes = make([]int, partitions)
	for p, k := range n.Train {
		sizes[p] = c * k
	}
	return c * n.IDs, c * ids, sizes, nil
}

// IDLayout returns the public layout of a fit per privacy ID from the
// distinct IDs (in any order), with c rows per ID: the Layout of their
// counts (CountIDs). Errors wrap datasets.ErrFormat: no ID, an empty or repeated
// ID, c < 1, or partitions outside [1, MaxPartitions].
func IDLayout(ids []string, seed uint64, testFrac float64, c, partitions int) (rows, train int, sizes []int, err error) {
	if partitions < 1 || partitions > MaxPartitions || len(ids) == 0 || c < 1 {
		return 0, 0, nil, fmt.Errorf("%w: %d partitions of %d privacy IDs, %d rows per ID", datasets.ErrFormat, partitions, len(ids), c)
	}
	n, err := CountIDs(ids, seed, testFrac, partitions)
	if err != nil {
		return 0, 0, nil, err
	}
	return n.Layout(c, partitions)
}
