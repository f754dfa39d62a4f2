package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/proctest"
)

// trainClusters trains a private release on clusters(2, n) (classes c0,
// c1) and returns the model file's path and the data's.
func trainClusters(t *testing.T, n int) (model, data string) {
	t.Helper()
	setProgressAfter(t, quietRun)
	data = writeCSV(t, clusters(2, n))
	model = filepath.Join(t.TempDir(), "m.json")
	if _, _, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-9,9", "--out", model); err != nil {
		t.Fatal(err)
	}
	return model, data
}

// TestPredictStdout: predict --out - writes the predictions to standard
// output, as no --out does, and writes no file named -; the rows are
// numbered from 1, the first row after the header, as in messages.
func TestPredictStdout(t *testing.T) {
	model, data := trainClusters(t, 50)
	t.Chdir(t.TempDir())
	plain, _, err := call(t, "predict", "--model", model, "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	dash, _, err := call(t, "predict", "--model", model, "--data", data, "--out", "-")
	if err != nil || dash != plain {
		t.Fatalf("--out -: %v; its output differs from standard output's:\n%s", err, dash)
	}
	if _, err := os.Stat("-"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--out - wrote a file named - (%v)", err)
	}
	lines := strings.Split(strings.TrimSpace(plain), "\n")
	if len(lines) != 101 || !strings.HasPrefix(lines[1], "1,") || !strings.HasPrefix(lines[100], "100,") {
		t.Errorf("%d lines; the first and last rows: %q, %q; want 1 and 100", len(lines), lines[1], lines[len(lines)-1])
	}
	// A bad cell is named by its line and its data row, counted as train
	// counts them.
	bad := writeCSV(t, "x1,x2,class\n1,2,c0\n3,x,c1\n")
	_, _, err = call(t, "predict", "--model", model, "--data", bad)
	if err == nil || !strings.Contains(err.Error(), "line 3, data row 2") || exitCode(err) != 4 {
		t.Errorf("a bad cell in predict: %v (exit %d), want line 3, data row 2, exit 4", err, exitCode(err))
	}
	// (train refuses a text cell where the bounds are declared; without
	// them it decides the column's type.)
	_, _, err = call(t, "train", "--mechanism", "none", "--bounds-all", "0,5", "--data", bad, "--label", "class")
	if err == nil || !strings.Contains(err.Error(), "line 3, data row 2") {
		t.Errorf("the same bad cell in train: %v, want line 3, data row 2", err)
	}
}

// TestPredictUnmatchedLabels: labels that are not among the model's
// classes are counted, shown by an example, with a hint when they differ
// in case only; with none matching there is no accuracy, and it says why.
func TestPredictUnmatchedLabels(t *testing.T) {
	model, data := trainClusters(t, 50)
	text, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	upper := writeFile(t, "upper.csv", strings.NewReplacer(",c0\n", ",C0\n", ",c1\n", ",C1\n").Replace(string(text)))
	_, stderr, err := call(t, "predict", "--model", model, "--data", upper)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no accuracy: 100 of 100 rows", `e.g. "C0"`, `"C0" differs from the class "c0" in case or spaces only`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no label matching: stderr lacks %q:\n%s", want, stderr)
		}
	}
	some := writeFile(t, "some.csv", strings.Replace(string(text), ",c1\n", ",unknown\n", 3))
	_, stderr, err = call(t, "predict", "--model", model, "--data", some)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"accuracy on the 97 rows", "3 of 100 rows", `e.g. "unknown"`, "they are not scored"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("3 labels not matching: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "differs from the class") {
		t.Errorf("a hint about case for labels that differ otherwise:\n%s", stderr)
	}
	_, stderr, err = call(t, "predict", "--model", model, "--data", data)
	if err != nil || !strings.Contains(stderr, "accuracy on the 100 rows") || strings.Contains(stderr, "not one of") {
		t.Errorf("every label matching: %v\n%s", err, stderr)
	}
}

