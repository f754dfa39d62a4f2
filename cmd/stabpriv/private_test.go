package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
	"gonum.org/v1/gonum/floats"
)

// neighbourEdits replace one data row of a CSV (row 0 is the first data
// row): random and adversarial replacements at the first, a middle and the
// last row.
var neighbourEdits = []struct {
	name string
	row  func(n int) int
	edit func(rec []string, classes []string) []string
}{
	{"label flip, first row", func(int) int { return 0 }, func(r, c []string) []string { return flipLabel(r, c) }},
	{"label flip, middle row", func(n int) int { return n / 2 }, func(r, c []string) []string { return flipLabel(r, c) }},
	{"features replaced, last row", func(n int) int { return n - 1 }, func(r, c []string) []string {
		return append([]string{"1e300", "-7.5"}, r[2:]...)
	}},
	{"features and label replaced, middle row", func(n int) int { return n/3 + 1 }, func(r, c []string) []string {
		return flipLabel(append([]string{"-40", "40"}, r[2:]...), c)
	}},
	{"undeclared label, last row", func(n int) int { return n - 1 }, func(r, c []string) []string {
		return append(r[:len(r)-1:len(r)-1], "zzz")
	}},
	{"features missing, first row", func(int) int { return 0 }, func(r, c []string) []string {
		return append([]string{"", "NA"}, r[2:]...)
	}},
}

func flipLabel(rec, classes []string) []string {
	out := append([]string(nil), rec...)
	for i, c := range classes {
		if c == out[len(out)-1] {
			out[len(out)-1] = classes[(i+1)%len(classes)]
			return out
		}
	}
	return out
}

