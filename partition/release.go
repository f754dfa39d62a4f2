package partition

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// Release combines the results of every non-empty partition (in any order)
// into the weighted average sum_p (n_p/n) w_p, summed in partition order,
// and releases it once with the mechanism of the options (or returns it as
// it is, without a mechanism). shards are the shards' names and row counts.
// The certificate publishes the run record of the partitions' settings on
// all n training rows (the reference run) and the partition sizes; see Fit
// for the proof. Errors: datasets.ErrFormat for inconsistent results, and
// the stability analysis' or the release's errors, all before anything is
// released; private.ErrOptions for a zero Plan.
func (pl *Plan) Release(ctx context.Context, results []Result, shards []placement.Shard) (*modelfile.Released, error) {
	if err := pl.check(); err != nil {
		return nil, err
	}
	if pl.idCol >= 0 {
		return nil, fmt.Errorf("%w: a fit per privacy ID is released with its IDs (ReleaseIDs)", private.ErrOptions)
	}
	opts := pl.plan.Options
	shards = slices.Clone(shards)
	slices.SortFunc(shards, func(a, b placement.Shard) int { return cmp.Compare(a.Name, b.Name) })
	rows, trainRows, wantSizes, err := placement.PartitionLayout(shards, opts.Seed, opts.TestFrac, pl.partitions)
	if err != nil {
		return nil, err
	}
	info := modelfile.PartitionInfo{Count: pl.partitions, Sizes: wantSizes, Shards: shards}
	return pl.release(ctx, results, rows, trainRows, info)
}

// ReleaseIDs is Release for a fit per privacy ID: ids counts the distinct
// privacy IDs of the shards, held out or not (as LayoutIDs takes them),
// whose layout (placement.IDCounts.Layout) gives the partition sizes. The
// certificate publishes the number of IDs, c and the sizes, not the
// shards' row counts (which depend on how many rows each ID has), nor any
// ID. The proof is in Fit.
func (pl *Plan) ReleaseIDs(ctx context.Context, results []Result, ids placement.IDCounts) (*modelfile.Released, error) {
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
		case r.Run.Seed != placement.PartitionSeed(opts.Seed, r.Partition):
			return nil, fmt.Errorf("%w: partition %d was trained with seed %d, want %d", datasets.ErrFormat, r.Partition, r.Run.Seed, placement.PartitionSeed(opts.Seed, r.Partition))
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
		want, err := first.OnRows(r.N, placement.PartitionSeed(opts.Seed, r.Partition))
		if err != nil {
			return nil, err
		}
		got := r.Run
		got.Stats = trainer.Stats{}
		if !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("%w: partition %d's run record is not the settings' run on its %d rows", datasets.ErrFormat, r.Partition, r.N)
		}
	}
	part, err := stability.AnalyzePartitioned(ref, sizes, pl.group, func(p int) uint64 { return placement.PartitionSeed(opts.Seed, p) })
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
