package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/internal/interrupt"
	"github.com/stabpriv/stabpriv/internal/proctest"
	"github.com/stabpriv/stabpriv/modelfile"
)

// runMainEnv, when set, makes the test binary run main with its arguments
// instead of the tests: the tests run stabpriv-beam as a process without
// building it.
const runMainEnv = "STABPRIV_BEAM_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "stabpriv-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	binDir       string // where the tests build stabpriv
	stabprivOnce sync.Once
	stabprivErr  error
)

// stabpriv builds the stabpriv command of the enclosing module once (the
// build cache makes it quick after the first) and returns its path; the
// test is skipped when no go command is found.
func stabpriv(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build stabpriv: ", err)
	}
	bin := filepath.Join(binDir, "stabpriv")
	stabprivOnce.Do(func() {
		cmd := exec.Command(goCmd, "build", "-buildvcs=false", "-o", bin, "./cmd/stabpriv")
		cmd.Dir = filepath.Join("..", "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			stabprivErr = fmt.Errorf("building stabpriv: %v\n%s", err, out)
		}
	})
	if stabprivErr != nil {
		t.Fatal(stabprivErr)
	}
	return bin
}

// exitOf runs cmd and returns its exit status and its standard error.
func exitOf(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// shardRows are the rows of the test shards: two features and a label,
// separable by f0.
func shardRows(k, rows int) string {
	var b strings.Builder
	b.WriteString("f0,f1,y\n")
	for r := range rows {
		c := (r + k) % 2
		fmt.Fprintf(&b, "%g,%g,%s\n", float64(2*c-1)+float64(r%7)/10, float64(r%5)/5-0.5, []string{"neg", "pos"}[c])
	}
	return b.String()
}

// quoteFirstCells quotes the first cell of every data row of a shard with
// a line end inside the quotes, which the reader trims away.
func quoteFirstCells(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if j := strings.IndexByte(l, ','); i > 0 && j >= 0 {
			lines[i] = "\"" + l[:j] + "\r\n\"" + l[j:]
		}
	}
	return strings.Join(lines, "")
}

// withIDs returns the edit that adds a column user after f0 to a shard,
// the rows' IDs u0, ..., u(ids-1) in turn.
func withIDs(ids int) func(string) string {
	return func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		for i, l := range lines {
			if j := strings.IndexByte(l, ','); j >= 0 {
				id := "user"
				if i > 0 {
					id = fmt.Sprintf("u%d", i%ids)
				}
				lines[i] = l[:j+1] + id + l[j:]
			}
		}
		return strings.Join(lines, "")
	}
}