// editCSV returns the CSV text with data row i replaced by edit.
func editCSV(t *testing.T, text string, i int, edit func([]string) []string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	recs[i+1] = edit(recs[i+1])
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCLINeighbourFiles is the guarantee where users stand: two CSV files
// that differ in one row, the same seeds and the same published noise seed,
// through the command line. The released weights must differ by at most
// the certified Delta (same noise, so the difference is that of the
// trained weights), and every other public part of the model file must be
// the same.
func TestCLINeighbourFiles(t *testing.T) {
	setups := []struct {
		name    string
		k       int
		classes string
		flags   []string
	}{
		{"binary, bounds, auto", 2, "c0,c1", []string{"--bounds", "BOUNDS", "--mechanism", "gamma"}},
		{"binary, none, minibatch clip", 2, "c0,c1", []string{"--standardize", "none", "--mechanism", "laplace", "--lambda", "0.05", "--clip", "0.5", "--batch", "3"}},
		{"softmax, bounds", 3, "c0,c1,c2", []string{"--bounds", "BOUNDS", "--mechanism", "gaussian-analytic", "--delta", "1e-6", "--lambda", "0.02"}},
		{"softmax, none, auto", 3, "c0,c1,c2", []string{"--standardize", "none", "--mechanism", "gamma", "--epsilon", "2"}},
		// Too few rows for any estimate: the public log scale, no refusal.
		{"binary, no bounds, public log scale", 2, "c0,c1", []string{"--mechanism", "gamma"}},
		{"binary, no bounds, the rule", 2, "c0,c1", []string{"--epsilon", "1"}},
	}
	bounds := writeFile(t, "bounds.csv", "column,lo,hi\nx1,-6,6\nx2,-6,6\n")
	worst := 0.0
	for _, s := range setups {
		base := clusters(s.k, 15)
		classes := strings.Split(s.classes, ",")
		n := 15 * s.k
		dir := t.TempDir()
		fit := func(name, text string) *modelfile.Released {
			t.Helper()
			data := filepath.Join(dir, name+".csv")
			if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, name+".json")
			args := []string{"train", "--data", data, "--label", "class", "--classes", s.classes, "--seed", "3",
				"--noise", "seeded", "--noise-seed", "17", "--test-frac", "0.2", "--out", out}
			for _, f := range s.flags {
				if f == "BOUNDS" {
					f = bounds
				}
				args = append(args, f)
			}
			if _, stderr, err := call(t, args...); err != nil {
				t.Fatalf("%s: %v\n%s", s.name, err, stderr)
			}
			r, err := modelfile.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		r0 := fit("base", base)
		for i, e := range neighbourEdits {
			r1 := fit(fmt.Sprint("n", i), editCSV(t, base, e.row(n), func(rec []string) []string { return e.edit(rec, classes) }))
			c0, c1 := r0.Certificate, r1.Certificate
			dist := floats.Distance(r0.Model.W, r1.Model.W, 2)
			worst = max(worst, dist/c0.L2Sensitivity)
			if dist > c0.L2Sensitivity {
				t.Errorf("%s, %s: ||w - w'|| = %.6g > Delta = %.6g", s.name, e.name, dist, c0.L2Sensitivity)
			}
			// Everything but the weights and their hash is public and must
			// not depend on the row that changed.
			c1.WeightsSHA256, r1.Model.W = c0.WeightsSHA256, r0.Model.W
			j0, _ := json.Marshal(r0)
			j1, _ := json.Marshal(r1)
			if string(j0) != string(j1) {
				t.Errorf("%s, %s: the model files differ beyond the weights:\n%s\n%s", s.name, e.name, j0, j1)
			}
		}
	}
	t.Logf("largest realized/certified distance through the CLI: %.4f", worst)
}

// TestCLIPrivateRelease checks a secure release of the embedded data: the
// release first, no diagnostics unless asked, certify exit 0, predict.
func TestCLIPrivateRelease(t *testing.T) {
	setProgressAfter(t, quietRun)
	dir := t.TempDir()
	out := filepath.Join(dir, "m.json")
	stdout, stderr, err := call(t, "train", "--mechanism", "gamma", "--epsilon", "1", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "PRIVATE RELEASE: gamma, 1-DP (pure)") || stderr != "" {
		t.Errorf("output does not start with the release, or stderr not empty:\n%s\n%s", stdout, stderr)
	}
	// The rows of the diagnostics table (statistics of the data).
	for _, leak := range []string{"accuracy", "F_S at the trained weights", "minimum-norm subgradient", "rows clipped by the trainer", "null rows", "passes done   "} {
		if strings.Contains(stdout, leak) {
			t.Errorf("a private run prints %q without --diagnostics:\n%s", leak, stdout)
		}
	}
	stdout, _, err = call(t, "train", "--mechanism", "gamma", "--diagnostics")
	if err != nil || !strings.Contains(stdout, "DIAGNOSTICS") || !strings.Contains(stdout, "Do not publish") || !strings.Contains(stdout, "released, test accuracy") {
		t.Errorf("--diagnostics: %v\n%s", err, stdout)
	}
	if i, j := strings.Index(stdout, "PRIVATE RELEASE"), strings.Index(stdout, "DIAGNOSTICS"); i != 0 || j < i {
		t.Errorf("diagnostics before the release:\n%s", stdout)
	}

	stdout, _, err = call(t, "certify", out)
	if err != nil || exitCode(err) != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify: %v\n%s", err, stdout)
	}
	preds := filepath.Join(dir, "p.csv")
	_, stderr, err = call(t, "predict", "--model", out, "--data", filepath.Join("..", "..", "datasets", "data", "wdbc.csv"), "--out", preds)
	if err != nil || !strings.Contains(stderr, "accuracy on the 569 rows") {
		t.Fatalf("predict: %v\n%s", err, stderr)
	}
	b, _ := os.ReadFile(preds)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 570 || lines[0] != "row,prediction,p_benign,p_malignant" {
		t.Errorf("predictions: %d lines, header %q", len(lines), lines[0])
	}
}

