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
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/pdp/ridge"
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
		if id := int(num(t, r["id"])); id != train[i]+1 {
			t.Fatalf("row %d: id %d, want data row %d", i, id, train[i]+1)
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
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.DPEpsilon == nil || *rep.DPEpsilon != 1 || rep.Epsilon.Max >= *rep.WorstCaseEpsilon || len(rep.Top) != 3 || rep.Targets == nil {
		t.Errorf("summary %+v", rep)
	}
	// The data-dependent bound is clamped to the worst case it refines (the
	// solver's tolerance put it above by 1e-10 at these settings).
	if rep.PDPForAllEpsilon == nil || *rep.PDPForAllEpsilon > *rep.WorstCaseEpsilon {
		t.Errorf("pDP for all, this data set %v, above any data set's %v", rep.PDPForAllEpsilon, *rep.WorstCaseEpsilon)
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
	fit, err := ridge.FitRidge(x, y, lambda)
	if err != nil {
		t.Fatal(err)
	}
	rows := readPDPCSV(t, dir)
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if int(num(t, r["id"])) != i+1 {
			t.Fatalf("row %d has id %s, want data row %d", i, r["id"], i+1)
		}
		if s := num(t, r["sensitivity"]); math.Abs(s-fit.Sensitivity[i]) > 1e-9*(1+fit.Sensitivity[i]) {
			t.Errorf("row %d: sensitivity %g, ridge closed form %g", i, s, fit.Sensitivity[i])
		}
		if l := num(t, r["leverage"]); math.Abs(l-fit.Leverage[i]) > 1e-9 {
			t.Errorf("row %d: leverage %g, ridge %g", i, l, fit.Leverage[i])
		}
		if res := num(t, r["residual"]); math.Abs(res-fit.Residual[i]) > 1e-9 {
			t.Errorf("row %d: residual %g, ridge %g", i, res, fit.Residual[i])
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
		{"ops without gamma", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "ops"}, true, "--gamma"},
		{"ops of a logistic fit", []string{"--mechanism", "ops", "--gamma", "1"}, true, "--loss squared"},
		{"adaops without cond", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "adaops"}, true, "--cond"},
		{"adaops cond too large", []string{"--data", path, "--label", "y", "--loss", "squared", "--label-bound", "1", "--mechanism", "adaops", "--cond", "50"}, true, "above AdaOPS's limit"},
		{"adaops rows outside the ball", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "adaops", "--cond", "0.05", "--epsilon", "8"}, true, "|y| <= 1"},
		{"gamma with gaussian", []string{"--gamma", "2"}, true, "--gamma applies"},
		{"precision of ops", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "ops", "--gamma", "1", "--precision", path}, true, "--precision applies"},
		{"precision not square", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "gaussian-cov", "--gamma", "1", "--precision", path}, true, "square"},
		{"precision of the wrong size", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "gaussian-cov", "--gamma", "1", "--precision", writeMatrix(t, "1,0\n0,1\n")}, true, "precision matrix A"},
		{"precision not symmetric", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "gaussian-cov", "--gamma", "1", "--precision", writeMatrix(t, "1,0.5\n0,1\n")}, true, "symmetric"},
		{"precision not definite", []string{"--data", path, "--label", "y", "--loss", "squared", "--mechanism", "gaussian-cov", "--gamma", "1", "--precision", writeMatrix(t, "1,2\n2,1\n")}, true, "positive definite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"pdp"}, tc.args...)
			out := filepath.Join(t.TempDir(), "out")
			if tc.name != "no out" {
				args = append(args, "--out", out)
			}
			_, err := pdpRun(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Error("a refused analysis wrote its output directory")
			}
			var ue *usageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error %v, want %v: %v", !tc.usage, tc.usage, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if tc.name == "adaops cond too large" && strings.Count(err.Error(), "pdp:") > 1 {
				t.Errorf("error %q repeats the command's prefix", err)
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

// modelCSV writes a binary CSV (features x1..x3, label class in a, b, with
// a few undeclared labels that become null rows) of n rows and returns its
// path.
func modelCSV(t *testing.T, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	var b strings.Builder
	b.WriteString("x1,x2,x3,class\n")
	for i := 0; i < n; i++ {
		x := []float64{rng.NormFloat64() * 0.5, rng.NormFloat64() * 0.5, rng.NormFloat64() * 0.3}
		label := "a"
		if rng.Float64() < 1/(1+math.Exp(-3*(x[0]-x[1]))) {
			label = "b"
		}
		if i%37 == 5 {
			label = "unknown"
		}
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%s\n", x[0], x[1], x[2], label)
	}
	return writeFile(t, "data.csv", b.String())
}

// trainModel runs stabpriv train on data with the flags and returns the
// model file's path.
func trainModel(t *testing.T, data string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json")
	args := append([]string{"train", "--data", data, "--label", "class", "--classes", "a,b", "--test-frac", "0.2", "--out", out}, flags...)
	if _, stderr, err := call(t, args...); err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	return out
}

// readSummary reads summary.json of dir.
func readSummary(t *testing.T, dir string) report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestPDPModel is the pDP of an actual release: a seeded Gaussian release
// of train, analysed from its model file and the same CSV. The training
// rows are rebuilt (ids are the split's data-row positions, and an
// independent analysis of rows built by hand gives the same sensitivities),
// and no row's per-instance epsilon exceeds the certified epsilon: on the
// strongly convex route the certificate's Delta is 2L/(mu n), the
// replace-one bound of the exact minimizer, while the pDP neighbour
// removes one row with the regularization weight n lambda kept, which moves
// the minimizer by at most ||grad l_i||/(n lambda) <= L/(n lambda) =
// Delta/2.
func TestPDPModel(t *testing.T) {
	const n = 300
	data := modelCSV(t, n, 1)
	model := trainModel(t, data, "--standardize", "none", "--mechanism", "gaussian-analytic", "--delta", "1e-5",
		"--lambda", "0.1", "--l1-ratio", "0", "--noise", "seeded", "--noise-seed", "1")
	dir := filepath.Join(t.TempDir(), "out")
	stdout, err := pdpRun(t, "pdp", "--model", model, "--data", data, "--exact-top", "20", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CONFIDENTIAL", "must not be published", "NO privacy claim", "seeded", "trained by SGD",
		"exact minimizer", "||released - w_hat||", "add/remove-one", "replace-one", "below it", "worst row id"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	t.Logf("\n%s", stdout)

	r, err := modelfile.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Certificate
	if c.SensitivityRoute != "strongly-convex-sgd" && c.SensitivityRoute != "erm" {
		t.Fatalf("route %s: the bound below is for the strongly convex routes", c.SensitivityRoute)
	}
	m, err := pdp.NewPrivacyLoss(c.Mechanism, c.NoiseScale, c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	half := c.L2Sensitivity / 2
	epsHalf, err := m.EpsilonAt(half, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !(epsHalf < c.Epsilon) {
		t.Fatalf("eps at Delta/2 = %g, certified %g", epsHalf, c.Epsilon)
	}

	// The rows, rebuilt by hand: the split's positions, x' = [clip_1(x), 1]/sqrt(2).
	train, held, err := datasets.SplitIndex(n, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := datasets.ReadTableFile(data)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(len(train), 4, nil)
	y := make([]float64, len(train))
	for k, i := range train {
		rec := []string{tab.Cell(i, 0), tab.Cell(i, 1), tab.Cell(i, 2), tab.Cell(i, 3)}
		switch rec[3] {
		case "a":
			y[k] = -1
		case "b":
			y[k] = 1
		default:
			y[k] = -1
			continue // null row: zero
		}
		raw := []float64{num(t, rec[0]), num(t, rec[1]), num(t, rec[2])}
		if err := preprocess.UnitBallRow(x.RawRowView(k), raw); err != nil {
			t.Fatal(err)
		}
	}
	a, err := pdp.New(x, y, pdp.Config{Loss: losses.Logistic{}, Lambda: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}

	// The held-out rows are the targets (modelfile.Released.HeldOutRows).
	f, err := os.Open(filepath.Join(dir, "targets.csv"))
	if err != nil {
		t.Fatal(err)
	}
	trecs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(trecs)-1 != len(held) {
		t.Fatalf("targets.csv: %d rows (%v), want the %d held-out rows", len(trecs)-1, err, len(held))
	}
	for k, rec := range trecs[1:] {
		if id := int(num(t, rec[0])); id != held[k]+1 {
			t.Fatalf("target %d: id %d, want held-out data row %d", k, id, held[k]+1)
		}
	}
	rows := readPDPCSV(t, dir)
	if len(rows) != len(train) || c.N != len(train) {
		t.Fatalf("%d rows in pdp.csv, the certificate's n is %d, the split gives %d", len(rows), c.N, len(train))
	}
	nulls := 0
	for k, row := range rows {
		if id := int(num(t, row["id"])); id != train[k]+1 {
			t.Fatalf("row %d: id %d, want data row %d", k, id, train[k]+1)
		}
		sens, e, one := num(t, row["sensitivity"]), num(t, row["eps"]), num(t, row["sensitivity_one_step"])
		if row["exact"] == "false" && math.Abs(one-ref[k].L2) > 1e-9*math.Max(ref[k].L2, 1e-12) {
			t.Errorf("id %d: one-step sensitivity %g, the rows built by hand give %g", train[k], one, ref[k].L2)
		}
		// The logistic loss's curvature is Lipschitz: every value is exact
		// or a proven upper bound, never below the one-step value.
		if kind := row["kind"]; (kind != pdp.KindExact && kind != pdp.KindBound) || (kind == pdp.KindBound && sens < one) {
			t.Errorf("id %d: kind %q, sensitivity %g, one-step %g", train[k], kind, sens, one)
		}
		if er := num(t, row["eps_replace"]); !(er >= e) {
			t.Errorf("id %d: replace-one eps %g below the remove-one %g", train[k], er, e)
		}
		if tab.Cell(train[k], 3) == "unknown" {
			nulls++
			// Zero, up to the solver's tolerance in the bound.
			if one != 0 || sens > 1e-9 || e > 1e-6 {
				t.Errorf("null row id %d: sensitivity %g (one-step %g), eps %g, want 0", train[k], sens, one, e)
			}
		}
		if sens > half*(1+1e-9) {
			t.Errorf("id %d: pDP sensitivity %g above Delta/2 = %g", train[k], sens, half)
		}
		if e > epsHalf*(1+1e-9) || e >= c.Epsilon {
			t.Errorf("id %d: pDP eps %g above eps(Delta/2) = %g or the certified %g: a bug", train[k], e, epsHalf, c.Epsilon)
		}
	}

	rep := readSummary(t, dir)
	rel := rep.Release
	if rel == nil {
		t.Fatal("summary.json has no release")
	}
	if rel.Certified.Epsilon != c.Epsilon || rel.Certified.Below != len(train) || rel.Certified.ShareBelow != 1 || rel.Certified.WorstRatio >= 1 {
		t.Errorf("comparison %+v", rel.Certified)
	}
	if rel.NullRows != nulls || nulls == 0 {
		t.Errorf("%d null rows reported, %d in the split", rel.NullRows, nulls)
	}
	if rel.Weights != report.AnalysedMinimizer || rel.Neighbours != report.NeighboursVersusCertificate || !strings.Contains(rep.Confidential, "must not be published") {
		t.Error("summary.json lacks a statement")
	}
	if !(rel.ReleasedToExact > 0) || !strings.Contains(rel.Claim, "NO privacy claim") {
		t.Errorf("released to exact %g, claim %q", rel.ReleasedToExact, rel.Claim)
	}
	if rep.DPEpsilon == nil || *rep.DPEpsilon != c.Epsilon || *rep.DPSensitivity != c.L2Sensitivity || rep.Lambda != 0.1 {
		t.Errorf("summary %+v", rep)
	}
	// The certificate's Delta carries a relative rounding slack of the
	// stability analysis above 2L/(mu n).
	if rel.RemoveOneBound > half || math.Abs(rel.RemoveOneBound-half) > 1e-8*half || rep.Epsilon.Max > rel.RemoveOneEpsilon {
		t.Errorf("remove-one bound %g (eps %g), want Delta/2 = %g; max eps %g", rel.RemoveOneBound, rel.RemoveOneEpsilon, half, rep.Epsilon.Max)
	}
}

// TestPDPModelClipped analyses a release with the automatic knobs, whose
// per-example clipping acts: the objective is the Huberized loss, and every
// row's sensitivity is at most G/(n lambda).
func TestPDPModelClipped(t *testing.T) {
	data := modelCSV(t, 200, 2)
	model := trainModel(t, data, "--standardize", "none", "--mechanism", "laplace", "--epsilon", "2", "--noise", "seeded", "--noise-seed", "3")
	r, err := modelfile.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	run := r.Certificate.Run
	if !(run.Clip > 0 && run.Clip < run.L) {
		t.Fatalf("clip %g, L %g: the test needs clipping that acts", run.Clip, run.L)
	}
	dir := filepath.Join(t.TempDir(), "out")
	stdout, err := pdpRun(t, "pdp", "--model", model, "--data", data, "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "Huberized") {
		t.Errorf("output does not state the clipped objective:\n%s", stdout)
	}
	bound := run.Clip / (float64(run.N) * run.Lambda)
	for _, row := range readPDPCSV(t, dir) {
		if s := num(t, row["sensitivity"]); s > bound*(1+1e-9) {
			t.Errorf("id %s: sensitivity %g above G/(n lambda) = %g", row["id"], s, bound)
		}
		if e := num(t, row["eps"]); e >= r.Certificate.Epsilon {
			t.Errorf("id %s: eps %g not below the certified %g", row["id"], e, r.Certificate.Epsilon)
		}
	}
	if rep := readSummary(t, dir); rep.Release == nil || math.Abs(rep.Release.RemoveOneBound-bound) > 1e-12*bound {
		t.Errorf("remove-one bound %+v, want %g", rep.Release, bound)
	}
}

// TestPDPModelErrors checks the refusals of pdp --model: a CSV other than
// the model's, a model without a certificate, an elastic-net release, and
// flags the model file fixes.
func TestPDPModelErrors(t *testing.T) {
	data := modelCSV(t, 120, 3)
	release := trainModel(t, data, "--standardize", "none", "--mechanism", "gamma", "--lambda", "0.1", "--noise", "seeded", "--noise-seed", "2")
	plain := trainModel(t, data, "--standardize", "none", "--mechanism", "none")
	elastic := trainModel(t, data, "--standardize", "none", "--mechanism", "gamma", "--lambda", "0.1", "--l1-ratio", "0.5", "--noise", "seeded", "--noise-seed", "2")
	other := modelCSV(t, 119, 3)
	dir := filepath.Join(t.TempDir(), "out")
	cases := []struct {
		name  string
		args  []string
		want  string
		usage bool
		code  int // the exit status, when the case checks it
	}{
		{"wrong CSV (a row fewer)", []string{"--model", release, "--data", other}, "not the table of this model", false, 4},
		{"another table with the model's label", []string{"--model", release, "--data", writeFile(t, "o.csv", "u,v,class\n1,2,a\n3,4,b\n")},
			`has no column "x1", a feature of the model`, false, 4},
		{"embedded data for a model of another table", []string{"--model", release}, "not the table of this model", false, 4},
		{"no certificate", []string{"--model", plain, "--data", data}, "has no certificate", true, 0},
		{"elastic net", []string{"--model", elastic, "--data", data}, "l1_ratio = 0.5", false, 0},
		{"a flag the model fixes", []string{"--model", release, "--data", data, "--lambda", "1"}, "--lambda with --model", true, 0},
		{"missing model file", []string{"--model", filepath.Join(dir, "none.json"), "--data", data}, "no such file", false, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pdpRun(t, append(append([]string{"pdp"}, tc.args...), "--out", dir)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			var ue *usageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error %v, want %v: %v", !tc.usage, tc.usage, err)
			}
			if code := exitCode(err); tc.code != 0 && code != tc.code {
				t.Errorf("exit status %d, want %d: %v", code, tc.code, err)
			}
			t.Log(err)
		})
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a refused analysis wrote its output directory")
	}
}

// TestPDPModelEmbedded analyses a release of the embedded data without
// --data (the table of datasets.DefaultTable).
func TestPDPModelEmbedded(t *testing.T) {
	model := filepath.Join(t.TempDir(), "m.json")
	if _, stderr, err := call(t, "train", "--mechanism", "gaussian-analytic", "--delta", "1e-6", "--noise", "seeded", "--noise-seed", "4", "--test-frac", "0.2", "--out", model); err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	dir := filepath.Join(t.TempDir(), "out")
	stdout, err := pdpRun(t, "pdp", "--model", model, "--exact-top", "10", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := readSummary(t, dir)
	if rep.Rows != 398 || rep.Release == nil || rep.Release.Certified.ShareBelow != 1 || rep.Exact != 10 {
		t.Errorf("rows %d, release %+v, exact %d\n%s", rep.Rows, rep.Release, rep.Exact, stdout)
	}
}

// writeMatrix writes a CSV matrix for --precision and returns its path.
func writeMatrix(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPDPRidgeReleases runs the ridge releases of the command line (OPS,
// AdaOPS, the Gaussian with a given precision) and checks each against the
// library: OPS's per-row epsilons are Theorem 14's (Ridge.OPSEpsilon) on
// the same rows, a Gaussian with A = I and gamma = 1/sigma^2 gives the
// isotropic Gaussian's epsilons (--sigma), and AdaOPS states its DP
// epsilon and add/remove-one neighbours.
func TestPDPRidgeReleases(t *testing.T) {
	path, x, y := pdpCSV(t, 200, 9)
	common := []string{"pdp", "--data", path, "--label", "y", "--loss", "squared", "--standardize", "none", "--bias", "false", "--test-frac", "0.25", "--lambda", "0.01"}
	run := func(args ...string) (string, []map[string]string, report.Report) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "out")
		stdout, err := pdpRun(t, append(append(append([]string(nil), common...), args...), "--out", dir)...)
		if err != nil {
			t.Fatal(err)
		}
		return stdout, readPDPCSV(t, dir), readSummary(t, dir)
	}
	// OPS against the library on the same training rows.
	_, rows, rep := run("--mechanism", "ops", "--gamma", "3", "--delta", "1e-5")
	train, _, err := datasets.SplitIndex(200, 0.25, 1)
	if err != nil {
		t.Fatal(err)
	}
	xt := mat.NewDense(len(train), 3, nil)
	yt := make([]float64, len(train))
	for k, i := range train {
		xt.SetRow(k, x.RawRowView(i))
		yt[k] = y[i]
	}
	r, err := ridge.FitRidge(xt, yt, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.OPSEpsilon(3, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for k, row := range rows {
		if e := num(t, row["eps"]); math.Abs(e-want[k]) > 1e-9*want[k] {
			t.Fatalf("ops row %d: eps %v, Theorem 14 gives %v", k, e, want[k])
		}
	}
	if rep.Mechanism != "ops" || rep.Targets == nil || rep.DPEpsilon != nil {
		t.Errorf("ops summary: mechanism %q, targets %v, DP eps %v", rep.Mechanism, rep.Targets, rep.DPEpsilon)
	}
	// The Gaussian with A = I is the isotropic one.
	sigma := 0.05
	_, cov, _ := run("--mechanism", "gaussian-cov", "--gamma", strconv.FormatFloat(1/(sigma*sigma), 'g', -1, 64), "--precision", writeMatrix(t, "1,0,0\n0,1,0\n0,0,1\n"))
	_, iso, _ := run("--sigma", strconv.FormatFloat(sigma, 'g', -1, 64), "--exact-top", "0")
	for k := range cov {
		a, b := num(t, cov[k]["eps"]), num(t, iso[k]["eps"])
		if math.Abs(a-b) > 1e-6*b {
			t.Fatalf("row %d: gaussian-cov eps %v, isotropic %v", k, a, b)
		}
	}
	// AdaOPS on rows in the unit ball with labels in [-1, 1].
	stdout, _, rep := run("--mechanism", "adaops", "--epsilon", "1", "--delta", "1e-6", "--cond", "0.1", "--label-bound", "1", "--bias", "true")
	if rep.DPEpsilon == nil || *rep.DPEpsilon != 1 || !strings.Contains(rep.DPNeighbours, "add/remove-one") || !strings.Contains(stdout, "AdaOPS") {
		t.Errorf("adaops summary: DP eps %v, neighbours %q", rep.DPEpsilon, rep.DPNeighbours)
	}
}

// TestPDPEstimatesLabelled checks that a loss without a Lipschitz second
// derivative (huber: not twice differentiable where its quadratic piece
// ends) is analysed with its unrefined values labelled estimates in every
// output: a warning on stdout, the kind column of pdp.csv and
// targets.csv, and the summary's kinds.
func TestPDPEstimatesLabelled(t *testing.T) {
	path, _, _ := pdpCSV(t, 120, 5)
	dir := filepath.Join(t.TempDir(), "out")
	stdout, err := pdpRun(t, "pdp", "--data", path, "--label", "y", "--loss", "huber", "--sigma", "0.1", "--exact-top", "4", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "WARNING") || !strings.Contains(stdout, "ESTIMATES") {
		t.Errorf("no warning:\n%s", stdout)
	}
	count := map[string]int{}
	for _, row := range readPDPCSV(t, dir) {
		count[row["kind"]]++
	}
	if count[pdp.KindExact] != 4 || count[pdp.KindEstimate] == 0 || count[pdp.KindBound] != 0 {
		t.Errorf("pdp.csv kinds %v", count)
	}
	targets, err := os.ReadFile(filepath.Join(dir, "targets.csv"))
	if err != nil || !strings.Contains(string(targets), ","+pdp.KindEstimate+",") {
		t.Errorf("targets.csv lacks the estimate kind: %v", err)
	}
	rep := readSummary(t, dir)
	if rep.Kinds[pdp.KindEstimate] != count[pdp.KindEstimate] || !strings.Contains(strings.Join(rep.Notes, " "), "ESTIMATE") {
		t.Errorf("summary kinds %v", rep.Kinds)
	}
}
