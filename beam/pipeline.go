package stabbeam

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"   // gs:// shards and model files
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local shards and model files
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs" // memfs:// (tests)
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"    // s3:// shards and model files
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/runflags"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"gonum.org/v1/gonum/mat"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf((*Pack)(nil)).Elem(), encodePack, decodePack)
	beam.RegisterType(reflect.TypeOf((*Count)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*ShardFile)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Block)(nil)).Elem())
	register.DoFn3x1[context.Context, ShardFile, func(Block), error](&splitFn{})
	register.Emitter1[Block]()
	beam.RegisterType(reflect.TypeOf((*partition.Layout)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*results)(nil)).Elem())
	register.DoFn5x1[context.Context, Block, func(int, Pack), func(Count), func(string), error](&readShardFn{})
	register.Emitter1[string]()
	beam.RegisterType(reflect.TypeOf((*datasets.IDCounts)(nil)).Elem())
	register.Combiner3[datasets.IDCounts, string, datasets.IDCounts](&idCountsFn{})
	register.DoFn4x1[context.Context, Count, datasets.IDCounts, func(partition.Layout), error](&layoutFn{})
	register.Emitter1[partition.Layout]()
	register.Emitter2[int, Pack]()
	register.Emitter1[Count]()
	register.DoFn5x1[context.Context, int, func(*Pack) bool, func(*partition.Layout) bool, func([]byte), error](&trainFn{})
	register.Iter1[partition.Layout]()
	register.Iter1[Pack]()
	register.Emitter1[[]byte]()
	register.Combiner3[results, []byte, results](&combineFn{})
	register.Function2x1(addCounts)
	register.DoFn5x1[context.Context, results, Count, datasets.IDCounts, func(int, []byte), error](&releaseFn{})
	register.Emitter2[int, []byte]()
	register.DoFn3x1[context.Context, int, func(*[]byte) bool, error](&sinkFn{})
	register.Function2x2(keyByID)
	register.DoFn4x1[context.Context, string, func(*Pack) bool, func(int, Pack), error](&boundFn{})
	register.Iter1[[]byte]()
}

// Count counts the data rows read and the training rows among them, and
// lists each shard read with its number of rows (the positions the model
// file publishes, see modelfile.PartitionInfo). It is one value in one
// worker, of a size that grows with the shards, not the rows.
//
// A fit per privacy ID is laid out and released from the counts of its
// distinct IDs (datasets.IDCounts, idCountsFn), not from Count: the
// shards' row counts depend on how many rows each ID has.
type Count struct {
	Rows, Train int
	Shards      []datasets.Shard
}

func addCounts(a, b Count) Count {
	return Count{Rows: a.Rows + b.Rows, Train: a.Train + b.Train, Shards: append(append([]datasets.Shard(nil), a.Shards...), b.Shards...)}
}

// shards returns the shards of c in name order, each once with its rows:
// the blocks of a shard count its rows in parts.
func (c Count) shards() []datasets.Shard {
	byName := make(map[string]int)
	var out []datasets.Shard
	for _, sh := range c.Shards {
		if i, ok := byName[sh.Name]; ok {
			out[i].Rows += sh.Rows
			continue
		}
		byName[sh.Name] = len(out)
		out = append(out, sh)
	}
	slices.SortFunc(out, func(a, b datasets.Shard) int { return strings.Compare(a.Name, b.Name) })
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

// ShardFile is a shard: its path (local, or a URL) and its name, the path
// relative to the input root (datasets.ShardNames), which enters the
// position of each of its rows.
type ShardFile struct {
	Path, Name string
}

// Shards expands the pattern (a local glob or a URL such as
// gs://bucket/dir/dt=*/part-*.csv) to the shard files, sorted by path,
// each named by its path relative to the input root
// (datasets.InputRoot): Hive-style layouts, where files in different
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
	root := datasets.InputRoot(pattern)
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %w: --data %s matches no shard (input root %q)", ErrInput, datasets.ErrFormat, pattern, root)
	}
	sort.Strings(files)
	names, err := datasets.ShardNames(root, files)
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
				emit(datasets.IDPartition(f.Cfg.Seed, id, f.Cfg.Partitions), *byID[id])
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
	c.Shards = []datasets.Shard{{Name: name, Rows: c.Rows}}
	count(c)
	return nil
}

