package placement

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
)

func TestInputRoot(t *testing.T) {
	for _, c := range []struct{ pattern, root string }{
		{"data/dt=*/part-*.csv", "data/"},
		{"./data/*.csv", "data/"},
		{"/abs/data/*/x.csv", "/abs/data/"},
		{"*.csv", ""},
		{"data/one.csv", "data/"},
		{"one.csv", ""},
		{"gs://bucket/dir/*/part-*.csv", "gs://bucket/dir/"},
		{"s3://bucket/*.csv", "s3://bucket/"},
		{"gs://bucket/a/b.csv", "gs://bucket/a/"},
		{"memfs://x[0-9]/y.csv", "memfs://x[0-9]/"},
	} {
		if got := InputRoot(c.pattern); got != c.root {
			t.Errorf("InputRoot(%q) = %q, want %q", c.pattern, got, c.root)
		}
	}
}

func TestShardNames(t *testing.T) {
	names, err := ShardNames("data/", []string{"data/dt=1/part-0.csv", "data/dt=2/part-0.csv", "./data/x.csv"})
	if err != nil || !slices.Equal(names, []string{"dt=1/part-0.csv", "dt=2/part-0.csv", "x.csv"}) {
		t.Errorf("Hive layout: %v %v", names, err)
	}
	names, err = ShardNames("gs://b/d/", []string{"gs://b/d/dt=1/p.csv", "gs://b/d/dt=2/p.csv"})
	if err != nil || !slices.Equal(names, []string{"dt=1/p.csv", "dt=2/p.csv"}) {
		t.Errorf("URL: %v %v", names, err)
	}
	for _, c := range []struct {
		root  string
		files []string
		want  string
	}{
		{"data/", []string{"other/x.csv"}, "not under the input root"},
		{"data/", []string{"data/a.csv", "data/./a.csv"}, "the same name"},
		{"", []string{"/abs/a.csv"}, "absolute"},
		{"gs://b/", []string{"gs://b/a//x.csv"}, "clean relative path"},
	} {
		_, err := ShardNames(c.root, c.files)
		if !errors.Is(err, datasets.ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ShardNames(%q, %q): %v, want %q", c.root, c.files, err, c.want)
		}
	}
}

// TestReadShardsHive reads a Hive-style layout: files with the same base
// name in different directories are distinct shards, named by their path
// relative to the input root, and their rows' partitions differ.
func TestReadShardsHive(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"dt=1", "dt=2"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "part-0.csv"), []byte("x,y\n1,a\n2,b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := ReadShards(filepath.Join(dir, "dt=*", "part-*.csv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Source != "dt=1/part-0.csv" || ts[1].Source != "dt=2/part-0.csv" {
		t.Fatalf("shards %d: %q", len(ts), []string{ts[0].Source})
	}
	same := 0
	for row := 1; row <= 64; row++ {
		if PartitionOf(1, ts[0].Source, row, 1<<20) == PartitionOf(1, ts[1].Source, row, 1<<20) {
			same++
		}
	}
	if same > 1 { // two rows collide among 2^20 partitions with probability below 64/2^20
		t.Errorf("the two shards' rows share %d of 64 partitions: the directory does not enter the position", same)
	}
	if _, err := ReadShards(filepath.Join(dir, "none", "*.csv"), nil); !errors.Is(err, datasets.ErrFormat) || !strings.Contains(err.Error(), "matches no file") {
		t.Errorf("no file: %v", err)
	}
}

// TestCheckShardNameLatin1: a shard name that is not UTF-8 is refused, and
// the error says what to do.
func TestCheckShardNameLatin1(t *testing.T) {
	if err := CheckShardName("dt=1/part-\xe9.csv"); !errors.Is(err, datasets.ErrFormat) || !strings.Contains(err.Error(), "rename the file") {
		t.Errorf("a Latin-1 shard name: %v", err)
	}
}