// TestLogLevelWarnings: --log-level error drops predict's warning about a
// model file that does not verify (--unverified); the default keeps it.
func TestLogLevelWarnings(t *testing.T) {
	model, data := trainClusters(t, 50)
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	tampered := writeFile(t, "tampered.json", strings.Replace(string(b), `"seed": 1`, `"seed": 2`, 1))
	for _, c := range []struct {
		level string
		warn  bool
	}{{"info", true}, {"warn", true}, {"error", false}} {
		_, stderr, err := call(t, "predict", "--model", tampered, "--data", data, "--unverified", "--log-level", c.level)
		if err != nil || strings.Contains(stderr, "WARNING") != c.warn {
			t.Errorf("--log-level %s: %v, warning printed %v, want %v:\n%s", c.level, err, !c.warn, c.warn, stderr)
		}
	}
}

// TestLongOutName: an --out name of 255 bytes (the most a name may have,
// longer than the temporary file's name can add to) is written; one of
// 256 bytes is refused before any work, with a message that says why.
func TestLongOutName(t *testing.T) {
	setProgressAfter(t, quietRun)
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("m", 250)+".json")
	if _, _, err := call(t, "train", "--mechanism", "none", "--out", long); err != nil {
		t.Fatalf("a 255-byte name: %v", err)
	}
	if names := proctest.Entries(t, dir); len(names) != 1 {
		t.Errorf("files beside the model: %v", names)
	}
	stdout, _, err := call(t, "train", "--mechanism", "none", "--out", long[:len(long)-5]+"x.json")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "256 bytes, above the 255") || stdout != "" {
		t.Errorf("a 256-byte name: %v (exit %d), stdout %q; want a usage error before any work", err, exitCode(err), stdout)
	}
}

// TestPredictHeader: predict --header reads a file without a header row
// (its first line a data row), as train --header does: one prediction per
// line of the file, the first included; without --header that first row
// is taken for the header and the model's features are missing (exit 4);
// a --header with a repeated name is a usage error.
func TestPredictHeader(t *testing.T) {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "c%d,%d.5,0.%d\n", i%2, 2*(i%2)-1, i%5)
	}
	data := writeCSV(t, b.String())
	dir := t.TempDir()
	model := filepath.Join(dir, "m.json")
	if _, stderr, err := call(t, "train", "--data", data, "--header", "class,x1,x2", "--label", "class", "--classes", "c0,c1",
		"--bounds-all", "-2,2", "--mechanism", "none", "--out", model); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	stdout, stderr, err := call(t, "predict", "--model", model, "--data", data, "--header", "class,x1,x2")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 61 || !strings.HasPrefix(lines[1], "1,") {
		t.Errorf("%d lines (want the header and 60 rows, from row 1):\n%s", len(lines), stdout)
	}
	if !strings.Contains(stderr, "on the 60 rows with a usable label") {
		t.Errorf("stderr does not score the 60 rows:\n%s", stderr)
	}
	if _, _, err := call(t, "predict", "--model", model, "--data", data); exitCode(err) != 4 {
		t.Errorf("without --header: exit %d (%v), want 4", exitCode(err), err)
	}
	if _, _, err := call(t, "predict", "--model", model, "--data", data, "--header", "class,x1,x1"); exitCode(err) != 2 {
		t.Errorf("a repeated name in --header: exit %d (%v), want 2", exitCode(err), err)
	}
	// A file with a header row given --header too: its header would be
	// read as a data row, refused for its text (the model's declared
	// bounds) under another name, or read as missing cells and a null row
	// (train's private estimate decides the types) with no error at all.
	headed := writeCSV(t, "class,x1,x2\n"+b.String())
	for _, args := range [][]string{
		{"predict", "--model", model},
		{"train", "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--noise", "seeded", "--noise-seed", "1", "--out", filepath.Join(dir, "h.json")},
	} {
		_, _, err := call(t, append(args, "--data", headed, "--header", " class, x1,x2")...)
		if exitCode(err) != 4 || err == nil || !strings.Contains(err.Error(), "line 1: the first line repeats the given column names") {
			t.Errorf("%s of a file with a header row and --header: exit %d (%v), want 4 naming line 1", args[0], exitCode(err), err)
		}
	}
}