// Block is a range of a shard's lines that one worker reads: bytes
// [Offset, Offset+Length) of the file (Length < 0: to its end), holding
// the data rows First+1, First+2, ... of the shard. The block at Offset 0
// starts with the header.
type Block struct {
	Path, Name     string
	Offset, Length int64
	First          int
}

// where says, for an error in a block after the first, which block: its
// line numbers count from the block's first line (its data row numbers are
// the shard's).
func (b Block) where() string {
	if b.First == 0 {
		return ""
	}
	return fmt.Sprintf(" (in the block of %s from data row %d, byte %d: line numbers count from the block's first line)", b.Path, b.First+1, b.Offset)
}

// blockRows is the number of data rows of a block (a variable for the
// tests).
var blockRows = 1 << 20

// splitFn splits a shard into blocks of blockRows data rows, so that the
// rows of a large shard are parsed and mapped by several workers: it scans
// the file once (rowCuts: lines and quotes, no cell parsed) and cuts at the
// start of every blockRows-th data row. A row keeps its position (shard
// name, data row number in the shard): a block knows the rows before it.
// A quoted cell may hold line ends, so the scan knows at each line whether
// it is inside a quoted cell, and cuts only where a row starts; a shard
// whose quotes do not pair up (an unterminated quoted cell) is one block,
// whose read reports the error as the read of the whole file does.
type splitFn struct{}

func (splitFn) ProcessElement(ctx context.Context, shard ShardFile, emit func(Block)) error {
	whole := Block{Path: shard.Path, Name: shard.Name, Length: -1}
	if blockRows <= 0 {
		emit(whole)
		return nil
	}
	fsys, err := newFS(ctx, shard.Path)
	if err != nil {
		return fmt.Errorf("%w: shard %s: %w", ErrInput, shard.Path, err)
	}
	rc, err := fsys.OpenRead(ctx, shard.Path)
	fsys.Close()
	if err != nil {
		return fmt.Errorf("%w: shard %s: %w", ErrInput, shard.Path, err)
	}
	defer rc.Close()
	cuts, err := rowCuts(rc, blockRows)
	if err != nil {
		return fmt.Errorf("%w: shard %s: %w", ErrInput, shard.Path, err)
	}
	start := whole
	for _, c := range cuts {
		start.Length = c.Offset - start.Offset
		emit(start)
		start = Block{Path: shard.Path, Name: shard.Name, Offset: c.Offset, First: c.First, Length: -1}
	}
	emit(start)
	return nil
}

// cut is where a block starts: the byte offset of a data row's first line,
// and the data rows before it.
type cut struct {
	Offset int64
	First  int
}

// quote is the byte that opens and closes a quoted cell.
var quote = []byte{'"'}

