package partition

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
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
// data-fitted standardization (standardize the shards in a separate step,
// outside the guarantee, if needed), a stratified split, a tolerance, a
// custom step schedule, classes read from the rows (declare them), a user
// graph model, the private principal components (they are for a single
// fit, private.Fit; a partitioned fit takes a random projection,
// Options.Project), a release method that does not release an SGD run
// (release.Method.SGD; a partitioned fit releases the average of the
// partitions' SGD runs); and partitions
// outside [1, placement.MaxPartitions]. Options.Select asks for the public
// rule of a partitioned fit (UseRule: RuleMechanism with the automatic
// knobs); a private selection is refused (UseRule says why).
// Errors wrap private.ErrOptions,
// datasets.ErrSchema, dp.ErrBudget or release.ErrConfig.
func NewPlan(header []string, schema datasets.Schema, budget dp.Budget, opts private.Options, partitions int) (*Plan, error) {
	if partitions < 1 || partitions > placement.MaxPartitions {
		return nil, fmt.Errorf("%w: %d partitions, want 1 to %d", private.ErrOptions, partitions, placement.MaxPartitions)
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
		return nil, fmt.Errorf("%w: preprocessing %s fits statistics on the rows of every partition; a partitioned fit takes public bounds or none", private.ErrOptions, pl.Mode)
	case opts.PCA > 0:
		return nil, fmt.Errorf("%w: the private principal components are for a single fit; a partitioned fit takes a random projection (Options.Project)", private.ErrOptions)
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
		return nil, fmt.Errorf("%w: %s does not release an SGD run's weights; a partitioned fit averages the partitions' SGD runs: use one of %s", private.ErrOptions, pl.Method.Name(), release.SGDList())
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
// shards' names and row counts and the seed (placement.PartitionLayout).
type Layout struct {
	Rows, Train int
	Sizes       []int
}

// Layout computes the layout of the shards (names and row counts, in any
// order) and checks it before any partition is trained: at most as many
// partitions as training rows (training IDs, for LayoutIDs), the batch size at most every non-empty
// partition's size, and a sensitivity route for every partition's run.
// Errors wrap private.ErrOptions or datasets.ErrFormat.
func (pl *Plan) Layout(shards []placement.Shard) (Layout, error) {
	shards = slices.Clone(shards)
	slices.SortFunc(shards, func(a, b placement.Shard) int { return cmp.Compare(a.Name, b.Name) })
	if pl.idCol >= 0 {
		return Layout{}, fmt.Errorf("%w: a fit per privacy ID is laid out by its IDs (LayoutIDs), not by the shards' row counts, which are not public", private.ErrOptions)
	}
	opts := pl.plan.Options
	rows, train, sizes, err := placement.PartitionLayout(shards, opts.Seed, opts.TestFrac, pl.partitions)
	if err != nil {
		return Layout{}, err
	}
	return pl.checkLayout(rows, train, sizes)
}

// LayoutIDs is Layout for a fit per privacy ID (private.Options.PrivacyID):
// the layout of the distinct IDs counted in ids (placement.IDCounts.Layout
// with c = MaxRowsPerID rows per ID; the counts, with the plan's seed, test
// fraction and partitions, of placement.CountID or CountIDs), checked as
// Layout checks it. Errors wrap private.ErrOptions or datasets.ErrFormat.
func (pl *Plan) LayoutIDs(ids placement.IDCounts) (Layout, error) {
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
		part, err := stability.AnalyzePartitioned(ref, sizes, pl.group, func(p int) uint64 { return placement.PartitionSeed(opts.Seed, p) })
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
// layout of the IDs alone gives it (placement.IDCounts.Layout), and the
// certificate publishes it (c and the sizes).
func (pl *Plan) checkPartitions(train int) error {
	if pl.idCol >= 0 {
		if ids := train / pl.group; ids < pl.partitions {
			return fmt.Errorf("%w: %d partitions for %d training privacy IDs; use at most as many partitions as training IDs", private.ErrOptions, pl.partitions, ids)
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
