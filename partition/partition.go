package partition

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
	"gonum.org/v1/gonum/mat"
)

// Partitioned training: the algorithm of Fit, in steps that a distributed
// runner (the Beam pipeline of the nested module
// github.com/stabpriv/stabpriv/beam) calls on its workers, so that the
// pipeline and Fit compute the same release from the same shards.
//
//	NewPlan             settings, checked before any row is read
//	Plan.Rows           a chunk of one shard's rows -> model inputs with their
//	                    positions and partitions (a per-row map)
//	Plan.TrainPartition one partition's rows -> its weights and run
//	Plan.TrainSorted    the same from a matrix already in position order
//	Plan.Release        all partitions -> one weighted average, noise once,
//	                    the certificate

// Plan holds the checked settings of a partitioned fit: everything that is
// fixed before a row is read.
type Plan struct {
	plan       *private.Plan
	partitions int
	header     []string
	prep       *preprocess.RowMap
	log        logrus.FieldLogger
	// idCol is the privacy-ID column's index in header (-1: the unit of
	// privacy is a row) and group the rows kept per ID (1 without one).
	idCol, group int
}

// NewPlan checks the settings of a partitioned fit of tables with the given
// header. It refuses what the partitioned guarantee does not cover: a
// data-fitted standardization, a stratified split, a tolerance, a custom
// step schedule, classes read from the rows (declare them), a user graph
// model, a release method that does not release an SGD run
// (release.Method.SGD); and partitions
// outside [1, datasets.MaxPartitions]. Options.Select asks for the public
// rule of a partitioned fit (UseRule: RuleMechanism with the automatic
// knobs); a private selection is refused (UseRule says why).
// Errors wrap private.ErrOptions,
// datasets.ErrSchema, dp.ErrBudget or release.ErrConfig.
func NewPlan(header []string, schema datasets.Schema, budget dp.Budget, opts private.Options, partitions int) (*Plan, error) {
	if partitions < 1 || partitions > datasets.MaxPartitions {
		return nil, fmt.Errorf("%w: %d partitions, want 1 to %d", private.ErrOptions, partitions, datasets.MaxPartitions)
	}
	if opts.Preprocess == "" && !schema.Declared() {
		return nil, fmt.Errorf("%w: a partitioned fit needs declared feature bounds (preprocessing bounds) or the preprocessing none", private.ErrOptions)
	}
	rule := opts.Select != nil
	opts, err := UseRule(schema, budget, opts)
	if err != nil {
		return nil, err
	}
	pl, err := private.NewPlan(schema, budget, opts)
	if err != nil {
		return nil, err
	}
	switch {
	case pl.Task != losses.Regression && schema.Classes == nil:
		return nil, fmt.Errorf("%w: a partitioned fit needs the classes declared in advance (no worker sees every row)", datasets.ErrSchema)
	case !pl.Mode.Inside():
		return nil, fmt.Errorf("%w: preprocessing %s fits statistics on the rows of every partition; a partitioned fit takes public bounds or none (standardize the shards in a separate step, outside the guarantee, if needed)", private.ErrOptions, pl.Mode)
	case opts.PCA > 0:
		return nil, fmt.Errorf("%w: the private principal components are for a single fit (private.Fit); a partitioned fit takes a random projection (Options.Project)", private.ErrOptions)
	case opts.Stratify:
		return nil, fmt.Errorf("%w: a partitioned fit holds rows out by a hash of their position; a stratified split is not available", private.ErrOptions)
	case opts.Trainer.Model != nil:
		return nil, fmt.Errorf("%w: a user graph model is not supported by a partitioned fit", private.ErrOptions)
	case opts.Trainer.Tolerance != 0:
		return nil, fmt.Errorf("%w: a tolerance stops each partition at a data-dependent pass; a partitioned fit runs the fixed passes", private.ErrOptions)
	case opts.Trainer.Schedule == trainer.Custom:
		return nil, fmt.Errorf("%w: a custom step schedule is not supported by a partitioned fit (its run record on all rows cannot be recomputed)", private.ErrOptions)
	}
	if pl.Method != nil && !pl.Method.SGD() {
		return nil, fmt.Errorf("%w: %s does not release the weights of an SGD run; a partitioned fit releases the average of the partitions' SGD runs, with one of %s", private.ErrOptions, pl.Method.Name(), release.SGDList())
	}
	label := slices.Index(header, schema.Label)
	if label < 0 {
		return nil, fmt.Errorf("%w: no label column %q; the columns are %s", datasets.ErrSchema, schema.Label, strings.Join(header, ", "))
	}
	idCol, group := -1, 1
	if opts.PrivacyID != "" {
		if idCol = slices.Index(header, opts.PrivacyID); idCol < 0 {
			return nil, fmt.Errorf("%w: no privacy-ID column %q; the columns are %s", datasets.ErrSchema, opts.PrivacyID, strings.Join(header, ", "))
		}
		group = opts.MaxRowsPerID
	}
	var features []string
	for j, c := range header {
		if j != label && j != idCol {
			features = append(features, c)
		}
	}
	if len(features) == 0 {
		return nil, fmt.Errorf("%w: no feature column besides the label %q", datasets.ErrSchema, schema.Label)
	}
	prep, err := preprocess.NewRowMap(pl.Mode, features, schema, nil)
	if err != nil {
		return nil, err
	}
	if err := prep.SetProjection(opts.Project, opts.Seed); err != nil {
		return nil, fmt.Errorf("%w: %w", private.ErrOptions, err)
	}
	log := opts.Logger
	if log == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		log = l
	}
	out := &Plan{plan: pl, partitions: partitions, header: slices.Clone(header), prep: prep, log: log, idCol: idCol, group: group}
	if rule {
		log.WithFields(logrus.Fields{"mechanism": pl.Method.Name(), "rows per unit": group}).Info("partition: the public rule releases with the output family's mechanism and its automatic knobs at the unit's sensitivity (RuleMechanism)")
	}
	// The routes' conditions do not depend on n (a step against the
	// smoothness, mu, convexity): a run of the settings on a few null rows
	// tells, before any row is read, whether a release can be certified.
	if pl.Method != nil {
		if _, err := out.reference(pl.Options.Trainer.Batch*partitions + 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reference returns the record of a run of the settings on n rows with the
// fit's seed (the reference run of Release) and its stability analysis,
// without reading a row: the record of a run on b null rows (zero inputs,
// zero gradient) recomputed for n rows (trainer.Run.OnRows). It fails,
// wrapping stability.ErrNoRoute, when a release is asked for and no
// sensitivity route applies.
func (pl *Plan) reference(n int) (trainer.Run, error) {
	cfg, err := pl.plan.Config(n, pl.prep.Dim(), pl.plan.Options.Seed)
	if err != nil {
		return trainer.Run{}, err
	}
	b := max(cfg.Batch, 1)
	cfg.Logger, cfg.SkipObjective = nil, true
	tr, err := trainer.New(cfg)
	if err != nil {
		return trainer.Run{}, err
	}
	y := make([]float64, b)
	for _, v := range []float64{0, 1, -1} {
		if cfg.Loss == nil || cfg.Loss.CheckLabel(v, cfg.Classes) == nil {
			for i := range y {
				y[i] = v
			}
			break
		}
	}
	_, run, err := tr.Train(context.Background(), mat.NewDense(b, pl.prep.Dim(), nil), y)
	if err != nil {
		return trainer.Run{}, err
	}
	ref, err := run.OnRows(n, pl.plan.Options.Seed)
	if err != nil {
		return trainer.Run{}, err
	}
	if pl.plan.Method == nil {
		return ref, nil
	}
	rep, err := stability.Analyze(&ref)
	if err != nil {
		return trainer.Run{}, err
	}
	if _, err := rep.Best(); err != nil {
		return trainer.Run{}, fmt.Errorf("%w: no sensitivity route applies to these settings, nothing could be released: %w", private.ErrOptions, err)
	}
	return ref, nil
}

// Layout is the public layout of a partitioned fit: the number of data
// rows read, of training rows, and each partition's size, functions of the
// shards' names and row counts and the seed (datasets.PartitionLayout).
type Layout struct {
	Rows, Train int
	Sizes       []int
}

// Layout computes the layout of the shards (names and row counts, in any
// order) and checks it before any partition is trained: at most as many
// partitions as training rows (training IDs, for LayoutIDs), the batch size at most every non-empty
// partition's size, and a sensitivity route for every partition's run.
// Errors wrap private.ErrOptions or datasets.ErrFormat.
func (pl *Plan) Layout(shards []datasets.Shard) (Layout, error) {
	shards = slices.Clone(shards)
	slices.SortFunc(shards, func(a, b datasets.Shard) int { return cmp.Compare(a.Name, b.Name) })
	if pl.idCol >= 0 {
		return Layout{}, fmt.Errorf("%w: a fit per privacy ID is laid out by its IDs (LayoutIDs), not by the shards' row counts, which are not public", private.ErrOptions)
	}
	opts := pl.plan.Options
	rows, train, sizes, err := datasets.PartitionLayout(shards, opts.Seed, opts.TestFrac, pl.partitions)
	if err != nil {
		return Layout{}, err
	}
	return pl.checkLayout(rows, train, sizes)
}

// LayoutIDs is Layout for a fit per privacy ID (private.Options.PrivacyID):
// the layout of the distinct IDs counted in ids (datasets.IDCounts.Layout
// with c = MaxRowsPerID rows per ID; the counts, with the plan's seed, test
// fraction and partitions, of datasets.CountID or CountIDs), checked as
// Layout checks it. Errors wrap private.ErrOptions or datasets.ErrFormat.
func (pl *Plan) LayoutIDs(ids datasets.IDCounts) (Layout, error) {
	if err := pl.check(); err != nil {
		return Layout{}, err
	}
	if pl.idCol < 0 {
		return Layout{}, fmt.Errorf("%w: LayoutIDs for a fit without a privacy ID", private.ErrOptions)
	}
	rows, train, sizes, err := ids.Layout(pl.group, pl.partitions)
	if err != nil {
		return Layout{}, err
	}
	return pl.checkLayout(rows, train, sizes)
}

// checkLayout checks a layout before any partition is trained (see Layout).
func (pl *Plan) checkLayout(rows, train int, sizes []int) (Layout, error) {
	opts := pl.plan.Options
	if err := pl.checkPartitions(train); err != nil {
		return Layout{}, err
	}
	if err := pl.plan.CheckRows(train); err != nil {
		return Layout{}, err
	}
	if b := opts.Trainer.Batch; b > 1 {
		for p, np := range sizes {
			if np > 0 && np < b {
				return Layout{}, fmt.Errorf("%w: --batch %d exceeds the %d training rows of partition %d (sizes %v): use a batch of at most %d or fewer partitions", private.ErrOptions, b, np, p, sizes, slices.Min(nonZero(sizes)))
			}
		}
	}
	if pl.plan.Method != nil {
		ref, err := pl.reference(train)
		if err != nil {
			return Layout{}, err
		}
		part, err := stability.AnalyzePartitioned(ref, sizes, pl.group, func(p int) uint64 { return datasets.PartitionSeed(opts.Seed, p) })
		if err != nil {
			return Layout{}, err
		}
		if !part.Routed {
			return Layout{}, fmt.Errorf("%w: no sensitivity route applies to the run of every partition (sizes %v), nothing could be released", private.ErrOptions, sizes)
		}
	}
	return Layout{Rows: rows, Train: train, Sizes: sizes}, nil
}

// checkPartitions refuses more partitions than units of the train
// training rows: rows, or for a fit per privacy ID the training IDs,
// train/c (c rows each). A partition holds whole units, so more partitions
// than units leave some empty; at most as many do not prevent it (units
// go to partitions by a seeded hash, and a partition may get none: it
// then adds nothing to the average, and the bound holds). The count of training IDs is public: the
// layout of the IDs alone gives it (datasets.IDCounts.Layout), and the
// certificate publishes it (c and the sizes).
func (pl *Plan) checkPartitions(train int) error {
	if pl.idCol >= 0 {
		if ids := train / pl.group; ids < pl.partitions {
			return fmt.Errorf("%w: %d partitions for %d training privacy IDs; use at most as many partitions as training IDs (an ID's rows train in one partition)", private.ErrOptions, pl.partitions, ids)
		}
		return nil
	}
	if train < pl.partitions {
		return fmt.Errorf("%w: %d partitions for %d training rows; use at most as many partitions as rows", private.ErrOptions, pl.partitions, train)
	}
	return nil
}

// nonZero returns the positive values of v.
func nonZero(v []int) []int {
	var out []int
	for _, x := range v {
		if x > 0 {
			out = append(out, x)
		}
	}
	return out
}

// check returns an error wrapping private.ErrOptions for a Plan that
// NewPlan did not make (a zero or nil one), which holds no settings.
func (pl *Plan) check() error {
	if pl == nil || pl.plan == nil || pl.prep == nil || pl.log == nil {
		return fmt.Errorf("%w: a zero Plan (use NewPlan)", private.ErrOptions)
	}
	return nil
}

// Dim returns the number of model inputs (the features and the bias); 0
// for a zero Plan, whose Rows, TrainPartition and Release fail.
func (pl *Plan) Dim() int {
	if pl.check() != nil {
		return 0
	}
	return pl.prep.Dim()
}

// Partitions returns the number of partitions (0 for a zero Plan).
func (pl *Plan) Partitions() int {
	if pl == nil {
		return 0
	}
	return pl.partitions
}

// Header returns the header every shard must have (none for a zero Plan).
func (pl *Plan) Header() []string {
	if pl == nil {
		return nil
	}
	return slices.Clone(pl.header)
}

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
		out := datasets.HeldOut(opts.Seed, shard, chunk.First+i+1, opts.TestFrac)
		if ids != nil {
			out = datasets.IDHeldOut(opts.Seed, ids[i], opts.TestFrac)
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
			out[r].ID, out[r].Partition = ids[i], datasets.IDPartition(opts.Seed, ids[i], pl.partitions)
		} else {
			out[r].Partition = datasets.PartitionOf(opts.Seed, shard, row, pl.partitions)
		}
	}
	return out, held, nil
}