// TestCLICertifyExitCodes checks certify's verdicts: 3 for a valid file
// without a claim (none, seeded), 1 for tampered or foreign files.
func TestCLICertifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, args ...string) string {
		path := filepath.Join(dir, name)
		if _, _, err := call(t, append([]string{"train", "--out", path}, args...)...); err != nil {
			t.Fatal(err)
		}
		return path
	}
	none := write("none.json", "--mechanism", "none")
	seeded := write("seeded.json", "--mechanism", "laplace", "--noise", "seeded", "--noise-seed", "4")
	secure := write("secure.json", "--mechanism", "gaussian-analytic", "--delta", "1e-5")
	for _, tt := range []struct {
		path, msg string
		code      int
	}{
		{none, "no mechanism", 3},
		{seeded, "seed (4) is published", 3},
		{secure, "", 0},
	} {
		stdout, _, err := call(t, "certify", tt.path)
		if code := exitCode(err); code != tt.code || err != nil && !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: exit %d (%v), want %d naming %q", filepath.Base(tt.path), code, err, tt.code, tt.msg)
		}
		if tt.code == 3 && !strings.HasPrefix(stdout, "NOT A PRIVATE RELEASE") {
			t.Errorf("certify of %s does not open with its verdict:\n%s", filepath.Base(tt.path), stdout)
		}
		if tt.path == seeded && !strings.Contains(stdout, "NOT PRIVATE") {
			t.Errorf("certify of a seeded release does not say NOT PRIVATE:\n%s", stdout)
		}
	}
	orig, err := os.ReadFile(secure)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, from, to, msg string }{
		{"epsilon", `"epsilon": 1,`, `"epsilon": -5,`, "invalid"},
		{"mechanism", `"mechanism": "gaussian-analytic"`, `"mechanism": "bogus"`, "mechanism"},
		{"noise scale", `"noise_scale": `, `"noise_scale": 1e-9, "x": `, "unknown field"},
		{"format", `"format": "stabpriv-model/2"`, `"format": "other"`, "format"},
	} {
		bad := strings.Replace(string(orig), tt.from, tt.to, 1)
		if bad == string(orig) {
			t.Fatalf("%s: pattern %q not in the file", tt.name, tt.from)
		}
		path := writeFile(t, "bad.json", bad)
		_, _, err := call(t, "certify", path)
		if code := exitCode(err); code != 5 || err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("tampered %s: exit %d, %v (want 5 naming %q)", tt.name, code, err, tt.msg)
		}
	}
	if _, _, err := call(t, "certify", writeFile(t, "x.json", "{}")); exitCode(err) != 5 {
		t.Errorf("foreign file: %v", err)
	}
}

// TestCLIStandardizeWarns checks the outside-the-guarantee mode: a warning
// on stderr and in the certificate.
func TestCLIStandardizeWarns(t *testing.T) {
	data := writeCSV(t, clusters(2, 20))
	out := filepath.Join(t.TempDir(), "m.json")
	_, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--standardize", "train", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "not private") {
		t.Errorf("no warning on stderr: %q", stderr)
	}
	r, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Certificate.Assumptions, "\n"), "WARNING") || r.Preprocessing.Mean == nil {
		t.Errorf("certificate does not warn about the standardization: %q", r.Certificate.Assumptions)
	}
	if r.Private {
		t.Error("a release with standardization statistics in the file says it is private")
	}
	if _, _, err := call(t, "certify", out); exitCode(err) != 3 || !strings.Contains(err.Error(), "standardized") {
		t.Errorf("certify of a standardized release: %v, want exit 3", err)
	}
}

// TestCLIPrivateRunQuietLogs checks that a private run without
// --diagnostics logs no statistic of the data, at any log level.
func TestCLIPrivateRunQuietLogs(t *testing.T) {
	_, stderr, err := call(t, "train", "--mechanism", "gamma", "--log-level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"objective", "grad", "clipped", "took", "pass="} {
		if strings.Contains(stderr, leak) {
			t.Errorf("debug log of a private run shows %q:\n%s", leak, stderr)
		}
	}
}

// TestCLIRefusesBeforeTraining checks refusals that depend on settings
// alone and come before anything is released: an --out that cannot be
// written, and a clipping norm so small that float64 rounding is absolute.
func TestCLIRefusesBeforeTraining(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		stdout, _, err := call(t, "train", "--mechanism", "gamma", "--out", filepath.Join(ro, "m.json"))
		if err == nil || strings.Contains(stdout, "RELEASE") {
			t.Errorf("unwritable --out: %v\n%s", err, stdout)
		}
	}
	if _, _, err := call(t, "train", "--out", "/proc/nope/m.json", "--mechanism", "gamma"); err == nil {
		t.Error("--out under /proc accepted")
	}
	out := filepath.Join(dir, "tiny.json")
	_, _, err := call(t, "train", "--mechanism", "gamma", "--lambda", "0.5", "--clip", "3e-323", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "float64 rounding") {
		t.Errorf("clip 3e-323: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model file was written")
	}
}

