package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
)

// ratioTable returns n rows whose class is told by the ratio of two
// measurements (width / depth 1.3 or 1.5, as MASS's crabs' colour forms)
// while each measurement alone spreads over a factor five with the
// animal's size, and a third column of noise.
func ratioTable(n int) string {
	rng := rand.New(rand.NewPCG(8, 1))
	var b strings.Builder
	b.WriteString("width,depth,noise,form\n")
	for i := range n {
		size := 10 + 40*rng.Float64()
		form, ratio := "B", 1.3
		if i%2 == 1 {
			form, ratio = "O", 1.5
		}
		fmt.Fprintf(&b, "%.2f,%.2f,%.2f,%s\n", size*ratio*math.Exp(0.02*rng.NormFloat64()), size, 20*rng.Float64(), form)
	}
	return b.String()
}

// TestCLIStumpPair: with nothing but the budget (train --data --label
// --classes --epsilon), on a small table too small for a private feature
// scale (the public log map) whose class is a ratio of two columns, the
// rule's stump is a pair (the difference of the two mapped columns, the
// log of their ratio): the summary names both columns, predict scores far
// above the best one-feature stump, and certify verifies a secure release
// (exit 0). On neighbouring tables (one row replaced by each of
// neighbourEdits) the seeded files differ in the weights and their hash
// only: the class of candidates, and every published constant, is the
// same.
func TestCLIStumpPair(t *testing.T) {
	const n = 200
	base := ratioTable(n)
	dir := t.TempDir()
	classes := []string{"B", "O"}
	fit := func(name, text string, extra ...string) (string, string, *modelfile.Released) {
		t.Helper()
		data := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".json")
		args := append([]string{"train", "--data", data, "--label", "form", "--classes", "B,O", "--epsilon", "1", "--out", out}, extra...)
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
	if !strings.Contains(stdout, "PRIVATE RELEASE: stump") || !strings.Contains(stdout, `the difference of column "width" and column "depth"`) {
		t.Fatalf("the rule did not release the pair of width and depth:\n%.1500s", stdout)
	}
	if out, _, err := call(t, "certify", secure); exitCode(err) != 0 || !strings.HasPrefix(out, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify the secure pair: exit %d (%v)", exitCode(err), err)
	}
	_, stderr, err := call(t, "predict", "--model", secure, "--data", filepath.Join(dir, "secure.csv"))
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, stderr)
	}
	head := fmt.Sprintf("accuracy on the %d rows with a usable label: ", n)
	var acc float64
	if i := strings.Index(stderr, head); i < 0 {
		t.Fatalf("predict reports no accuracy: %s", stderr)
	} else if _, err := fmt.Sscan(stderr[i+len(head):], &acc); err != nil || acc < 0.9 {
		t.Errorf("the pair's accuracy %v (%v), want >= 0.9 (a one-feature stump about 0.6)", acc, err)
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

// TestCLIStumpOneFeatureFile certifies a binary stump of two features
// written before the pairs joined the class
// (testdata/older/stump-grid1023-v1.json: a secure release by the build
// before, train --data D --label class --classes c0,c1 --mechanism stump
// --bounds-all -8,8 --seed 3 on 40 rows of two columns): it verifies as a
// private release, and its weights turned into a pair (the hash
// recomputed, as a forger would) are refused, since its certificate names
// the class of one-feature stumps.
func TestCLIStumpOneFeatureFile(t *testing.T) {
	older := filepath.Join("testdata", "older", "stump-grid1023-v1.json")
	if stdout, _, err := call(t, "certify", older); exitCode(err) != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Fatalf("certify the one-feature stump: exit %d (%v)\n%.300s", exitCode(err), err, stdout)
	}
	r, err := modelfile.ReadFile(older)
	if err != nil {
		t.Fatal(err)
	}
	w := r.Model.W
	if len(w) != 3 || w[1] != 0 || (w[0] != 1 && w[0] != -1) {
		t.Fatalf("the file's weights %v are not a stump on the first of two features", w)
	}
	w[1] = -w[0] // the pair (0, 1) at the same threshold
	rehash(r)
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(forged, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, "certify", forged); exitCode(err) != 5 || !strings.Contains(err.Error(), "one feature weight") {
		t.Errorf("a pair under the one-feature class: exit %d (%v), want 5 naming one feature weight", exitCode(err), err)
	}
}
