package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
)

// TestCLIStump trains --mechanism stump through the command line on a CSV
// and on its neighbours (one row replaced by each of neighbourEdits:
// flipped labels, features beyond the bounds, an undeclared label): every
// file verifies, and the files differ in the weights and their hash only
// (the certificate, the preprocessing and the split are the same). A
// seeded run is reproducible bit for bit; a secure one certifies (exit
// 0) and predicts; a tampered stump is refused (exit 5). For two classes
// the binary stump, for three the multiclass stump (three outputs).
func TestCLIStump(t *testing.T) {
	for _, k := range []int{2, 3} {
		t.Run(fmt.Sprint(k, " classes"), func(t *testing.T) { testCLIStump(t, k) })
	}
}

// testCLIStump is TestCLIStump for k classes.
func testCLIStump(t *testing.T, k int) {
	const n = 30
	base := clusters(k, n/k)
	var classes []string
	for c := range k {
		classes = append(classes, fmt.Sprint("c", c))
	}
	bounds := writeFile(t, "bounds.csv", "column,lo,hi\nx1,-6,6\nx2,-6,6\n")
	dir := t.TempDir()
	var summary string // the last fit's standard output
	fit := func(name, text string, extra ...string) (string, *modelfile.Released) {
		t.Helper()
		data := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".json")
		args := append([]string{"train", "--data", data, "--label", "class", "--classes", strings.Join(classes, ","), "--seed", "3",
			"--test-frac", "0.2", "--bounds", bounds, "--mechanism", "stump", "--epsilon", "1", "--out", out}, extra...)
		stdout, stderr, err := call(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		summary = stdout
		r, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if v, why, err := modelfile.Verify(r); err != nil {
			t.Fatalf("%s: %v", name, err)
		} else if wantSeeded := len(extra) > 0; (v == modelfile.NotPrivate) != wantSeeded {
			t.Fatalf("%s: verdict %v (%s)", name, v, why)
		}
		return out, r
	}
	seeded := []string{"--noise", "seeded", "--noise-seed", "17"}
	p0, r0 := fit("base", base, seeded...)
	again, _ := fit("again", base, seeded...)
	b0, _ := os.ReadFile(p0)
	b1, _ := os.ReadFile(again)
	if !bytes.Equal(b0, b1) {
		t.Errorf("two seeded runs on the same file differ")
	}
	for i, e := range neighbourEdits {
		_, r1 := fit(fmt.Sprint("n", i), editCSV(t, base, e.row(n), func(rec []string) []string { return e.edit(rec, classes) }), seeded...)
		r1.Certificate.WeightsSHA256, r1.Model.W = r0.Certificate.WeightsSHA256, r0.Model.W
		j0, _ := json.Marshal(r0)
		j1, _ := json.Marshal(r1)
		if string(j0) != string(j1) {
			t.Errorf("%s: the model files differ beyond the weights:\n%s\n%s", e.name, j0, j1)
		}
	}

	secure, r := fit("secure", base)
	if !strings.Contains(summary, "PRIVATE RELEASE: stump") || !(strings.Contains(summary, "in its units") || strings.Contains(summary, "the difference of column \"x1\" and column \"x2\"")) {
		t.Errorf("the summary does not describe the stump:\n%s", summary)
	}
	stdout, _, err := call(t, "certify", secure)
	if code := exitCode(err); code != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") || !strings.Contains(stdout, "permute-and-flip") {
		t.Errorf("certify: exit %d (%v)", code, err)
	}
	// No SGD ran: the certificate states no schedule, step or engine.
	if strings.Contains(stdout, "schedule ,") || strings.Contains(stdout, "engine ,") || strings.Contains(stdout, "passes 0,") {
		t.Errorf("certify of a stump prints the empty SGD constants:\n%s", stdout)
	}
	out, stderr, err := call(t, "predict", "--model", secure, "--data", filepath.Join(dir, "base.csv"))
	if err != nil || strings.Contains(out, "p_c0") || !strings.Contains(stderr, "accuracy") {
		t.Errorf("predict: %v\n%s\n%s", err, out, stderr)
	}
	if _, _, err := call(t, "pdp", "--model", secure, "--data", filepath.Join(dir, "base.csv"), "--out", filepath.Join(dir, "pdp")); exitCode(err) != 2 || !strings.Contains(err.Error(), "decision stump") {
		t.Errorf("pdp of a stump: %v (exit %d), want a usage error naming the stump", err, exitCode(err))
	}
	outputs := 1 // one margin for two classes, one per class for more
	if k > 2 {
		outputs = k
	}
	if r.Certificate.Run.Kappa != 0 || !r.Preprocessing.Stump || r.Model.K != outputs || len(r.Model.W) != 3*outputs {
		t.Errorf("certificate kappa %v, stump map %v, %d outputs, %d weights", r.Certificate.Run.Kappa, r.Preprocessing.Stump, r.Model.K, len(r.Model.W))
	}
	orig, _ := os.ReadFile(secure)
	for _, tt := range []struct{ from, to string }{
		{`"stump": true,`, ``},
		{`"epsilon": 1,`, `"epsilon": 2,`},
		{`"kappa": 0,`, `"kappa": 1,`},
	} {
		bad := strings.Replace(string(orig), tt.from, tt.to, 1)
		if bad == string(orig) {
			t.Fatalf("pattern %q not in the file", tt.from)
		}
		_, _, err := call(t, "certify", writeFile(t, "bad.json", bad))
		if code := exitCode(err); code != 5 {
			t.Errorf("tampered %q -> %q: exit %d (%v), want 5", tt.from, tt.to, code, err)
		}
	}
}

