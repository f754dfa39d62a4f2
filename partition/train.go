package partition

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/trainer"
)

// Result is what the training of one partition hands to the
// release: its weights (not private: they stay inside the training job),
// its size and its run record (constants only; Stats are zero).
type Result struct {
	Partition int
	N         int
	W         []float64
	Run       trainer.Run
}

// config returns the trainer settings of partition p with n training rows
// in all: the fit's settings with the trainer seed of p.
func (pl *Plan) config(p, n int) (trainer.Config, error) {
	return pl.plan.Config(n, pl.prep.Dim(), placement.PartitionSeed(pl.plan.Options.Seed, p))
}

// TrainPartition trains partition p on its rows, sorted by position first
// (so the run does not depend on the order rows arrive in), with the
// trainer settings of the options (the automatic knobs from n, the number
// of training rows of all partitions) and the trainer seed derived from
// (Seed, p). rows may be in any order; each must belong to p. A zero Plan
// gives an error wrapping private.ErrOptions.
func (pl *Plan) TrainPartition(ctx context.Context, p, n int, rows []Row) (Result, error) {
	if err := pl.check(); err != nil {
		return Result{}, err
	}
	if p < 0 || p >= pl.partitions {
		return Result{}, fmt.Errorf("%w: partition %d of %d", private.ErrOptions, p, pl.partitions)
	}
	if len(rows) == 0 {
		return Result{}, fmt.Errorf("%w: partition %d has no rows", datasets.ErrFormat, p)
	}
	rows = slices.Clone(rows)
	slices.SortFunc(rows, comparePosition)
	d := pl.prep.Dim()
	X := mat.NewDense(len(rows), d, nil)
	y := make([]float64, len(rows))
	for r, row := range rows {
		if row.Partition != p || len(row.X) != d {
			return Result{}, fmt.Errorf("%w: row %s:%d of partition %d (%d inputs) handed to partition %d (%d inputs)", datasets.ErrFormat, row.Shard, row.Row, row.Partition, len(row.X), p, d)
		}
		if r > 0 && comparePosition(rows[r-1], row) == 0 {
			return Result{}, fmt.Errorf("%w: row %s:%d (privacy ID %q, slot %d) appears twice", datasets.ErrFormat, row.Shard, row.Row, row.ID, row.Slot)
		}
		if (pl.idCol >= 0) != (row.ID != "") || row.Slot < 0 || row.Slot >= pl.group {
			return Result{}, fmt.Errorf("%w: row %s:%d with privacy ID %q, slot %d, in a fit with %d rows per ID (privacy ID %v)", datasets.ErrFormat, row.Shard, row.Row, row.ID, row.Slot, pl.group, pl.idCol >= 0)
		}
		X.SetRow(r, row.X)
		y[r] = row.Y
	}
	return pl.trainSorted(ctx, p, n, X, y)
}

// TrainSorted is TrainPartition for a partition whose rows are already a
// matrix in position order (the order TrainPartition sorts them into:
// privacy ID and slot, then shard name and row number), Dim columns, and
// their labels: a caller that builds the matrix from packed rows (the Beam
// pipeline) holds the partition once. X is trained in place, not copied.
// It gives the weights TrainPartition gives for the same rows. Errors as
// TrainPartition's, and datasets.ErrFormat for a matrix of another width
// or labels of another length.
func (pl *Plan) TrainSorted(ctx context.Context, p, n int, X *mat.Dense, y []float64) (Result, error) {
	if err := pl.check(); err != nil {
		return Result{}, err
	}
	if p < 0 || p >= pl.partitions {
		return Result{}, fmt.Errorf("%w: partition %d of %d", private.ErrOptions, p, pl.partitions)
	}
	if X == nil || X.IsEmpty() {
		return Result{}, fmt.Errorf("%w: partition %d has no rows", datasets.ErrFormat, p)
	}
	if r, c := X.Dims(); c != pl.prep.Dim() || r != len(y) {
		return Result{}, fmt.Errorf("%w: partition %d: %d x %d inputs and %d labels, want %d inputs a row and a label per row", datasets.ErrFormat, p, r, c, len(y), pl.prep.Dim())
	}
	return pl.trainSorted(ctx, p, n, X, y)
}

// trainSorted trains partition p on X and y, in position order.
func (pl *Plan) trainSorted(ctx context.Context, p, n int, X *mat.Dense, y []float64) (Result, error) {
	rows, _ := X.Dims()
	cfg, err := pl.config(p, n)
	if err != nil {
		return Result{}, err
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		return Result{}, err
	}
	m, run, err := tr.Train(ctx, X, y)
	if err != nil {
		return Result{}, fmt.Errorf("partition %d (%d rows): %w", p, rows, err)
	}
	r := *run
	r.Stats = trainer.Stats{}
	pl.log.WithFields(logrus.Fields{"partition": p, "rows": rows}).Debug("partition: partition trained")
	return Result{Partition: p, N: rows, W: m.W, Run: r}, nil
}

// sameSettings reports whether two partition runs used the same settings
// (everything but the rows: n, the seed and the step records).
func sameSettings(a, b trainer.Run) bool {
	norm := func(r trainer.Run) trainer.Run {
		r.N, r.Seed, r.StepsPerPass, r.PassMaxStep, r.PassMinStep, r.Stats = 0, 0, 0, nil, nil, trainer.Stats{}
		return r
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