// IDs returns the distinct privacy IDs of a chunk's rows (held out or
// not), in the order of their first row, whose counts (datasets.CountIDs
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
// datasets.BoundContributions keeps (by their rank in position order) in
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
	if id == "" || p != datasets.IDPartition(pl.plan.Options.Seed, id, pl.partitions) {
		return nil, fmt.Errorf("%w: privacy ID %q in partition %d", datasets.ErrFormat, id, p)
	}
	c := pl.group
	out := make([]Row, 0, c)
	for _, k := range datasets.BoundContributions(pl.plan.Options.Seed, id, len(rows), c) {
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
	return pl.plan.Config(n, pl.prep.Dim(), datasets.PartitionSeed(pl.plan.Options.Seed, p))
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

// Release combines the results of every non-empty partition (in any order)
// into the weighted average sum_p (n_p/n) w_p, summed in partition order,
// and releases it once with the mechanism of the options (or returns it as
// it is, without a mechanism). shards are the shards' names and row counts.
// The certificate publishes the run record of the partitions' settings on
// all n training rows (the reference run) and the partition sizes; see Fit
// for the proof. Errors: datasets.ErrFormat for inconsistent results, and
// the stability analysis' or the release's errors, all before anything is
// released; private.ErrOptions for a zero Plan.
func (pl *Plan) Release(ctx context.Context, results []Result, shards []datasets.Shard) (*modelfile.Released, error) {
	if err := pl.check(); err != nil {
		return nil, err
	}
	if pl.idCol >= 0 {
		return nil, fmt.Errorf("%w: a fit per privacy ID is released with its IDs (ReleaseIDs)", private.ErrOptions)
	}
	opts := pl.plan.Options
	shards = slices.Clone(shards)
	slices.SortFunc(shards, func(a, b datasets.Shard) int { return cmp.Compare(a.Name, b.Name) })
	rows, trainRows, wantSizes, err := datasets.PartitionLayout(shards, opts.Seed, opts.TestFrac, pl.partitions)
	if err != nil {
		return nil, err
	}
	info := modelfile.PartitionInfo{Count: pl.partitions, Sizes: wantSizes, Shards: shards}
	return pl.release(ctx, results, rows, trainRows, info)
}

// ReleaseIDs is Release for a fit per privacy ID: ids counts the distinct
// privacy IDs of the shards, held out or not (as LayoutIDs takes them),
// whose layout (datasets.IDCounts.Layout) gives the partition sizes. The
// certificate publishes the number of IDs, c and the sizes, not the
// shards' row counts (which depend on how many rows each ID has), nor any
// ID. The proof is in Fit.
func (pl *Plan) ReleaseIDs(ctx context.Context, results []Result, ids datasets.IDCounts) (*modelfile.Released, error) {
	if err := pl.check(); err != nil {
		return nil, err
	}
	if pl.idCol < 0 {
		return nil, fmt.Errorf("%w: ReleaseIDs for a fit without a privacy ID", private.ErrOptions)
	}
	rows, trainRows, wantSizes, err := ids.Layout(pl.group, pl.partitions)
	if err != nil {
		return nil, err
	}
	info := modelfile.PartitionInfo{Count: pl.partitions, Sizes: wantSizes, PrivacyID: pl.header[pl.idCol], MaxRowsPerID: pl.group, IDs: ids.IDs}
	return pl.release(ctx, results, rows, trainRows, info)
}

// release is Release and ReleaseIDs from the layout: rows read (or c times
// the IDs), training rows, and info, the public description whose Sizes
// the results must have.
func (pl *Plan) release(ctx context.Context, results []Result, rows, trainRows int, info modelfile.PartitionInfo) (*modelfile.Released, error) {
	opts := pl.plan.Options
	wantSizes := info.Sizes
	results = slices.Clone(results)
	slices.SortFunc(results, func(a, b Result) int { return cmp.Compare(a.Partition, b.Partition) })
	// The settings first: when the layout refused them, no partition
	// trained, and the refusal (exit 2) must not turn into "no partition
	// has rows" (malformed data, exit 4) on a runner that still ran this.
	if err := pl.checkPartitions(trainRows); err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: no partition has rows", datasets.ErrFormat)
	}
	first := results[0].Run
	n := 0
	sizes := make([]int, pl.partitions)
	for i, r := range results {
		switch {
		case r.Partition < 0 || r.Partition >= pl.partitions:
			return nil, fmt.Errorf("%w: result of partition %d of %d", datasets.ErrFormat, r.Partition, pl.partitions)
		case i > 0 && results[i-1].Partition == r.Partition:
			return nil, fmt.Errorf("%w: two results of partition %d", datasets.ErrFormat, r.Partition)
		case r.N < 1 || r.Run.N != r.N || len(r.W) != r.Run.K*r.Run.D || r.Run.D != pl.prep.Dim():
			return nil, fmt.Errorf("%w: result of partition %d: %d rows, run of %d rows, %d weights for %d x %d", datasets.ErrFormat, r.Partition, r.N, r.Run.N, len(r.W), r.Run.K, r.Run.D)
		case !sameSettings(first, r.Run):
			return nil, fmt.Errorf("%w: partitions %d and %d were trained with different settings", datasets.ErrFormat, results[0].Partition, r.Partition)
		case r.Run.Seed != datasets.PartitionSeed(opts.Seed, r.Partition):
			return nil, fmt.Errorf("%w: partition %d was trained with seed %d, want %d", datasets.ErrFormat, r.Partition, r.Run.Seed, datasets.PartitionSeed(opts.Seed, r.Partition))
		}
		n += r.N
		sizes[r.Partition] = r.N
	}
	if n != trainRows || !slices.Equal(sizes, wantSizes) {
		return nil, fmt.Errorf("%w: the partitions hold %d rows (sizes %v), the shards' positions give %d (sizes %v)", datasets.ErrFormat, n, sizes, trainRows, wantSizes)
	}
	// The weighted average, in partition order.
	w := make([]float64, len(results[0].W))
	for _, r := range results {
		a := float64(r.N) / float64(n)
		for i, v := range r.W {
			w[i] += a * v
		}
	}
	model := &trainer.Model{Loss: first.Loss, K: first.K, D: first.D, W: w, Task: pl.plan.Task}
	ref, err := first.OnRows(n, opts.Seed)
	if err != nil {
		return nil, err
	}
	repRef, err := stability.Analyze(&ref)
	if err != nil {
		return nil, err
	}
	// Every partition's record is the reference run on its own rows and
	// seed: Verify recomputes the partitioned sensitivity from it.
	for _, r := range results {
		want, err := first.OnRows(r.N, datasets.PartitionSeed(opts.Seed, r.Partition))
		if err != nil {
			return nil, err
		}
		got := r.Run
		got.Stats = trainer.Stats{}
		if !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("%w: partition %d's run record is not the settings' run on its %d rows", datasets.ErrFormat, r.Partition, r.N)
		}
	}
	part, err := stability.AnalyzePartitioned(ref, sizes, pl.group, func(p int) uint64 { return datasets.PartitionSeed(opts.Seed, p) })
	if err != nil {
		return nil, err
	}
	out := &modelfile.Released{
		Schema:        modelfile.PublicSchema(pl.plan.Schema),
		Preprocessing: pl.prep,
		Stability:     repRef,
		Split:         modelfile.SplitInfo{TestFrac: opts.TestFrac, Seed: opts.Seed, Rows: rows, TrainRows: n},
		AutoKnobs:     opts.Auto,
		Partitions:    &info,
	}
	notes, err := out.PipelineNotes(pl.plan.Task)
	if err != nil {
		return nil, err
	}
	partNotes, err := modelfile.PartitionNotes(part, &info, opts.Seed)
	if err != nil {
		return nil, err
	}
	if pl.plan.Method == nil {
		out.Model = model
		out.Run = &ref
		out.Notes = append(notes, partNotes[0], "not private: the weights are released as trained, without a privacy guarantee")
		return out, nil
	}
	// The noise is calibrated to the sensitivity of the average,
	// max_p (n_p/n) Delta_p on every route (not the reference run's).
	sens, sensNotes, err := modelfile.PartitionSensitivity(part, repRef)
	if err != nil {
		return nil, err
	}
	tr, err := release.NewTrainedWith(model, &ref, sens, append(notes, sensNotes...))
	if err != nil {
		return nil, err
	}
	p, err := tr.Prepared(pl.plan.Method.Name(), pl.plan.Budget)
	if err != nil {
		return nil, err
	}
	rel, err := p.Release(ctx, opts.Noise, partNotes...)
	if err != nil {
		return nil, err
	}
	cert := rel.Certificate
	cert.Neighbouring = out.Neighbours()
	if err := modelfile.AccountPartition(cert, cert.Mechanism, pl.plan.Budget); err != nil {
		return nil, err
	}
	out.Private = cert.Private
	out.Model, out.Certificate = rel.Model, cert
	return out, nil
}

