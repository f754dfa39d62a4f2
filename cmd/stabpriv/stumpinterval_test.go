package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
)

// speciesTable returns n rows of three species that follow each other
// along one measurement (petal lengths about 1.5, 4.3 and 5.6, as Fisher's
// iris) beside a measurement of noise.
func speciesTable(n int) string {
	rng := rand.New(rand.NewPCG(3, 9))
	var b strings.Builder
	b.WriteString("petal,noise,species\n")
	centre := []float64{1.5, 4.3, 5.6}
	for i := range n {
		c := i % 3
		fmt.Fprintf(&b, "%.2f,%.2f,s%d\n", centre[c]*(1+0.06*rng.NormFloat64()), 2+3*rng.Float64(), c)
	}
	return b.String()
}

// TestCLIStumpInterval: with nothing but the budget, on a small table
// (the public log map) of three species in turn along one column, the
// rule's multiclass stump is a two-threshold interval: the summary names
// the column and its three classes, predict scores far above the
// one-threshold stump's 2/3, certify verifies a secure release (exit 0),
// and on neighbouring tables (one row replaced by each of neighbourEdits)
// the seeded files differ in the weights and their hash only.
func TestCLIStumpInterval(t *testing.T) {
	const n = 150
	base := speciesTable(n)
	dir := t.TempDir()
	classes := []string{"s0", "s1", "s2"}
	fit := func(name, text string, extra ...string) (string, string, *modelfile.Released) {
		t.Helper()
		data := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".json")
		args := append([]string{"train", "--data", data, "--label", "species", "--classes", strings.Join(classes, ","), "--epsilon", "1", "--out", out}, extra...)
		stdout, stderr, err := call(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		r, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return out, stdout, r
	}
	secure, stdout, _ := fit("secure", base)
	if !strings.Contains(stdout, "PRIVATE RELEASE: stump") || !strings.Contains(stdout, `three intervals of column "petal"`) {
		t.Fatalf("the rule did not release an interval of the petal column:\n%.1500s", stdout)
	}
	if out, _, err := call(t, "certify", secure); exitCode(err) != 0 || !strings.HasPrefix(out, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify the secure interval: exit %d (%v)", exitCode(err), err)
	}
	_, stderr, err := call(t, "predict", "--model", secure, "--data", filepath.Join(dir, "secure.csv"))
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, stderr)
	}
	head := fmt.Sprintf("accuracy on the %d rows with a usable label: ", n)
	var acc float64
	if i := strings.Index(stderr, head); i < 0 {
		t.Fatalf("predict reports no accuracy: %s", stderr)
	} else if _, err := fmt.Sscan(stderr[i+len(head):], &acc); err != nil || acc < 0.85 {
		t.Errorf("the interval's accuracy %v (%v), want >= 0.85 (a one-threshold stump at most 2/3)", acc, err)
	}

	seeded := []string{"--noise", "seeded", "--noise-seed", "5"}
	_, _, r0 := fit("base", base, seeded...)
	for i, e := range neighbourEdits {
		_, _, r1 := fit(fmt.Sprint("n", i), editCSV(t, base, e.row(n), func(rec []string) []string { return e.edit(rec, classes) }), seeded...)
		r1.Certificate.WeightsSHA256, r1.Model.W = r0.Certificate.WeightsSHA256, r0.Model.W
		j0, _ := json.Marshal(r0)
		j1, _ := json.Marshal(r1)
		if string(j0) != string(j1) {
			t.Errorf("%s: the model files differ beyond the weights:\n%s\n%s", e.name, j0, j1)
		}
	}
}

// TestCLIStumpOneThresholdFile certifies a multiclass stump written
// before the intervals joined the class
// (testdata/older/stump3-grid255-v1.json: a secure release by the build
// before, train --data D --label class --classes c0,c1,c2 --mechanism
// stump --bounds-all -8,8 --seed 3 on 300 rows of two columns, where
// today's class would hold the intervals): it verifies as a private
// release, and its weights turned into an interval (the hash recomputed)
// are refused, since its certificate names the one-threshold class.
func TestCLIStumpOneThresholdFile(t *testing.T) {
	older := filepath.Join("testdata", "older", "stump3-grid255-v1.json")
	if stdout, _, err := call(t, "certify", older); exitCode(err) != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Fatalf("certify the one-threshold stump: exit %d (%v)\n%.300s", exitCode(err), err, stdout)
	}
	r, err := modelfile.ReadFile(older)
	if err != nil {
		t.Fatal(err)
	}
	// The interval of the second feature: class 1 below -0.5, class 0
	// between, class 2 above 0.5 (rows of 3 weights: x1, x2, bias).
	r.Model.W = []float64{0, 0, 0, 0, -1, -0.5, 0, 1, -0.5}
	rehash(r)
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(forged, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, "certify", forged); exitCode(err) != 5 || !strings.Contains(err.Error(), "stump") {
		t.Errorf("an interval under the one-threshold class: exit %d (%v), want 5", exitCode(err), err)
	}
}
