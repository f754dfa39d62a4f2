package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// TestCLIRuleDPSGD: plain train with --epsilon 1 --delta 1e-6 on a
// three-class table whose rows times eps pass selection.DPSGDFirstRows
// releases DP-SGD at its automatic knobs (the model file byte for byte
// that --mechanism dp-sgd gives), and certify accepts it. A pure budget,
// a partitioned fit and a table below the threshold keep their rule.
func TestCLIRuleDPSGD(t *testing.T) {
	rows := 400 // per class: 1200 rows, n eps above the threshold after any bounds spend
	if float64(3*rows)/2 < selection.DPSGDFirstRows {
		t.Fatalf("the table's %d rows are too few for the threshold %g", 3*rows, selection.DPSGDFirstRows)
	}
	big, small := writeFile(t, "big.csv", clusters(3, rows)), writeFile(t, "small.csv", clusters(3, 20))
	dir := t.TempDir()
	train := func(name, data string, extra ...string) string {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		args := append([]string{"train", "--data", data, "--label", "class", "--classes", "c0,c1,c2", "--out", out}, extra...)
		if _, stderr, err := call(t, args...); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mech := func(file string) string {
		_, rest, ok := strings.Cut(file, `"mechanism": "`)
		if !ok {
			return ""
		}
		return rest[:strings.IndexByte(rest, '"')]
	}
	budget := []string{"--epsilon", "1", "--delta", "1e-6"}
	rule := train("rule", big, budget...)
	if got := mech(rule); got != string(perturb.DPSGD) || !strings.Contains(rule, `"auto_knobs": true`) {
		t.Fatalf("the rule released %q (automatic knobs: %v), want dp-sgd at its automatic knobs", got, strings.Contains(rule, `"auto_knobs": true`))
	}
	if stdout, _, err := call(t, "certify", filepath.Join(dir, "rule.json")); exitCode(err) != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify of the rule's dp-sgd release: exit %d (%v)\n%s", exitCode(err), err, stdout)
	}
	seeded := append(budget, "--noise", "seeded", "--noise-seed", "3")
	if r, n := train("rule-seeded", big, seeded...), train("named", big, append(seeded, "--mechanism", "dp-sgd")...); r != n {
		t.Error("the rule's dp-sgd model file differs from --mechanism dp-sgd's")
	}
	for _, c := range []struct {
		name, data string
		args       []string
	}{
		{"pure budget", big, []string{"--epsilon", "1"}},
		{"partitioned", big, append(budget, "--bounds-all", "-8,8", "--partitions", "2")},
		{"below the threshold", small, budget},
	} {
		if got := mech(train(strings.ReplaceAll(c.name, " ", "-"), c.data, c.args...)); got == string(perturb.DPSGD) || got == "" {
			t.Errorf("%s: the rule released %q, want another mechanism than dp-sgd", c.name, got)
		}
	}
}
