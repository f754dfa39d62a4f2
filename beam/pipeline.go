package stabbeam

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"   // gs:// shards and model files
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local shards and model files
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs" // memfs:// (tests)
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"    // s3:// shards and model files
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/partition"
)

// init registers the pipeline's types, coders and functions with Beam. The
// DoFns are registered by type (beam.RegisterType), and Beam calls their
// methods by reflection: register.DoFnNxM would call them directly, but
// each one instantiates its wrappers for every lifecycle signature, about
// 5 s of compile and 6 MB of binary a DoFn (40 s for this package, 50 MB
// of each binary that links it). They run once per shard, block, partition
// or release, and boundFn once per privacy ID (about 5% more CPU on IDs of
// two rows); the emitters, iterators, combiners and functions keep their
// generated callers, which cost little to build.
func init() {
	beam.RegisterCoder(reflect.TypeOf((*Pack)(nil)).Elem(), encodePack, decodePack)
	beam.RegisterType(reflect.TypeOf((*Count)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*ShardFile)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Block)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*splitFn)(nil)).Elem())
	register.Emitter1[Block]()
	beam.RegisterType(reflect.TypeOf((*partition.Layout)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*results)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*readShardFn)(nil)).Elem())
	register.Emitter1[string]()
	beam.RegisterType(reflect.TypeOf((*placement.IDCounts)(nil)).Elem())
	register.Combiner3[placement.IDCounts, string, placement.IDCounts](&idCountsFn{})
	beam.RegisterType(reflect.TypeOf((*layoutFn)(nil)).Elem())
	register.Emitter1[partition.Layout]()
	register.Emitter2[int, Pack]()
	register.Emitter1[Count]()
	beam.RegisterType(reflect.TypeOf((*trainFn)(nil)).Elem())
	register.Iter1[partition.Layout]()
	register.Iter1[Pack]()
	register.Emitter1[[]byte]()
	register.Combiner3[results, []byte, results](&combineFn{})
	register.Function2x1(addCounts)
	register.Function1x2(idOnce)
	register.Function2x1(oneID)
	beam.RegisterType(reflect.TypeOf((*releaseFn)(nil)).Elem())
	register.Emitter2[int, []byte]()
	beam.RegisterType(reflect.TypeOf((*sinkFn)(nil)).Elem())
	register.Function2x2(keyByID)
	beam.RegisterType(reflect.TypeOf((*boundFn)(nil)).Elem())
	register.Iter1[[]byte]()
}

// Count counts the data rows read and the training rows among them, and
// lists each shard read with its number of rows (the positions the model
// file publishes, see modelfile.PartitionInfo). It is one value in one
// worker, of a size that grows with the shards, not the rows.
//
// A fit per privacy ID is laid out and released from the counts of its
// distinct IDs (placement.IDCounts, idCountsFn), not from Count: the
// shards' row counts depend on how many rows each ID has.
type Count struct {
	Rows, Train int
	Shards      []placement.Shard
}

func addCounts(a, b Count) Count {
	return Count{Rows: a.Rows + b.Rows, Train: a.Train + b.Train, Shards: append(append([]placement.Shard(nil), a.Shards...), b.Shards...)}
}