// TestCLIPartitioned trains on CSV shards with --partitions, through the
// CLI: neighbouring shard sets give releases within the certified Delta,
// the model file verifies, and one partition is the plain fit.
func TestCLIPartitioned(t *testing.T) {
	dir := t.TempDir()
	base := clusters(2, 30)
	lines := strings.SplitAfter(base, "\n")
	header, rows := lines[0], lines[1:len(lines)-1]
	write := func(sub string, edit func(i int, row string) string) string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for s := range 3 {
			var b strings.Builder
			b.WriteString(header)
			for i := s * 20; i < (s+1)*20; i++ {
				b.WriteString(edit(i, rows[i]))
			}
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("shard%d.csv", s)), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(d, "shard*.csv")
	}
	bounds := writeFile(t, "bounds.csv", "x1,-6,6\nx2,-6,6\n")
	fit := func(glob, out string, extra ...string) *modelfile.Released {
		args := append([]string{"train", "--data", glob, "--label", "class", "--classes", "c0,c1", "--bounds", bounds,
			"--partitions", "4", "--mechanism", "gamma", "--seed", "2", "--out", out}, extra...)
		if _, stderr, err := call(t, args...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		r, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	seeded := []string{"--noise", "seeded", "--noise-seed", "9"}
	same := func(i int, row string) string { return row }
	r0 := fit(write("a", same), filepath.Join(dir, "a.json"), seeded...)
	r1 := fit(write("b", func(i int, row string) string {
		if i == 25 {
			return "1e300,-1e300,c1\n"
		}
		return row
	}), filepath.Join(dir, "b.json"), seeded...)
	if r0.Partitions == nil || r0.Partitions.Count != 4 {
		t.Fatalf("partitions %+v", r0.Partitions)
	}
	if d := floats.Distance(r0.Model.W, r1.Model.W, 2); d > r0.Certificate.L2Sensitivity {
		t.Errorf("neighbouring shards: ||w - w'|| = %v > Delta = %v", d, r0.Certificate.L2Sensitivity)
	}
	secure := filepath.Join(dir, "s.json")
	fit(write("c", same), secure)
	if stdout, _, err := call(t, "certify", secure); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify of a partitioned release: %v\n%s", err, stdout)
	}
	if _, _, err := call(t, "train", "--data", filepath.Join(dir, "a", "*.csv"), "--label", "class", "--partitions", "4", "--mechanism", "gamma", "--bounds", bounds); exitCode(err) != 2 {
		t.Errorf("partitions without classes: %v", err)
	}
	if _, _, err := call(t, "train", "--partitions", "0"); exitCode(err) != 2 {
		t.Errorf("--partitions 0: %v", err)
	}
}

// TestCLIEstimatedBounds trains without bounds on a CSV large enough for
// the estimate, then certifies and predicts with the model file; and one
// range for every column (--bounds-all) costs nothing.
func TestCLIEstimatedBounds(t *testing.T) {
	data := writeCSV(t, clusters(2, 1500))
	out := filepath.Join(t.TempDir(), "m.json")
	stdout, _, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--bounds-share", "0.3", "--bounds-method", "ranges", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Budget spent by private feature bounds", "eps = 0.3, delta = 0 (laplace)", "eps = 0.7, delta = 0 (gamma)", "Feature bounds estimated privately", "x1 ["} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not say %q:\n%s", want, stdout)
		}
	}
	// The estimate itself, with seeded noise: the secure draw misses the
	// data's range [-8, 8] now and then (about 1 run in 50 gave x1 a
	// lower bound of -2^20), so only the seeded run checks its value.
	seeded, _, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--bounds-share", "0.3", "--bounds-method", "ranges",
		"--noise", "seeded", "--noise-seed", "1", "--out", filepath.Join(t.TempDir(), "seeded.json"))
	if err != nil || !strings.Contains(seeded, "x1 [-8, 8]") {
		t.Errorf("seeded estimate: %v; want x1 [-8, 8]:\n%s", err, seeded)
	}
	stdout, _, err = call(t, "certify", out)
	if err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify: %v\n%s", err, stdout)
	}
	if _, _, err := call(t, "predict", "--model", out, "--data", data, "--out", filepath.Join(t.TempDir(), "p.csv")); err != nil {
		t.Errorf("predict: %v", err)
	}
	// The defaults together: no mechanism (a private selection) and no
	// bounds (estimated): the selection runs on the release's part of eps.
	outSel := filepath.Join(t.TempDir(), "m.json")
	stdout, _, err = call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--bounds-share", "0.3", "--select", "holdout", "--out", outSel)
	if err != nil || !strings.Contains(stdout, "Feature bounds estimated privately") {
		t.Fatalf("selection with estimated bounds: %v\n%s", err, stdout)
	}
	if stdout, _, err := call(t, "certify", outSel); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify the selection with estimated bounds: %v\n%s", err, stdout)
	}
	out2 := filepath.Join(t.TempDir(), "m.json")
	stdout, _, err = call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--bounds-all", "-8,8", "--out", out2)
	if err != nil || strings.Contains(stdout, "private feature bounds") || !strings.Contains(stdout, "eps = 1, delta = 0 (gamma)") {
		t.Errorf("--bounds-all: %v\n%s", err, stdout)
	}
	r, err := modelfile.ReadFile(out2)
	if err != nil || r.Preprocessing.Lo[0] != -8 || r.Preprocessing.Hi[1] != 8 || r.Preprocessing.Estimated {
		t.Errorf("--bounds-all model file: %v %+v", err, r.Preprocessing)
	}
}

