package partition

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/private"
)

// Fit is the partitioned form of private.Fit, the algorithm of the Beam
// pipeline (github.com/stabpriv/stabpriv/beam) run in one process: tables
// are the shards, each named by its Source: its path relative to the input
// root (placement.ReadShards reads a pattern so, as the pipeline names its
// shards; a clean relative path, placement.CheckShardName), the names
// distinct and the order of the list irrelevant, all with the same header; every row goes to the partition placement.PartitionOf(Seed, shard,
// row, partitions) and is held out when placement.HeldOut(Seed, shard, row,
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
	var shards []placement.Shard
	for i, t := range tables {
		if t == nil {
			return nil, fmt.Errorf("%w: shard %d is nil", datasets.ErrFormat, i+1)
		}
		name := t.Source
		if err := placement.CheckShardName(name); err != nil {
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
		shards = append(shards, placement.Shard{Name: name, Rows: t.Len()})
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
	var counts placement.IDCounts
	if pl.idCol >= 0 {
		if counts, err = placement.CountIDs(ids, opts.Seed, opts.TestFrac, partitions); err != nil {
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