// shards returns the shards of c in name order, each once with its rows:
// the blocks of a shard count its rows in parts.
func (c Count) shards() []placement.Shard {
	byName := make(map[string]int)
	var out []placement.Shard
	for _, sh := range c.Shards {
		if i, ok := byName[sh.Name]; ok {
			out[i].Rows += sh.Rows
			continue
		}
		byName[sh.Name] = len(out)
		out = append(out, sh)
	}
	slices.SortFunc(out, func(a, b placement.Shard) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// results collects the partitions' results (partition.Result as
// JSON) in the one combine.
type results struct {
	Items [][]byte
}

// chunkRows is the number of rows a reader parses at a time (a variable
// for the tests).
var chunkRows = 4096

// packRows is the most rows of one partition a reader packs into one
// element (Pack) before it emits it (a variable for the tests).
var packRows = 4096

// ErrLaunch is wrapped by every error of Run found at launch (Launch),
// before the pipeline runs: nothing ran, nothing was written.
var ErrLaunch = errors.New("stabbeam: refused at launch")

// ErrInput is wrapped by the errors about the shards: none matched, a shard
// that cannot be read, a header that differs from the first shard's. Those
// about their data (none matched, a malformed shard, another header, a
// header alone) wrap datasets.ErrFormat too, as stabpriv train's do.
var ErrInput = errors.New("stabbeam: bad input")

// Build adds the partitioned fit of the shards (all with the given
// header) to the pipeline under s, writing the model file to out:
//
//	shards -> reshuffle (the shards spread over the workers)
//	       -> split (per shard: blocks of rows) -> reshuffle
//	       -> read (per block: parse, preprocess, partition by position)
//	       -> counts -> layout (checked before any training)
//	       [per privacy ID: the blocks' IDs -> distinct -> counted
//	        (placement.IDCounts) -> layout and release]
//	       [-> group by privacy ID -> bound (c rows per ID, padded), per ID]
//	       -> group by partition -> train (per partition, rows in position order)
//	       -> combine (all results into one) -> release (noise once)
//	       -> group by key (the draw committed) -> sink (the model file)
//
// with the layout as a side input of the training (n for the automatic
// knobs, each partition's size) and the counts (of the rows and shards, and
// of the distinct privacy IDs) side inputs of the release.
func Build(s beam.Scope, cfg Config, header []string, shards []ShardFile, out string, force bool) {
	WriteRelease(s, Release(s, cfg, header, shards), out, force)
}

// Release adds the partitioned fit of the shards to the pipeline under s
// and returns the release: a PCollection of KV<int, []byte> holding one
// element, the model file's bytes under key 0 (WriteRelease writes it).
func Release(s beam.Scope, cfg Config, header []string, shards []ShardFile) beam.PCollection {
	s = s.Scope("stabpriv.partitioned")
	// A reshuffle after the listing: a fusion break, so that a runner
	// spreads the shards over its workers instead of reading them all in
	// the one worker that ran the Create.
	files := beam.Reshuffle(s, beam.Create(s, anySlice(shards)...))
	// Large shards are read in blocks of rows by several workers.
	blocks := beam.Reshuffle(s, beam.ParDo(s, &splitFn{}, files))
	rows, counts, idList := beam.ParDo3(s, &readShardFn{Cfg: cfg, Header: header}, blocks)
	total := beam.Combine(s, addCounts, counts)
	// A fit per row counts no privacy ID.
	ids := beam.Create(s, placement.IDCounts{})
	if cfg.PrivacyID != "" {
		ids = countIDs(s, cfg, idList)
	}
	layout := beam.ParDo(s, &layoutFn{Cfg: cfg, Header: header}, total, beam.SideInput{Input: ids})
	if cfg.PrivacyID != "" {
		// Per privacy ID: all the rows of one ID meet, c of them are kept
		// (padded), and they go to the ID's partition.
		byID := beam.GroupByKey(s, beam.ParDo(s, keyByID, rows))
		rows = beam.ParDo(s, &boundFn{Cfg: cfg, Header: header}, byID)
	}
	grouped := beam.GroupByKey(s, rows)
	trained := beam.ParDo(s, &trainFn{Cfg: cfg, Header: header}, grouped, beam.SideInput{Input: layout})
	all := beam.Combine(s, &combineFn{}, trained)
	return beam.ParDo(s, &releaseFn{Cfg: cfg, Header: header}, all, beam.SideInput{Input: total}, beam.SideInput{Input: ids})
}

// WriteRelease writes the release (a PCollection of KV<int, []byte>, the
// model file under key 0) to out, retry-safe: a GroupByKey after the step
// that draws the noise is a fusion break, so the runner commits the draw
// (the output of the release step's bundle, once) before the sink runs,
// and a retried sink bundle reads the committed draw again instead of
// re-running the release. The sink (sinkFn) writes atomically and
// idempotently, replacing a file at out only with force.
func WriteRelease(s beam.Scope, released beam.PCollection, out string, force bool) {
	s = s.Scope("stabpriv.sink")
	committed := beam.GroupByKey(s, released)
	beam.ParDo0(s, &sinkFn{Out: out, Force: force}, committed)
}

func anySlice[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// Launch runs every check that can run before the pipeline: the shards
// under the input root, the output location (CheckOutput: never one of the
// shards, an existing file only with force), every shard's header
// (Shards, ReadHeaders), and the settings for that header
// (Config.Plan: the flags, the budget, a sensitivity route). It returns
// the header and the shards.
func Launch(ctx context.Context, cfg Config, input, out string, force bool) ([]string, []ShardFile, error) {
	shards, err := Shards(ctx, input)
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, len(shards))
	for i, sh := range shards {
		paths[i] = sh.Path
	}
	if err := CheckOutput(ctx, out, force, paths...); err != nil {
		return nil, nil, err
	}
	header, err := ReadHeaders(ctx, shards)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cfg.Plan(header); err != nil {
		return nil, nil, err
	}
	return header, shards, nil
}

// Run runs the partitioned fit of the shards matching input on the named
// runner ("prism", the SDK's embedded portable runner, when empty) and writes the model
// file to out (replacing a model file there only if force). Every check of
// Launch runs first; any error of the pipeline (a shard missing or
// unreadable, a malformed row, more partitions than rows, a batch larger
// than a partition) fails it before the release step, so no model file is
// written.
//
// An error of Launch wraps ErrLaunch and the error of the check. An error
// of the pipeline wraps, besides the runner's error, the errors of
// pipelineCauses that the runner's report names (see failure), so that
// errors.Is tells malformed data (datasets.ErrFormat) and settings the data
// refuses (runflags.SettingsErrors) from other failures on every runner.
func Run(ctx context.Context, runner string, cfg Config, input, out string, force bool) error {
	header, shards, err := Launch(ctx, cfg, input, out, force)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrLaunch, err)
	}
	if runner == "" {
		runner = "prism"
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, cfg, header, shards, out, force)
	if _, err := beam.Run(ctx, runner, p); err != nil {
		return newFailure(fmt.Errorf("stabbeam: the pipeline failed, nothing was released: %w", err))
	}
	return nil
}

