package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/cmd/paper"
)

func TestPaperCommandUsageErrors(t *testing.T) {
	t.Setenv(paper.DataEnv, "")
	out := filepath.Join(t.TempDir(), "out")
	csv := writeCSV(t, clusters(2, 20))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no dataset", []string{"sweep", "--out", out}},
		{"unknown dataset", []string{"sweep", "--dataset", "mnist", "--data-dir", ".", "--out", out}},
		{"no out", []string{"sweep", "--dataset", "adult", "--data-dir", "."}},
		{"no data dir", []string{"sweep", "--dataset", "adult", "--out", out}},
		{"csv without label", []string{"sweep", "--dataset", "csv", "--data", csv, "--out", out}},
		{"data with adult", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--data", csv, "--out", out}},
		{"bad lambdas", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--lambdas", "1e-3,x", "--out", out}},
		{"bad epsilons", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--epsilons", "NaN", "--out", out}},
		{"bad mechanism", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--mechanism", "paper-laplace", "--out", out}},
		{"bad row scale", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--row-scale", "none", "--out", out}},
		{"zero components", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--components", "0", "--out", out}},
		{"components on lastfm", []string{"sweep", "--dataset", "lastfm", "--data-dir", ".", "--components", "4", "--out", out}},
		{"zero splits", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--splits", "0", "--out", out}},
		{"unknown flag", []string{"sweep", "--dataset", "adult", "--bogus", "--out", out}},
		{"extra argument", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--out", out, "extra"}},
		{"classical gaussian at eps >= 1", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class",
			"--mechanism", "gaussian", "--epsilons", "1", "--out", out}},
		{"negative lambda", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--lambdas", "-1", "--out", out}},
		{"l1 ratio 1", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--l1-ratio", "1", "--out", out}},
		{"featsel zero l1 ratio", []string{"featsel", "--dataset", "adult", "--data-dir", ".", "--l1-ratio", "0", "--out", out}},
		{"empty clips", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--clips", "", "--out", out}},
		{"negative clip", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--clips", "0,-1", "--out", out}},
		{"repeated clip", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--clips", "0.1,0.1", "--out", out}},
		{"dropout above 1", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--dropouts", "1.5", "--out", out}},
		{"zero batch", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--batches", "0", "--out", out}},
		{"bad batch", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--batches", "1.5", "--out", out}},
		{"repeated passes", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--passes", "5,5", "--out", out}},
		{"bad average", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--average", "maybe", "--out", out}},
		{"l1 ratios out of range", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--l1-ratios", "0,1", "--out", out}},
		{"repeated mechanism", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--mechanism", "gamma,gamma", "--out", out}},
		{"select val 1", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--select-val", "1", "--out", out}},
		{"select eta 2", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--select-val", "0.2", "--select-eta", "2", "--out", out}},
		{"delta with gamma", []string{"sweep", "--dataset", "adult", "--data-dir", ".", "--delta", "0.5", "--out", out}},
		{"analytic gaussian without delta", []string{"sweep", "--dataset", "adult", "--data-dir", ".",
			"--mechanism", "gaussian-analytic", "--delta", "0", "--out", out}},
		{"repeated epsilon", []string{"sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--epsilons", "1,1", "--out", out}},
		{"featsel bad rate", []string{"featsel", "--dataset", "adult", "--data-dir", ".", "--rate", "1", "--out", out}},
		{"featsel bad thresholds", []string{"featsel", "--dataset", "adult", "--data-dir", ".", "--thresholds", "a", "--out", out}},
		{"featsel negative threshold", []string{"featsel", "--dataset", "csv", "--data", csv, "--label", "class",
			"--thresholds", "-1", "--out", out}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := call(t, tc.args...)
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit code %d (%v), want 2", code, err)
			}
		})
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed command created %s", out)
	}
}

func TestPaperCommandMissingData(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(paper.DataEnv, filepath.Join(empty, "absent"))
	for _, cmd := range []string{"sweep", "featsel"} {
		_, _, err := call(t, cmd, "--dataset", "gene_all", "--out", filepath.Join(empty, "out"))
		if code := exitCode(err); code != 4 || err == nil || !strings.Contains(err.Error(), "absent") {
			t.Errorf("%s: exit code %d, error %v; want 4 and the directory from $%s named", cmd, code, err, paper.DataEnv)
		}
	}
}

func TestSweepCommandCSV(t *testing.T) {
	csv := writeCSV(t, clusters(2, 150))
	out := filepath.Join(t.TempDir(), "sweep")
	stdout, _, err := call(t, "sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "2",
		"--lambdas", "1e-3,1e-2", "--epsilons", "1,5", "--passes", "3", "--log-level", "warn", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"best mean test accuracy per eps", "non-private", "fixed noise scale", "results.csv"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, name := range []string{"results.csv", "summary.json", "fig1.png", "fig2.png"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".png") && !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG image", name)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !strings.Contains(string(sum), `"command": "stabpriv sweep --dataset csv`) || !strings.Contains(string(sum), "seeded") {
		t.Errorf("summary.json lacks the command or the seeded-noise note:\n%s", sum)
	}

	// One lambda: the eps panel of Figure 2 has a single value on its log
	// axis, which must still draw.
	out = filepath.Join(t.TempDir(), "one")
	if _, _, err := call(t, "sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "1",
		"--lambdas", "1e-2", "--epsilons", "1", "--passes", "2", "--log-level", "warn", "--out", out); err != nil {
		t.Fatalf("one lambda: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "fig2.png")); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("one lambda: fig2.png: %v", err)
	}

	out = filepath.Join(t.TempDir(), "featsel")
	stdout, _, err = call(t, "featsel", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "1",
		"--lambdas", "1e-2", "--epsilons", "1", "--passes", "2", "--log-level", "warn", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"featsel.csv", "fig3.png", "fig5.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "eps=1") {
		t.Errorf("featsel output:\n%s", stdout)
	}
}

// TestSweepCommandMulticlassCSV: sweep and featsel on a CSV of three
// classes train one softmax model (K x d weights) and report it above the
// majority class at a large eps.
func TestSweepCommandMulticlassCSV(t *testing.T) {
	csv := writeCSV(t, clusters(3, 60))
	out := filepath.Join(t.TempDir(), "sweep")
	stdout, _, err := call(t, "sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "1",
		"--lambdas", "1e-2", "--epsilons", "20", "--passes", "3", "--mechanism", "gamma,objective", "--fixed-scale", "-1", "--log-level", "warn", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := os.ReadFile(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Objective perturbation's sensitivity 2L with the softmax loss's
	// L = sqrt(2) (the logistic loss has L = 1), and the majority class of
	// three balanced classes.
	for _, want := range []string{"objective perturbation,2.8284271247461903,", ",0.3333333333333333,"} {
		if !strings.Contains(string(rows), want) {
			t.Errorf("results.csv lacks %q (a softmax model of three classes):\n%s\n%s", want, stdout, rows)
		}
	}
	out = filepath.Join(t.TempDir(), "featsel")
	if _, _, err := call(t, "featsel", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "1",
		"--lambdas", "1e-2", "--epsilons", "1", "--passes", "2", "--log-level", "warn", "--out", out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "featsel.csv")); err != nil {
		t.Error(err)
	}
}

func TestPaperCommandHelp(t *testing.T) {
	for _, cmd := range []string{"sweep", "featsel"} {
		stdout, _, err := call(t, "help", cmd)
		if err != nil || !strings.Contains(stdout, "--dataset") || !strings.Contains(stdout, "Usage: stabpriv "+cmd) {
			t.Errorf("help %s (%v):\n%s", cmd, err, stdout)
		}
	}
}

func TestSweepCommandKnobs(t *testing.T) {
	csv := writeCSV(t, clusters(2, 150))
	out := filepath.Join(t.TempDir(), "knobs")
	stdout, _, err := call(t, "sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "2",
		"--lambdas", "1e-3,1e-2", "--epsilons", "1,5", "--passes", "3,6", "--clips", "0,0.1", "--l1-ratios", "0.15,0",
		"--mechanism", "gamma,gaussian-analytic", "--select-val", "0.2", "--select-runs", "20", "--fixed-scale", "-1",
		"--log-level", "warn", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"privately selected", "frontier, gamma", "gaussian-analytic (delta 1e-05)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "frontier.png"))
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("frontier.png: %v", err)
	}
	res, _ := os.ReadFile(filepath.Join(out, "results.csv"))
	if n := strings.Count(string(res), "\n"); n != 1+2*2*2*2*2*2*2+2*2 {
		t.Errorf("results.csv has %d lines", n)
	}
}

func TestSweepCommandObjective(t *testing.T) {
	csv := writeCSV(t, clusters(2, 150))
	out := filepath.Join(t.TempDir(), "objective")
	stdout, _, err := call(t, "sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "2",
		"--lambdas", "1e-3,1e-2", "--epsilons", "1,5", "--passes", "3", "--mechanism", "gamma,objective,amp",
		"--log-level", "warn", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"objective", "amp (delta 1e-05)", "exact", "fixed noise scale"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	res, _ := os.ReadFile(filepath.Join(out, "results.csv"))
	if !strings.Contains(string(res), ",objective,objective perturbation") {
		t.Errorf("results.csv lacks objective rows:\n%s", res)
	}
	out = filepath.Join(t.TempDir(), "alone")
	if _, _, err := call(t, "sweep", "--dataset", "csv", "--data", csv, "--label", "class", "--splits", "1",
		"--lambdas", "1e-2", "--epsilons", "1", "--mechanism", "objective", "--log-level", "warn", "--out", out); err != nil {
		t.Fatalf("objective alone: %v", err)
	}
	if _, _, err := call(t, "featsel", "--dataset", "csv", "--data", csv, "--label", "class", "--mechanism", "objective",
		"--out", filepath.Join(t.TempDir(), "f")); err == nil || !strings.Contains(err.Error(), "training-time") {
		t.Errorf("featsel with objective: %v, want a usage error", err)
	}
}
