package private

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// This file is partitioned training: the algorithm of FitPartitioned, in
// steps that a distributed runner (the Beam pipeline of the nested module
// github.com/stabpriv/stabpriv/beam) calls on its workers, so that the
// pipeline and FitPartitioned compute the same release from the same shards.
//
//	NewPartitionPlan   settings, checked before any row is read
//	PartitionPlan.Rows a chunk of one shard's rows -> model inputs with their
//	                   positions and partitions (a per-row map)
//	PartitionPlan.TrainPartition  one partition's rows -> its weights and run
//	PartitionPlan.Release         all partitions -> one weighted average,
//	                   noise once, the certificate

// partitionNeighbours is the neighbouring relation of a partitioned release.
const partitionNeighbours = "replace-one on the rows of the shards: two lists of shards with the same names, the same header and the same number of data rows in each shard, " +
	"that differ in one row (its features, its label or both), each row well-formed (every feature cell a finite number); both fits use the same Seed and number of partitions"

// MaxPartitions bounds the number of partitions of a partitioned fit.
const MaxPartitions = 1 << 20

// ShardName returns the name of a shard that enters the position of its rows:
// the last element of its path (a local path, or a URL such as
// gs://bucket/dir/part-0001.csv), so that the same file read through another
// mount point or file system keeps its rows' positions.
func ShardName(source string) string {
	return path.Base(filepath.ToSlash(source))
}

// positionHash is a seeded 64-bit hash of a row position (shard name, data
// row number, 1-based) under a domain tag: FNV-1a over the tag, the seed, the
// name and the row, then the splitmix64 finalizer. It reads no cell.
func positionHash(tag string, seed uint64, shard string, row int) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	add := func(b []byte) {
		for _, c := range b {
			h ^= uint64(c)
			h *= prime
		}
	}
	var buf [8]byte
	add([]byte(tag))
	binary.LittleEndian.PutUint64(buf[:], seed)
	add(buf[:])
	add([]byte(shard))
	add([]byte{0})
	binary.LittleEndian.PutUint64(buf[:], uint64(row))
	add(buf[:])
	return mix64(h)
}

// mix64 is the splitmix64 finalizer.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// PartitionOf returns the partition in [0, partitions) of the row at
// position (shard, row): a seeded hash of the position, never of the row's
// content, so the partition sizes are public.
func PartitionOf(seed uint64, shard string, row, partitions int) int {
	hi, _ := bits.Mul64(positionHash("stabpriv/partition", seed, shard, row), uint64(partitions))
	return int(hi)
}

// HeldOut reports whether the row at position (shard, row) is held out for
// testing: a seeded hash of the position, uniform in [0, 1), below testFrac.
// It is the split of a partitioned fit (Fit's datasets.SplitIndex needs the
// global row index, which a distributed reader does not have).
func HeldOut(seed uint64, shard string, row int, testFrac float64) bool {
	if testFrac <= 0 {
		return false
	}
	u := float64(positionHash("stabpriv/test", seed, shard, row)>>11) / (1 << 53)
	return u < testFrac
}

// partitionSeed is the trainer seed of partition p: public, and opts.Seed
// itself for partition 0 (so one partition trains as Fit does).
func partitionSeed(seed uint64, p int) uint64 {
	return seed + uint64(p)*0x9e3779b97f4a7c15
}

// PartitionPlan holds the checked settings of a partitioned fit: everything
// that is fixed before a row is read.
type PartitionPlan struct {
	schema     Schema
	budget     Budget
	opts       Options
	partitions int
	header     []string
	loss       losses.Loss
	task       losses.Task
	mode       Preprocess
	prep       *Preprocessing
	log        logrus.FieldLogger
}

