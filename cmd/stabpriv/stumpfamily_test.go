package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// stumpEdits are replacements of a row beside neighbourEdits that the
// public log map reads (a text cell is missing there; declared bounds
// refuse it): infinities, an overflow, text, a value whose map is a
// point of the grid (log2(1 + 1)/32 = 1/32, a threshold on every grid)
// and a subnormal.
var stumpEdits = []struct {
	name string
	row  func(n int) int
	edit func(rec []string, classes []string) []string
}{
	{"infinity and text, first row", func(int) int { return 0 }, func(r, c []string) []string {
		return append([]string{"-Infinity", "abc"}, r[2:]...)
	}},
	{"an overflow and +inf, label flipped, last row", func(n int) int { return n - 1 }, func(r, c []string) []string {
		return flipLabel(append([]string{"1e400", "+inf"}, r[2:]...), c)
	}},
	{"on a threshold, middle row", func(n int) int { return n / 2 }, func(r, c []string) []string {
		return append([]string{"1", "1"}, r[2:]...)
	}},
	{"a subnormal and NaN, undeclared label, first row", func(int) int { return 0 }, func(r, c []string) []string {
		return append(append([]string{"0x1p-1074", "NaN"}, r[2:len(r)-1]...), "")
	}},
}

// TestCLIStumpFamilies: with nothing but the budget (train --data --label
// --classes --epsilon), on small tables (the public log map) that a
// one-feature stump cannot read, the rule's stump is a member of the
// larger class: a pair (the difference of two mapped columns, the log of
// their ratio) where two forms differ by a ratio of two measurements, an
// interval (two thresholds, three classes) where three species follow
// each other along one measurement. The summary names the columns and
// reads in their units, predict agrees with it on every row and scores far
// above the one-feature class's best, certify verifies a secure release
// (exit 0), and on neighbouring tables (one row replaced by each of
// neighbourEdits and stumpEdits) the seeded files differ in the weights
// and their hash only: the class, and every published constant, is the
// same.
func TestCLIStumpFamilies(t *testing.T) {
	for _, c := range []struct {
		name, table, label string
		classes            []string
		words              string
		minAcc             float64 // the one-feature class's best: about 0.6 and 2/3
		// rule reads the summary's words in the columns' units: the
		// pattern's groups, and the class they give a row.
		rule   *regexp.Regexp
		decide func(g []string, row map[string]float64) string
	}{
		{"pair", ratioTable(200), "form", []string{"B", "O"}, `the difference of column "width" and column "depth"`, 0.9,
			regexp.MustCompile(`class (\S+) when \(1 \+ width\)/\(1 \+ depth\) (<=|>=) (\S+) .*, else (\S+)$`),
			func(g []string, row map[string]float64) string {
				ratio, bound := (1+row["width"])/(1+row["depth"]), parseFloat(g[3])
				if g[2] == "<=" && ratio <= bound || g[2] == ">=" && ratio >= bound {
					return g[1]
				}
				return g[4]
			}},
		{"interval", speciesTable(150), "species", []string{"s0", "s1", "s2"}, `three intervals of column "petal"`, 0.85,
			regexp.MustCompile(`thresholds (\S+) and (\S+) in its units .*: class (\S+) below \S+, (\S+) between, (\S+) above`),
			func(g []string, row map[string]float64) string {
				switch x := row["petal"]; {
				case x < parseFloat(g[1]):
					return g[3]
				case x > parseFloat(g[2]):
					return g[5]
				}
				return g[4]
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fit := func(name, text string, extra ...string) (string, string, *modelfile.Released) {
				t.Helper()
				return trainText(t, dir, name, text, append([]string{"--label", c.label, "--classes", strings.Join(c.classes, ","), "--epsilon", "1"}, extra...)...)
			}
			secure, stdout, _ := fit("secure", c.table)
			if !strings.Contains(stdout, "PRIVATE RELEASE: stump") || !strings.Contains(stdout, c.words) {
				t.Fatalf("the rule did not release %s:\n%.1500s", c.words, stdout)
			}
			if out, _, err := call(t, "certify", secure); exitCode(err) != 0 || !strings.HasPrefix(out, "VERIFIED PRIVATE RELEASE") {
				t.Errorf("certify the secure release: exit %d (%v)", exitCode(err), err)
			}
			preds := filepath.Join(dir, "predictions.csv")
			_, stderr, err := call(t, "predict", "--model", secure, "--data", filepath.Join(dir, "secure.csv"), "--out", preds)
			if err != nil {
				t.Fatalf("predict: %v\n%s", err, stderr)
			}
			summaryAgrees(t, stdout, c.table, preds, c.rule, c.decide)
			n := strings.Count(c.table, "\n") - 1
			head := fmt.Sprintf("accuracy on the %d rows with a usable label: ", n)
			var acc float64
			if i := strings.Index(stderr, head); i < 0 {
				t.Fatalf("predict reports no accuracy: %s", stderr)
			} else if _, err := fmt.Sscan(stderr[i+len(head):], &acc); err != nil || acc < c.minAcc {
				t.Errorf("accuracy %v (%v), want >= %v", acc, err, c.minAcc)
			}
			seeded := []string{"--noise", "seeded", "--noise-seed", "5"}
			_, _, r0 := fit("base", c.table, seeded...)
			for i, e := range append(slices.Clone(neighbourEdits), stumpEdits...) {
				_, _, r1 := fit(fmt.Sprint("n", i), editCSV(t, c.table, e.row(n), func(rec []string) []string { return e.edit(rec, c.classes) }), seeded...)
				r1.Certificate.WeightsSHA256, r1.Model.W = r0.Certificate.WeightsSHA256, r0.Model.W
				j0, _ := json.Marshal(r0)
				j1, _ := json.Marshal(r1)
				if string(j0) != string(j1) {
					t.Errorf("%s: the model files differ beyond the weights:\n%s\n%s", e.name, j0, j1)
				}
			}
		})
	}
}

