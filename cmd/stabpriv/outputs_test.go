package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stabpriv/stabpriv/internal/proctest"
	"github.com/stabpriv/stabpriv/modelfile"
)

// TestOutputsNeverClobber: train's --out refuses a FIFO, a directory, a
// symbolic link and a model file (but with --force), pdp's and sweep's
// --out a file; each refusal is a usage error that leaves the file system
// as it was.
func TestOutputsNeverClobber(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	if _, _, err := call(t, "train", "--out", model); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(model)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(model, link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"train", "--out", model},
		{"train", "--out", fifo},
		{"train", "--out", link},
		{"train", "--out", dir},
		{"train", "--out", os.DevNull},
		{"pdp", "--out", plain},
		{"sweep", "--dataset", "csv", "--data", "x.csv", "--label", "y", "--out", plain},
	} {
		_, _, err := call(t, args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if after, _ := os.ReadFile(model); !bytes.Equal(after, before) {
		t.Error("the model file changed")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO changed")
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link changed")
	}
	// The command's own inputs are never replaced, --force or not; any
	// other existing file only with --force.
	csv := writeCSV(t, clusters(2, 50))
	csvBefore, _ := os.ReadFile(csv)
	for _, args := range [][]string{
		{"train", "--data", csv, "--label", "class", "--out", csv},
		{"train", "--data", csv, "--label", "class", "--out", csv, "--force"},
		{"train", "--out", plain},
	} {
		var ue *usageError
		if _, _, err := call(t, args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if after, _ := os.ReadFile(csv); !bytes.Equal(after, csvBefore) {
		t.Error("train wrote over its data")
	}
	// A shard of a partitioned fit is an input too: its table names it by
	// its path under the input root, not from the working directory.
	shards := t.TempDir()
	shard := filepath.Join(shards, "part-0.csv")
	if err := os.WriteFile(shard, csvBefore, 0o644); err != nil {
		t.Fatal(err)
	}
	var ue *usageError
	if _, _, err := call(t, "train", "--data", filepath.Join(shards, "*.csv"), "--partitions", "2", "--label", "class", "--classes", "c0,c1", "--bounds-all", "-9,9", "--out", shard, "--force"); !errors.As(err, &ue) {
		t.Errorf("--out a shard of --data: %v, want a usage error", err)
	}
	if after, _ := os.ReadFile(shard); !bytes.Equal(after, csvBefore) {
		t.Error("train wrote over a shard of its data")
	}
	if after, _ := os.ReadFile(plain); string(after) != "notes" {
		t.Error("train replaced an existing file without --force")
	}
	if _, _, err := call(t, "train", "--out", model, "--force", "--seed", "2"); err != nil {
		t.Errorf("--force: %v", err)
	}
	if after, _ := os.ReadFile(model); bytes.Equal(after, before) {
		t.Error("--force did not replace the model file")
	}
}

// TestPredictSafe: predict refuses to write over a model file, leaves an
// existing output as it was when a row is bad, and refuses a model file
// that does not verify unless --unverified (with a warning).
func TestPredictSafe(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	if _, _, err := call(t, "train", "--out", model); err != nil {
		t.Fatal(err)
	}
	modelBytes, _ := os.ReadFile(model)
	data := filepath.Join("..", "..", "datasets", "data", "wdbc.csv")
	out := filepath.Join(dir, "pred.csv")
	if _, _, err := call(t, "predict", "--model", model, "--data", data, "--out", out); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(out)
	var ue *usageError
	for _, args := range [][]string{
		{"--out", model},
		{"--out", model, "--force"},
		{"--out", out},
		{"--out", data, "--force"},
	} {
		args = append([]string{"predict", "--model", model, "--data", data}, args...)
		if _, _, err := call(t, args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if after, _ := os.ReadFile(data); !bytes.HasPrefix(after, []byte("mean_radius")) {
		t.Error("predict wrote over its data")
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, good) {
		t.Error("predict replaced an existing output without --force")
	}
	if after, _ := os.ReadFile(model); !bytes.Equal(after, modelBytes) {
		t.Error("predict wrote over the model file")
	}
	// A bad row: the earlier predictions stay as they were.
	raw, _ := os.ReadFile(data)
	lines := bytes.SplitN(raw, []byte("\n"), 4)
	bad := filepath.Join(dir, "bad.csv")
	broken := append(append(append([]byte{}, lines[0]...), '\n'), lines[1]...)
	broken = append(broken, []byte("\n"+string(bytes.Replace(lines[2], []byte(","), []byte(",x"), 1))+"\n")...)
	if err := os.WriteFile(bad, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, "predict", "--model", model, "--data", bad, "--out", out, "--force"); err == nil || errors.As(err, &ue) {
		t.Errorf("a bad row: %v, want a data error", err)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, good) {
		t.Error("a failed predict changed the earlier output")
	}
	// A tampered release.
	release := filepath.Join(dir, "release.json")
	if _, _, err := call(t, "train", "--mechanism", "gamma", "--test-frac", "0.2", "--out", release); err != nil {
		t.Fatal(err)
	}
	releaseBytes, _ := os.ReadFile(release)
	tampered := filepath.Join(dir, "tampered.json")
	edited := bytes.Replace(releaseBytes, []byte(`"test_frac": 0.2`), []byte(`"test_frac": 0.3`), 1)
	if err := os.WriteFile(tampered, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, "predict", "--model", tampered, "--data", data); err == nil {
		t.Error("a model file that does not verify was used")
	}
	if _, stderr, err := call(t, "predict", "--model", tampered, "--data", data, "--unverified"); err != nil || !bytes.Contains([]byte(stderr), []byte("WARNING")) {
		t.Errorf("--unverified: %v, stderr %q", err, stderr)
	}
}

// TestOutDirNeverClobbers: pdp's and sweep's output directories follow
// train's rule: a file there that is one of the command's inputs is never
// replaced, any other existing output file only with --force; and an
// output path with ".." after a missing directory is refused before any
// work (its lexical form may name an input).
func TestOutDirNeverClobbers(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "pdp.csv") // the name of one of pdp's outputs
	if err := os.WriteFile(data, []byte("x1,y\n1,0.5\n-1,-0.5\n0.5,0.2\n-0.3,0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.csv") // one of sweep's outputs
	if err := os.WriteFile(results, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(data)
	for _, args := range [][]string{
		{"pdp", "--data", data, "--label", "y", "--loss", "squared", "--sigma", "0.1", "--standardize", "none", "--bias", "false", "--out", dir},
		{"pdp", "--data", data, "--label", "y", "--loss", "squared", "--sigma", "0.1", "--standardize", "none", "--bias", "false", "--out", dir, "--force"},
		{"sweep", "--dataset", "csv", "--data", data, "--label", "y", "--out", dir},
		{"predict", "--model", "m.json", "--data", data, "--out", dir + "/missing/../pdp.csv", "--force"},
		{"train", "--out", link + "/../m2.json"},
		{"train", "--out", data + "/../m3.json"},
	} {
		var ue *usageError
		if _, _, err := call(t, args...); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if after, _ := os.ReadFile(data); !bytes.Equal(after, before) {
		t.Error("an input was replaced")
	}
	if after, _ := os.ReadFile(results); string(after) != "old" {
		t.Error("sweep replaced an existing output without --force")
	}
	out := t.TempDir()
	args := []string{"pdp", "--data", data, "--label", "y", "--loss", "squared", "--sigma", "0.1", "--standardize", "none", "--bias", "false", "--test-frac", "0", "--out", out}
	if _, _, err := call(t, args...); err != nil {
		t.Fatal(err)
	}
	var ue *usageError
	if _, _, err := call(t, args...); !errors.As(err, &ue) {
		t.Errorf("pdp into its own earlier outputs without --force: %v, want a usage error", err)
	}
	if _, _, err := call(t, append(args, "--force")...); err != nil {
		t.Errorf("pdp --force: %v", err)
	}
}

// TestOutURLRefused: train writes local files only, so an --out that is a
// URL (gs://, s3://, any "scheme://") is a usage error (exit 2) found
// before the fit, with nothing written (the system would otherwise take
// s3://bucket/m.json for the local path s3:/bucket/m.json); pdp's and
// sweep's output directories alike.
func TestOutURLRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"train", "--out", "s3://bucket/m.json"},
		{"train", "--out", "gs://bucket/dir/m.json", "--force"},
		{"train", "--out", "file:///tmp/m.json"},
		{"pdp", "--out", "s3://bucket/pdp"},
		{"sweep", "--dataset", "csv", "--data", "x.csv", "--label", "y", "--out", "gs://bucket/sweep"},
	} {
		_, _, err := call(t, args...)
		if code := exitCode(err); code != 2 || err == nil || !strings.Contains(err.Error(), "is a URL") {
			t.Errorf("%v: exit %d (%v), want 2 for a URL", args, code, err)
		}
	}
	if entries, err := os.ReadDir("."); err != nil || len(entries) != 0 {
		t.Errorf("the refused runs wrote %v (%v)", entries, err)
	}
}

// TestConcurrentTrainOneWinner: six train runs started together, in their
// own processes, to one new --out without --force: exactly one exits 0 and
// says it wrote the model, the others exit 2 (refused before training, or
// when they publish, the file having appeared), the file holds the
// winner's release, and no temporary file is left.
func TestConcurrentTrainOneWinner(t *testing.T) {
	data := writeCSV(t, clusters(2, 2000))
	dir := t.TempDir()
	out := filepath.Join(dir, "model.json")
	const runs = 6
	var cmds [runs]*exec.Cmd
	var stdout, stderr [runs]bytes.Buffer
	for i := range runs {
		cmds[i] = child("train", "--data", data, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-9,9", "--out", out)
		cmds[i].Stdout, cmds[i].Stderr = &stdout[i], &stderr[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	winner, late := -1, 0
	for i, cmd := range cmds {
		switch status := exitStatus(t, cmd.Wait()); {
		case status == 0 && winner >= 0:
			t.Errorf("runs %d and %d both exited 0", winner, i)
		case status == 0:
			winner = i
		case status != 2 || !strings.Contains(stderr[i].String(), "--out"):
			t.Errorf("run %d: exit %d, want 2 and a refused --out; stderr:\n%s", i, status, stderr[i].String())
		case strings.Contains(stderr[i].String(), "another run wrote it first"):
			late++
		}
	}
	if winner < 0 {
		t.Fatal("no run exited 0")
	}
	t.Logf("run %d won; %d of the others were refused when they published, the rest before training", winner, late)
	r, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if w := stdout[winner].String(); !strings.Contains(w, "SHA-256 "+r.Certificate.WeightsSHA256) || !strings.Contains(w, "model written to") {
		t.Errorf("the file is not the winner's release (weights SHA-256 %s); the winner's output:\n%s", r.Certificate.WeightsSHA256, w)
	}
	for _, name := range proctest.Entries(t, dir) {
		if name != "model.json" {
			t.Errorf("left beside the model: %s", name)
		}
	}
}
