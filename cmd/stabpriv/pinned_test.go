package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updatePinned = flag.Bool("update-pinned", false, "rewrite the pinned model files in testdata/pinned")

// pinnedRuns are seeded command lines whose model files are pinned in
// testdata/pinned: every mechanism (dp-sgd with its automatic knobs, with
// its own, and at b = 1 where its seeded noise merges), both engines, the SGD knobs, a partitioned fit, a
// non-private fit, multiclass and regression. A release
// made by SGD must keep its bits; one made by a solver (objective, amp)
// must keep every field but its weights, which may move within the
// solver's tolerance (pinnedSolverTol), and the weights' hash with them.
var pinnedRuns = []struct {
	name   string
	data   string // "" for the embedded data, else a generated CSV (pinnedCSV)
	solver bool
	args   []string
}{
	{"gamma-default", "", false, []string{"--mechanism", "gamma", "--epsilon", "1"}},
	{"laplace-knobs", "", false, []string{"--mechanism", "laplace", "--epsilon", "2", "--lambda", "0.01", "--passes", "3", "--batch", "4", "--clip", "0.5", "--average"}},
	{"analytic-graph", "", false, []string{"--mechanism", "gaussian-analytic", "--epsilon", "1", "--delta", "1e-5", "--engine", "graph", "--batch", "8", "--passes", "4"}},
	{"gaussian-dropout", "", false, []string{"--mechanism", "gaussian", "--epsilon", "0.5", "--delta", "1e-6", "--schedule", "constant", "--step", "0.5", "--lambda", "0.1", "--l1-ratio", "0.2", "--dropout", "0.8", "--passes", "2"}},
	{"objective-auto", "", true, []string{"--mechanism", "objective", "--epsilon", "1"}},
	{"amp", "", true, []string{"--mechanism", "amp", "--epsilon", "1", "--delta", "1e-5", "--lambda", "0.05"}},
	{"gamma-partitioned", "", false, []string{"--mechanism", "gamma", "--epsilon", "1", "--partitions", "4"}},
	{"nonprivate", "", false, []string{"--mechanism", "none", "--lambda", "0.01", "--passes", "3"}},
	{"softmax-analytic", "multi", false, []string{"--label", "class", "--classes", "c0,c1,c2", "--standardize", "none", "--mechanism", "gaussian-analytic", "--epsilon", "2", "--delta", "1e-5", "--lambda", "0.01", "--passes", "3", "--batch", "2"}},
	{"softmax-objective", "multi", true, []string{"--label", "class", "--classes", "c0,c1,c2", "--standardize", "none", "--mechanism", "objective", "--epsilon", "2"}},
	{"select-holdout", "", true, []string{"--epsilon", "1", "--select", "holdout"}},
	{"select-rule", "", true, []string{"--epsilon", "1"}},
	{"select-random-stopping", "multi", true, []string{"--label", "class", "--classes", "c0,c1,c2", "--standardize", "none", "--epsilon", "2", "--select", "random-stopping"}},
	{"huber-regression", "regress", false, []string{"--label", "y", "--loss", "huber", "--label-bound", "3", "--standardize", "none", "--mechanism", "gamma", "--epsilon", "1", "--lambda", "0.1"}},
	{"squared-radius", "regress", false, []string{"--label", "y", "--loss", "squared", "--radius", "2", "--label-bound", "3", "--standardize", "none", "--mechanism", "laplace", "--epsilon", "1", "--lambda", "0.1", "--schedule", "constant", "--step", "0.1"}},
	{"dpsgd-auto", "", false, []string{"--mechanism", "dp-sgd", "--epsilon", "1", "--delta", "1e-5"}},
	{"dpsgd-knobs", "", false, []string{"--mechanism", "dp-sgd", "--epsilon", "2", "--delta", "1e-6", "--batch", "16", "--passes", "3", "--clip", "0.5", "--average"}},
	{"dpsgd-b1-merged", "", false, []string{"--mechanism", "dp-sgd", "--epsilon", "1", "--delta", "1e-5", "--batch", "1", "--passes", "2", "--lambda", "0.01"}},
}

// pinnedSolverTol bounds how far a solver-based release's weights may move
// (relative to their norm): the solver stops at a gradient norm of 1e-9 of
// a strongly convex objective, so two correct solvers agree far closer.
const pinnedSolverTol = 1e-7

// TestPinnedModels trains every pinnedRuns line through the command line
// with seeded noise and compares the model file with the pinned one: a
// refactoring that changes a release shows here. Run with -update-pinned to
// accept a deliberate change.
func TestPinnedModels(t *testing.T) {
	dataDir := t.TempDir()
	csvs := map[string]string{"multi": clusters(3, 40), "regress": clusters(0, 90)}
	for _, r := range pinnedRuns {
		t.Run(r.name, func(t *testing.T) {
			if slices.Contains(r.args, "graph") {
				requireGraphEngine(t)
			}
			out := filepath.Join(t.TempDir(), "model.json")
			args := []string{"train", "--seed", "3", "--test-frac", "0.2", "--out", out}
			if a := strings.Join(r.args, " "); !strings.Contains(a, "--mechanism none") {
				args = append(args, "--noise", "seeded", "--noise-seed", "11")
			}
			if r.data != "" {
				path := filepath.Join(dataDir, r.data+".csv")
				if err := os.WriteFile(path, []byte(csvs[r.data]), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--data", path)
			}
			if _, stderr, err := call(t, append(args, r.args...)...); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			pinned := filepath.Join("testdata", "pinned", r.name+".json")
			if *updatePinned {
				if err := os.MkdirAll(filepath.Dir(pinned), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(pinned, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(pinned)
			if err != nil {
				t.Fatal(err)
			}
			if !r.solver {
				if !bytes.Equal(got, want) {
					t.Errorf("model file differs from %s:\n%s", pinned, got)
				}
				return
			}
			comparePinnedSolver(t, pinned, got, want)
		})
	}
}

// comparePinnedSolver compares two model files of a solver-based release:
// the weights within pinnedSolverTol of the pinned ones, every other field
// (but the weights' hash) equal.
func comparePinnedSolver(t *testing.T, pinned string, got, want []byte) {
	t.Helper()
	parse := func(b []byte) (map[string]any, []float64) {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		model := doc["model"].(map[string]any)
		var w []float64
		for _, v := range model["w"].([]any) {
			w = append(w, v.(float64))
		}
		delete(model, "w")
		delete(doc["certificate"].(map[string]any), "weights_sha256")
		return doc, w
	}
	g, gw := parse(got)
	w, ww := parse(want)
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if !bytes.Equal(gj, wj) {
		t.Errorf("model file differs from %s beyond the weights:\n%s", pinned, got)
	}
	if len(gw) != len(ww) {
		t.Fatalf("%d weights, pinned %d", len(gw), len(ww))
	}
	var diff, norm float64
	for i := range gw {
		diff += (gw[i] - ww[i]) * (gw[i] - ww[i])
		norm += ww[i] * ww[i]
	}
	if rel := math.Sqrt(diff / norm); !(rel <= pinnedSolverTol) {
		t.Errorf("weights moved by %.3g of their norm from %s (tolerance %g)", rel, pinned, pinnedSolverTol)
	}
}
