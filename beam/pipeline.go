package stabbeam

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"   // gs:// shards and model files
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local shards and model files
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/private"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Row)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Count)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*results)(nil)).Elem())
	register.DoFn4x1[context.Context, string, func(int, Row), func(Count), error](&readShardFn{})
	register.Emitter2[int, Row]()
	register.Emitter1[Count]()
	register.DoFn5x1[context.Context, int, func(*Row) bool, Count, func([]byte), error](&trainFn{})
	register.Iter1[Row]()
	register.Emitter1[[]byte]()
	register.Combiner3[results, []byte, results](&combineFn{})
	register.Function2x1(addCounts)
	register.DoFn3x1[context.Context, results, Count, error](&releaseFn{})
}

// Row is a training row on its way to its partition: its position (shard
// name, 1-based data row number) and its model input (the public
// preprocessing applied).
type Row struct {
	Shard string
	Row   int
	X     []float64
	Y     float64
}

// Count counts the data rows read and the training rows among them, and
// lists each shard read with its number of rows (the positions the model
// file publishes, see modelfile.PartitionInfo).
type Count struct {
	Rows, Train int
	Shards      []datasets.Shard
}

func addCounts(a, b Count) Count {
	return Count{Rows: a.Rows + b.Rows, Train: a.Train + b.Train, Shards: append(append([]datasets.Shard(nil), a.Shards...), b.Shards...)}
}

// results collects the partitions' results (partition.Result as
// JSON) in the one combine.
type results struct {
	Items [][]byte
}

// chunkRows is the number of rows a reader parses at a time (a variable
// for the tests).
var chunkRows = 4096

// ErrInput is wrapped by the errors about the shards: none matched, a shard
// that cannot be read, a header that differs from the first shard's.
var ErrInput = errors.New("stabbeam: bad input")

// Shards expands the glob (a local pattern or a URL such as
// gs://bucket/dir/*.csv) to the shard files, sorted by name, and checks
// that their names (datasets.ShardName) are distinct.
func Shards(ctx context.Context, glob string) ([]string, error) {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("%w: --input %s: %w", ErrInput, glob, err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("%w: --input %s: %w", ErrInput, glob, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: --input %s matches no shard", ErrInput, glob)
	}
	sort.Strings(files)
	seen := make(map[string]string, len(files))
	for _, f := range files {
		name := datasets.ShardName(f)
		if g, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: shards %s and %s have the same name %q; a row's position is its shard's name and its row number", ErrInput, g, f, name)
		}
		seen[name] = f
	}
	return files, nil
}

// openShard opens a shard through Beam's file systems and reads its header
// with a datasets.TableReader (the reader and the header rule of
// datasets.ReadTable).
func openShard(ctx context.Context, file string) (io.ReadCloser, *datasets.TableReader, error) {
	fs, err := filesystem.New(ctx, file)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, file, err)
	}
	rc, err := fs.OpenRead(ctx, file)
	fs.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, file, err)
	}
	tr, err := datasets.NewTableReader(bufio.NewReaderSize(rc, 1<<20), file)
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return rc, tr, nil
}

// ReadHeader returns the header of a shard.
func ReadHeader(ctx context.Context, file string) ([]string, error) {
	rc, tr, err := openShard(ctx, file)
	if err != nil {
		return nil, err
	}
	rc.Close()
	return tr.Columns(), nil
}

// readShardFn reads one shard: it parses its rows in chunks against the
// schema, maps them with the public preprocessing (partition.Plan.
// Rows) and emits each training row keyed by its partition, and the shard's
// counts.
type readShardFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
	plan   *partition.Plan
}

func (f *readShardFn) Setup() error {
	var err error
	f.plan, err = f.Cfg.Plan(f.Header)
	return err
}

func (f *readShardFn) ProcessElement(ctx context.Context, file string, emit func(int, Row), count func(Count)) error {
	rc, tr, err := openShard(ctx, file)
	if err != nil {
		return err
	}
	defer rc.Close()
	name := datasets.ShardName(file)
	if header := tr.Columns(); !equal(header, f.Header) {
		return fmt.Errorf("%w: shard %s: header %q differs from the first shard's %q", ErrInput, file, strings.Join(header, ","), strings.Join(f.Header, ","))
	}
	var c Count
	for {
		chunk, err := tr.Read(chunkRows)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		rows, held, err := f.plan.Rows(chunk, name)
		if err != nil {
			return err
		}
		for _, r := range rows {
			emit(r.Partition, Row{Shard: r.Shard, Row: r.Row, X: r.X, Y: r.Y})
		}
		c.Rows += chunk.Len()
		c.Train += chunk.Len() - held
	}
	if c.Rows == 0 {
		return fmt.Errorf("%w: shard %s: no data rows after the header", ErrInput, file)
	}
	c.Shards = []datasets.Shard{{Name: name, Rows: c.Rows}}
	count(c)
	return nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// trainFn trains one partition on its rows (partition.Plan.
// TrainPartition sorts them by position) and emits its result.
type trainFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
	plan   *partition.Plan
}

