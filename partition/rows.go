package partition

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/private"
)

// Row is one training row of a partitioned fit: its position (shard
// name, 1-based data row number in the shard), its partition and its model
// input (the public preprocessing applied, Dim values; a null row is zero).
// In a fit per privacy ID, ID is the row's privacy ID and Slot its place
// among the MaxRowsPerID rows kept for the ID (Plan.Bound): the padding
// rows are null rows with no position (Shard "", Row 0).
type Row struct {
	Shard     string
	Row       int
	Partition int
	X         []float64
	Y         float64
	ID        string
	Slot      int
}

// comparePosition orders rows by privacy ID and slot (both zero without a
// privacy ID), then shard name, then row number: in a fit per privacy ID a
// partition's training order is a function of its IDs alone.
func comparePosition(a, b Row) int {
	if c := strings.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Slot, b.Slot); c != 0 {
		return c
	}
	if c := strings.Compare(a.Shard, b.Shard); c != 0 {
		return c
	}
	return cmp.Compare(a.Row, b.Row)
}

// compareShardRow orders rows by shard name, then row number.
func compareShardRow(a, b Row) int {
	if c := strings.Compare(a.Shard, b.Shard); c != 0 {
		return c
	}
	return cmp.Compare(a.Row, b.Row)
}

// Rows parses a chunk of the rows of the shard named shard (a Table read
// by a datasets.TableReader, or a whole shard: its rows are data rows
// chunk.First+1, chunk.First+2, ... of the shard) against the schema, and
// returns its training rows (the rows not held out) as model inputs with
// their positions and partitions, and the number of rows held out. Every
// step is a per-row map with public constants. The chunk's header must
// equal the plan's. Errors wrap datasets.ErrFormat or ErrSchema and name
// the shard, the line and the data row; a zero Plan gives an error
// wrapping private.ErrOptions.
func (pl *Plan) Rows(chunk *datasets.Table, shard string) ([]Row, int, error) {
	if err := pl.check(); err != nil {
		return nil, 0, err
	}
	if chunk == nil {
		return nil, 0, fmt.Errorf("%w: %s: no table", datasets.ErrFormat, shard)
	}
	if !slices.Equal(chunk.Columns, pl.header) {
		return nil, 0, fmt.Errorf("%w: %s: header %q differs from the first shard's %q", datasets.ErrFormat, shard, strings.Join(chunk.Columns, ","), strings.Join(pl.header, ","))
	}
	if chunk.First < 0 {
		return nil, 0, fmt.Errorf("%w: %s: chunk at row %d, want >= 0", datasets.ErrFormat, shard, chunk.First)
	}
	var ids []string
	if pl.idCol >= 0 {
		ids = make([]string, chunk.Len())
		for i := range ids {
			if ids[i] = chunk.Cell(i, pl.idCol); ids[i] == "" {
				return nil, 0, fmt.Errorf("%w: %s, line %d, data row %d: empty privacy ID (column %q); every row needs one", datasets.ErrFormat, shard, chunk.Line(i), chunk.First+i+1, pl.header[pl.idCol])
			}
		}
		// The privacy ID is not a feature.
		chunk = chunk.Without(pl.idCol)
	}
	enc, err := chunk.Encode(pl.plan.Schema, pl.plan.Task)
	if err != nil {
		return nil, 0, fmt.Errorf("shard %s: %w", shard, err)
	}
	idx := make([]int, 0, enc.N)
	held := 0
	opts := pl.plan.Options
	for i := range enc.N {
		out := placement.HeldOut(opts.Seed, shard, chunk.First+i+1, opts.TestFrac)
		if ids != nil {
			out = placement.IDHeldOut(opts.Seed, ids[i], opts.TestFrac)
		}
		if out {
			held++
			continue
		}
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		// Every row of the chunk is held out: it adds no training row
		// (a matrix of no rows cannot be built).
		return nil, held, nil
	}
	X, y, _, err := pl.prep.Rows(enc, idx)
	if err != nil {
		if chunk.First == 0 {
			return nil, 0, fmt.Errorf("shard %s: %w", shard, err)
		}
		return nil, 0, fmt.Errorf("shard %s, chunk from data row %d (row numbers below count from it): %w", shard, chunk.First+1, err)
	}
	out := make([]Row, len(idx))
	for r, i := range idx {
		row := chunk.First + i + 1
		out[r] = Row{Shard: shard, Row: row, X: X.RawRowView(r), Y: y[r]}
		if ids != nil {
			out[r].ID, out[r].Partition = ids[i], placement.IDPartition(opts.Seed, ids[i], pl.partitions)
		} else {
			out[r].Partition = placement.PartitionOf(opts.Seed, shard, row, pl.partitions)
		}
	}
	return out, held, nil
}

