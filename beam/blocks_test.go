package stabbeam

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/modelfile"
)

// TestPipelineBlocks reads shards in blocks of rows (split by splitFn,
// read by several workers, each block's rows of a partition in packs of
// at most two rows): the release is the in-process fit's bit for
// bit, with empty lines, \r\n line ends and a shard with a quoted cell
// among them, per row and per privacy ID; and an error in a
// later block names its shard and its first data row.
func TestPipelineBlocks(t *testing.T) {
	defer func(b, c, k int) { blockRows, chunkRows, packRows = b, c, k }(blockRows, chunkRows, packRows)
	blockRows, chunkRows, packRows = 13, 5, 2
	dir := t.TempDir()
	glob := writeShards(t, dir, 3, 100, 2, 4)
	edit := func(name string, fn func(string) string) {
		t.Helper()
		f := filepath.Join(dir, name)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(fn(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("shard-0.csv", func(s string) string {
		return strings.Replace(strings.ReplaceAll(s, "\n", "\r\n"), "\r\n", "\r\n\r\n\n", 20)
	})
	edit("shard-1.csv", func(s string) string { return strings.Replace(s, "pos\n", "\"pos\"\n", 1) })
	cfg := testConfig(2, 3)
	out := filepath.Join(dir, "model.json")
	got := pipelineFile(t, cfg, glob, out)
	sameRelease(t, "blocks", got, fitInProcess(t, cfg, glob))
	checkClaim(t, "blocks", got)

	var blocks []Block
	shards, err := Shards(context.Background(), glob)
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		if err := (splitFn{}).ProcessElement(context.Background(), sh, func(b Block) { blocks = append(blocks, b) }); err != nil {
			t.Fatal(err)
		}
	}
	// 100 rows in blocks of 13: 8 blocks for each shard, the one with a
	// quoted cell too.
	if len(blocks) != 24 || blocks[7].First != 91 || blocks[7].Length != -1 || blocks[8].Name != "shard-1.csv" || blocks[15].First != 91 || blocks[15].Length != -1 {
		t.Errorf("%d blocks: %+v", len(blocks), blocks)
	}

	idCfg := testConfig(2, 3)
	idCfg.PrivacyID, idCfg.MaxRowsPerID, idCfg.Auto, idCfg.Lambda, idCfg.Clip, idCfg.Schedule = "user", 3, false, 0.02, 0.5, "bounded-inverse-t"
	idGlob := writeIDShards(t, dir, "ids", 2, nil)
	idOut := filepath.Join(dir, "ids.json")
	if err := runPipeline(t, idCfg, idGlob, idOut); err != nil {
		t.Fatal(err)
	}
	idGot, err := modelfile.ReadFile(idOut)
	if err != nil {
		t.Fatal(err)
	}
	sameRelease(t, "blocks per privacy ID", idGot, fitInProcess(t, idCfg, idGlob))

	// A bad cell in data row 40, the first of the block from row 40.
	edit("shard-2.csv", func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return strings.Join(append(lines[:40:40], append([]string{"1,oops,pos\n"}, lines[40:]...)...), "")
	})
	err = runPipeline(t, cfg, glob, filepath.Join(dir, "bad.json"))
	if want := `data row 40, column "f1": "oops" is not a finite number (a missing cell is`; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(in the block of ") || !strings.Contains(err.Error(), "from data row 40, byte") {
		t.Errorf("error %v, want one saying %s", err, want)
	}
}

// Quoted shards: every record holds a quoted cell with a line end in it, so
// a cut at a line end that is not a row start would split a cell.
var (
	// quotedLabels are the label cells of the quoted shards as the CSV
	// holds them (neg, pos, an undeclared label with line ends), and
	// quotedClasses the classes they read as: encoding/csv turns a doubled
	// quote into one (a class name holds no line end: datasets.CheckName;
	// the line ends are in quoted feature cells, trimmed away).
	quotedLabels  = []string{"\"ne\"\"g,x\"", "\"po,s\"", " \"may,be\n\"\"not\"\"\""}
	quotedClasses = []string{"ne\"g,x", "po,s"}
)

// quotedShard returns a CSV shard of rows rows with d features (quoted or
// not, some after a space), a quoted label holding line ends, doubled
// quotes and a comma, records ending at \n or \r\n at random with empty
// lines between some, and the last record ending without a line end at
// random.
func quotedShard(rng *rand.Rand, rows, d int) string {
	var b strings.Builder
	end := func() string { return []string{"\n", "\r\n"}[rng.IntN(2)] }
	for j := range d {
		fmt.Fprintf(&b, "\"f%d\",", j)
	}
	b.WriteString("y" + end())
	for r := range rows {
		c := rng.IntN(7) % 3 // 2, an undeclared label, 1 time in 7
		for j := range d {
			v := rng.NormFloat64()
			if j == 0 && c == 1 {
				v += 2
			}
			formats := []string{"%g,", "\"%g\",", " \"%g\",", "\"%g\n\",", " \"\r\n%g\","}
			if j == 0 {
				formats = formats[3:] // a quoted line end in every record
			}
			fmt.Fprintf(&b, formats[rng.IntN(len(formats))], v)
		}
		b.WriteString(quotedLabels[c])
		if r < rows-1 {
			b.WriteString(end())
			if rng.IntN(5) == 0 {
				b.WriteString(end()) // an empty line between records
			}
		} else if rng.IntN(2) == 0 {
			b.WriteString(end())
		}
	}
	return b.String()
}

// quotedConfig is testConfig for the quoted shards' classes.
func quotedConfig(d, parts int) Config {
	cfg := testConfig(d, parts)
	cfg.Classes = quotedClasses
	return cfg
}

// TestRowCutsQuoted cuts quoted shards into blocks of every = 1, ..., 7
// data rows (every record boundary is a cut for some every, with a quoted
// line end on both sides of it) and reads each block as the pipeline does
// (the first with the header, the others with the given header): the
// blocks' rows, with their row numbers, are the whole file's, each once,
// for CRLF and LF records, empty lines, doubled quotes and a last row with
// or without a line end. A file whose quotes do not pair up is not cut.
func TestRowCutsQuoted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	for k := range 12 {
		text := quotedShard(rng, 3+rng.IntN(30), 1+rng.IntN(3))
		whole, err := datasets.ReadTable(strings.NewReader(text), "whole")
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(text, "\n"); lines < 2*whole.Len() {
			t.Fatalf("file %d: %d lines for %d rows: the rows do not hold line ends", k, lines, whole.Len())
		}
		declared := 0
		for r := range whole.Len() {
			if slices.Contains(quotedClasses, whole.Cell(r, len(whole.Columns)-1)) {
				declared++
			}
		}
		if declared == 0 || declared == whole.Len() && whole.Len() > 10 {
			t.Fatalf("file %d: %d of %d labels are declared classes", k, declared, whole.Len())
		}
		for every := 1; every <= 7; every++ {
			cuts, err := rowCuts(strings.NewReader(text), every)
			if err != nil {
				t.Fatal(err)
			}
			if want := (whole.Len() - 1) / every; len(cuts) != want {
				t.Fatalf("file %d, blocks of %d: %d cuts for %d rows, want %d", k, every, len(cuts), whole.Len(), want)
			}
			var got []string
			starts := append([]cut{{}}, cuts...)
			for i, c := range starts {
				end := int64(len(text))
				if i+1 < len(starts) {
					end = starts[i+1].Offset
				}
				block := text[c.Offset:end]
				var tr *datasets.TableReader
				if i == 0 {
					tr, err = datasets.NewTableReader(strings.NewReader(block), "block")
				} else {
					tr, err = datasets.NewTableReaderHeader(strings.NewReader(block), "block", whole.Columns)
				}
				if err != nil {
					t.Fatalf("file %d, blocks of %d, block %d: %v", k, every, i, err)
				}
				tab, err := tr.Read(0)
				if err != nil {
					t.Fatalf("file %d, blocks of %d, block %d at byte %d: %v", k, every, i, c.Offset, err)
				}
				if tab.Len() != every && i+1 < len(starts) {
					t.Errorf("file %d, blocks of %d: block %d holds %d rows", k, every, i, tab.Len())
				}
				for r := range tab.Len() {
					got = append(got, fmt.Sprint(c.First+r+1, tableRow(tab, r)))
				}
			}
			var want []string
			for r := range whole.Len() {
				want = append(want, fmt.Sprint(r+1, tableRow(whole, r)))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("file %d, blocks of %d: the blocks' rows\n%q\nthe file's\n%q", k, every, got, want)
			}
		}
	}
	for _, text := range []string{
		"a,y\n1,\"pos\n2,neg\n3,pos\n",        // a quoted cell never closed
		"a,y\n1,po\"s\n2,neg\n3,pos\n4,neg\n", // a quote in an unquoted cell
	} {
		if cuts, err := rowCuts(strings.NewReader(text), 1); err != nil || cuts != nil {
			t.Errorf("%q: cuts %v, %v; want none", text, cuts, err)
		}
	}
}