// NewPartitionPlan checks the settings of a partitioned fit of tables with
// the given header. It refuses what the partitioned guarantee does not
// cover: a data-fitted standardization, a stratified split, a tolerance, a
// custom step schedule, classes read from the rows (declare them), a user
// graph model; and partitions outside [1, MaxPartitions]. Errors wrap
// ErrOptions, ErrSchema or ErrBudget.
func NewPartitionPlan(header []string, schema Schema, budget Budget, opts Options, partitions int) (*PartitionPlan, error) {
	if partitions < 1 || partitions > MaxPartitions {
		return nil, fmt.Errorf("%w: %d partitions, want 1 to %d", ErrOptions, partitions, MaxPartitions)
	}
	private := opts.Mechanism != ""
	loss, task, err := resolveLoss(opts.Trainer.Loss, schema)
	if err != nil {
		return nil, err
	}
	if err := checkBudget(opts.Mechanism, budget); err != nil {
		return nil, err
	}
	if err := schema.validate(task); err != nil {
		return nil, err
	}
	if task != losses.Regression && schema.Classes == nil {
		return nil, fmt.Errorf("%w: a partitioned fit needs the classes declared in advance (no worker sees every row)", ErrSchema)
	}
	mode := opts.Preprocess
	if mode == "" {
		if schema.Bounds == nil {
			return nil, fmt.Errorf("%w: a partitioned fit needs declared feature bounds (preprocessing bounds) or the preprocessing none", ErrOptions)
		}
		mode = Bounds
	}
	if err := mode.validate(); err != nil {
		return nil, err
	}
	if !mode.inside() {
		return nil, fmt.Errorf("%w: preprocessing %s fits statistics on the rows of every partition; a partitioned fit takes public bounds or none (standardize the shards in a separate step, outside the guarantee, if needed)", ErrOptions, mode)
	}
	switch {
	case !check.HalfOpenUnit(opts.TestFrac):
		return nil, checkTestFrac(opts.TestFrac)
	case opts.Stratify:
		return nil, fmt.Errorf("%w: a partitioned fit holds rows out by a hash of their position; a stratified split is not available", ErrOptions)
	case opts.Auto && !private:
		return nil, fmt.Errorf("%w: the automatic knobs are calibrated for a release; give a mechanism", ErrOptions)
	case opts.Trainer.Model != nil:
		return nil, fmt.Errorf("%w: a user graph model is not supported by a partitioned fit", ErrOptions)
	case opts.Trainer.Tolerance != 0:
		return nil, fmt.Errorf("%w: a tolerance stops each partition at a data-dependent pass; a partitioned fit runs the fixed passes", ErrOptions)
	case opts.Trainer.Schedule == trainer.Custom:
		return nil, fmt.Errorf("%w: a custom step schedule is not supported by a partitioned fit (its run record on all rows cannot be recomputed)", ErrOptions)
	}
	label := slices.Index(header, schema.Label)
	if label < 0 {
		return nil, fmt.Errorf("%w: no label column %q; the columns are %s", ErrSchema, schema.Label, strings.Join(header, ", "))
	}
	var features []string
	for j, c := range header {
		if j != label {
			features = append(features, c)
		}
	}
	if len(features) == 0 {
		return nil, fmt.Errorf("%w: no feature column besides the label %q", ErrSchema, schema.Label)
	}
	prep, err := newPreprocessing(mode, features, schema, nil)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		log = l
	}
	return &PartitionPlan{schema: schema, budget: budget, opts: opts, partitions: partitions,
		header: slices.Clone(header), loss: loss, task: task, mode: mode, prep: prep, log: log}, nil
}

// Dim returns the number of model inputs (the features and the bias).
func (pl *PartitionPlan) Dim() int { return pl.prep.Dim() }

// Partitions returns the number of partitions.
func (pl *PartitionPlan) Partitions() int { return pl.partitions }

// Header returns the header every shard must have.
func (pl *PartitionPlan) Header() []string { return slices.Clone(pl.header) }

// PartitionRow is one training row of a partitioned fit: its position (shard
// name, 1-based data row number in the shard), its partition and its model
// input (the public preprocessing applied, Dim values; a null row is zero).
type PartitionRow struct {
	Shard     string
	Row       int
	Partition int
	X         []float64
	Y         float64
}