// rowCuts scans CSV input (the header first) and returns where the data
// rows every, 2 every, ... start (none when the input has at most every
// data rows), following the reader's rule for records (datasets.TableReader,
// RFC 4180 as encoding/csv reads it): a line end is \n or \r\n (or a last
// \r); a line that starts outside a quoted cell starts a record unless it
// is empty; a record ends at the first line end outside a quoted cell.
//
// Whether a line end is inside a quoted cell is known only from the start
// of the input: in a file that encoding/csv reads without error every quote
// either opens a quoted cell, closes it, or is one of a doubled pair inside
// it, so a line end is inside a quoted cell exactly when an odd number of
// quotes precede it. The scan counts them (bytes.Count, no cell parsed).
// Input whose quotes do not pair up is malformed, and the scan then returns
// no cuts: one block, whose read fails with the reader's error. A file with
// an even count that encoding/csv refuses (a quote inside an unquoted cell,
// twice) may get cuts that are not row starts; the read of the block
// holding the first malformed record fails all the same, since every cut
// before it is a row start.
func rowCuts(r io.Reader, every int) ([]cut, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var cuts []cut
	var offset int64
	rows, header, inQuote := 0, false, false
	for {
		var n int64
		starts := !inQuote // the line starts a record, or is an empty line
		empty := false
		line, err := br.ReadSlice('\n')
		first := true
		for {
			n += int64(len(line))
			if bytes.IndexByte(line, '"') >= 0 && bytes.Count(line, quote)%2 == 1 {
				inQuote = !inQuote
			}
			if first {
				// The reader's rule: a line end is \n or \r\n (or a
				// last \r), and a line empty without it is no row.
				t := line
				if k := len(t); k > 0 && t[k-1] == '\n' {
					t = t[:k-1]
					if k := len(t); k > 0 && t[k-1] == '\r' {
						t = t[:k-1]
					}
				} else if k := len(t); err == io.EOF && k > 0 && t[k-1] == '\r' {
					t = t[:k-1]
				}
				empty, first = len(t) == 0, false
			}
			if err != bufio.ErrBufferFull {
				break
			}
			empty = false // a line longer than the buffer
			line, err = br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if starts && n > 0 && !empty {
			switch {
			case !header:
				header = true
			case rows%every == 0 && rows > 0:
				cuts = append(cuts, cut{Offset: offset, First: rows})
				rows++
			default:
				rows++
			}
		}
		offset += n
		if err == io.EOF {
			break
		}
	}
	if inQuote {
		return nil, nil
	}
	return cuts, nil
}

// openBlock opens a block of a shard for reading: the block at the file's
// start with its header (openShard), another after skipping to its offset,
// read as a file without a header whose columns are header.
func openBlock(ctx context.Context, b Block, header []string) (io.ReadCloser, *datasets.TableReader, error) {
	if b.Offset == 0 && b.Length < 0 {
		return openShard(ctx, b.Path)
	}
	fsys, err := newFS(ctx, b.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, b.Path, err)
	}
	rc, err := fsys.OpenRead(ctx, b.Path)
	fsys.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, b.Path, err)
	}
	if sk, ok := rc.(io.Seeker); ok {
		_, err = sk.Seek(b.Offset, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, rc, b.Offset)
	}
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: shard %s: to byte %d: %w", ErrInput, b.Path, b.Offset, err)
	}
	var r io.Reader = rc
	if b.Length >= 0 {
		r = io.LimitReader(rc, b.Length)
	}
	var tr *datasets.TableReader
	if b.Offset == 0 {
		tr, err = datasets.NewTableReader(bufio.NewReaderSize(r, 1<<16), b.Path)
	} else {
		tr, err = datasets.NewTableReaderHeader(bufio.NewReaderSize(r, 1<<16), b.Path, header)
	}
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{r, rc}, tr, nil
}

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