// Fit is the partitioned form of private.Fit, the algorithm of the Beam
// pipeline (github.com/stabpriv/stabpriv/beam) run in one process: tables
// are the shards, each named by its Source: its path relative to the input
// root (datasets.ReadShards reads a pattern so, as the pipeline names its
// shards; a clean relative path, datasets.CheckShardName), the names
// distinct and the order of the list irrelevant, all with the same header; every row goes to the partition datasets.PartitionOf(Seed, shard,
// row, partitions) and is held out when datasets.HeldOut(Seed, shard, row,
// TestFrac);
// each partition is trained on its rows in position order
// (TrainPartition), and the weighted average of the partitions' weights is
// released once (Release). Diagnostics are not computed. The preprocessing
// must be Bounds or None: a data-fitted standardization is refused.
//
// # The guarantee
//
// Neighbours (modelfile.PartitionNeighbours) are two lists of shards with the same
// names, header and row counts that differ in one row. The release is
// (eps, delta)-DP for that relation with the sensitivity the certificate
// states:
//
// Positions are public. The partition of a row, whether it is held out, the
// partition sizes n_p, the number n = sum_p n_p of training rows and the
// order of the rows inside a partition (by position) are functions of the
// positions and the seed only, so they are the same for both neighbours;
// the automatic knobs depend on (n, d, K, mechanism, budget) only, and each
// partition's trainer seed on (Seed, p) only.
//
// One partition changes. Let the neighbours differ in the row at position
// q. If q is held out, every partition's rows are equal and so are the
// releases. Otherwise q lies in partition p* = PartitionOf(q): the rows of
// every other partition are equal, so w_p = w'_p for p != p* (training is
// a deterministic function of the rows and the seed), and the rows of p*
// are replace-one neighbours of size n_p* in the same order. Hence
//
//	||wbar - wbar'|| = (n_p*/n) ||w_p* - w'_p*|| <= (n_p*/n) Delta_p* <= max_p (n_p/n) Delta_p =: Delta_part,
//
// where Delta_p is the sensitivity of partition p's run by its chosen
// stability route (stability.Analyze of its run record: each route bounds
// replace-one neighbours of the run's rows with a shared seed, wherever the
// differing row sits). The per-row maps (encoding, null rows, bounds, the
// unit-ball map) act on each row alone, as in Fit.
//
// The routes. Route 4 (strongly convex SGD) with the bounded inverse-t
// steps: Delta_p = 2L/(mu b ceil(n_p/b)) <= 2L/(mu n_p), so
// Delta_part <= max_p (n_p/n) 2L/(mu n_p) = 2L/(mu n), the sensitivity of
// one run on all n rows: averaging P partitions costs nothing in noise, with
// equality for b = 1. Route 4 with a constant step, and route 3 (convex SGD,
// where Delta_p = (2L/b) sum of the steps does not depend on n_p, so
// Delta_part is (max_p n_p/n) times the single-run bound, about 1/P of it):
// Delta_part as defined. Routes 1 and 2 (full-batch gradient descent to the
// minimizer) need b = n_p in every partition, which one batch size does not
// express: they do not apply, and a run that reaches no route is refused.
//
// What the certificate publishes. A model file (modelfile.Format) states one run
// record, and Verify recomputes Delta from it. Release publishes the
// reference run, the partitions' settings on all n rows (ceil(n/b) steps
// per pass, the step records of the schedule for those steps, Seed), and
// the partition sizes; every partition's record is the reference run
// recomputed for its n_p rows and seed (trainer.Run.OnRows), so Verify
// recomputes Delta_part (stability.AnalyzePartitioned) and the noise is
// calibrated to it on every route (modelfile.PartitionSensitivity), not to
// the reference run's Delta: on the convex and constant-step routes that
// would be about P times too much noise. The partition count, the seed, n
// and the sizes n_p are written into the certificate's not-covered notes
// (public, as the proof needs them), as is the fact that the
// per-partition weights are not private inside the job.
//
// Errors: those of NewPlan, datasets.ErrFormat (shards with different headers
// or duplicate names, malformed rows, no training rows), private.ErrOptions (more
// partitions than training rows), and those of training, the stability
// analysis and perturb, all before anything is released.
func Fit(ctx context.Context, tables []*datasets.Table, schema datasets.Schema, budget dp.Budget, opts private.Options, partitions int) (*modelfile.Released, error) {
	if len(tables) == 0 || tables[0] == nil {
		return nil, fmt.Errorf("%w: no shards", datasets.ErrFormat)
	}
	pl, err := NewPlan(tables[0].Columns, schema, budget, opts, partitions)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]int, len(tables))
	byPart := make([][]Row, partitions)
	// A fit per privacy ID gathers each ID's rows (byID) and every ID,
	// held out or not (ids, in order of first appearance).
	byID := make(map[string][]Row)
	idSeen := make(map[string]bool)
	var ids []string
	var shards []datasets.Shard
	for i, t := range tables {
		if t == nil {
			return nil, fmt.Errorf("%w: shard %d is nil", datasets.ErrFormat, i+1)
		}
		name := t.Source
		if err := datasets.CheckShardName(name); err != nil {
			return nil, fmt.Errorf("shard %d (Table.Source is its name): %w", i+1, err)
		}
		if j, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: shards %d and %d are both named %q; a row's position is its shard's name and its row number", datasets.ErrFormat, j+1, i+1, name)
		}
		seen[name] = i
		if t.First != 0 {
			return nil, fmt.Errorf("%w: shard %d (%s) is a chunk from data row %d; Fit takes whole shards", datasets.ErrFormat, i+1, name, t.First+1)
		}
		train, _, err := pl.Rows(t, name)
		if err != nil {
			return nil, err
		}
		shards = append(shards, datasets.Shard{Name: name, Rows: t.Len()})
		if pl.idCol >= 0 {
			for _, id := range pl.IDs(t) {
				if !idSeen[id] {
					idSeen[id] = true
					ids = append(ids, id)
				}
			}
			for _, r := range train {
				byID[r.ID] = append(byID[r.ID], r)
			}
			continue
		}
		for _, r := range train {
			byPart[r.Partition] = append(byPart[r.Partition], r)
		}
	}
	// Each privacy ID's contribution is bounded to c rows of its partition.
	for _, id := range ids {
		if rows, ok := byID[id]; ok {
			kept, err := pl.Bound(rows)
			if err != nil {
				return nil, err
			}
			byPart[kept[0].Partition] = append(byPart[kept[0].Partition], kept...)
		}
	}
	// Every check of the layout runs before any partition is trained.
	var layout Layout
	var counts datasets.IDCounts
	if pl.idCol >= 0 {
		if counts, err = datasets.CountIDs(ids, opts.Seed, opts.TestFrac, partitions); err != nil {
			return nil, err
		}
		layout, err = pl.LayoutIDs(counts)
	} else {
		layout, err = pl.Layout(shards)
	}
	if err != nil {
		return nil, err
	}
	n := layout.Train
	// The partitions train concurrently, one goroutine per core; each is
	// a deterministic function of its rows and seed, so the order they
	// finish in does not matter (Release sorts the results).
	results := make([]Result, partitions)
	errs := make([]error, partitions)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), partitions) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				results[p], errs[p] = pl.TrainPartition(ctx, p, n, byPart[p])
			}
		}()
	}
	for p, b := range byPart {
		if len(b) > 0 {
			jobs <- p
		}
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var done []Result
	for p, b := range byPart {
		if len(b) > 0 {
			done = append(done, results[p])
		}
	}
	if pl.idCol >= 0 {
		return pl.ReleaseIDs(ctx, done, counts)
	}
	return pl.Release(ctx, done, shards)
}
