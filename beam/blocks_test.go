package stabbeam

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
)

// TestPipelineBlocks reads shards in blocks of rows (split by splitFn,
// read by several workers, each block's rows of a partition in packs of
// at most two rows): the release is the in-process fit's bit for
// bit, with empty lines, \r\n line ends and a shard with a quote (read as
// one block) among them, per row and per privacy ID; and an error in a
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
	// 100 rows in blocks of 13: 8 blocks for shards 0 and 2, one for the
	// quoted shard 1.
	if len(blocks) != 17 || blocks[7].First != 91 || blocks[7].Length != -1 || blocks[8].Name != "shard-1.csv" || blocks[8].Length != -1 {
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
	if want := `data row 40, column "f1": "oops" is not a finite number (in the block of `; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "from data row 40, byte") {
		t.Errorf("error %v, want one saying %s", err, want)
	}
}
