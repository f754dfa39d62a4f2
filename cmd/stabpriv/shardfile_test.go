package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/modelfile"
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
		if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "model.json looks like a JSON file (such as a stabpriv model file") {
			t.Errorf("--data %s: %v, want exit 2 naming the model file", data, err)
		}
		if _, err := os.Stat(second); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--data %s: a model file was written", data)
		}
	}
	// A JSON file that is not a model file is named as JSON.
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`["a", 1]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, args(filepath.Join(dir, "notes.json"), second)...); exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "looks like a JSON file") {
		t.Errorf("a JSON file among the shards: %v", err)
	}
}

// TestCLIDataFromPipe: --data naming a pipe (a FIFO, as /dev/stdin or a
// process substitution) trains on every row, with a header row and
// without one (--header): the check of the header line must not consume
// the pipe's first bytes. The model is the one the regular file gives. A
// header whose first name opens a bracket is CSV.
func TestCLIDataFromPipe(t *testing.T) {
	var b strings.Builder
	b.WriteString("[x1],x2,class\n")
	for i := range 300 {
		fmt.Fprintf(&b, "%d.%d,%d,c%d\n", i%7, i%3, i%5, i%2)
	}
	full := b.String()
	noHeader := full[strings.IndexByte(full, '\n')+1:]
	for _, c := range []struct {
		name, content string
		extra         []string
	}{
		{"header row", full, nil},
		{"--header", noHeader, []string{"--header", "[x1],x2,class"}},
	} {
		file := writeCSV(t, c.content)
		fifo := filepath.Join(t.TempDir(), "pipe")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer f.Close()
			f.WriteString(c.content)
		}()
		models := make([]*modelfile.Released, 2)
		for i, data := range []string{file, fifo} {
			out := filepath.Join(t.TempDir(), "m.json")
			args := append([]string{"train", "--mechanism", "none", "--data", data, "--label", "class", "--classes", "c0,c1", "--test-frac", "0", "--seed", "3", "--out", out}, c.extra...)
			// A check that consumed the pipe's bytes leaves the reader
			// waiting for a writer: bounded, it fails with a message.
			done := make(chan error, 1)
			var stderr string
			go func() {
				var err error
				_, stderr, err = call(t, args...)
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s, --data %s: %v\n%s", c.name, data, err, stderr)
				}
			case <-time.After(childPatience):
				t.Fatalf("%s, --data %s: no result after %v (the pipe's first bytes consumed before the read?)", c.name, data, childPatience)
			}
			r, err := modelfile.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			models[i] = r
		}
		if !reflect.DeepEqual(models[0].Model, models[1].Model) || !reflect.DeepEqual(models[0].Split, models[1].Split) {
			t.Errorf("%s: the pipe gave split %+v, the file %+v (and other weights or the same)", c.name, models[1].Split, models[0].Split)
		}
	}
}

// TestCLIHeaderFlagFirstRow: with --header the file's first line is a data
// row, which the check for inputs that are not CSV must not read: a
// well-formed first row whose undeclared label holds a NUL (a null row)
// trains, as its neighbour with another label does.
func TestCLIHeaderFlagFirstRow(t *testing.T) {
	for _, first := range []string{"z\x00,0.1,0.2\n", "c0,0.1,0.2\n"} {
		var b strings.Builder
		b.WriteString(first)
		for i := range 100 {
			fmt.Fprintf(&b, "c%d,0.%d,0.%d\n", i%2, i%7, i%5)
		}
		data := writeCSV(t, b.String())
		out := filepath.Join(t.TempDir(), "m.json")
		if _, stderr, err := call(t, "train", "--data", data, "--header", "class,x1,x2", "--label", "class", "--classes", "c0,c1",
			"--bounds-all", "-1,1", "--epsilon", "1", "--out", out); err != nil {
			t.Errorf("first row %q: %v\n%s", first, err, stderr)
		}
	}
}
