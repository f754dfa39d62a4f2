package stabbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/partition"
)

// layoutFn computes the partition layout from the shards' counts (in a fit
// per privacy ID, from the counts of the distinct IDs, a side input) and
// checks it (partition.Plan.Layout and LayoutIDs: partitions against
// training rows, the batch size against every partition's size, the
// sensitivity routes) before any partition is trained: a bad setting fails
// the pipeline here, not after the training.
type layoutFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
}

func (f *layoutFn) ProcessElement(ctx context.Context, total Count, ids placement.IDCounts, emit func(partition.Layout)) error {
	plan, err := f.Cfg.Plan(f.Header)
	if err != nil {
		return err
	}
	if f.Cfg.PrivacyID != "" {
		l, err := plan.LayoutIDs(ids)
		if err != nil {
			return err
		}
		emit(l)
		return nil
	}
	l, err := plan.Layout(total.shards())
	if err != nil {
		return err
	}
	if l.Rows != total.Rows || l.Train != total.Train {
		return fmt.Errorf("%w: the shards hold %d rows (%d training rows), their layout %d (%d)", ErrInput, total.Rows, total.Train, l.Rows, l.Train)
	}
	emit(l)
	return nil
}

// trainFn trains one partition on its rows (partitionMatrix puts them
// in position order, the order partition.Plan.TrainPartition sorts them
// into) and emits its result. A runner may hand one bundle several
// partitions (prism hands it all of them): ProcessElement builds each
// partition's matrix from its packs and trains it in the background, at
// most GOMAXPROCS at a time, and FinishBundle waits for them and emits the
// results, so a bundle's partitions train in parallel as partition.Fit's
// do. Each run is a function of its rows and seed alone, so the order
// they finish in does not matter (the release sorts them); a failed run
// fails the bundle, and a retried bundle trains them all again.
type trainFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
	plan   *partition.Plan

	slots   chan struct{} // one per training that may run at once
	wg      sync.WaitGroup
	mu      sync.Mutex
	done    [][]byte // the results of the bundle's finished trainings
	failure error    // the first failure of the bundle's trainings
}

func (f *trainFn) Setup() error {
	var err error
	f.plan, err = f.Cfg.Plan(f.Header)
	f.slots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	return err
}

// The layout is an iterable side input, not a singleton: when the layout
// step fails (more partitions than training rows, say) its output is
// empty, and a runner that still schedules this step must not fail it
// with an error of its own ("a singleton side input of 0 values") that
// could be reported before the layout step's, changing the job's error
// and exit status. Without a layout the step does nothing.
func (f *trainFn) ProcessElement(ctx context.Context, p int, packs func(*Pack) bool, layouts func(*partition.Layout) bool, _ func([]byte)) error {
	var layout partition.Layout
	if !layouts(&layout) {
		return nil // the layout step failed: its error is the job's
	}
	if p < 0 || p >= len(layout.Sizes) {
		return fmt.Errorf("%w: rows for partition %d of %d", ErrInput, p, len(layout.Sizes))
	}
	X, y, err := partitionMatrix(p, layout.Sizes[p], f.plan.Dim(), f.Cfg.PrivacyID != "", packs)
	if err != nil {
		f.wait() // the bundle fails: nothing of it stays for the next
		return err
	}
	f.slots <- struct{}{}
	f.wg.Add(1)
	go func() {
		defer func() { <-f.slots; f.wg.Done() }()
		b, err := f.train(ctx, p, layout.Train, X, y)
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil && f.failure == nil {
			f.failure = err
		}
		f.done = append(f.done, b)
	}()
	return nil
}

// train trains partition p and returns its result as JSON.
func (f *trainFn) train(ctx context.Context, p, n int, X *mat.Dense, y []float64) ([]byte, error) {
	res, err := f.plan.TrainSorted(ctx, p, n, X, y)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// wait waits for the bundle's trainings and returns their results and
// first failure, leaving none for the next bundle.
func (f *trainFn) wait() ([][]byte, error) {
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	done, err := f.done, f.failure
	f.done, f.failure = nil, nil
	return done, err
}

func (f *trainFn) FinishBundle(_ context.Context, _ func(*partition.Layout) bool, emit func([]byte)) error {
	done, err := f.wait()
	if err != nil {
		return err
	}
	for _, b := range done {
		emit(b)
	}
	return nil
}

// keyByID keys a pack of a fit per privacy ID (the rows of one ID in one
// chunk) by its ID, for the grouping of each ID's rows (boundFn).
func keyByID(_ int, pk Pack) (string, Pack) { return pk.ID, pk }

// boundFn bounds the contribution of one privacy ID: of all its training
// rows (its packs, grouped by ID) it keeps c in slots and pads with null
// rows (partition.Plan.Bound), and emits them as one bounded pack keyed
// by the ID's partition.
type boundFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
	plan   *partition.Plan
}