// TestCLICentres is a private run on a table too small for the feature
// ranges but large enough for the centres on the log scale: it releases
// (no refusal), its ledger has the centres' charge, certify verifies the
// file and predict applies it.
func TestCLICentres(t *testing.T) {
	// 4,000 rows: enough for the ranges too, which --bounds-method ranges
	// asks for; the default is the centres.
	big := writeCSV(t, clusters(2, 2000))
	for _, c := range []struct{ method, want string }{{"", "private feature types, centres"}, {"ranges", "private feature bounds"}} {
		args := []string{"train", "--data", big, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--bounds-share", "0.3"}
		if c.method != "" {
			args = append(args, "--bounds-method", c.method)
		}
		if stdout, _, err := call(t, args...); err != nil || !strings.Contains(stdout, "Budget spent by "+c.want) {
			t.Errorf("--bounds-method %q: %v, want %q", c.method, err, c.want)
		}
	}
	data := writeCSV(t, clusters(2, 400))
	out := filepath.Join(t.TempDir(), "m.json")
	stdout, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"Budget spent by private feature types, centres", "(permute-and-flip)", "Feature bounds estimated privately", "log2(1 + |t|)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not say %q:\n%s", want, stdout)
		}
	}
	if stdout, _, err := call(t, "certify", out); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify: %v\n%s", err, stdout)
	}
	if _, _, err := call(t, "predict", "--model", out, "--data", data, "--out", filepath.Join(t.TempDir(), "p.csv")); err != nil {
		t.Errorf("predict: %v", err)
	}
	// The diagnostics give the majority class beside the scores: the
	// baseline (the classes alternate, so about a half on each side).
	stdout, _, err = call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--diagnostics", "--test-frac", "0.25")
	if err != nil || !regexp.MustCompile(`majority class, test +0\.5[0-9]+ \(200 rows\)`).MatchString(stdout) {
		t.Errorf("diagnostics: %v\n%s", err, stdout)
	}
}

// TestCLIMissingCells trains on a table with missing numeric cells (empty,
// NA, ?, NaN) without declared bounds: the release certifies, the model
// file says how a missing cell maps, and predict reads missing cells too;
// a cell that is text but not a missing value is still refused, naming the
// missing spellings.
func TestCLIMissingCells(t *testing.T) {
	text := clusters(2, 400)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, tok := range []string{"", "NA", "?", "NaN", "null"} {
		f := strings.Split(lines[1+7*i], ",")
		f[i%2] = tok
		lines[1+7*i] = strings.Join(f, ",")
	}
	data := writeCSV(t, strings.Join(lines, "\n")+"\n")
	out := filepath.Join(t.TempDir(), "m.json")
	stdout, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "a missing numeric cell") {
		t.Errorf("the certificate does not say how a missing cell maps:\n%s", stdout)
	}
	if stdout, _, err := call(t, "certify", out); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify: %v\n%s", err, stdout)
	}
	pred := filepath.Join(t.TempDir(), "p.csv")
	if _, _, err := call(t, "predict", "--model", out, "--data", data, "--out", pred); err != nil {
		t.Errorf("predict: %v", err)
	}
	// A text cell in a numeric column: read as missing where the fit
	// decides the columns' types (bounds estimated), refused where the
	// bounds are declared.
	lines[2] = strings.Replace(lines[2], ",", ",oops", 1)
	oops := writeCSV(t, strings.Join(lines, "\n")+"\n")
	if _, stderr, err := call(t, "train", "--data", oops, "--label", "class", "--classes", "c0,c1", "--epsilon", "1"); err != nil {
		t.Errorf("a text cell, bounds estimated: %v\n%s", err, stderr)
	}
	_, _, err = call(t, "train", "--data", oops, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--bounds-all", "-5,5")
	if err == nil || !strings.Contains(err.Error(), "is not a finite number (a missing cell is empty, NA, ?, null, ...): declare its column categorical") {
		t.Errorf("a text cell, bounds declared: %v", err)
	}
}