// comparePosition orders rows by shard name, then row number.
func comparePosition(a, b PartitionRow) int {
	if c := strings.Compare(a.Shard, b.Shard); c != 0 {
		return c
	}
	return cmp.Compare(a.Row, b.Row)
}

// Rows parses a chunk t of the rows of the shard named shard, whose first
// row is data row firstRow (1-based) of the shard, against the schema, and
// returns its training rows (the rows not held out) as model inputs with
// their positions and partitions, and the number of rows held out. Every
// step is a per-row map with public constants. t's header must equal the
// plan's. Errors wrap ErrData or ErrSchema and name the shard and row.
func (pl *PartitionPlan) Rows(t *Table, shard string, firstRow int) ([]PartitionRow, int, error) {
	if t == nil {
		return nil, 0, fmt.Errorf("%w: %s: no table", ErrData, shard)
	}
	if !slices.Equal(t.Columns, pl.header) {
		return nil, 0, fmt.Errorf("%w: %s: header %q differs from the first shard's %q", ErrData, shard, strings.Join(t.Columns, ","), strings.Join(pl.header, ","))
	}
	if firstRow < 1 {
		return nil, 0, fmt.Errorf("%w: %s: first row %d, want >= 1", ErrData, shard, firstRow)
	}
	enc, err := encode(t, pl.schema, pl.task)
	if err != nil {
		return nil, 0, pl.rowError(shard, firstRow, err)
	}
	idx := make([]int, 0, enc.n)
	held := 0
	for i := range enc.n {
		if HeldOut(pl.opts.Seed, shard, firstRow+i, pl.opts.TestFrac) {
			held++
			continue
		}
		idx = append(idx, i)
	}
	X, y, _, err := apply(pl.prep, enc, idx)
	if err != nil {
		return nil, 0, pl.rowError(shard, firstRow, err)
	}
	out := make([]PartitionRow, len(idx))
	for r, i := range idx {
		row := firstRow + i
		out[r] = PartitionRow{Shard: shard, Row: row, Partition: PartitionOf(pl.opts.Seed, shard, row, pl.partitions), X: X.RawRowView(r), Y: y[r]}
	}
	return out, held, nil
}

// rowError names the shard and the first row of the chunk of an error of
// encode or apply (which count rows from the start of the chunk).
func (pl *PartitionPlan) rowError(shard string, firstRow int, err error) error {
	if firstRow == 1 {
		return fmt.Errorf("shard %s: %w", shard, err)
	}
	return fmt.Errorf("shard %s, chunk from data row %d (row numbers below count from it): %w", shard, firstRow, err)
}

// PartitionResult is what the training of one partition hands to the
// release: its weights (not private: they stay inside the training job),
// its size and its run record (constants only; Stats are zero).
type PartitionResult struct {
	Partition int
	N         int
	W         []float64
	Run       trainer.Run
}

// config returns the trainer settings of partition p with n training rows
// in all.
func (pl *PartitionPlan) config(p, n int) (trainer.Config, error) {
	cfg := pl.opts.Trainer
	cfg.Loss, cfg.Kappa, cfg.Seed, cfg.Logger = pl.loss, 1, partitionSeed(pl.opts.Seed, p), pl.opts.Logger
	if pl.opts.Mechanism != "" {
		// The trainer's progress (objective, gradient norm, clipped rows)
		// is a statistic of the data.
		cfg.Logger = nil
	}
	cfg.Classes = len(pl.schema.Classes)
	if pl.opts.Auto {
		k, err := AutoKnobs(n, pl.prep.Dim(), pl.loss.Outputs(cfg.Classes), pl.opts.Mechanism, pl.budget)
		if err != nil {
			return cfg, err
		}
		k.apply(&cfg)
	}
	return cfg, nil
}

