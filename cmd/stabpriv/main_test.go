package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/modelfile"
)

// call runs the command line and returns stdout, stderr and the error.
func call(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := run(args, &out, &errw)
	return out.String(), errw.String(), err
}

// writeFile writes content into a new temporary directory and returns the
// path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeCSV(t *testing.T, content string) string { return writeFile(t, "data.csv", content) }

// trainText writes text as dir/name.csv, runs train on it with the flags
// into dir/name.json and returns that path, train's stdout and the model
// file read back; any failure fails the test.
func trainText(t *testing.T, dir, name, text string, flags ...string) (string, string, *modelfile.Released) {
	t.Helper()
	data := filepath.Join(dir, name+".csv")
	if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".json")
	stdout, stderr, err := call(t, append([]string{"train", "--data", data, "--out", out}, flags...)...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, stderr)
	}
	r, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, stdout, r
}

// setProgressAfter sets progressAfter to d for the test. A test that
// asserts a train run at the default log level is silent sets it to
// quietRun: with the default 2 s, a loaded machine could stretch the run
// past it and the progress lines would then fail the test.
func setProgressAfter(t *testing.T, d time.Duration) {
	t.Helper()
	old := progressAfter
	progressAfter = d
	t.Cleanup(func() { progressAfter = old })
}

// quietRun is a progressAfter no test run reaches.
const quietRun = 24 * time.Hour

// clusters returns a CSV of k well-separated Gaussian clusters in 2-D, label
// column "class" with names c0, c1, ..., or a regression target y = x1 - x2
// (plus small noise) when k == 0.
func clusters(k, perClass int) string {
	rng := rand.New(rand.NewPCG(4, 2))
	var b strings.Builder
	if k == 0 {
		b.WriteString("x1,x2,y\n")
		for range perClass {
			x1, x2 := rng.NormFloat64(), rng.NormFloat64()
			fmt.Fprintf(&b, "%g,%g,%g\n", x1, x2, 0.5*(x1-x2)+0.01*rng.NormFloat64())
		}
		return b.String()
	}
	b.WriteString("x1,x2,class\n")
	for i := range k * perClass {
		c := i % k // classes interleaved, so that any row range holds all
		cx, cy := 5*math.Cos(2*math.Pi*float64(c)/float64(k)), 5*math.Sin(2*math.Pi*float64(c)/float64(k))
		fmt.Fprintf(&b, "%g,%g,c%d\n", cx+rng.NormFloat64()*0.5, cy+rng.NormFloat64()*0.5, c)
	}
	return b.String()
}

