package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/pdp"
)

// pdpRun runs the command line and returns stdout and the error.
func pdpRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	err := run(args, &out, &errw)
	return out.String(), err
}

// pdpCSV writes a regression CSV (features x1..x3, label y) with n rows and
// returns its path and the rows.
func pdpCSV(t *testing.T, n int, seed uint64) (string, *mat.Dense, []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	var b strings.Builder
	b.WriteString("x1,x2,x3,y\n")
	for i := 0; i < n; i++ {
		r := x.RawRowView(i)
		for j := range r {
			r[j] = math.Round(rng.NormFloat64()*1e4) / 1e4 / 3
		}
		y[i] = math.Round((r[0]-2*r[1]+0.5*rng.NormFloat64())*1e4) / 1e4
		fmt.Fprintf(&b, "%g,%g,%g,%g\n", r[0], r[1], r[2], y[i])
	}
	path := filepath.Join(t.TempDir(), "reg.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, x, y
}

// readPDPCSV returns the rows of pdp.csv as maps from column to value.
func readPDPCSV(t *testing.T, dir string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "pdp.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := make(map[string]string)
		for j, name := range recs[0] {
			m[name] = r[j]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPDPDefault runs the command on the embedded data and checks the three
// outputs, the statements the report must make, and the ids of a seeded
// split.
func TestPDPDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	stdout, err := pdpRun(t, "pdp", "--out", dir, "--exact-top", "5", "--top", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CONFIDENTIAL", "must not be published", "keeps its regularization weight", "worst-case DP eps of the release: 1 ", "median", "p99", "most exposed rows", "E eps^2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	rows := readPDPCSV(t, dir)
	train, _, err := datasets.SplitIndex(569, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(train) {
		t.Fatalf("%d rows in pdp.csv, want %d", len(rows), len(train))
	}
	exact := 0
	for i, r := range rows {
		if id := int(num(t, r["id"])); id != train[i] {
			t.Fatalf("row %d: id %d, want %d", i, id, train[i])
		}
		if e := num(t, r["eps"]); !(e >= 0 && e < 1) {
			t.Errorf("id %s: eps %v not in [0, 1)", r["id"], e)
		}
		if r["exact"] == "true" {
			exact++
		}
	}
	if exact != 5 {
		t.Errorf("%d exact rows, want 5", exact)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep pdp.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.DPEpsilon == nil || *rep.DPEpsilon != 1 || rep.Epsilon.Max >= *rep.WorstCaseEpsilon || len(rep.Top) != 3 || rep.Targets == nil {
		t.Errorf("summary %+v", rep)
	}
	if !strings.Contains(rep.Confidential, "must not be published") || rep.Neighbours != pdp.Neighbours {
		t.Error("summary lacks the confidentiality or neighbour statement")
	}
	png, err := os.ReadFile(filepath.Join(dir, "pdp.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("pdp.png: %v", err)
	}
}

// TestPDPRawRidge checks, with --standardize none --bias false
// --test-frac 0, that the rows are exactly the CSV's features: the
// sensitivities and leverages equal the ridge closed form on those rows.
func TestPDPRawRidge(t *testing.T) {
	const n, lambda = 120, 0.01
	path, x, y := pdpCSV(t, n, 5)
	dir := t.TempDir()
	_, err := pdpRun(t, "pdp", "--data", path, "--label", "y", "--loss", "squared", "--lambda", fmt.Sprint(lambda),
		"--standardize", "none", "--bias", "false", "--test-frac", "0", "--sigma", "0.1", "--exact-top", "3", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	ridge, err := pdp.FitRidge(x, y, lambda)
	if err != nil {
		t.Fatal(err)
	}
	rows := readPDPCSV(t, dir)
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if int(num(t, r["id"])) != i {
			t.Fatalf("row %d has id %s", i, r["id"])
		}
		if s := num(t, r["sensitivity"]); math.Abs(s-ridge.Sensitivity[i]) > 1e-9*(1+ridge.Sensitivity[i]) {
			t.Errorf("row %d: sensitivity %g, ridge closed form %g", i, s, ridge.Sensitivity[i])
		}
		if l := num(t, r["leverage"]); math.Abs(l-ridge.Leverage[i]) > 1e-9 {
			t.Errorf("row %d: leverage %g, ridge %g", i, l, ridge.Leverage[i])
		}
		if res := num(t, r["residual"]); math.Abs(res-ridge.Residual[i]) > 1e-9 {
			t.Errorf("row %d: residual %g, ridge %g", i, res, ridge.Residual[i])
		}
	}
}

// TestPDPSplitIgnoresLabels checks that the training ids depend on the
// number of rows, their positions and the seed only.
func TestPDPSplitIgnoresLabels(t *testing.T) {
	path, x, y := pdpCSV(t, 80, 6)
	var b strings.Builder
	b.WriteString("x1,x2,x3,y\n")
	for i := 0; i < 80; i++ {
		r := x.RawRowView(i)
		fmt.Fprintf(&b, "%g,%g,%g,%g\n", r[0], r[1], r[2], -3*y[i]+1)
	}
	path2 := filepath.Join(t.TempDir(), "relabelled.csv")
	if err := os.WriteFile(path2, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids [2][]string
	for k, p := range []string{path, path2} {
		dir := t.TempDir()
		if _, err := pdpRun(t, "pdp", "--data", p, "--label", "y", "--loss", "huber", "--test-frac", "0.25", "--seed", "9", "--out", dir); err != nil {
			t.Fatal(err)
		}
		for _, r := range readPDPCSV(t, dir) {
			ids[k] = append(ids[k], r["id"])
		}
	}
	if strings.Join(ids[0], ",") != strings.Join(ids[1], ",") || len(ids[0]) != 60 {
		t.Errorf("training ids depend on the labels:\n%v\n%v", ids[0], ids[1])
	}
}

// TestPDPBadInput checks the clear errors for inputs outside the analysis.
func TestPDPBadInput(t *testing.T) {
	path, _, _ := pdpCSV(t, 40, 7)
	// Rank-deficient rows: x2 = 2 x1 and no regularization.
	var b strings.Builder
	b.WriteString("x1,x2,y\n")
	for i := 0; i < 30; i++ {
		v := float64(i%7) - 3
		fmt.Fprintf(&b, "%g,%g,%g\n", v, 2*v, v+float64(i%3))
	}
	rd := filepath.Join(t.TempDir(), "rd.csv")
	if err := os.WriteFile(rd, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	nan := filepath.Join(t.TempDir(), "nan.csv")
	if err := os.WriteFile(nan, []byte("x1,y\n1,2\nNaN,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"non-smooth loss", []string{"--loss", "hinge"}, true, "smooth loss"},
		{"l1 term", []string{"--l1-ratio", "0.15"}, true, "not smooth"},
		{"singular", []string{"--data", rd, "--label", "y", "--loss", "squared", "--lambda", "0", "--sigma", "1", "--standardize", "none", "--bias", "false", "--test-frac", "0"}, true, "singular Hessian"},
		{"nan", []string{"--data", nan, "--label", "y", "--loss", "squared"}, false, "not a finite number"},
		{"no dp bound", []string{"--data", path, "--label", "y", "--loss", "squared"}, true, "--sigma"},
		{"lambda 0 with epsilon", []string{"--data", path, "--label", "y", "--loss", "huber", "--lambda", "0"}, true, "--sigma"},
		{"separable", []string{"--lambda", "0", "--sigma", "1"}, true, "separable"},
		{"bias value", []string{"--bias", "maybe"}, true, "--bias"},
		{"sigma and epsilon", []string{"--sigma", "1", "--epsilon", "2"}, true, "excludes"},
		{"delta with laplace", []string{"--mechanism", "laplace", "--delta", "1e-5"}, true, "pure"},
		{"no out", nil, true, "--out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"pdp"}, tc.args...)
			if tc.name != "no out" {
				args = append(args, "--out", t.TempDir())
			}
			_, err := pdpRun(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			var ue *usageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error %v, want %v: %v", !tc.usage, tc.usage, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestPDPHelp(t *testing.T) {
	out, err := pdpRun(t, "help", "pdp")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "CONFIDENTIAL") || !strings.Contains(out, "-exact-top") {
		t.Errorf("help:\n%s", out)
	}
}
