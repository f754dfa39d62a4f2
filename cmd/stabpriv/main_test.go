package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
)

// call runs the command line and returns stdout, stderr and the error.
func call(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := run(args, &out, &errw)
	return out.String(), errw.String(), err
}

// writeCSV writes a CSV file into a temporary directory and returns its path.
func writeCSV(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusters returns a CSV of k well-separated Gaussian clusters in 2-D, label
// column "class" with names c0, c1, ..., or a regression target y = x1 - x2
// (plus small noise) when k == 0.
func clusters(k, perClass int) string {
	rng := rand.New(rand.NewPCG(4, 2))
	var b strings.Builder
	if k == 0 {
		b.WriteString("x1,x2,y\n")
		for i := 0; i < perClass; i++ {
			x1, x2 := rng.NormFloat64(), rng.NormFloat64()
			fmt.Fprintf(&b, "%g,%g,%g\n", x1, x2, 0.5*(x1-x2)+0.01*rng.NormFloat64())
		}
		return b.String()
	}
	b.WriteString("x1,x2,class\n")
	for c := 0; c < k; c++ {
		cx, cy := 5*math.Cos(2*math.Pi*float64(c)/float64(k)), 5*math.Sin(2*math.Pi*float64(c)/float64(k))
		for i := 0; i < perClass; i++ {
			fmt.Fprintf(&b, "%g,%g,c%d\n", cx+rng.NormFloat64()*0.5, cy+rng.NormFloat64()*0.5, c)
		}
	}
	return b.String()
}

func TestTrainDefault(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nested", "dir", "model.json")
	stdout, _, err := call(t, "train", "--out", out, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"test accuracy:", "kappa = 1 holds", "beta_s", "l1_ratio", "passes done", "fitted on the training split"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Model struct {
			Loss string    `json:"loss"`
			D    int       `json:"d"`
			K    int       `json:"k"`
			W    []float64 `json:"w"`
		} `json:"model"`
		Run struct {
			N      int     `json:"n"`
			Kappa  float64 `json:"kappa"`
			Lambda float64 `json:"lambda"`
			Passes int     `json:"passes"`
		} `json:"run"`
		Preprocessing struct {
			Features     []string               `json:"features"`
			Classes      []string               `json:"classes"`
			Standardizer *datasets.Standardizer `json:"standardizer"`
		} `json:"preprocessing"`
		Metrics struct {
			Test metricValue `json:"test"`
		} `json:"metrics"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("model file is not valid JSON: %v", err)
	}
	m, p := doc.Model, doc.Preprocessing
	if m.Loss != "logistic" || m.D != 31 || m.K != 1 || len(m.W) != 31 {
		t.Errorf("model %+v, want logistic 1 x 31", m)
	}
	if doc.Run.N != 455 || doc.Run.Kappa != 1 || doc.Run.Lambda != 1e-3 || doc.Run.Passes != 10 {
		t.Errorf("run %+v", doc.Run)
	}
	if len(p.Features) != 31 || p.Features[30] != "bias" || len(p.Classes) != 2 || p.Classes[1] != "malignant" {
		t.Errorf("features %q, classes %q", p.Features, p.Classes)
	}
	if p.Standardizer == nil || len(p.Standardizer.Mean) != 30 || len(p.Standardizer.Scale) != 30 || p.Standardizer.N != 455 {
		t.Errorf("standardizer %+v", p.Standardizer)
	}
	if acc := doc.Metrics.Test; acc.Name != "accuracy" || acc.Value < 0.9 || acc.Rows != 114 {
		t.Errorf("test metric %+v, want accuracy >= 0.9 on 114 rows", acc)
	}
	if len(doc.Notes) < 3 {
		t.Errorf("notes %q", doc.Notes)
	}
}

// TestTrainLosses trains every task on data it fits, through --data.
func TestTrainLosses(t *testing.T) {
	tests := []struct {
		name   string
		csv    string
		args   []string
		metric string
		ok     func(v float64) bool
	}{
		{"softmax 3 classes", clusters(3, 60), []string{"--label", "class", "--loss", "softmax"}, "test accuracy:", func(v float64) bool { return v >= 0.9 }},
		{"huber-hinge", clusters(2, 60), []string{"--label", "class", "--loss", "huber-hinge", "--positive", "c0"}, "test accuracy:", func(v float64) bool { return v >= 0.9 }},
		{"squared", clusters(0, 200), []string{"--label", "y", "--loss", "squared", "--radius", "10", "--label-bound", "5", "--lambda", "1e-4"}, "test rmse:", func(v float64) bool { return v < 0.3 }},
		{"huber graph engine", clusters(0, 200), []string{"--label", "y", "--loss", "huber", "--engine", "graph", "--passes", "3"}, "test rmse:", func(v float64) bool { return v < 0.5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"train", "--data", writeCSV(t, tt.csv), "--log-level", "error"}, tt.args...)
			stdout, _, err := call(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			i := strings.Index(stdout, tt.metric)
			if i < 0 {
				t.Fatalf("no %q in output:\n%s", tt.metric, stdout)
			}
			var v float64
			if _, err := fmt.Sscan(stdout[i+len(tt.metric):], &v); err != nil || !tt.ok(v) {
				t.Errorf("%s %v (%v):\n%s", tt.metric, v, err, stdout)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	good := writeCSV(t, clusters(2, 20))
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"fly"}, `unknown command "fly"`},
		{"help unknown", []string{"help", "fly"}, `unknown command "fly"`},
		{"unknown flag", []string{"train", "--bogus"}, "-bogus"},
		{"bad number", []string{"train", "--lambda", "abc"}, "lambda"},
		{"unknown loss", []string{"train", "--loss", "hinge"}, "unknown loss"},
		{"unknown schedule", []string{"train", "--schedule", "fast"}, "--schedule"},
		{"unknown engine", []string{"train", "--engine", "gpu"}, "--engine"},
		{"bad step", []string{"train", "--step", "-1"}, "--step"},
		{"step with schedule", []string{"train", "--step", "0.1", "--schedule", "inverse-t"}, "constant schedule"},
		{"test fraction", []string{"train", "--test-frac", "1"}, "--test-frac"},
		{"dropout", []string{"train", "--dropout", "0"}, "--dropout"},
		{"kappa", []string{"train", "--kappa", "-1"}, "--kappa"},
		{"passes", []string{"train", "--passes", "0"}, "--passes"},
		{"log level", []string{"train", "--log-level", "loud"}, "--log-level"},
		{"negative lambda", []string{"train", "--lambda", "-1"}, "lambda"},
		{"inverse-t without mu", []string{"train", "--schedule", "inverse-t", "--lambda", "0"}, "mu"},
		{"extra argument", []string{"train", "extra"}, `unexpected argument "extra"`},
		{"data without label", []string{"train", "--data", good}, "--data needs --label"},
		{"label without data", []string{"train", "--label", "class"}, "without --data"},
		{"positive for multiclass", []string{"train", "--loss", "softmax", "--positive", "malignant"}, "binary losses"},
		{"positive not in default data", []string{"train", "--positive", "benign"}, "encodes malignant as +1"},
		{"regression on default data", []string{"train", "--loss", "squared"}, "embedded data set is binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := call(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit code %d, want 2 (usage): %v", code, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
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
	}{
		{"missing label column", []string{"train", "--data", writeCSV(t, clusters(2, 10)), "--label", "species"}, datasets.ErrFormat, "the columns are x1, x2, class"},
		{"missing file", []string{"train", "--data", filepath.Join(dir, "none.csv"), "--label", "y"}, os.ErrNotExist, "none.csv"},
		{"bad cell", []string{"train", "--data", writeCSV(t, "a,y\n1,p\nx,q\n"), "--label", "y"}, datasets.ErrFormat, "line 3, column 1"},
		{"batch above n", []string{"train", "--batch", "100000", "--log-level", "error"}, nil, "batch size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := call(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if code := exitCode(err); code != 1 {
				t.Errorf("exit code %d, want 1 (runtime): %v", code, err)
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
	if err != nil || !strings.Contains(stdout, "train") || !strings.Contains(stdout, "help") {
		t.Errorf("help: %v\n%s", err, stdout)
	}
	stdout, _, err = call(t, "help", "train")
	if err != nil || !strings.Contains(stdout, "-label-bound") || !strings.Contains(stdout, "kappa = 1") {
		t.Errorf("help train: %v\n%s", err, stdout)
	}
	_, stderr, err := call(t, "train", "-h")
	if err != nil || !strings.Contains(stderr, "Usage: stabpriv train") {
		t.Errorf("train -h: %v\n%s", err, stderr)
	}
	if exitCode(nil) != 0 {
		t.Error("exit code of success is not 0")
	}
}

// TestTrainDeterministic checks that a seed fixes the whole run.
func TestTrainDeterministic(t *testing.T) {
	dir := t.TempDir()
	read := func(name, seed string) []byte {
		path := filepath.Join(dir, name)
		if _, _, err := call(t, "train", "--out", path, "--seed", seed, "--passes", "2", "--log-level", "error"); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Model struct{ W []float64 } `json:"model"`
		}
		data, _ := os.ReadFile(path)
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		w, _ := json.Marshal(doc.Model.W)
		return w
	}
	a, b, c := read("a.json", "5"), read("b.json", "5"), read("c.json", "6")
	if !bytes.Equal(a, b) {
		t.Error("same seed, different weights")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 5 and 6 give the same weights")
	}
}

func Example_help() {
	if err := run([]string{"help"}, os.Stdout, os.Stderr); err != nil {
		fmt.Println(err)
	}
	// Output:
	// stabpriv trains differentially private linear models by stable SGD.
	//
	// Usage:
	//
	//	stabpriv <command> [flags]
	//
	// Commands:
	//
	//   train    train a linear model on a CSV file or the embedded breast-cancer data
	//   certify  print the privacy certificate of a model file written by train
	//   sweep    run the paper's accuracy experiments (Figures 1 and 2) on a data set
	//   featsel  run the paper's private feature-selection experiments (Figures 3 and 5)
	//   help     list the commands, or show the flags of one
	//
	// Run 'stabpriv help <command>' for the flags of a command (train, certify, sweep, featsel).
}