// TestCLIStumpRefuses checks the refusals of --mechanism stump, before
// anything is written: more classes than the multiclass stump's cap, the SGD knobs and partitions, a projection or principal
// components, a preprocessing other than bounds, a privacy ID.
func TestCLIStumpRefuses(t *testing.T) {
	data := writeCSV(t, clusters(3, 10))
	bounds := writeFile(t, "bounds.csv", "column,lo,hi\nx1,-6,6\nx2,-6,6\n")
	out := filepath.Join(t.TempDir(), "m.json")
	if _, _, err := call(t, "sweep", "--mechanism", "stump", "--dataset", "csv", "--data", data, "--label", "class", "--out", filepath.Join(t.TempDir(), "sweep")); exitCode(err) != 2 || !strings.Contains(err.Error(), "no lambda") {
		t.Errorf("sweep --mechanism stump: %v, want a usage error", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--classes", "c0,c1,c2,c3,c4,c5,c6,c7,c8,c9,c10"}, "2 to 10 classes"},
		{[]string{"--classes", "c0,c1", "--lambda", "0.1"}, "no training knobs"},
		{[]string{"--classes", "c0,c1", "--partitions", "2"}, "partitions"},
		{[]string{"--classes", "c0,c1", "--project", "1"}, "projection"},
		{[]string{"--classes", "c0,c1", "--epsilon", "0"}, "eps"},
		{[]string{"--classes", "c0,c1", "--privacy-id", "x1", "--max-rows-per-id", "2"}, "privacy-id"},
	} {
		args := append([]string{"train", "--data", data, "--label", "class", "--bounds", bounds, "--mechanism", "stump", "--epsilon", "1", "--out", out}, c.args...)
		_, stderr, err := call(t, args...)
		if err == nil || !strings.Contains(err.Error()+stderr, c.want) {
			t.Errorf("%v: %v (%s), want an error naming %q", c.args, err, stderr, c.want)
		}
		if _, statErr := os.Stat(out); statErr == nil {
			t.Fatalf("%v: a model file was written", c.args)
		}
	}
}

// TestCLIMultiStumpRule is train with only the budget flags on a small
// 3-class CSV (120 rows of 2 columns, three clusters; too few rows to
// estimate the columns' scales, so the public log map): the rule releases
// the multiclass stump (selection.StumpUseful), certify verifies it,
// predict applies it without class probabilities, and the summary names
// the classes on each side of the threshold (or, for an interval of the
// larger class these rows afford, stump.IntervalsUseful, of each of its
// three intervals). A seeded run (deterministic) beats the majority class
// (1/3) on the training rows.
func TestCLIMultiStumpRule(t *testing.T) {
	data := writeCSV(t, clusters(3, 40))
	dir := t.TempDir()
	for _, noise := range [][]string{nil, {"--noise", "seeded", "--noise-seed", "5"}} {
		out := filepath.Join(dir, fmt.Sprint(len(noise), ".json"))
		args := append([]string{"train", "--data", data, "--label", "class", "--classes", "c0,c1,c2", "--epsilon", "1", "--out", out}, noise...)
		stdout, stderr, err := call(t, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		if !strings.Contains(stdout, ": stump") || !strings.Contains(stdout, "when z > t,") && !strings.Contains(stdout, "three intervals of column") {
			t.Errorf("the rule did not release a described multiclass stump:\n%s", stdout)
		}
		r, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if r.Model.K != 3 || r.Model.D != 3 {
			t.Errorf("model %d x %d, want 3 x 3", r.Model.K, r.Model.D)
		}
		stdout, _, err = call(t, "certify", out)
		if code, want := exitCode(err), 3*min(1, len(noise)); code != want || want == 0 && !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
			t.Errorf("certify: exit %d, want %d (%v)\n%.300s", code, want, err, stdout)
		}
		pred, stderr, err := call(t, "predict", "--model", out, "--data", data)
		if err != nil || strings.Contains(pred, "p_c0") || !strings.HasPrefix(pred, "row,prediction\n") {
			t.Fatalf("predict: %v\n%.300s\n%s", err, pred, stderr)
		}
		const head = "accuracy on the 120 rows with a usable label: "
		var acc float64
		if i := strings.Index(stderr, head); i < 0 {
			t.Fatalf("predict reports no accuracy: %s", stderr)
		} else if _, err := fmt.Sscan(stderr[i+len(head):], &acc); err != nil || noise != nil && acc < 0.5 {
			t.Errorf("predict's accuracy %v (%v), want >= 0.5 (the majority class 1/3, the best one-threshold stump 2/3)", acc, err)
		}
	}
}