// TrainPartition trains partition p on its rows, sorted by position first
// (so the run does not depend on the order rows arrive in), with the
// trainer settings of the options (the automatic knobs from n, the number
// of training rows of all partitions) and the trainer seed derived from
// (Seed, p). rows may be in any order; each must belong to p.
func (pl *PartitionPlan) TrainPartition(ctx context.Context, p, n int, rows []PartitionRow) (PartitionResult, error) {
	if p < 0 || p >= pl.partitions {
		return PartitionResult{}, fmt.Errorf("%w: partition %d of %d", ErrOptions, p, pl.partitions)
	}
	if len(rows) == 0 {
		return PartitionResult{}, fmt.Errorf("%w: partition %d has no rows", ErrData, p)
	}
	rows = slices.Clone(rows)
	slices.SortFunc(rows, comparePosition)
	d := pl.prep.Dim()
	X := mat.NewDense(len(rows), d, nil)
	y := make([]float64, len(rows))
	for r, row := range rows {
		if row.Partition != p || len(row.X) != d {
			return PartitionResult{}, fmt.Errorf("%w: row %s:%d of partition %d (%d inputs) handed to partition %d (%d inputs)", ErrData, row.Shard, row.Row, row.Partition, len(row.X), p, d)
		}
		if r > 0 && comparePosition(rows[r-1], row) == 0 {
			return PartitionResult{}, fmt.Errorf("%w: row %s:%d appears twice", ErrData, row.Shard, row.Row)
		}
		X.SetRow(r, row.X)
		y[r] = row.Y
	}
	cfg, err := pl.config(p, n)
	if err != nil {
		return PartitionResult{}, err
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		return PartitionResult{}, err
	}
	m, run, err := tr.Train(ctx, X, y)
	if err != nil {
		return PartitionResult{}, fmt.Errorf("partition %d (%d rows): %w", p, len(rows), err)
	}
	r := *run
	r.Stats = trainer.Stats{}
	pl.log.WithFields(logrus.Fields{"partition": p, "rows": len(rows)}).Debug("private: partition trained")
	return PartitionResult{Partition: p, N: len(rows), W: m.W, Run: r}, nil
}