// parseFloat returns the number s, or NaN.
func parseFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// summaryAgrees checks that the class the stump line of train's summary
// gives each row of the table (its words matched by rule, the row's
// numeric cells by column, decide) is predict's (the CSV preds): a user
// who reads the summary knows what the model does.
func summaryAgrees(t *testing.T, summary, table, preds string, rule *regexp.Regexp, decide func([]string, map[string]float64) string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(summary, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "stump ") {
			line = l
		}
	}
	g := rule.FindStringSubmatch(line)
	if g == nil {
		t.Fatalf("the stump line does not read in the columns' units (%v):\n%s", rule, line)
	}
	rows, err := csv.NewReader(strings.NewReader(table)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(preds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(bytes.NewReader(text)).ReadAll()
	if err != nil || len(got) != len(rows) {
		t.Fatalf("%d predictions (%v) for %d rows", len(got)-1, err, len(rows)-1)
	}
	bad := 0
	for i, rec := range rows[1:] {
		row := make(map[string]float64)
		for j, v := range rec {
			row[rows[0][j]] = parseFloat(v)
		}
		if want := decide(g, row); got[i+1][1] != want {
			bad++
			t.Errorf("row %d (%v): predict says %s, the summary %s", i+1, rec, got[i+1][1], want)
		}
	}
	t.Logf("%s: %d of %d rows as the summary says", line, len(rows)-1-bad, len(rows)-1)
}

// certifyOlderForged certifies the model file older (exit 0, a private
// release), then the file with its weights changed by edit and their hash
// recomputed, as a forger would, and returns certify's error on it.
func certifyOlderForged(t *testing.T, older string, edit func(r *modelfile.Released)) error {
	t.Helper()
	if stdout, _, err := call(t, "certify", older); exitCode(err) != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Fatalf("certify %s: exit %d (%v)\n%.300s", older, exitCode(err), err, stdout)
	}
	return certifyForged(t, older, edit)
}

