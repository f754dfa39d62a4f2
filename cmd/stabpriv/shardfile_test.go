package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIModelFileAmongShards: the model file of a partitioned run
// written among its shards (--out shards/model.json) and matched by the
// next run's --data glob is named as a model file, not a malformed CSV,
// with exit 2 before any work and nothing written; the same for --data
// naming the model file.
func TestCLIModelFileAmongShards(t *testing.T) {
	dir := writeShardDir(t)
	bounds := writeFile(t, "bounds.csv", "x1,-6,6\nx2,-6,6\n")
	args := func(data, out string) []string {
		return []string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--bounds", bounds, "--partitions", "4", "--epsilon", "1", "--out", out}
	}
	first := filepath.Join(dir, "model.json")
	if _, stderr, err := call(t, args(filepath.Join(dir, "*"), first)...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	second := filepath.Join(t.TempDir(), "m.json")
	for _, data := range []string{filepath.Join(dir, "*"), first} {
		a := args(data, second)
		if data == first {
			a = []string{"train", "--data", first, "--label", "class", "--classes", "c0,c1", "--bounds", bounds, "--epsilon", "1", "--out", second}
		}
		_, _, err := call(t, a...)
		if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "model.json looks like a stabpriv model file") {
			t.Errorf("--data %s: %v, want exit 2 naming the model file", data, err)
		}
		if _, err := os.Stat(second); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--data %s: a model file was written", data)
		}
	}
	// A JSON file that is not a model file is named as JSON.
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`[1, 2]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, args(filepath.Join(dir, "notes.json"), second)...); exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "looks like a JSON file") {
		t.Errorf("a JSON file among the shards: %v", err)
	}
}