// referenceRun returns the run record of the partitions' settings on all n
// training rows: the record the certificate publishes (see Release). run is
// a partition's record; the step records are recomputed for ceil(n/b) steps
// per pass by the schedule.
func referenceRun(run trainer.Run, n int, seed uint64) (trainer.Run, error) {
	r := run
	r.Stats = trainer.Stats{}
	r.N, r.Seed = n, seed
	m := (n + r.Batch - 1) / r.Batch
	r.StepsPerPass = m
	step := func(t int) float64 {
		switch r.Schedule {
		case trainer.InverseT.String():
			return 1 / (r.Mu * float64(t))
		case trainer.BoundedInverseT.String():
			eta := 1 / (r.Mu * float64(t))
			if beta := r.BetaS + r.Mu; beta > 0 {
				eta = math.Min(eta, 1/beta)
			}
			return eta
		}
		return r.Eta
	}
	switch r.Schedule {
	case trainer.Constant.String(), trainer.InverseT.String(), trainer.BoundedInverseT.String():
	default:
		return r, fmt.Errorf("%w: schedule %s: the run record on all rows cannot be recomputed", ErrOptions, r.Schedule)
	}
	r.PassMaxStep, r.PassMinStep = make([]float64, r.Passes), make([]float64, r.Passes)
	for j := range r.Passes {
		// The schedules are non-increasing in t.
		r.PassMaxStep[j], r.PassMinStep[j] = step(j*m+1), step((j+1)*m)
	}
	return r, nil
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

// partitionTolerance is the relative tolerance of the comparison between the
// partitioned sensitivity and the sensitivity of the reference run, which
// agree in exact arithmetic on the strongly convex route with b = 1 and are
// computed by recursions over different step counts: it is the rounding
// allowance stability.RoundingSlack that every route's Delta already carries.
const partitionTolerance = stability.RoundingSlack

// Release combines the results of every non-empty partition (in any order)
// into the weighted average sum_p (n_p/n) w_p, summed in partition order,
// and releases it once with the mechanism of the options (or returns it as
// it is, without a mechanism). rows is the number of rows read and
// trainRows = n the number of training rows (rows minus the held-out ones).
// The certificate publishes the run record of the partitions' settings on
// all n rows (the reference run) and the partition sizes; see
// FitPartitioned for the proof. Errors: ErrData for inconsistent results,
// the stability analysis' or perturb's errors, all before anything is
// released.
func (pl *PartitionPlan) Release(results []PartitionResult, shards []ShardInfo) (*Released, error) {
	shards = slices.Clone(shards)
	slices.SortFunc(shards, func(a, b ShardInfo) int { return cmp.Compare(a.Name, b.Name) })
	rows, trainRows, wantSizes, err := partitionLayout(shards, pl.opts.Seed, pl.opts.TestFrac, pl.partitions)
	if err != nil {
		return nil, err
	}
	results = slices.Clone(results)
	slices.SortFunc(results, func(a, b PartitionResult) int { return cmp.Compare(a.Partition, b.Partition) })
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: no partition has rows", ErrData)
	}
	if trainRows < pl.partitions {
		return nil, fmt.Errorf("%w: %d partitions for %d training rows; use at most as many partitions as rows", ErrOptions, pl.partitions, trainRows)
	}
	first := results[0].Run
	n := 0
	sizes := make([]int, pl.partitions)
	for i, r := range results {
		switch {
		case r.Partition < 0 || r.Partition >= pl.partitions:
			return nil, fmt.Errorf("%w: result of partition %d of %d", ErrData, r.Partition, pl.partitions)
		case i > 0 && results[i-1].Partition == r.Partition:
			return nil, fmt.Errorf("%w: two results of partition %d", ErrData, r.Partition)
		case r.N < 1 || r.Run.N != r.N || len(r.W) != r.Run.K*r.Run.D || r.Run.D != pl.prep.Dim():
			return nil, fmt.Errorf("%w: result of partition %d: %d rows, run of %d rows, %d weights for %d x %d", ErrData, r.Partition, r.N, r.Run.N, len(r.W), r.Run.K, r.Run.D)
		case !sameSettings(first, r.Run):
			return nil, fmt.Errorf("%w: partitions %d and %d were trained with different settings", ErrData, results[0].Partition, r.Partition)
		case r.Run.Seed != partitionSeed(pl.opts.Seed, r.Partition):
			return nil, fmt.Errorf("%w: partition %d was trained with seed %d, want %d", ErrData, r.Partition, r.Run.Seed, partitionSeed(pl.opts.Seed, r.Partition))
		}
		n += r.N
		sizes[r.Partition] = r.N
	}
	if n != trainRows || !slices.Equal(sizes, wantSizes) {
		return nil, fmt.Errorf("%w: the partitions hold %d rows (sizes %v), the shards' positions give %d (sizes %v)", ErrData, n, sizes, trainRows, wantSizes)
	}
	// The weighted average, in partition order.
	w := make([]float64, len(results[0].W))
	for _, r := range results {
		a := float64(r.N) / float64(n)
		for i, v := range r.W {
			w[i] += a * v
		}
	}
	model := &trainer.Model{Loss: first.Loss, K: first.K, D: first.D, W: w, Task: pl.task}
	ref, err := referenceRun(first, n, pl.opts.Seed)
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
		want, err := referenceRun(first, r.N, partitionSeed(pl.opts.Seed, r.Partition))
		if err != nil {
			return nil, err
		}
		if got := r.Run; !reflect.DeepEqual(stripStats(got), want) {
			return nil, fmt.Errorf("%w: partition %d's run record is not the settings' run on its %d rows", ErrData, r.Partition, r.N)
		}
	}
	info := PartitionInfo{Count: pl.partitions, Sizes: sizes, Shards: shards}
	terms, err := partitionTerms(ref, info, pl.opts.Seed)
	if err != nil {
		return nil, err
	}
	private := pl.opts.Mechanism != ""
	notes := partitionFitNotes(pl.mode, pl.prep, pl.task, pl.opts.TestFrac)
	out := &Released{
		Private:       private && isSecure(pl.opts.Noise),
		Schema:        publicSchema(pl.schema),
		Preprocessing: pl.prep,
		Stability:     repRef,
		Split:         SplitInfo{TestFrac: pl.opts.TestFrac, Seed: pl.opts.Seed, Rows: rows, TrainRows: n},
		AutoKnobs:     pl.opts.Auto,
		Partitions:    &info,
	}
	if !private {
		out.Model = model
		out.Run = &ref
		out.Notes = append(notes, terms.partNote, "not private: the weights are released as trained, without a privacy guarantee")
		return out, nil
	}
	if err := terms.check(repRef, n); err != nil {
		return nil, err
	}
	sens, assumptions, err := perturb.FromReport(repRef)
	if err != nil {
		return nil, err
	}
	tr := &Trained{s: &trainedState{id: stateIDs.Add(1), model: model, run: &ref, report: repRef, sens: sens, notes: append(notes, assumptions...)}}
	src := pl.opts.Noise
	if src == nil {
		src = perturb.Secure()
	}
	m, cert, err := tr.Release(pl.opts.Mechanism, pl.budget.Epsilon, pl.budget.Delta, src, terms.notes(repRef)...)
	if err != nil {
		return nil, err
	}
	cert.Neighbouring = partitionNeighbours
	cert.Ledger = []perturb.Charge{partitionCharge(pl.opts.Mechanism, pl.budget)}
	if !cert.Private {
		cert.NoiseSeed = seedOf(src, pl.opts.NoiseSeed)
	}
	out.Model, out.Certificate = m, cert
	return out, nil
}