// certifyForged certifies the model file in with edit applied and the
// hashes recomputed (rehash), written back in the canonical form, as a
// forger would, and returns certify's error.
func certifyForged(t *testing.T, in string, edit func(r *modelfile.Released)) error {
	t.Helper()
	r, err := modelfile.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	edit(r)
	rehash(r)
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	forged := filepath.Join(t.TempDir(), "forged.json")
	if err := os.WriteFile(forged, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = call(t, "certify", forged)
	return err
}

// TestCLIStumpOlderClasses certifies stumps written before the pairs and
// the intervals joined the class, by the build before them with
// --mechanism stump --bounds-all -8,8 --seed 3 and the secure source:
// testdata/older/stump-grid1023-v1.json (two classes, 40 rows of two
// columns) and stump3-grid255-v1.json (three classes, 300 rows of two
// columns, where today's class would hold the intervals). Each verifies
// as a private release, and its weights turned into a pair or an interval
// (valid members of today's class) are refused, since its certificate
// names the class before them.
func TestCLIStumpOlderClasses(t *testing.T) {
	err := certifyOlderForged(t, filepath.Join("testdata", "older", "stump-grid1023-v1.json"), func(r *modelfile.Released) {
		w := r.Model.W
		if len(w) != 3 || w[1] != 0 || (w[0] != 1 && w[0] != -1) {
			t.Fatalf("the file's weights %v are not a stump on the first of two features", w)
		}
		w[1] = -w[0] // the pair (0, 1) at the same threshold
	})
	if exitCode(err) != 5 || !strings.Contains(fmt.Sprint(err), "one feature weight") {
		t.Errorf("a pair under the one-feature class: exit %d (%v), want 5 naming one feature weight", exitCode(err), err)
	}
	err = certifyOlderForged(t, filepath.Join("testdata", "older", "stump3-grid255-v1.json"), func(r *modelfile.Released) {
		// The second feature's interval: class 1 below -0.5, class 0
		// between, class 2 above 0.5 (rows of 3 weights: x1, x2, bias).
		r.Model.W = []float64{0, 0, 0, 0, -1, -0.5, 0, 1, -0.5}
	})
	if exitCode(err) != 5 || !strings.Contains(fmt.Sprint(err), "stump") {
		t.Errorf("an interval under the one-threshold class: exit %d (%v), want 5", exitCode(err), err)
	}
}

// TestCLICertifyRewrittenOlderClass pins the limit the GUIDE states:
// certify checks consistency, not provenance. A release from today's
// binary class (one-feature stumps and pairs) rewritten to the sentence of
// the class before the pairs (testdata/older/stump-grid1023-v1.json's,
// the same 2 features and grid), its weights a one-feature stump (a member
// of both classes) and their hash recomputed, still verifies as a private
// release with the same claim.
func TestCLICertifyRewrittenOlderClass(t *testing.T) {
	older, err := modelfile.ReadFile(filepath.Join("testdata", "older", "stump-grid1023-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(older.Certificate.Assumptions, func(s string) bool { return strings.HasPrefix(s, "the class is public: the 2 mapped features") })
	if i < 0 {
		t.Fatal("the older file names no class of 2 features")
	}
	oneFeature := older.Certificate.Assumptions[i]
	out := filepath.Join(t.TempDir(), "m.json")
	if _, stderr, err := call(t, "train", "--data", writeCSV(t, ratioTable(400)), "--label", "form", "--classes", "B,O", "--ignore", "noise",
		"--mechanism", "stump", "--epsilon", "1", "--log-level", "error", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	err = certifyOlderForged(t, out, func(r *modelfile.Released) {
		a := r.Certificate.Assumptions
		j := slices.IndexFunc(a, func(s string) bool {
			return strings.HasPrefix(s, "the class is public (version 2: one-feature stumps and pairs)")
		})
		if j < 0 {
			t.Fatalf("the release's class is not today's with the pairs:\n%s", strings.Join(a, "\n"))
		}
		a[j] = oneFeature
		r.Model.W = []float64{1, 0, 0.5} // +1 where width's z >= -0.5
	})
	if err != nil {
		t.Errorf("the file rewritten to the class before the pairs: %v, want it verified (certify cannot tell)", err)
	}
}
