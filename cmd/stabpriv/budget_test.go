package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBudgetExtremes runs the commands that take a budget with values
// that mean nothing: each is refused before anything is written (exit 2),
// by a message that names the real reason.
func TestBudgetExtremes(t *testing.T) {
	dir := t.TempDir()
	wide := writeFile(t, "wide.csv", "column,lo,hi\nmean radius,-1e308,1e308\n")
	ids := writeFile(t, "ids.csv", idCSV(nil)) // 25 privacy IDs
	perID := []string{"--data", ids, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-6,6", "--privacy-id", "user", "--max-rows-per-id", "3", "--mechanism", "gaussian-analytic"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"eps huge", []string{"train", "--epsilon", "1e300"}, "eps = 1e+300 is above 100: the claim would bound probability ratios by e^eps > 1e43"},
		{"eps tiny, objective", []string{"train", "--epsilon", "1e-300", "--mechanism", "objective"}, "eps = 1e-300 is below 2^-50"},
		{"eps small for the solver", []string{"train", "--epsilon", "1e-5", "--mechanism", "objective"}, "raise eps to at least"},
		{"eps NaN", []string{"train", "--epsilon", "NaN"}, "eps = NaN, want finite > 0"},
		{"eps negative", []string{"train", "--epsilon", "-1", "--mechanism", "gamma"}, "eps = -1, want finite > 0"},
		{"eps infinite", []string{"train", "--epsilon", "Inf", "--mechanism", "laplace"}, "eps = +Inf, want finite > 0"},
		{"delta 0.5 by the rule", []string{"train", "--delta", "0.5"}, "delta = 0.5 >= 1/n = 1/497 (training rows): a release could publish a training row outright; use delta << 1/n"},
		{"delta 0.5, gaussian", []string{"train", "--delta", "0.5", "--mechanism", "gaussian-analytic"}, "1/n = 1/497"},
		{"delta at 1/n", []string{"train", "--delta", "0.0022", "--mechanism", "amp"}, "1/n = 1/497"},
		{"delta partitioned", []string{"train", "--delta", "0.01", "--mechanism", "gaussian-analytic", "--partitions", "2"}, "1/n = 1/497"},
		{"delta per privacy ID", append([]string{"train", "--delta", "0.05"}, perID...), "delta = 0.05 >= 1/n = 1/25 (training privacy IDs): a release could publish a training privacy ID outright"},
		{"delta negative", []string{"train", "--delta", "-1e-9", "--mechanism", "amp"}, "delta = -1e-09, want in [0, 1)"},
		{"delta NaN", []string{"train", "--delta", "NaN", "--mechanism", "amp"}, "delta = NaN, want in [0, 1)"},
		{"delta 1", []string{"train", "--delta", "1", "--mechanism", "amp"}, "delta = 1, want in [0, 1)"},
		{"bounds overflow", []string{"train", "--bounds-all", "-1e308,1e308"}, "the width hi - lo overflows float64"},
		{"bounds file overflow", []string{"train", "--bounds", wide}, `column "mean radius" bounds [-1e+308, 1e+308]: the width hi - lo overflows float64`},
		{"bounds reversed", []string{"train", "--bounds-all", "3,1"}, "want lo < hi"},
		{"bounds underflow", []string{"train", "--bounds-all", "0,5e-324"}, "too small to scale onto [-1, 1]"},
		{"laplace below its grid", []string{"train", "--mechanism", "laplace", "--epsilon", "1e-15"}, "below 2^-39 its grid is coarser than the sensitivity"},
		{"pdp delta", []string{"pdp", "--mechanism", "gaussian-analytic", "--delta", "0.5"}, "delta = 0.5 >= 1/n = 1/455"},
		{"pdp publish delta", []string{"pdp", "--standardize", "none", "--publish-epsilon", "1", "--publish-delta", "0.5"}, "--publish-delta 0.5: publish: invalid input: dp: invalid budget: delta = 0.5 >= 1/n"},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		_, _, err := call(t, append(tc.args, "--out", out)...)
		if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: exit %d (%v), want 2 naming %q", tc.name, code, err, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s written (%v)", tc.name, out, err)
		}
	}
}

// TestDeltaWarning: a delta below 1/n but above 1/(10 n) trains, with a
// warning that says how many rows the claim would let a release publish
// and what to choose; a delta far below 1/n trains silently.
func TestDeltaWarning(t *testing.T) {
	setProgressAfter(t, quietRun)
	dir := t.TempDir()
	_, stderr, err := call(t, "train", "--delta", "1e-3", "--mechanism", "gaussian-analytic", "--out", filepath.Join(dir, "a.json"))
	if err != nil || !strings.Contains(stderr, "delta = 0.001 is above 1/(10 n) = 0.0002 for n = 497 training rows") || !strings.Contains(stderr, "0.5 of them in expectation") || !strings.Contains(stderr, "e.g. 1/n^2 = 4e-06") {
		t.Errorf("delta 1e-3: %v, stderr:\n%s", err, stderr)
	}
	_, stderr, err = call(t, "train", "--delta", "1e-6", "--mechanism", "gaussian-analytic", "--out", filepath.Join(dir, "b.json"))
	if err != nil || strings.Contains(stderr, "delta") {
		t.Errorf("delta 1e-6: %v, stderr:\n%s", err, stderr)
	}
	// Per privacy ID the unit is an ID: 0.02 is below 1/25 IDs (though
	// above 1/75 rows), so it trains, with the warning in IDs.
	ids := writeFile(t, "ids.csv", idCSV(nil))
	_, stderr, err = call(t, "train", "--data", ids, "--label", "class", "--classes", "c0,c1", "--bounds-all", "-6,6", "--privacy-id", "user", "--max-rows-per-id", "3",
		"--mechanism", "gaussian-analytic", "--delta", "0.02", "--out", filepath.Join(dir, "c.json"))
	if err != nil || !strings.Contains(stderr, "for n = 25 training privacy IDs") {
		t.Errorf("delta 0.02 per privacy ID: %v, stderr:\n%s", err, stderr)
	}
	// The same for a published pDP summary's delta.
	_, stderr, err = call(t, "pdp", "--standardize", "none", "--publish-epsilon", "1", "--publish-delta", "1e-3", "--out", filepath.Join(dir, "pdp"))
	if err != nil || !strings.Contains(stderr, "warning: delta = 0.001 is above 1/(10 n) = 0.00022 for n = 455 training rows") {
		t.Errorf("pdp --publish-delta 1e-3: %v, stderr:\n%s", err, stderr)
	}
	// A summary bound to a release composes with it: the two deltas
	// together stay below 1/n (0.001 + 0.0015 >= 1/497).
	_, _, err = call(t, "pdp", "--model", filepath.Join(dir, "a.json"), "--publish-epsilon", "1", "--publish-delta", "1.5e-3", "--out", filepath.Join(dir, "pdp-model"))
	if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), "the summary's delta 0.0015 with the release's 0.001, which compose") {
		t.Errorf("pdp --model with deltas over 1/n together: exit %d, %v", code, err)
	}
}