func (f *trainFn) Setup() error {
	var err error
	f.plan, err = f.Cfg.Plan(f.Header)
	return err
}

func (f *trainFn) ProcessElement(ctx context.Context, p int, rows func(*Row) bool, total Count, emit func([]byte)) error {
	if total.Train < f.Cfg.Partitions {
		return fmt.Errorf("%w: %d partitions for %d training rows; use at most as many partitions as rows", private.ErrOptions, f.Cfg.Partitions, total.Train)
	}
	var in []partition.Row
	var r Row
	for rows(&r) {
		in = append(in, partition.Row{Shard: r.Shard, Row: r.Row, Partition: p, X: r.X, Y: r.Y})
		r = Row{}
	}
	res, err := f.plan.TrainPartition(ctx, p, total.Train, in)
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	emit(b)
	return nil
}

// combineFn collects the partitions' results into one value: the one
// combine of the pipeline, whose output the release averages in partition
// order (so the sum does not depend on the order results arrive in).
type combineFn struct{}

func (combineFn) CreateAccumulator() results { return results{} }
func (combineFn) AddInput(a results, b []byte) results {
	a.Items = append(a.Items, b)
	return a
}
func (combineFn) MergeAccumulators(a, b results) results {
	a.Items = append(a.Items, b.Items...)
	return a
}
func (combineFn) ExtractOutput(a results) results { return a }

// releaseFn averages the partitions' weights, adds the noise once
// (partition.Plan.Release) and writes the model file: it runs once,
// on one worker.
type releaseFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
	Out    string   `json:"out"`
}

func (f *releaseFn) ProcessElement(ctx context.Context, rs results, total Count) error {
	plan, err := f.Cfg.Plan(f.Header)
	if err != nil {
		return err
	}
	parts := make([]partition.Result, len(rs.Items))
	for i, b := range rs.Items {
		if err := json.Unmarshal(b, &parts[i]); err != nil {
			return fmt.Errorf("stabbeam: result of a partition: %w", err)
		}
	}
	rel, err := plan.Release(ctx, parts, total.Shards)
	if err != nil {
		return err
	}
	return writeModel(ctx, rel, f.Out)
}

// writeModel writes the model file: a local file appears whole or not at
// all (modelfile.Released.WriteModelFile); on other file systems the object is
// written through Beam's file system and closed.
func writeModel(ctx context.Context, rel *modelfile.Released, out string) error {
	if !strings.Contains(out, "://") {
		return rel.WriteFile(out)
	}
	var buf bytes.Buffer
	if err := rel.Write(&buf); err != nil {
		return err
	}
	fs, err := filesystem.New(ctx, out)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, out)
	if err != nil {
		return err
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Build adds the partitioned fit of the shards (files, all with the given
// header) to the pipeline under s, writing the model file to out:
//
//	shards -> read (per shard: parse, preprocess, partition by position)
//	       -> group by partition -> train (per partition, rows in position order)
//	       -> combine (all results into one) -> release (noise once, model file)
//
// with the row counts as a side input of the training (n for the automatic
// knobs and the check P <= n) and of the release.
func Build(s beam.Scope, cfg Config, header, files []string, out string) {
	s = s.Scope("stabpriv.partitioned")
	shards := beam.Create(s, anySlice(files)...)
	rows, counts := beam.ParDo2(s, &readShardFn{Cfg: cfg, Header: header}, shards)
	total := beam.Combine(s, addCounts, counts)
	grouped := beam.GroupByKey(s, rows)
	trained := beam.ParDo(s, &trainFn{Cfg: cfg, Header: header}, grouped, beam.SideInput{Input: total})
	all := beam.Combine(s, &combineFn{}, trained)
	beam.ParDo0(s, &releaseFn{Cfg: cfg, Header: header, Out: out}, all, beam.SideInput{Input: total})
}

func anySlice(v []string) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// Run runs the partitioned fit of the shards matching input on the named
// runner ("direct", the embedded runner, when empty) and writes the model
// file to out. The settings and the first shard's header are checked
// before the pipeline starts; any error of the pipeline (a shard missing or
// unreadable, a malformed row, more partitions than rows) fails it before
// the release step, so no model file is written.
func Run(ctx context.Context, runner string, cfg Config, input, out string) error {
	if out == "" {
		return fmt.Errorf("stabbeam: no model file to write (--out)")
	}
	files, err := Shards(ctx, input)
	if err != nil {
		return err
	}
	header, err := ReadHeader(ctx, files[0])
	if err != nil {
		return err
	}
	if _, err := cfg.Plan(header); err != nil {
		return err
	}
	if runner == "" {
		runner = "direct"
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, cfg, header, files, out)
	if _, err := beam.Run(ctx, runner, p); err != nil {
		return fmt.Errorf("stabbeam: the pipeline failed, nothing was released: %w", err)
	}
	return nil
}
