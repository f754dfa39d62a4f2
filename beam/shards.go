package stabbeam

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/partition"
)

// ShardFile is a shard: its path (local, or a URL) and its name, the path
// relative to the input root (placement.ShardNames), which enters the
// position of each of its rows.
type ShardFile struct {
	Path, Name string
}

// Shards expands the pattern (a local glob or a URL such as
// gs://bucket/dir/dt=*/part-*.csv) to the shard files, sorted by path,
// each named by its path relative to the input root
// (placement.InputRoot): Hive-style layouts, where files in different
// directories share a base name, are distinct shards. No file under the
// root, or two with the same name, is an error wrapping ErrInput.
func Shards(ctx context.Context, pattern string) ([]ShardFile, error) {
	fsys, err := newFS(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: --data %s: %w", ErrInput, pattern, err)
	}
	defer fsys.Close()
	if !isURL(pattern) {
		pattern = filepath.Clean(pattern)
	}
	files, err := fsys.List(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: --data %s: %w", ErrInput, pattern, err)
	}
	root := placement.InputRoot(pattern)
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %w: --data %s matches no shard (input root %q)", ErrInput, datasets.ErrFormat, pattern, root)
	}
	sort.Strings(files)
	names, err := placement.ShardNames(root, files)
	if err != nil {
		return nil, fmt.Errorf("%w: --data %s: %w", ErrInput, pattern, err)
	}
	out := make([]ShardFile, len(files))
	for i, f := range files {
		out[i] = ShardFile{Path: f, Name: names[i]}
	}
	return out, nil
}

// openShard opens a shard through Beam's file systems and reads its header
// with a datasets.TableReader (the reader and the header rule of
// datasets.ReadTable).
func openShard(ctx context.Context, file string) (io.ReadCloser, *datasets.TableReader, error) {
	fsys, err := newFS(ctx, file)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, file, err)
	}
	rc, err := fsys.OpenRead(ctx, file)
	fsys.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, file, err)
	}
	br := bufio.NewReaderSize(rc, 1<<16)
	// A file that is not CSV at all (a model file among the shards) is
	// named as such, not as a malformed row.
	head, _ := br.Peek(partition.HeadBytes)
	if err := partition.CheckShardHead(file, head); err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	tr, err := datasets.NewTableReader(br, file)
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return rc, tr, nil
}

// ReadHeader returns the header of a shard, and checks that a data row
// follows it: a shard of a header alone (no data rows) is an error
// wrapping ErrInput, as a shard with no header is, so that both are
// refused at launch rather than in the read step.
func ReadHeader(ctx context.Context, file string) ([]string, error) {
	rc, tr, err := openShard(ctx, file)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	switch _, err := tr.Read(1); {
	case err == io.EOF:
		return nil, fmt.Errorf("%w: %w: shard %s: no data rows after the header", ErrInput, datasets.ErrFormat, file)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return tr.Columns(), nil
}

// headerWorkers bounds the shards whose headers are read at once.
const headerWorkers = 16

// ReadHeaders reads every shard's header (ReadHeader), a few at a time,
// and returns the first shard's; a shard that cannot be read, has no data
// row, or whose header differs from the first shard's, is an error
// wrapping ErrInput (the first in shard order), found before the pipeline
// runs.
func ReadHeaders(ctx context.Context, shards []ShardFile) ([]string, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("%w: no shard", ErrInput)
	}
	headers := make([][]string, len(shards))
	errs := make([]error, len(shards))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(headerWorkers, len(shards)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				headers[i], errs[i] = ReadHeader(ctx, shards[i].Path)
			}
		}()
	}
	for i := range shards {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, err := range errs {
		switch {
		case err != nil:
			return nil, err
		case !slices.Equal(headers[i], headers[0]):
			return nil, fmt.Errorf("%w: %w: shard %s: header %q differs from the first shard's (%s) %q", ErrInput, datasets.ErrFormat, shards[i].Path, strings.Join(headers[i], ","), shards[0].Path, strings.Join(headers[0], ","))
		}
	}
	return headers[0], nil
}

// readShardFn reads one block of a shard: it parses its rows in chunks
// against the schema, maps them with the public preprocessing
// (partition.Plan.Rows), packs the training rows of each partition (Pack,
// at most packRows rows each; in a fit per privacy ID, the rows of each ID
// in a chunk) and emits the packs keyed by partition, and the block's
// counts. In a fit per privacy ID it also emits the block's privacy IDs,
// held out or not, each once per block (an ID of several blocks or shards
// is emitted by each: countIDs removes the repeats).
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

func (f *readShardFn) ProcessElement(ctx context.Context, b Block, emit func(int, Pack), count func(Count), emitID func(string)) error {
	file, name := b.Path, b.Name
	rc, tr, err := openBlock(ctx, b, f.Header)
	if err != nil {
		return err
	}
	defer rc.Close()
	if header := tr.Columns(); !slices.Equal(header, f.Header) {
		return fmt.Errorf("%w: %w: shard %s: header %q differs from the first shard's %q", ErrInput, datasets.ErrFormat, file, strings.Join(header, ","), strings.Join(f.Header, ","))
	}
	var c Count
	seen := make(map[string]bool)
	d := f.plan.Dim()
	packs := make([]Pack, f.plan.Partitions())
	flush := func(p int) {
		if packs[p].Len() > 0 {
			emit(p, packs[p])
		}
		packs[p] = Pack{}
	}
	for {
		chunk, err := tr.Read(chunkRows)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w%s", ErrInput, err, b.where())
		}
		chunk.First += b.First
		rows, held, err := f.plan.Rows(chunk, name)
		if err != nil {
			return fmt.Errorf("%w%s", err, b.where())
		}
		if f.Cfg.PrivacyID != "" {
			// The rows of each ID in the chunk, a pack per ID, keyed by
			// the ID's partition.
			byID := make(map[string]*Pack)
			var order []string
			for _, r := range rows {
				pk := byID[r.ID]
				if pk == nil {
					pk = &Pack{D: d, ID: r.ID}
					byID[r.ID] = pk
					order = append(order, r.ID)
				}
				pk.add(r.Shard, r.Row, r.X, r.Y)
			}
			for _, id := range order {
				emit(placement.IDPartition(f.Cfg.Seed, id, f.Cfg.Partitions), *byID[id])
			}
		} else {
			for _, r := range rows {
				pk := &packs[r.Partition]
				if pk.Len() == 0 {
					*pk = Pack{D: d, Row: make([]int64, 0, packRows), X: make([]float64, 0, packRows*d), Y: make([]float64, 0, packRows)}
				}
				pk.add(r.Shard, r.Row, r.X, r.Y)
				if pk.Len() == packRows {
					flush(r.Partition)
				}
			}
		}
		for _, id := range f.plan.IDs(chunk) {
			if !seen[id] {
				seen[id] = true
				emitID(id)
			}
		}
		c.Rows += chunk.Len()
		c.Train += chunk.Len() - held
	}
	if c.Rows == 0 {
		return fmt.Errorf("%w: %w: shard %s: no data rows after the header", ErrInput, datasets.ErrFormat, file)
	}
	for p := range packs {
		flush(p)
	}
	c.Shards = []placement.Shard{{Name: name, Rows: c.Rows}}
	count(c)
	return nil
}