// TestTrainDefault is train with no flag but --out: a private release
// (eps = 1, the public rule) of the embedded data on every row, no log
// line on stderr; a non-private run is asked for by --mechanism none.
func TestTrainDefault(t *testing.T) {
	setProgressAfter(t, quietRun)
	path := filepath.Join(t.TempDir(), "out", "model.json")
	stdout, stderr, err := call(t, "train", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	if stderr != "" {
		t.Errorf("stderr is not empty:\n%s", stderr)
	}
	if !strings.HasPrefix(stdout, "PRIVATE RELEASE") || !strings.Contains(stdout, "1-DP (pure)") || strings.Contains(stdout, "DIAGNOSTICS") {
		t.Errorf("the default is not a private release at eps = 1:\n%s", stdout)
	}
	r, err := modelfile.ReadFile(path)
	if err != nil || !r.Private || r.Split.TestFrac != 0 || r.Split.TrainRows != 497 {
		t.Fatalf("the default model file: %v, %+v", err, r)
	}
	stdout, stderr, err = call(t, "train", "--mechanism", "none", "--test-frac", "0.2", "--out", path, "--force")
	if err != nil {
		t.Fatal(err)
	}
	if stderr != "" {
		t.Errorf("stderr is not empty:\n%s", stderr)
	}
	for _, want := range []string{"NOT PRIVATE", "test accuracy:", "passes done", "strongly-convex-sgd", "model written to"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	r, err = modelfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Private || r.Certificate != nil || r.Run.N != 398 || r.Model.D != 31 || r.Schema.Classes[1] != "malignant" || r.Preprocessing.Mode != preprocess.Bounds {
		t.Errorf("model file: private %v, n %d, d %d, classes %v, mode %s", r.Private, r.Run.N, r.Model.D, r.Schema.Classes, r.Preprocessing.Mode)
	}
}

func TestTrainLosses(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		args  []string
		check string
	}{
		{"binary csv", clusters(2, 40), []string{"--label", "class"}, "test accuracy:  1.0000"},
		{"softmax csv", clusters(3, 40), []string{"--label", "class"}, "3 classes"},
		{"huber regression", clusters(0, 200), []string{"--label", "y", "--loss", "huber"}, "test rmse:"},
		{"graph engine", clusters(2, 40), []string{"--label", "class", "--engine", "graph", "--passes", "2"}, "test accuracy:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if slices.Contains(tt.args, "graph") {
				requireGraphEngine(t)
			}
			stdout, _, err := call(t, append([]string{"train", "--mechanism", "none", "--test-frac", "0.2", "--data", writeCSV(t, tt.data)}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout, tt.check) {
				t.Errorf("output lacks %q:\n%s", tt.check, stdout)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	good := writeCSV(t, clusters(2, 20))
	bounds := writeFile(t, "b.csv", "x1,-9,9\nx2,-9,9\n")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"fly"}, `unknown command "fly"`},
		{"help unknown", []string{"help", "fly"}, `unknown command "fly"`},
		{"version with an argument", []string{"version", "extra"}, `version takes no arguments, got ["extra"]`},
		{"version with a flag", []string{"--version", "--short"}, "no arguments"},
		{"version with help and more", []string{"version", "-h", "extra"}, "no arguments"},
		{"unknown flag", []string{"train", "--bogus"}, "-bogus"},
		{"bad number", []string{"train", "--lambda", "abc"}, "lambda"},
		{"unknown loss", []string{"train", "--loss", "hinge"}, "unknown loss"},
		{"unknown schedule", []string{"train", "--schedule", "fast"}, "--schedule"},
		{"unknown engine", []string{"train", "--engine", "gpu"}, "--engine"},
		{"bad step", []string{"train", "--step", "-1"}, "--step"},
		{"step with schedule", []string{"train", "--mechanism", "none", "--step", "0.1", "--schedule", "inverse-t"}, "constant schedule"},
		{"test fraction", []string{"train", "--test-frac", "1"}, "--test-frac"},
		{"dropout", []string{"train", "--dropout", "0"}, "--dropout"},
		{"passes", []string{"train", "--passes", "0"}, "--passes"},
		{"zero passes", []string{"train", "--mechanism", "gamma", "--passes", "0"}, "train: --passes 0, want >= 1"},
		{"batch", []string{"train", "--mechanism", "gamma", "--batch", "0"}, "train: --batch 0, want >= 1"},
		{"log level", []string{"train", "--log-level", "loud"}, "--log-level"},
		{"negative lambda", []string{"train", "--lambda", "-1"}, "lambda"},
		{"inverse-t without mu", []string{"train", "--mechanism", "none", "--schedule", "inverse-t", "--lambda", "0"}, "mu"},
		{"extra argument", []string{"train", "extra"}, `unexpected argument "extra"`},
		{"data without label", []string{"train", "--data", good}, "--label"},
		{"label without data", []string{"train", "--label", "class"}, "without --data"},
		{"classes without data", []string{"train", "--classes", "a,b"}, "applies to --data"},
		{"positive for multiclass", []string{"train", "--mechanism", "none", "--data", good, "--label", "class", "--loss", "softmax", "--positive", "c1"}, "binary losses"},
		{"regression on default data", []string{"train", "--mechanism", "none", "--loss", "squared", "--radius", "1"}, "no classes"},
		{"missing label column", []string{"train", "--mechanism", "none", "--data", good, "--label", "species"}, "the columns are x1, x2, class"},
		{"sweep of a CSV without --dataset", []string{"sweep", "--data", good, "--label", "class", "--out", t.TempDir()}, "needs --dataset csv"},
		{"featsel of a CSV without --dataset", []string{"featsel", "--data", good, "--label", "class", "--out", t.TempDir()}, "needs --dataset csv"},
		{"semicolon-separated file", []string{"train", "--data", writeFile(t, "semi.csv", strings.ReplaceAll(clusters(2, 20), ",", ";")), "--label", "class", "--classes", "c0,c1"},
			"separated by ';' or tabs, not commas"},
		{"file without a header row", []string{"train", "--data", writeFile(t, "nohdr.csv", "1.5,b,c0,d\n2.5,a,c1,e\n"), "--label", "class", "--classes", "c0,c1"},
			"the first line holds numbers: if it is a data row, name the columns"},
		{"one class", []string{"train", "--data", good, "--label", "class", "--classes", "c0"}, "--classes c0 declares one class"},
		{"private without classes", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--bounds", bounds}, "--classes"},
		{"bounds share leaves nothing", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1", "--bounds-share", "1"}, "leaves nothing for the release"},
		{"bounds share leaves nothing, selection", []string{"train", "--data", good, "--label", "class", "--epsilon", "1", "--classes", "c0,c1", "--bounds-share", "1"}, "leaves nothing for the release"},
		{"bounds method unknown", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1", "--bounds-method", "quantiles"}, "want centres or ranges"},
		{"bounds method with bounds", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1", "--bounds", bounds, "--bounds-method", "ranges"}, "whose bounds are estimated"},
		{"bounds share with bounds", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1", "--bounds", bounds, "--bounds-share", "0.3"}, "cost nothing"},
		{"schema names a missing column", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1", "--bounds", bounds,
			"--schema", writeFile(t, "s.csv", "x3,a,b\n")}, `declares column "x3" categorical`},
		{"schema declares the label", []string{"train", "--mechanism", "none", "--data", good, "--label", "class", "--schema", writeFile(t, "s2.csv", "class,c0,c1\n")}, "the label"},
		{"schema malformed", []string{"train", "--data", good, "--label", "class", "--schema", writeFile(t, "s3.csv", "x1\n")}, "no category"},
		{"header without data", []string{"train", "--header", "a,b"}, "--header"},
		{"header repeated", []string{"train", "--data", good, "--header", "a,a,b", "--label", "b"}, "distinct"},
		{"project above d", []string{"train", "--mechanism", "gamma", "--project", "31"}, "want 1 <= k <= 30"},
		{"project negative", []string{"train", "--project", "-2"}, "--project"},
		{"project not a number", []string{"train", "--project", "half"}, "want k >= 1, 0 for none, or auto"},
		{"project above d with a selection", []string{"train", "--epsilon", "1", "--project", "31"}, "want 1 <= k <= 30"},
		{"project auto with partitions", []string{"train", "--data", good, "--label", "class", "--partitions", "2", "--project", "auto"}, "takes --project k"},
		{"bounds-all reversed", []string{"train", "--data", good, "--label", "class", "--bounds-all", "1,-1"}, "--bounds-all"},
		{"bounds missing a column", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1",
			"--bounds", writeFile(t, "b1.csv", "x1,-9,9\n")}, `"x2"`},
		{"bounds reversed", []string{"train", "--data", good, "--label", "class", "--bounds", writeFile(t, "b2.csv", "x1,9,-9\nx2,-9,9\n")}, "lo < hi"},
		{"bounds and standardize", []string{"train", "--data", good, "--label", "class", "--bounds", bounds, "--standardize", "train"}, "exclude"},
		{"binary with three classes", []string{"train", "--data", good, "--label", "class", "--mechanism", "gamma", "--classes", "c0,c1,c2", "--bounds", bounds, "--loss", "logistic"}, "2 classes"},
		{"epsilon zero", []string{"train", "--mechanism", "gamma", "--epsilon", "0"}, "eps"},
		{"delta with gamma", []string{"train", "--mechanism", "gamma", "--delta", "1e-5"}, "pure"},
		{"delta out of range", []string{"train", "--mechanism", "gaussian-analytic", "--delta", "1"}, "delta"},
		{"classical gaussian eps 1", []string{"train", "--mechanism", "gaussian", "--delta", "1e-5"}, "gaussian-analytic"},
		{"unknown mechanism", []string{"train", "--mechanism", "bogus"}, "--mechanism"},
		{"epsilon with mechanism none", []string{"train", "--mechanism", "none", "--epsilon", "2"}, "private release"},
		{"lambda with a selection", []string{"train", "--epsilon", "2", "--lambda", "0.1"}, "without --mechanism"},
		{"unknown selection", []string{"train", "--epsilon", "2", "--select", "grid"}, "--select"},
		{"passes with the rule", []string{"train", "--epsilon", "2", "--passes", "50"}, "--passes: without --mechanism"},
		{"engine with the rule", []string{"train", "--epsilon", "2", "--engine", "graph"}, "--engine: without --mechanism"},
		{"split leaves no test rows", []string{"train", "--data", writeFile(t, "two.csv", "x1,x2,class\n1,2,c0\n2,3,c1\n"), "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--bounds-all", "-9,9", "--test-frac", "0.2"}, "0 test rows"},
		{"selection with too few rows to tune", []string{"train", "--epsilon", "2", "--select", "holdout", "--test-frac", "0.99"}, "tuning"},
		{"seeded without a noise seed", []string{"train", "--mechanism", "gamma", "--noise", "seeded"}, "--noise-seed"},
		{"noise seed with secure noise", []string{"train", "--mechanism", "gamma", "--noise-seed", "3"}, "--noise seeded"},
		{"clip with auto lambda", []string{"train", "--mechanism", "gamma", "--clip", "0.1"}, "--lambda"},
		{"tolerance with a release", []string{"train", "--mechanism", "gamma", "--tolerance", "1e-3"}, "data-dependent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.json")
			args := tt.args
			if len(args) > 0 && args[0] == "train" {
				args = append(args, "--out", out)
			}
			_, _, err := call(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit code %d, want 2 (usage): %v", code, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a model file was written: %v", err)
			}
		})
	}
}

func TestRuntimeErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want error
		msg  string
		code int
	}{
		{"missing file", []string{"train", "--mechanism", "none", "--data", filepath.Join(dir, "none.csv"), "--label", "y"}, os.ErrNotExist, "none.csv", 4},
		{"bad cell", []string{"train", "--mechanism", "none", "--bounds-all", "0,2", "--data", writeCSV(t, "a,y\n1,p\nx,q\n"), "--label", "y"}, datasets.ErrFormat, `data row 2, column "a"`, 4},
		{"ragged row", []string{"train", "--mechanism", "none", "--data", writeCSV(t, "a,y\n1,p\n2\n"), "--label", "y"}, datasets.ErrFormat, "line 3", 4},
		{"empty file", []string{"train", "--mechanism", "none", "--data", writeCSV(t, ""), "--label", "y"}, datasets.ErrFormat, "empty", 4},
		{"shards matching no file", []string{"train", "--data", "nomatch*.csv", "--label", "y", "--classes", "p,q", "--partitions", "2", "--bounds-all", "0,1"},
			datasets.ErrFormat, `"nomatch*.csv" matches no file under the input root "."`, 4},
		{"pdp of three classes by the logistic loss", []string{"pdp", "--data", writeCSV(t, clusters(3, 10)), "--label", "class", "--out", filepath.Join(dir, "pd")},
			datasets.ErrFormat, "has 3 classes (c0, c1, c2), want 2 (more classes take the softmax loss)", 4},
		{"sweep of a text column", []string{"sweep", "--dataset", "csv", "--data", writeCSV(t, "a,y\n1,p\nx,q\n"), "--label", "y", "--out", filepath.Join(dir, "sw")},
			datasets.ErrFormat, `column "a": "x" is not a finite number (this reader takes numeric features, none missing)`, 4},
		{"missing model", []string{"certify", filepath.Join(dir, "none.json")}, modelfile.ErrFile, "none.json", 5},
		{"batch above n", []string{"train", "--mechanism", "none", "--batch", "100000"}, nil, "batch size", 1},
		{"dp-sgd batch above n", []string{"train", "--mechanism", "dp-sgd", "--delta", "1e-5", "--batch", "100000"}, nil, "above the 497 training rows", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := call(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if code := exitCode(err); code != tt.code {
				t.Errorf("exit code %d, want %d: %v", code, tt.code, err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v does not wrap %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	stdout, _, err := call(t, "help")
	if err != nil || !strings.Contains(stdout, "train") || !strings.Contains(stdout, "predict") {
		t.Errorf("help: %v\n%s", err, stdout)
	}
	for _, cmd := range []string{"train", "certify", "predict"} {
		stdout, _, err = call(t, "help", cmd)
		if err != nil || !strings.Contains(stdout, "Usage: stabpriv "+cmd) {
			t.Errorf("help %s: %v\n%s", cmd, err, stdout)
		}
	}
	for _, args := range [][]string{{"help", "version"}, {"version", "-h"}, {"version", "--help"}} {
		stdout, _, err = call(t, args...)
		if err != nil || !strings.Contains(stdout, "Usage: stabpriv version") {
			t.Errorf("%q: %v\n%s", args, err, stdout)
		}
	}
	if exitCode(nil) != 0 {
		t.Error("exit code of success is not 0")
	}
}

// TestTrainDeterministic checks that the seeds fix the whole run, noise
// included.
func TestTrainDeterministic(t *testing.T) {
	dir := t.TempDir()
	read := func(name, seed string) []byte {
		path := filepath.Join(dir, name)
		if _, _, err := call(t, "train", "--out", path, "--seed", seed, "--mechanism", "gamma", "--noise", "seeded", "--noise-seed", "3"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := read("a.json", "5"), read("b.json", "5"), read("c.json", "6")
	if !bytes.Equal(a, b) {
		t.Error("two runs with the same seeds wrote different model files")
	}
	if bytes.Equal(a, c) {
		t.Error("runs with different seeds wrote the same model file")
	}
}