func (f *layoutFn) ProcessElement(ctx context.Context, total Count, ids datasets.IDCounts, emit func(partition.Layout)) error {
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
	part := datasets.IDPartition(f.Cfg.Seed, id, f.Cfg.Partitions)
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

// idCountsFn counts distinct privacy IDs (datasets.IDCounts): each input
// ID, which must come once (countIDs removes the repeats), adds its
// datasets.CountID (IDCounts.AddID). The accumulator is the count, P + 1 integers whatever
// the number of IDs, so no worker holds the list of IDs: a runner adds
// each bundle's IDs into one accumulator and merges the accumulators. The
// sum does not depend on the order. An empty ID fails it with the error
// of the layout.
type idCountsFn struct {
	Seed       uint64  `json:"seed"`
	TestFrac   float64 `json:"test_frac"`
	Partitions int     `json:"partitions"`
}

func (idCountsFn) CreateAccumulator() datasets.IDCounts { return datasets.IDCounts{} }
func (f idCountsFn) AddInput(n datasets.IDCounts, id string) (datasets.IDCounts, error) {
	err := n.AddID(id, f.Seed, f.TestFrac, f.Partitions)
	return n, err
}
func (idCountsFn) MergeAccumulators(a, b datasets.IDCounts) datasets.IDCounts {
	a.Add(b)
	return a
}
func (idCountsFn) ExtractOutput(n datasets.IDCounts) datasets.IDCounts { return n }

// countIDs counts the distinct IDs of ids (a PCollection of strings, an ID
// of several blocks once per block) with Beam's transforms: the repeats
// are removed per ID (filter.Distinct: keyed by the ID's text, combined
// per key), and the distinct IDs are counted by one global combine
// (idCountsFn), whose output is a single datasets.IDCounts.
func countIDs(s beam.Scope, cfg Config, ids beam.PCollection) beam.PCollection {
	s = s.Scope("stabpriv.ids")
	return beam.Combine(s, &idCountsFn{Seed: cfg.Seed, TestFrac: cfg.TestFrac, Partitions: cfg.Partitions}, filter.Distinct(s, ids))
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

// releaseFn averages the partitions' weights and adds the noise once
// (partition.Plan.Release), and emits the model file's bytes under the one
// key 0: the draw is an element of a PCollection, which the runner commits
// before the sink reads it (see Build).
type releaseFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
}

// releases counts the draws of the release step (a retried bundle that
// draws again counts twice; only one draw is ever committed).
var releases = beam.NewCounter("stabpriv", "releases-drawn")

func (f *releaseFn) ProcessElement(ctx context.Context, rs results, total Count, ids datasets.IDCounts, emit func(int, []byte)) error {
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
	var rel *modelfile.Released
	if f.Cfg.PrivacyID != "" {
		rel, err = plan.ReleaseIDs(ctx, parts, ids)
	} else {
		rel, err = plan.Release(ctx, parts, total.shards())
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rel.Write(&buf); err != nil {
		return err
	}
	releases.Inc(ctx, 1)
	emit(0, buf.Bytes())
	return nil
}

// sinkFn writes the committed release, the one value of key 0, to the
// model file: whole or not at all (a local file is renamed into place, an
// object is committed when its writer closes), and idempotent, since a
// retried bundle of the sink writes the same committed bytes again. More
// than one release under the key (which a runner that commits a bundle's
// output once never produces) is refused, and nothing is written.
type sinkFn struct {
	Out string `json:"out"`
	// Force replaces a file at Out (--force); without it the sink never
	// replaces one (writeFile).
	Force bool `json:"force"`
}

func (f *sinkFn) ProcessElement(ctx context.Context, _ int, files func(*[]byte) bool) error {
	var file, other []byte
	if !files(&file) {
		return fmt.Errorf("stabbeam: no release to write")
	}
	if files(&other) {
		return fmt.Errorf("stabbeam: more than one release reached the sink; nothing was written")
	}
	if err := writeFile(ctx, f.Out, file, f.Force); err != nil {
		return err
	}
	if afterSinkWrite != nil {
		return afterSinkWrite(f.Out)
	}
	return nil
}

// afterSinkWrite, when set (by the tests), runs after the sink has written
// the model file: an error there is a bundle that fails after its side
// effect, which a runner retries.
var afterSinkWrite func(out string) error

// Build adds the partitioned fit of the shards (all with the given
// header) to the pipeline under s, writing the model file to out:
//
//	shards -> reshuffle (the shards spread over the workers)
//	       -> split (per shard: blocks of rows) -> reshuffle
//	       -> read (per block: parse, preprocess, partition by position)
//	       -> counts -> layout (checked before any training)
//	       [per privacy ID: the blocks' IDs -> distinct -> counted
//	        (datasets.IDCounts) -> layout and release]
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
	ids := beam.Create(s, datasets.IDCounts{})
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