// pipelineCauses are the errors that a failure of the pipeline is matched
// against (failure): malformed data (a ragged row, a cell that is not a
// finite number, a CSV syntax error, another header, a shard of a header
// alone) and the settings the data refuses (more partitions than training
// rows, a batch larger than a partition), and an output the sink refuses
// (safefile.ErrTarget: a file another run wrote at --out meanwhile).
var pipelineCauses = append([]error{datasets.ErrFormat, safefile.ErrTarget}, runflags.SettingsErrors...)

// failure is a failure of the pipeline: the runner's error, and the errors
// of pipelineCauses its message names. A portable runner (prism, a job
// server) passes a worker's error on as text over the Fn API, so the error
// chain of the DoFn that failed is lost; every error of this module's steps
// keeps the message of its sentinel error in its text (fmt.Errorf with %w),
// so the sentinel is found by its message.
type failure struct {
	err    error
	causes []error
}

// newFailure returns err as a failure with the causes its message names,
// or err when it names none. Only the message before its first double
// quote is read: the steps quote every cell, ID and column name they
// report (%q), so text from the rows (a cell that reads "private: invalid
// options", say) cannot add a cause, and the exit status stays a function
// of the kind of error, not of the data.
func newFailure(err error) error {
	msg, _, _ := strings.Cut(err.Error(), `"`)
	var causes []error
	for _, c := range pipelineCauses {
		if !errors.Is(err, c) && strings.Contains(msg, c.Error()) {
			causes = append(causes, c)
		}
	}
	if len(causes) == 0 {
		return err
	}
	return &failure{err: err, causes: causes}
}

func (f *failure) Error() string   { return f.err.Error() }
func (f *failure) Unwrap() []error { return append([]error{f.err}, f.causes...) }