func (f *boundFn) Setup() error {
	var err error
	f.plan, err = f.Cfg.Plan(f.Header)
	return err
}

func (f *boundFn) ProcessElement(ctx context.Context, id string, packs func(*Pack) bool, emit func(int, Pack)) error {
	part := placement.IDPartition(f.Cfg.Seed, id, f.Cfg.Partitions)
	var in []partition.Row
	var pk Pack
	for packs(&pk) {
		if err := pk.check(); err != nil {
			return err
		}
		if pk.ID != id || pk.Bounded {
			return fmt.Errorf("%w: a pack of privacy ID %q (bounded %v) grouped under %q", ErrInput, pk.ID, pk.Bounded, id)
		}
		in = append(in, pk.rows(part)...)
		pk = Pack{}
	}
	kept, err := f.plan.Bound(in)
	if err != nil {
		return err
	}
	out := Pack{D: f.plan.Dim(), ID: id, Bounded: true}
	for _, k := range kept {
		out.add(k.Shard, k.Row, k.X, k.Y)
	}
	emit(part, out)
	return nil
}

// idCountsFn counts distinct privacy IDs (placement.IDCounts): each input
// ID, which must come once (countIDs removes the repeats), adds its
// placement.CountID (IDCounts.AddID). The accumulator is the count, P + 1 integers whatever
// the number of IDs, so no worker holds the list of IDs: a runner adds
// each bundle's IDs into one accumulator and merges the accumulators. The
// sum does not depend on the order. An empty ID fails it with the error
// of the layout.
type idCountsFn struct {
	Seed       uint64  `json:"seed"`
	TestFrac   float64 `json:"test_frac"`
	Partitions int     `json:"partitions"`
}

func (idCountsFn) CreateAccumulator() placement.IDCounts { return placement.IDCounts{} }
func (f idCountsFn) AddInput(n placement.IDCounts, id string) (placement.IDCounts, error) {
	err := n.AddID(id, f.Seed, f.TestFrac, f.Partitions)
	return n, err
}
func (idCountsFn) MergeAccumulators(a, b placement.IDCounts) placement.IDCounts {
	a.Add(b)
	return a
}
func (idCountsFn) ExtractOutput(n placement.IDCounts) placement.IDCounts { return n }

// countIDs counts the distinct IDs of ids (a PCollection of strings, an ID
// of several blocks once per block) with Beam's transforms: the repeats
// are removed per ID (distinctIDs: keyed by the ID's text, combined per
// key), and the distinct IDs are counted by one global combine
// (idCountsFn), whose output is a single placement.IDCounts.
func countIDs(s beam.Scope, cfg Config, ids beam.PCollection) beam.PCollection {
	s = s.Scope("stabpriv.ids")
	return beam.Combine(s, &idCountsFn{Seed: cfg.Seed, TestFrac: cfg.TestFrac, Partitions: cfg.Partitions}, distinctIDs(s, ids))
}

// distinctIDs is Beam's filter.Distinct for strings: each ID keyed by
// itself, the repeats combined per key, the key kept. The SDK's filter
// package registers a generic DoFn whose wrappers cost 7 CPU-s to compile
// in every cold build of the worker; these two functions have plain
// generated callers (register.Function1x2, Function2x1).
func distinctIDs(s beam.Scope, ids beam.PCollection) beam.PCollection {
	s = s.Scope("stabpriv.distinct")
	return beam.DropValue(s, beam.CombinePerKey(s, oneID, beam.ParDo(s, idOnce, ids)))
}

// idOnce keys an ID by itself.
func idOnce(id string) (string, int) { return id, 1 }

// oneID combines the repeats of an ID into one.
func oneID(_, _ int) int { return 1 }