// TestCLISelectColumns trains on a table with an ID column and a free-text
// column: --ignore leaves them out, --features keeps the named ones, the
// model file has the kept features only and predict reads the full table;
// a name that is not a column, the label, or nothing left is refused
// before training.
func TestCLISelectColumns(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(clusters(2, 200)), "\n")
	lines[0] = "id,note," + lines[0]
	for i := 1; i < len(lines); i++ {
		lines[i] = fmt.Sprintf("u%d,free text %d,%s", i, i%7, lines[i])
	}
	data := writeCSV(t, strings.Join(lines, "\n")+"\n")
	for _, c := range []struct {
		flags []string
		want  []string
	}{
		{[]string{"--ignore", "id,note"}, []string{"x1", "x2"}},
		{[]string{"--features", "x2"}, []string{"x2"}},
		{[]string{"--features", "x2,class"}, []string{"x2"}},
		{[]string{"--ignore", "id,note", "--bounds", "BOUNDS"}, []string{"x1", "x2"}},
	} {
		out := filepath.Join(t.TempDir(), "m.json")
		args := []string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--out", out}
		if !slices.Contains(c.flags, "BOUNDS") {
			args = append(args, "--bounds-all", "-8,8")
		}
		for _, f := range c.flags {
			if f == "BOUNDS" {
				// Bounds of every column, the ignored ones too.
				f = writeFile(t, "b.csv", "column,lo,hi\nid,0,1\nnote,0,1\nx1,-8,8\nx2,-8,8\n")
			}
			args = append(args, f)
		}
		if _, stderr, err := call(t, args...); err != nil {
			t.Fatalf("%v: %v\n%s", c.flags, err, stderr)
		}
		r, err := modelfile.ReadFile(out)
		if err != nil || !slices.Equal(r.Preprocessing.Features, c.want) {
			t.Errorf("%v: features %v, want %v (%v)", c.flags, r.Preprocessing.Features, c.want, err)
		}
		if _, _, err := call(t, "predict", "--model", out, "--data", data, "--out", filepath.Join(t.TempDir(), "p.csv")); err != nil {
			t.Errorf("%v: predict: %v", c.flags, err)
		}
	}
	// pdp rebuilds the training rows from the whole table.
	out := filepath.Join(t.TempDir(), "g.json")
	if _, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "gamma", "--bounds-all", "-8,8", "--ignore", "id,note", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, stderr, err := call(t, "pdp", "--model", out, "--data", data, "--out", filepath.Join(t.TempDir(), "pdp")); err != nil {
		t.Errorf("pdp --model on the whole table: %v\n%s", err, stderr)
	}
	for _, c := range []struct {
		flags []string
		msg   string
	}{
		{[]string{"--ignore", "nope"}, "not a column"},
		{[]string{"--ignore", "class"}, "the label"},
		{[]string{"--ignore", "id,note,x1,x2"}, "no feature column"},
		{[]string{"--ignore", "id,,note"}, "empty"},
		{[]string{"--ignore", "x1", "--features", "x1,x2"}, "both name"},
	} {
		args := append([]string{"train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--bounds-all", "-8,8"}, c.flags...)
		var ue *usageError
		if _, _, err := call(t, args...); !errors.As(err, &ue) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want a usage error saying %q", c.flags, err, c.msg)
		}
	}
}

// TestCLIConstantModel: a model that predicts one class for every row its
// map can produce (trained on rows of one class) is named in a warning; a
// useful one is not.
func TestCLIConstantModel(t *testing.T) {
	var b strings.Builder
	b.WriteString("x1,x2,class\n")
	for i := range 300 {
		fmt.Fprintf(&b, "%g,%g,c0\n", float64(i%7)-3, float64(i%5)-2)
	}
	_, stderr, err := call(t, "train", "--data", writeCSV(t, b.String()), "--label", "class", "--classes", "c0,c1", "--mechanism", "none", "--bounds-all", "-4,4", "--lambda", "0.1")
	if err != nil || !strings.Contains(stderr, `predicts \"c0\" for every row`) {
		t.Errorf("one class: %v\n%s", err, stderr)
	}
	_, stderr, err = call(t, "train", "--data", writeCSV(t, clusters(2, 200)), "--label", "class", "--classes", "c0,c1", "--mechanism", "none", "--bounds-all", "-8,8")
	if err != nil || strings.Contains(stderr, "for every row") {
		t.Errorf("two clusters: %v\n%s", err, stderr)
	}
}