// PartitionInfo is the public description of a partitioned fit, written
// into its model file: the number of partitions and the number of training
// rows of each (functions of the rows' positions and the seed only).
type PartitionInfo struct {
	Count int   `json:"count"`
	Sizes []int `json:"sizes"`
	// Shards are the shards' names and row counts, in name order: public
	// (neighbours share them), and all that the sizes, the held-out rows
	// and n depend on, so Verify recomputes the sizes from them.
	Shards []ShardInfo `json:"shards"`
}

// ShardInfo is a shard's name (ShardName) and its number of data rows.
type ShardInfo struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
}

// partitionLayout recomputes, from the public shard names and row counts,
// the number of rows read, the number of training rows and every
// partition's size: the functions HeldOut and PartitionOf of the positions
// and the seed.
func partitionLayout(shards []ShardInfo, seed uint64, testFrac float64, partitions int) (rows, train int, sizes []int, err error) {
	if partitions < 1 || partitions > MaxPartitions || len(shards) == 0 {
		return 0, 0, nil, fmt.Errorf("%w: %d partitions of %d shards", ErrData, partitions, len(shards))
	}
	sizes = make([]int, partitions)
	for i, sh := range shards {
		if sh.Rows < 1 || sh.Name == "" || i > 0 && shards[i-1].Name >= sh.Name {
			return 0, 0, nil, fmt.Errorf("%w: shard %q with %d rows: shards need distinct names in order and rows", ErrData, sh.Name, sh.Rows)
		}
		rows += sh.Rows
		for row := 1; row <= sh.Rows; row++ {
			if HeldOut(seed, sh.Name, row, testFrac) {
				continue
			}
			sizes[PartitionOf(seed, sh.Name, row, partitions)]++
			train++
		}
	}
	return rows, train, sizes, nil
}

// stripStats returns run without its statistics.
func stripStats(r trainer.Run) trainer.Run {
	r.Stats = trainer.Stats{}
	return r
}

// partitionTermsOf are the quantities of the partitioned bound.
type partitionTermsOf struct {
	// delta is max_p (n_p/n) Delta_p and worst the partition attaining it;
	// routed is false when some partition's run has no route.
	delta    float64
	worst    int
	routed   bool
	n        int
	partNote string
}

