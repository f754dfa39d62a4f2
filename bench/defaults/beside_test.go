package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/beside"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/dp"
)

// TestBesideJobs: every data set has the non-private reference and, at
// each budget of the grid with delta 1e-5, the rule, DP-SGD, AMP and the
// analytic Gaussian at their automatic knobs; Adult also has the pure
// runs; train's flag check reads each as meant.
func TestBesideJobs(t *testing.T) {
	count := func(jobs []job) map[string]int {
		m := map[string]int{}
		for _, j := range jobs {
			m[fmt.Sprintf("%s %g %g", j.s.mech, j.eps, j.s.delta)]++
		}
		return m
	}
	a := count(besideJobs(twoClass("A"), 2))
	if len(a) != 1+4*len(gridEpsilons("A")) || a["none 0 0"] != 2 || a["dp-sgd 1 1e-05"] != 2 || a["gaussian-analytic 2 1e-05"] != 2 || a["objective 1 0"] != 0 {
		t.Errorf("a binary table's runs: %v", a)
	}
	adult := count(besideJobs(twoClass("adult"), 1))
	if adult["objective 0.1 0"] != 1 || adult["gamma 2 0"] != 1 || adult["rule 0.5 0"] != 1 || adult["rule 0.5 1e-05"] != 1 {
		t.Errorf("Adult's runs: %v", adult)
	}
	for _, j := range besideJobs(dataSet{name: "embedded"}, 1) {
		run, _, err := parseRun(j.ds, j.args)
		if err != nil {
			t.Fatalf("%s: %v", j.s.mech, err)
		}
		want := dp.Mechanism(j.s.mech)
		switch j.s.mech {
		case beside.None:
			want = ""
		case loo.Rule:
			want = run.Options.Mechanism // the rule: no --mechanism
		}
		if run.Options.Mechanism != want || run.Budget.Delta != j.s.delta || j.s.mech != beside.None && run.Budget.Epsilon != j.eps {
			t.Errorf("%s at eps %g, delta %g: train reads mechanism %q, budget %+v", j.s.mech, j.eps, j.s.delta, run.Options.Mechanism, run.Budget)
		}
	}
}

// TestRunBeside runs the task on the embedded data at eps = 1, one seed:
// every run gives an accuracy, its CPU time and a certified release.
func TestRunBeside(t *testing.T) {
	defer func(e []float64) { onlyEpsilons = e }(onlyEpsilons)
	onlyEpsilons = []float64{1}
	out := t.TempDir()
	if err := runBeside(context.Background(), []dataSet{{name: "breast_cancer"}}, out, 1); err != nil {
		t.Fatal(err)
	}
	rows, err := results.Read(filepath.Join(out, "beside.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want the reference and 4 runs", len(rows))
	}
	for _, r := range rows {
		if r["error"] != "" || !(results.Num(r, "cpu_seconds") > 0) || !(results.Num(r, "accuracy") > 0.5) {
			t.Errorf("%s: accuracy %s, CPU %s s, error %q", r["run"], r["accuracy"], r["cpu_seconds"], r["error"])
		}
		if want := "ok"; r["run"] == beside.None {
			if r["certified"] != "" {
				t.Errorf("the non-private reference: certified %q", r["certified"])
			}
		} else if r["certified"] != want {
			t.Errorf("%s: certified %q", r["run"], r["certified"])
		}
	}
	if err := beside.WriteTables(out, gridDelta); err != nil {
		t.Fatal(err)
	}
}