// TestCLISelectColumnsEmbedded leaves columns of the embedded data out:
// their shipped bounds go with them.
func TestCLISelectColumnsEmbedded(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.json")
	if _, stderr, err := call(t, "train", "--mechanism", "gamma", "--features", "mean_radius,worst_area", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	r, err := modelfile.ReadFile(out)
	if err != nil || !slices.Equal(r.Preprocessing.Features, []string{"mean_radius", "worst_area"}) || len(r.Preprocessing.Lo) != 2 {
		t.Errorf("features %v, bounds %v (%v)", r.Preprocessing.Features, r.Preprocessing.Lo, err)
	}
	if _, stderr, err := call(t, "train", "--mechanism", "gamma", "--ignore", "mean_radius", "--out", out, "--force"); err != nil {
		t.Errorf("--ignore on the embedded data: %v\n%s", err, stderr)
	}
}

// TestOlderModelFilesVerify certifies model files of the previous format
// (testdata/older: pinned files from before missing cells were read): a
// file without the missing-cell map keeps its notes and verifies.
func TestOlderModelFilesVerify(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "older", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no older files: %v", err)
	}
	for _, f := range files {
		stdout, _, err := call(t, "certify", f)
		if err != nil && !strings.Contains(err.Error(), "not a private release: the noise was drawn from a seeded generator") {
			t.Errorf("%s: %v\n%s", f, err, stdout)
		}
	}
}

// adultHeader names the columns of UCI Adult's adult.data (adult.names).
const adultHeader = "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,capital-gain,capital-loss,hours-per-week,native-country,income"

// TestCLIAdultRaw is the README's one command on UCI Adult's raw file: no
// header row (--header), categorical columns declared (--schema
// datasets/data/adult.schema, one-hot), the numeric columns' bounds
// estimated privately; the model file verifies. It skips without
// ../shared/datasets/adult (or $STABPRIV_DATA/adult). The estimate's noise
// is secure (fresh), so the trained accuracy is random: over 300 runs it
// lay in [0.8475, 0.849], so its check (>= 0.83) fails far below 1e-4.
func TestCLIAdultRaw(t *testing.T) {
	root := os.Getenv("STABPRIV_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "datasets")
	}
	data := filepath.Join(root, "adult", "adult.data")
	if _, err := os.Stat(data); err != nil {
		t.Skipf("UCI Adult not available (set STABPRIV_DATA to the folder holding adult/): %v", err)
	}
	out := filepath.Join(t.TempDir(), "adult.json")
	stdout, _, err := call(t, "train", "--data", data, "--header", adultHeader, "--label", "income", "--classes", "<=50K,>50K",
		"--schema", filepath.Join("..", "..", "datasets", "data", "adult.schema"), "--mechanism", "objective", "--epsilon", "1", "--lambda", "1e-4", "--diagnostics", "--test-frac", "0.2", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"weights        106 (1 x 106", "categorical columns workclass, education"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not say %q:\n%s", want, stdout)
		}
	}
	// The estimate is noisy (secure noise): its grid's points, not one
	// range, are what every run prints.
	if !regexp.MustCompile(`age \[[0-9.]+, [0-9.]+\]`).MatchString(stdout) {
		t.Errorf("the output gives no estimated range of age:\n%s", stdout)
	}
	i := strings.Index(stdout, "trained, test accuracy")
	if i < 0 {
		t.Fatalf("no test accuracy:\n%s", stdout)
	}
	acc, err := strconv.ParseFloat(strings.Fields(stdout[i+len("trained, test accuracy"):])[0], 64)
	// The trained weights (before the noise) of a one-hot Adult fit reach
	// about 0.85; the majority class is 0.76.
	if err != nil || acc < 0.83 {
		t.Errorf("trained test accuracy %v (%v), want >= 0.83", acc, err)
	}
	if stdout, _, err := call(t, "certify", out); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify: %v\n%s", err, stdout)
	}
}