// partitionTerms recomputes each non-empty partition's run from the
// reference run ref (the settings on all n rows) and its size and seed,
// and returns the partitioned sensitivity max_p (n_p/n) Delta_p.
func partitionTerms(ref trainer.Run, info PartitionInfo, seed uint64) (partitionTermsOf, error) {
	n := 0
	for _, np := range info.Sizes {
		if np < 0 {
			return partitionTermsOf{}, fmt.Errorf("%w: partition sizes %v", ErrData, info.Sizes)
		}
		n += np
	}
	if info.Count < 1 || len(info.Sizes) != info.Count || n != ref.N {
		return partitionTermsOf{}, fmt.Errorf("%w: %d partitions with sizes %v for n = %d", ErrData, info.Count, info.Sizes, ref.N)
	}
	t := partitionTermsOf{worst: -1, routed: true, n: n}
	for p, np := range info.Sizes {
		if np == 0 {
			continue
		}
		run, err := referenceRun(ref, np, partitionSeed(seed, p))
		if err != nil {
			return partitionTermsOf{}, err
		}
		rep, err := stability.Analyze(&run)
		if err != nil {
			return partitionTermsOf{}, err
		}
		if rep.Chosen == 0 {
			t.routed = false
			continue
		}
		if d := float64(np) / float64(n) * rep.Delta; d > t.delta || t.worst < 0 {
			t.delta, t.worst = d, p
		}
	}
	t.partNote = fmt.Sprintf("partitioned training: %d partitions; a row's partition is a seeded hash (seed %d) of its position (shard name, data row number), never of its content, so the partition sizes are public: n = %d, n_p = %v. "+
		"Each partition was trained with the run constants below on its n_p rows in position order (ceil(n_p/b) steps per pass, trainer seed = seed + p * 0x9e3779b97f4a7c15 mod 2^64), "+
		"and the released weights are sum_p (n_p/n) w_p plus the noise, added once",
		info.Count, seed, n, info.Sizes)
	return t, nil
}

// check refuses a release whose partitioned sensitivity the reference run's
// route does not cover.
func (t partitionTermsOf) check(repRef *stability.Report, n int) error {
	if !t.routed {
		return fmt.Errorf("%w: no sensitivity route applies to the run of every partition, nothing may be released", perturb.ErrSensitivity)
	}
	if repRef.Chosen == 0 {
		return fmt.Errorf("%w: no sensitivity route applies to the settings on all %d rows, which the certificate publishes", perturb.ErrSensitivity, n)
	}
	if t.delta > repRef.Delta*(1+partitionTolerance) {
		return fmt.Errorf("%w: the partitioned sensitivity max_p (n_p/n) Delta_p = %.6g (partition %d) exceeds the %v route's %.6g for the settings on all %d rows, which a model file can state; "+
			"with batch 1 and the bounded inverse-t schedule (the default of a release) they agree, else choose a batch size that divides every partition's size",
			ErrOptions, t.delta, t.worst, repRef.Chosen, repRef.Delta, n)
	}
	return nil
}

// notes are the certificate notes a partitioned release adds.
func (t partitionTermsOf) notes(repRef *stability.Report) []string {
	refNote := fmt.Sprintf("the run record below is the reference run: the same settings on all n = %d rows; a replaced row changes one partition p, so the average moves by at most max_p (n_p/n) Delta_p = %.17g (partition %d, each Delta_p the route of that partition's run); "+
		"the noise is calibrated to the reference run's Delta = %.17g (route %v), which is at least that (private.FitPartitioned)", t.n, t.delta, t.worst, repRef.Delta, repRef.Chosen)
	return []string{t.partNote, refNote, "the weights of each partition are not private: they exist only inside the training job, whose workers are trusted with the rows"}
}

// partitionFitNotes are Fit's notes with the split note of a partitioned
// fit.
func partitionFitNotes(mode Preprocess, p *Preprocessing, task losses.Task, testFrac float64) []string {
	notes := fitNotes(mode, p, task)
	for i, s := range notes {
		if strings.HasPrefix(s, "the split depends only on") {
			notes[i] = fmt.Sprintf("the split holds a row out for testing when a seeded hash of its position (shard name, data row number) falls below the test fraction %g; it depends on positions, the fraction and the seed only, and the held-out rows are not used by the release", testFrac)
		}
	}
	return notes
}