// IDs returns the distinct privacy IDs of a chunk's rows (held out or
// not), in the order of their first row, whose counts (placement.CountIDs
// over all chunks, each ID once) LayoutIDs and ReleaseIDs take. It
// returns nil for a plan without a privacy ID, a zero Plan, or a chunk of
// another header (Rows reports those).
func (pl *Plan) IDs(chunk *datasets.Table) []string {
	if pl.check() != nil || pl.idCol < 0 || chunk == nil || !slices.Equal(chunk.Columns, pl.header) {
		return nil
	}
	var ids []string
	seen := make(map[string]bool)
	for i := range chunk.Len() {
		if id := chunk.Cell(i, pl.idCol); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// Bound bounds the contribution of one privacy ID in a fit per privacy ID:
// from all the training rows of the ID (as Rows returns them, in any
// order) it returns exactly c = MaxRowsPerID rows in slot order, the rows
// placement.BoundContributions keeps (by their rank in position order) in
// slots 0, 1, ..., then null rows (zero input, the null label of the task,
// no position) up to c. Every row of the result has the ID's partition.
// The result depends on the ID, the seed, the number of the ID's rows and
// their contents, never on another ID's rows. Errors wrap
// datasets.ErrFormat (rows of several IDs or partitions, a row twice, no
// rows) or private.ErrOptions (a plan without a privacy ID).
func (pl *Plan) Bound(rows []Row) ([]Row, error) {
	if err := pl.check(); err != nil {
		return nil, err
	}
	if pl.idCol < 0 {
		return nil, fmt.Errorf("%w: Bound for a fit without a privacy ID", private.ErrOptions)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: a privacy ID without rows", datasets.ErrFormat)
	}
	rows = slices.Clone(rows)
	slices.SortFunc(rows, compareShardRow)
	id, p := rows[0].ID, rows[0].Partition
	for i, r := range rows {
		switch {
		case r.ID != id || r.Partition != p:
			return nil, fmt.Errorf("%w: rows of privacy IDs %q (partition %d) and %q (partition %d) bounded together", datasets.ErrFormat, id, p, r.ID, r.Partition)
		case i > 0 && compareShardRow(rows[i-1], r) == 0:
			return nil, fmt.Errorf("%w: row %s:%d appears twice", datasets.ErrFormat, r.Shard, r.Row)
		}
	}
	if id == "" || p != placement.IDPartition(pl.plan.Options.Seed, id, pl.partitions) {
		return nil, fmt.Errorf("%w: privacy ID %q in partition %d", datasets.ErrFormat, id, p)
	}
	c := pl.group
	out := make([]Row, 0, c)
	for _, k := range placement.BoundContributions(pl.plan.Options.Seed, id, len(rows), c) {
		r := rows[k]
		r.Slot = len(out)
		out = append(out, r)
	}
	for len(out) < c {
		out = append(out, Row{Partition: p, ID: id, Slot: len(out), X: make([]float64, pl.prep.Dim()), Y: pl.nullLabel()})
	}
	return out, nil
}

// nullLabel is the label of a null row, as datasets.Table.Encode gives it
// to a row whose label is not declared: -1 for a binary task, 0 otherwise.
// Its input is zero, so its loss gradient is zero at every w.
func (pl *Plan) nullLabel() float64 {
	if pl.plan.Task == losses.Binary {
		return -1
	}
	return 0
}