// TestTrainProgress: a run longer than progressAfter logs its progress at
// info on stderr (here progressAfter is 0), and --log-level warn keeps it
// silent; the default selection's release verifies.
func TestTrainProgress(t *testing.T) {
	setProgressAfter(t, 0)
	out := filepath.Join(t.TempDir(), "m.json")
	_, stderr, err := call(t, "train", "--epsilon", "1", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"level=info", "train: still running", "train: done"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, _, err := call(t, "certify", out); err != nil {
		t.Errorf("certify the default selection's release: %v", err)
	}
	_, stderr, err = call(t, "train", "--epsilon", "1", "--log-level", "warn")
	if err != nil || stderr != "" {
		t.Errorf("--log-level warn: stderr %q, %v", stderr, err)
	}
	// The forecast is a warning: printed at warn, from public values.
	_, stderr, _ = call(t, "train", "--epsilon", "0.01", "--log-level", "warn")
	if !strings.Contains(stderr, "near chance") || !strings.Contains(stderr, "what would help") {
		t.Errorf("eps = 0.01 on 455 rows: no forecast warning:\n%s", stderr)
	}
}

// textTable returns a CSV table of n rows: a text column city (six
// cities, the label's sign), a numeric column x with missing cells and
// one text cell, and the label.
func textTable(n int) string {
	var b strings.Builder
	b.WriteString("city,x,class\n")
	cities := []string{"Oslo", "Rome", "Lima", "Pune", "Kobe", "Bonn"}
	for i := range n {
		x := strconv.Itoa(i % 37)
		switch {
		case i%11 == 0:
			x = "NA"
		case i == 5:
			x = "oops"
		}
		fmt.Fprintf(&b, "%s,%s,c%d\n", cities[i%6], x, i%6%2)
	}
	return b.String()
}

// TestCLITextColumns trains on a table with a text column and no schema:
// a private run finds the column's type by its private centre and hashes
// it (the certificate says so), certify verifies the release, predict
// reads cities and text cells the fit never saw, a non-private run types
// by counting and fits the label (five of six cities at least: two may
// share a bucket), and a neighbouring file whose changed
// row turns a number into text trains too (no refusal that depends on a
// row). Declared bounds still refuse a text cell (TestCLIMissingCells).
func TestCLITextColumns(t *testing.T) {
	text := textTable(1500)
	data := writeCSV(t, text)
	out := filepath.Join(t.TempDir(), "m.json")
	// Half of eps on the types and scales: a wrong type for the city has
	// probability about exp(-(0.5/18) 1500/2) = 1e-9 (at the default share,
	// the centres' 1% per choice, it would be about 0.2%).
	stdout, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--bounds-share", "0.5", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"text columns city (8 buckets) hashed one-hot", "a cell that is neither a number nor missing reads as missing", "any cell may be a number, missing or text"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not say %q:\n%s", want, stdout)
		}
	}
	if stdout, _, err := call(t, "certify", out); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify: %v\n%s", err, stdout)
	}
	unseen := writeCSV(t, "city,x,class\nOslo,3,c0\nZagreb,4,c1\nRome,n/a,c1\nLima,lots,c0\n")
	pred := filepath.Join(t.TempDir(), "p.csv")
	if _, stderr, err := call(t, "predict", "--model", out, "--data", unseen, "--out", pred); err != nil {
		t.Errorf("predict on unseen cities and a text cell: %v\n%s", err, stderr)
	} else if b, _ := os.ReadFile(pred); strings.Count(string(b), "\n") != 5 {
		t.Errorf("predictions:\n%s", b)
	}
	stdout, stderr, err = call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--mechanism", "none", "--diagnostics")
	if err != nil {
		t.Fatalf("non-private: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "text columns city") || !regexp.MustCompile(`train accuracy: +(0\.[89]|1\.0)`).MatchString(stdout) {
		t.Errorf("non-private: the city was not hashed, or does not fit the label:\n%s", stdout)
	}
	// Too few rows for the centres: the public map decides no type, and
	// the certificate says so.
	stdout, stderr, err = call(t, "train", "--data", writeCSV(t, textTable(60)), "--label", "class", "--classes", "c0,c1", "--epsilon", "1")
	if err != nil || !strings.Contains(stdout, "no column's type was decided") || strings.Contains(stdout, "text columns city") {
		t.Errorf("the public map: %v\n%s\n%s", err, stdout, stderr)
	}
	flipped := writeCSV(t, editCSV(t, text, 7, func(rec []string) []string { return []string{rec[0], "seven", rec[2]} }))
	if _, stderr, err := call(t, "train", "--data", flipped, "--label", "class", "--classes", "c0,c1", "--epsilon", "1"); err != nil {
		t.Errorf("a neighbour with one more text cell: %v\n%s", err, stderr)
	}
}