// partitionCharge is the ledger entry of a partitioned release.
func partitionCharge(m perturb.Mechanism, b Budget) perturb.Charge {
	return perturb.Charge{Step: "release of the averaged weights of the partitions (output perturbation, once)", Mechanism: m, Epsilon: b.Epsilon, Delta: b.Delta}
}

// FitPartitioned is the partitioned form of Fit, the algorithm of the Beam
// pipeline (github.com/stabpriv/stabpriv/beam) run in one process: tables
// are the shards (each named by ShardName(Source); the names must be
// distinct, and the order of the list does not matter), all with the same
// header; every row goes to the partition PartitionOf(Seed, shard, row,
// partitions) and is held out when HeldOut(Seed, shard, row, TestFrac);
// each partition is trained on its rows in position order
// (TrainPartition), and the weighted average of the partitions' weights is
// released once (Release). Diagnostics are not computed. The preprocessing
// must be Bounds or None: a data-fitted standardization is refused.
//
// # The guarantee
//
// Neighbours (partitionNeighbours) are two lists of shards with the same
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
// What the certificate publishes. A model file (ModelFormat) states one run
// record, and Verify recomputes Delta from it. Release publishes the
// reference run, the partitions' settings on all n rows (ceil(n/b) steps
// per pass, the step records of the schedule for those steps, Seed), and
// calibrates the noise to its Delta = Delta_ref, after checking
// Delta_part <= Delta_ref (up to the rounding allowance
// stability.RoundingSlack): the release is then DP with room to spare.
// With b = 1 and the bounded inverse-t schedule (a release's default) both
// are 2L/(mu n) times the same slack. Where Delta_part > Delta_ref (b > 1
// with sizes that b does not divide; a constant-step route 4 run), the fit
// is refused rather than certified with a Delta that Verify cannot
// recompute. The partition count, the seed, n and the sizes n_p are
// written into the certificate's not-covered notes (public, as the proof
// needs them), as is the fact that the per-partition weights are not
// private inside the job.
//
// Errors: those of NewPartitionPlan, ErrData (shards with different headers
// or duplicate names, malformed rows, no training rows), ErrOptions (more
// partitions than training rows), and those of training, the stability
// analysis and perturb, all before anything is released.
func FitPartitioned(ctx context.Context, tables []*Table, schema Schema, budget Budget, opts Options, partitions int) (*Released, error) {
	if len(tables) == 0 || tables[0] == nil {
		return nil, fmt.Errorf("%w: no shards", ErrData)
	}
	pl, err := NewPartitionPlan(tables[0].Columns, schema, budget, opts, partitions)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]int, len(tables))
	byPart := make([][]PartitionRow, partitions)
	var shards []ShardInfo
	for i, t := range tables {
		if t == nil {
			return nil, fmt.Errorf("%w: shard %d is nil", ErrData, i+1)
		}
		name := ShardName(t.Source)
		if name == "" || name == "." || name == "/" {
			return nil, fmt.Errorf("%w: shard %d has no name (Table.Source)", ErrData, i+1)
		}
		if j, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: shards %d and %d are both named %q; a row's position is its shard's name and its row number", ErrData, j+1, i+1, name)
		}
		seen[name] = i
		train, _, err := pl.Rows(t, name, 1)
		if err != nil {
			return nil, err
		}
		shards = append(shards, ShardInfo{Name: name, Rows: len(t.Rows)})
		for _, r := range train {
			byPart[r.Partition] = append(byPart[r.Partition], r)
		}
	}
	n := 0
	for _, b := range byPart {
		n += len(b)
	}
	if n < partitions {
		return nil, fmt.Errorf("%w: %d partitions for %d training rows; use at most as many partitions as rows", ErrOptions, partitions, n)
	}
	// The partitions train concurrently, one goroutine per core; each is
	// a deterministic function of its rows and seed, so the order they
	// finish in does not matter (Release sorts the results).
	results := make([]PartitionResult, partitions)
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
	var done []PartitionResult
	for p, b := range byPart {
		if len(b) > 0 {
			done = append(done, results[p])
		}
	}
	return pl.Release(done, shards)
}
