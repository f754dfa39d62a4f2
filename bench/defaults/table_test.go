package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTableMarks: the default's cell names the seeds where the rule
// released the decision stump or DP-SGD.
func TestTableMarks(t *testing.T) {
	defer func(e []float64) { onlyEpsilons = e }(onlyEpsilons)
	onlyEpsilons = []float64{1}
	out := t.TempDir()
	rule := variants[0].name
	csv := "dataset,rows,epsilon,delta,variant,seed,accuracy,majority,mechanism,lambda,certified,error\n" +
		"K,900,0,0," + nonPrivate + ",1,0.9,0.4,none,,,\n" +
		"K,900,1,1e-05," + rule + ",1,0.7,0.4,dp-sgd,0,ok,\n" +
		"K,900,1,1e-05," + rule + ",2,0.7,0.4,dp-sgd,0,ok,\n" +
		"K,900,1,1e-05," + rule + ",3,0.6,0.4,stump,0,ok,\n" +
		"K,900,1,0," + rule + ",1,0.5,0.4,objective,0.01,ok,\n"
	if err := os.WriteFile(filepath.Join(out, "defaults.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeTable(out, []dataSet{{name: "K", classes: []string{"a", "b", "c"}}}, 1); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| K | eps = 1, delta = 1e-05 | 0.6667 ± 0.0577 (stump, 1 of 3) (dp-sgd, 2 of 3) |", "| K | eps = 1 | 0.5000 ± 0.0000 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("table.md lacks %q:\n%s", want, md)
		}
	}
}