// tableRow returns the cells of row i of t.
func tableRow(t *datasets.Table, i int) []string {
	row := make([]string, len(t.Columns))
	for j := range row {
		row[j] = t.Cell(i, j)
	}
	return row
}

// writeQuotedShards writes k quoted shards (quotedShard) into dir
// (quoted-<i>.csv) and returns the glob.
func writeQuotedShards(t *testing.T, dir string, k, rows, d int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	for i := range k {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("quoted-%d.csv", i)), []byte(quotedShard(rng, rows, d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "quoted-*.csv")
}

// TestPipelineQuotedBlocks reads quoted shards in blocks of 7 rows: the
// release is the in-process fit's (train --partitions) bit for bit, per row
// and per privacy ID (IDs holding line ends and doubled quotes); a shard
// with a quoted cell never closed is one block, and the pipeline fails with
// the reader's error, as train does, and writes nothing.
func TestPipelineQuotedBlocks(t *testing.T) {
	defer func(b, c, k int) { blockRows, chunkRows, packRows = b, c, k }(blockRows, chunkRows, packRows)
	blockRows, chunkRows, packRows = 7, 5, 2
	dir := t.TempDir()
	glob := writeQuotedShards(t, dir, 3, 60, 2, 4)
	shards, err := Shards(context.Background(), glob)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []Block
	for _, sh := range shards {
		if err := (splitFn{}).ProcessElement(context.Background(), sh, func(b Block) { blocks = append(blocks, b) }); err != nil {
			t.Fatal(err)
		}
	}
	if len(blocks) != 3*9 {
		t.Errorf("%d blocks, want 27 (60 rows in blocks of 7, 3 shards): %+v", len(blocks), blocks)
	}
	cfg := quotedConfig(2, 3)
	got := pipelineFile(t, cfg, glob, filepath.Join(dir, "model.json"))
	sameRelease(t, "quoted blocks", got, fitInProcess(t, cfg, glob))
	checkClaim(t, "quoted blocks", got)
	if got.Split.Rows != 180 {
		t.Errorf("%d rows read, want 180", got.Split.Rows)
	}

	// Per privacy ID: the IDs hold a line end and a doubled quote.
	idGlob := writeIDShards(t, dir, "ids", 2, nil)
	files, _ := filepath.Glob(idGlob)
	user := regexp.MustCompile(`(?m),u(\d+),`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		q := user.ReplaceAllString(string(b), ",\"u$1\r\n\"\"x\"\"\",")
		if err := os.WriteFile(f, []byte(q), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idCfg := testConfig(2, 3)
	idCfg.PrivacyID, idCfg.MaxRowsPerID, idCfg.Auto, idCfg.Lambda, idCfg.Clip, idCfg.Schedule = "user", 3, false, 0.02, 0.5, "bounded-inverse-t"
	idGot := pipelineFile(t, idCfg, idGlob, filepath.Join(dir, "ids.json"))
	sameRelease(t, "quoted blocks per privacy ID", idGot, fitInProcess(t, idCfg, idGlob))

	// A quoted cell never closed, in data row 31 of a shard.
	var bad strings.Builder
	bad.WriteString("f0,f1,y\n")
	for r := range 60 {
		if r == 30 {
			bad.WriteString("1,\"2,pos\n")
		}
		fmt.Fprintf(&bad, "%d,1,%s\n", r%3, quotedLabels[r%2])
	}
	if err := os.WriteFile(filepath.Join(dir, "quoted-1.csv"), []byte(bad.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want := placement.ReadShards(glob, nil)
	if want == nil {
		t.Fatal("the in-process read of a shard with an unclosed quote did not fail")
	}
	out := filepath.Join(dir, "bad.json")
	err = runPipeline(t, cfg, glob, out)
	if err == nil || !strings.Contains(err.Error(), want.Error()) || !strings.Contains(err.Error(), `extraneous or missing " in quoted-field`) {
		t.Errorf("error %v, want one with the in-process read's %q", err, want)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a model file was written: %v", err)
	}
}

// BenchmarkQuotedShard measures whether the split's scan pays on a quoted
// shard (every cell quoted, as many CSV writers quote): one shard of
// -quoted-rows rows (default 2^20) and 10 features, read as one block (no
// scan) against the scan and blocks of 2^18 rows: the scan alone, the read
// step alone (the blocks read by GOMAXPROCS goroutines, as workers would),
// and the whole pipeline on prism. Run it alone, one iteration each:
//
//	cd beam && flock /tmp/heavy.lock nice go test -run '^$' -bench QuotedShard -benchtime 1x .
func BenchmarkQuotedShard(b *testing.B) {
	defer func(k int) { blockRows = k }(blockRows)
	const d = 10
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	var text strings.Builder
	for j := range d {
		fmt.Fprintf(&text, "\"f%d\",", j)
	}
	text.WriteString("\"y\"\n")
	for r := range *quotedRows {
		c := r % 2
		for j := range d {
			v := rng.NormFloat64()
			if j == 0 && c == 1 {
				v += 2
			}
			fmt.Fprintf(&text, "\"%.6g\",", v)
		}
		text.WriteString([]string{"\"neg\"\n", "\"pos\"\n"}[c])
	}
	path := filepath.Join(dir, "quoted.csv")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d rows, %d MB", *quotedRows, text.Len()>>20)
	text = strings.Builder{}
	cfg := testConfig(d, 8)
	ctx := context.Background()
	header, shards, err := Launch(ctx, cfg, path, filepath.Join(dir, "model.json"), false)
	if err != nil {
		b.Fatal(err)
	}
	split := func(rows int) []Block {
		blockRows = rows
		var blocks []Block
		if err := (splitFn{}).ProcessElement(ctx, shards[0], func(bl Block) { blocks = append(blocks, bl) }); err != nil {
			b.Fatal(err)
		}
		return blocks
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			split(1 << 18)
		}
	})
	for _, rows := range []int{0, 1 << 18} {
		name := fmt.Sprintf("blocks-of-%d", rows)
		if rows == 0 {
			name = "one-block"
		}
		b.Run("read/"+name, func(b *testing.B) {
			for b.Loop() {
				blocks := make(chan Block, 64)
				go func() {
					for _, bl := range split(rows) {
						blocks <- bl
					}
					close(blocks)
				}()
				var wg sync.WaitGroup
				for range runtime.GOMAXPROCS(0) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f := &readShardFn{Cfg: cfg, Header: header}
						if err := f.Setup(); err != nil {
							b.Error(err)
						}
						for bl := range blocks {
							if err := f.ProcessElement(ctx, bl, func(int, Pack) {}, func(Count) {}, func(string) {}); err != nil {
								b.Error(err)
							}
						}
					}()
				}
				wg.Wait()
			}
		})
		b.Run("prism/"+name, func(b *testing.B) {
			blockRows = rows
			for i := 0; b.Loop(); i++ {
				p, s := beam.NewPipelineWithRoot()
				Build(s, cfg, header, shards, filepath.Join(dir, fmt.Sprintf("model-%s-%d.json", name, i)), false)
				if _, err := beam.Run(ctx, "prism", p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// quotedRows is the number of rows of BenchmarkQuotedShard's shard.
var quotedRows = flag.Int("quoted-rows", 1<<20, "rows of BenchmarkQuotedShard's quoted shard")