// TestExitCodes runs stabpriv train --partitions and stabpriv-beam (this
// test binary running main, on prism) on the same bad inputs and checks
// that both exit with the same status, the one of stabpriv train's table
// for the error's class wherever stabpriv-beam finds it (at launch or in
// the pipeline): 4 for malformed data (a ragged row, a first data row
// that is ragged, which stabpriv-beam finds at launch, a header that
// differs between shards, an infinite cell, a quoted cell never closed, no
// shard), 2 for settings the data refuses (a missing privacy-ID column,
// more partitions than rows, or than training IDs per privacy ID) and
// for a model file among the shards, and 0 for a label outside --classes
// (a null row, by design, in both). On the quoted shards both write the
// same model file: the same weights bit for bit.
func TestExitCodes(t *testing.T) {
	bin := stabpriv(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// edit rewrites the text of a shard.
	type edit func(string) string
	line := func(i int, f func(string) string) edit {
		return func(s string) string {
			lines := strings.SplitAfter(s, "\n")
			lines[i] = f(lines[i])
			return strings.Join(lines, "")
		}
	}
	for _, c := range []struct {
		name  string
		edit  edit
		flags []string
		want  int
		every bool // edit every shard, not shard 1 alone
	}{
		{"a ragged row", line(30, func(string) string { return "1,2,3,pos\n" }), nil, 4, false},
		{"a ragged first data row (found at launch)", line(1, func(string) string { return "1,pos\n" }), nil, 4, false},
		{"a header that differs between shards", line(0, func(string) string { return "f0,g1,y\n" }), nil, 4, false},
		{"a label outside --classes", line(30, func(l string) string {
			return strings.Replace(strings.Replace(l, "neg", "maybe", 1), "pos", "maybe", 1)
		}), nil, 0, false},
		{"an infinite cell (NaN is a missing cell)", line(30, func(l string) string { return "Inf" + l[strings.IndexByte(l, ','):] }), nil, 4, false},
		// A cell whose text is a settings error's message: still malformed
		// data, whatever the cell says.
		{"a cell reading as a settings error", line(30, func(l string) string { return "private: invalid options" + l[strings.IndexByte(l, ','):] }), nil, 4, false},
		{"a quoted cell never closed", line(30, func(l string) string { return "\"" + l }), nil, 4, false},
		{"no shard matches", nil, []string{"--data-glob", "none-*.csv"}, 4, false},
		{"a missing privacy-ID column", nil, []string{"--privacy-id", "user", "--max-rows-per-id", "2"}, 2, false},
		{"more partitions than rows", nil, []string{"--partitions", "500"}, 2, false},
		// Both commands are built without -tags graph here.
		{"the graph engine in a build without it", nil, []string{"--engine", "graph"}, 2, false},
		// Three IDs, all training, of c = 2 rows: 6 training rows, 3
		// training IDs, and an ID trains in one partition.
		{"more partitions than training IDs", withIDs(3), []string{"--privacy-id", "user", "--max-rows-per-id", "2", "--test-frac", "0", "--partitions", "5"}, 2, true},
		{"a model file among the shards", func(string) string { return "{\n  \"format\": \"" + modelfile.Format + "\"\n}\n" }, nil, 2, false},
		{"quoted shards", func(s string) string {
			// A quoted line end in the first cell of every neg row (trimmed
			// away: the cell reads as its number), a doubled quote and a
			// semicolon in the class (a class name holds no line end).
			return strings.NewReplacer(",neg\n", ",\"n\"\"e;g\"\r\n", ",pos\n", ", \"pos\"\n").Replace(quoteFirstCells(s))
		}, []string{"--classes", "n\"e;g,pos"}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for k := range 2 {
				text := shardRows(k, 60)
				if c.edit != nil && (k == 1 || c.every) {
					text = c.edit(text)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.csv", k)), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			glob := filepath.Join(dir, "shard-*.csv")
			flags := []string{"--label", "y", "--classes", "neg,pos", "--bounds-all", "-3,5", "--mechanism", "gamma",
				"--epsilon", "1", "--noise", "seeded", "--noise-seed", "9", "--partitions", "2", "--log-level", "error"}
			for i := 0; i < len(c.flags); i += 2 {
				if c.flags[i] == "--data-glob" {
					glob = filepath.Join(dir, c.flags[i+1])
					continue
				}
				if j := slices.Index(flags, c.flags[i]); j >= 0 {
					flags[j+1] = c.flags[i+1]
				} else {
					flags = append(flags, c.flags[i:i+2]...)
				}
			}
			trainOut, beamOut := filepath.Join(dir, "out", "train.json"), filepath.Join(dir, "out", "beam.json")
			os.Mkdir(filepath.Join(dir, "out"), 0o755)
			train := exec.Command(bin, append([]string{"train", "--data", glob, "--out", trainOut}, flags...)...)
			trainCode, trainErr := exitOf(t, train)
			beam := exec.Command(self, append([]string{"--data", glob, "--out", beamOut}, flags...)...)
			beam.Env = append(os.Environ(), runMainEnv+"=1")
			beamCode, beamErr := exitOf(t, beam)
			if trainCode != c.want || beamCode != c.want {
				t.Errorf("exit %d from stabpriv train, %d from stabpriv-beam, want %d for both\ntrain: %s\nbeam: %s", trainCode, beamCode, c.want, tail(trainErr), tail(beamErr))
			}
			if c.flags != nil && c.flags[0] == "--engine" && (!strings.Contains(trainErr, "-tags graph") || !strings.Contains(beamErr, "-tags graph")) {
				t.Errorf("the refusal does not name the build tag\ntrain: %s\nbeam: %s", tail(trainErr), tail(beamErr))
			}
			if c.want != 0 {
				if m, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(m) > 0 {
					t.Errorf("files written: %v", m)
				}
				return
			}
			a, err := modelfile.ReadFile(trainOut)
			if err != nil {
				t.Fatal(err)
			}
			b, err := modelfile.ReadFile(beamOut)
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "quoted shards" {
				// The quoted labels are the classes: the weights are
				// those of the same rows unquoted.
				plain := filepath.Join(dir, "plain")
				os.Mkdir(plain, 0o755)
				for k := range 2 {
					if err := os.WriteFile(filepath.Join(plain, fmt.Sprintf("shard-%d.csv", k)), []byte(shardRows(k, 60)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				out := filepath.Join(plain, "model.json")
				flags[slices.Index(flags, "--classes")+1] = "neg,pos"
				if code, stderr := exitOf(t, exec.Command(bin, append([]string{"train", "--data", filepath.Join(plain, "*.csv"), "--out", out}, flags...)...)); code != 0 {
					t.Fatalf("unquoted shards: exit %d: %s", code, tail(stderr))
				}
				p, err := modelfile.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(p.Model.W, a.Model.W) {
					t.Errorf("weights %v from the quoted shards, %v from the same rows unquoted", a.Model.W, p.Model.W)
				}
			}
			if !slices.Equal(a.Model.W, b.Model.W) || a.Split.Rows != b.Split.Rows || a.Split.TrainRows != b.Split.TrainRows || a.Certificate.L2Sensitivity != b.Certificate.L2Sensitivity {
				t.Errorf("the model files differ: train %v (%d rows, Delta %g), stabpriv-beam %v (%d rows, Delta %g)",
					a.Model.W, a.Split.Rows, a.Certificate.L2Sensitivity, b.Model.W, b.Split.Rows, b.Certificate.L2Sensitivity)
			}
		})
	}
}

// tail returns the last lines of a command's standard error.
func tail(s string) string {
	if i := len(s) - 600; i > 0 {
		return "..." + s[i:]
	}
	return s
}

// TestSignalStops stops stabpriv-beam blocked at launch (reading a shard
// that is a FIFO no one writes) with SIGINT, SIGTERM and SIGHUP: it exits
// with 128 plus the signal's number, says which signal stopped it, and
// writes nothing.
func TestSignalStops(t *testing.T) {
	for _, c := range proctest.Stops {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // each waits interrupt.Grace
			dir := t.TempDir()
			fifo := filepath.Join(dir, "shard-0.csv")
			proctest.Mkfifo(t, fifo)
			out := filepath.Join(dir, "model.json")
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self, "--data", filepath.Join(dir, "shard-*.csv"), "--label", "y", "--classes", "neg,pos",
				"--bounds-all", "-3,5", "--epsilon", "1", "--out", out, "--log-level", "error")
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			exited := proctest.Start(t, cmd)
			w := proctest.OpenFIFO(t, fifo, exited, time.Minute, func() { cmd.Process.Kill() })
			defer w.Close()
			if status := proctest.Stop(t, cmd.Process, exited, c.Signal, interrupt.Grace+time.Minute); status != c.Status {
				t.Fatalf("exit %d, want %d; stderr:\n%s", status, c.Status, tail(stderr.String()))
			}
			if want := "stabpriv-beam: interrupted by " + c.Name + ", nothing written"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, tail(stderr.String()))
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the stopped run wrote %s (%v)", out, err)
			}
		})
	}
}

