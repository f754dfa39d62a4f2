package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/internal/inputcap/capstest"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp/publish"
)

// The bounds a refusal of an oversized or endless input must keep (the
// targets are 5 s and 200 MB; the time bound is generous so that a loaded
// machine does not fail the test).
const (
	refuseWithin = 20 * time.Second
	refuseMaxRSS = 200 << 20
)

// childRun runs the command line in a child process (TestMain), stdin
// its standard input, and returns its exit status, its stderr, how long it
// ran and its peak resident memory in bytes.
func childRun(t *testing.T, stdin io.Reader, args ...string) (int, string, time.Duration, int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(args, "\n"))
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	timer := time.AfterFunc(childPatience, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Run()
	elapsed := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	return cmd.ProcessState.ExitCode(), stderr.String(), elapsed, rss
}

// TestInputCaps runs the commands on oversized inputs (sparse 2 GB files)
// and endless ones (/dev/zero, a standard input that never ends): each is
// refused with the exit status of its kind of input and a message naming
// the cap, within refuseWithin and refuseMaxRSS.
func TestInputCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in child processes")
	}
	const gb2 = 2 << 30
	data := writeCSV(t, clusters(2, 50))
	model := filepath.Join("testdata", "pinned", "gamma-default.json")
	nul := capstest.SparseFile(t, "nul", "", gb2)
	csvNul := capstest.SparseFile(t, "data.csv", "x1,x2,class\n", gb2)
	modelNul := capstest.SparseFile(t, "model.json", "{\n  \"format\": \""+modelfile.Format+"\",\n", gb2)
	summaryNul := capstest.SparseFile(t, "summary.dp.json", "{\n  \"format\": \""+publish.Format+"\",\n", gb2)
	out := filepath.Join(t.TempDir(), "out.json")
	train := []string{"train", "--mechanism", "none", "--out", out}
	tests := []struct {
		name  string
		stdin io.Reader
		args  []string
		exit  int
		msg   string
	}{
		{"data: a header, then 2 GB of zero bytes", nil, append(train, "--data", csvNul, "--label", "class"), 4,
			"line 2 is longer than 8 MiB, the most a line of a data CSV may hold"},
		{"data: /dev/zero", nil, append(train, "--data", "/dev/zero", "--label", "class"), 4, "line 1 is longer than 8 MiB"},
		{"data: a header, then endless empty lines", io.MultiReader(strings.NewReader("a,class\n"), capstest.Endless("\n")), append(train, "--data", "/dev/stdin", "--label", "class"), 4, "line 2: more than 1048576 empty lines in a row"},
		{"bounds: 2 GB", nil, append(train, "--bounds", nul), 2, "2 GiB, more than the 16 MiB a bounds file may hold"},
		{"bounds: /dev/zero", nil, append(train, "--bounds", "/dev/zero"), 2, "line 1 is longer than 1 MiB, the most a line of a bounds file may hold"},
		{"bounds: endless lines", capstest.Endless("# a,0,1\n"), append(train, "--bounds", "/dev/stdin"), 2, "more than 1048576 lines, the most a bounds file may hold"},
		{"schema: 2 GB", nil, append(train, "--schema", nul), 2, "2 GiB, more than the 16 MiB a schema file may hold"},
		{"schema: /dev/zero", nil, append(train, "--schema", "/dev/zero"), 2, "line 1 is longer than 8 MiB, the most a line of a schema file may hold"},
		{"schema: endless comments", capstest.Endless("#" + strings.Repeat(" x", 1000) + "\n"), append(train, "--schema", "/dev/stdin"), 2, "more than 16 MiB, the most a schema file may hold"},
		{"certify: 2 GB", nil, []string{"certify", modelNul}, 5, "2 GiB, more than the 160 MiB a model file may hold"},
		{"certify: /dev/zero", nil, []string{"certify", "/dev/zero"}, 5, `not a stabpriv model file: it starts with "\x00\x00`},
		{"certify: a summary of 2 GB", nil, []string{"certify", summaryNul}, 5, "2 GiB, more than the 16 MiB a summary file may hold"},
		{"predict: a model of 2 GB", nil, []string{"predict", "--model", modelNul, "--data", data}, 5, "more than the 160 MiB a model file may hold"},
		{"predict: an endless model", io.MultiReader(strings.NewReader("{\n  \"format\": \""+modelfile.Format+"\",\n"), capstest.Endless(" ")), []string{"predict", "--model", "/dev/stdin", "--data", data}, 5,
			"more than 160 MiB, the most a model file may hold"},
		{"predict: data of 2 GB", nil, []string{"predict", "--model", model, "--data", nul}, 4, "line 1 is longer than 8 MiB"},
		{"pdp: a precision matrix of 2 GB", nil, []string{"pdp", "--data", data, "--label", "x1", "--loss", "squared", "--mechanism", "gaussian-cov", "--gamma", "1", "--precision", nul, "--out", t.TempDir()}, 2,
			"2 GiB, more than the 64 MiB a precision matrix may hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr, elapsed, rss := childRun(t, tt.stdin, tt.args...)
			t.Logf("exit %d in %v, peak RSS %d MB: %s", code, elapsed.Round(time.Millisecond), rss>>20, strings.TrimSpace(stderr))
			if code != tt.exit || !strings.Contains(stderr, tt.msg) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tt.exit, tt.msg)
			}
			if elapsed > refuseWithin || rss > refuseMaxRSS {
				t.Errorf("refused in %v with a peak RSS of %d MB; want at most %v and %d MB", elapsed, rss>>20, refuseWithin, refuseMaxRSS>>20)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused run wrote %s (%v)", out, err)
			}
		})
	}
}

// TestTrainNames: a header name that is not UTF-8 (Latin-1) or holds a
// control character is refused before training (exit 4, naming the
// column), and so is such a class (exit 2): nothing is drawn, nothing
// written. A UTF-8 name trains, and the model file that holds it
// certifies.
func TestTrainNames(t *testing.T) {
	setProgressAfter(t, quietRun)
	body := strings.SplitN(clusters(2, 30), "\n", 2)[1]
	out := filepath.Join(t.TempDir(), "model.json")
	for _, tt := range []struct {
		header, classes string
		exit            int
		msg             string
	}{
		{"x1,b\xe9,class", "c0,c1", 4, `line 1, column 2: the header's name "b\xe9" is not UTF-8 (byte 2 is 0xe9): save the file as UTF-8`},
		{"x1,\"x\x1b[2J\",class", "c0,c1", 4, "line 1, column 2: the header's name \"x\\x1b[2J\" holds the control character U+001B"},
		{"x1,x2,class", "c0,c\xe91", 2, `class name "c\xe91" is not UTF-8`},
	} {
		data := writeCSV(t, tt.header+"\n"+body)
		_, _, err := call(t, "train", "--data", data, "--label", "class", "--classes", tt.classes, "--bounds-all", "-9,9", "--out", out)
		if code := exitCode(err); code != tt.exit || err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("header %q, classes %q: exit %d (%v), want %d and %q", tt.header, tt.classes, code, err, tt.exit, tt.msg)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a refused run wrote %s (%v)", out, err)
		}
	}
	data := writeCSV(t, "x1,b\u00e9 \u5e74,class\n"+body)
	if _, _, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-9,9", "--out", out); err != nil {
		t.Fatal(err)
	}
	if stdout, _, err := call(t, "certify", out); err != nil || !strings.Contains(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify of a model with a UTF-8 name: %v\n%s", err, stdout)
	}
}
