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
// 0) and predicts; a tampered stump is refused (exit 5).
func TestCLIStump(t *testing.T) {
	const n = 30
	base := clusters(2, n/2)
	classes := []string{"c0", "c1"}
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
		args := append([]string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--seed", "3",
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
	if !strings.Contains(summary, "PRIVATE RELEASE: stump") || !strings.Contains(summary, "in its units") {
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
	if r.Certificate.Run.Kappa != 0 || !r.Preprocessing.Stump || len(r.Model.W) != 3 {
		t.Errorf("certificate kappa %v, stump map %v, %d weights", r.Certificate.Run.Kappa, r.Preprocessing.Stump, len(r.Model.W))
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
// anything is written: more than two classes (one-vs-rest is not
// supported), the SGD knobs and partitions, a projection or principal
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
		{[]string{"--classes", "c0,c1,c2"}, "one-vs-rest"},
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