// twoShards writes two shards of 60 rows (shardRows) into a new directory
// and returns this test binary (which runs main with runMainEnv set), the
// directory and the shards' glob.
func twoShards(t *testing.T) (self, dir, glob string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	for k := range 2 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.csv", k)), []byte(shardRows(k, 60)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return self, dir, filepath.Join(dir, "shard-*.csv")
}

// TestInputAlias: --input, the old name of --data, still runs (with a
// warning that names --data); --input and --data that differ are refused.
func TestInputAlias(t *testing.T) {
	self, dir, glob := twoShards(t)
	flags := []string{"--label", "y", "--classes", "neg,pos", "--bounds-all", "-3,5", "--mechanism", "gamma",
		"--epsilon", "1", "--noise", "seeded", "--noise-seed", "9", "--partitions", "2", "--log-level", "error"}
	run := func(args ...string) (int, string) {
		cmd := exec.Command(self, append(args, flags...)...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		return exitOf(t, cmd)
	}
	out := filepath.Join(dir, "model.json")
	code, stderr := run("--input", glob, "--out", out)
	if code != 0 || !strings.Contains(stderr, "--input is deprecated; use --data") {
		t.Errorf("--input: exit %d, want 0 and a warning; stderr:\n%s", code, tail(stderr))
	}
	if _, err := modelfile.ReadFile(out); err != nil {
		t.Errorf("--input wrote no model file: %v", err)
	}
	code, stderr = run("--input", glob, "--data", filepath.Join(dir, "other-*.csv"), "--out", filepath.Join(dir, "m2.json"))
	if code != 2 || !strings.Contains(stderr, "give --data alone") {
		t.Errorf("--input and --data: exit %d, want 2; stderr:\n%s", code, tail(stderr))
	}
}

// TestRunners: a runner the command does not link (dot, which beamx would
// add) is refused at launch with exit 2, naming the runners it offers,
// instead of Beam's fatal "not registered" once the pipeline is built; a
// linked runner other than the default (direct) runs and writes the model.
func TestRunners(t *testing.T) {
	self, dir, glob := twoShards(t)
	run := func(runner, out string) (int, string) {
		cmd := exec.Command(self, "--runner", runner, "--data", glob, "--out", out,
			"--label", "y", "--classes", "neg,pos", "--bounds-all", "-3,5", "--epsilon", "1", "--partitions", "2", "--log-level", "error")
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		return exitOf(t, cmd)
	}
	want := "--runner dot: not a runner of this command; use one of prism, direct, universal, flink, spark, dataflow"
	if code, stderr := run("dot", filepath.Join(dir, "dot.json")); code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("--runner dot: exit %d, want 2 and %q; stderr:\n%s", code, want, tail(stderr))
	}
	out := filepath.Join(dir, "direct.json")
	if code, stderr := run("direct", out); code != 0 {
		t.Errorf("--runner direct: exit %d, want 0; stderr:\n%s", code, tail(stderr))
	}
	if _, err := modelfile.ReadFile(out); err != nil {
		t.Errorf("--runner direct wrote no model file: %v", err)
	}
}
