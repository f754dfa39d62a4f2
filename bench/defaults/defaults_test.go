package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/selection"
)

// looRows returns loo.csv rows of one data set at eps for the seeds of
// obj and gamma (accuracies) with the objective lambda giving the ratio r
// at dim 4 (r = lambda dim / S_z, S_z = 1/4), and the rule's release as
// OutputFirst makes it at the current factor.
func looRows(set string, eps, r float64, obj, gamma []float64, public bool) []map[string]string {
	lambda := r * 0.25 / 4
	var out []map[string]string
	for i := range obj {
		seed := fmt.Sprint(i + 1)
		row := func(run, mech string, acc float64) map[string]string {
			return map[string]string{"dataset": set, "epsilon": fmt.Sprint(eps), "run": run, "seed": seed, "accuracy": fmt.Sprint(acc),
				"mechanism": mech, "lambda": fmt.Sprint(lambda), "dim": "4", "public_map": fmt.Sprint(public), "error": ""}
		}
		ruleMech, ruleAcc := "objective", obj[i]
		if !public && r > selection.OutputFirstFactor {
			ruleMech, ruleAcc = "gamma", gamma[i]
		}
		out = append(out, row("objective", "objective", obj[i]), row("gamma", "gamma", gamma[i]), row(looRule, ruleMech, ruleAcc))
	}
	return out
}

func twoClass(name string) dataSet { return dataSet{name: name, classes: []string{"a", "b"}} }

// TestLOOChoice: the factor chosen on the other data sets follows their
// accuracies, ties go to the current factor, and a data set on the public
// log map is left out.
func TestLOOChoice(t *testing.T) {
	var loo []map[string]string
	// A: r = 2, objective ahead: a factor above 2 is better.
	loo = append(loo, looRows("A", 1, 2, []float64{0.9, 0.9}, []float64{0.8, 0.8}, false)...)
	// B: r = 0.01, gamma ahead: a factor below 0.01 would be better.
	loo = append(loo, looRows("B", 1, 0.01, []float64{0.7, 0.7}, []float64{0.72, 0.72}, false)...)
	// C: on the public log map: fixed.
	loo = append(loo, looRows("C", 1, 5, []float64{0.6, 0.6}, []float64{0.9, 0.9}, true)...)
	dss := []dataSet{twoClass("A"), twoClass("B"), twoClass("C")}
	units, matched, compared := looUnits(loo, dss)
	if len(units) != 3 || matched != 6 || compared != 6 {
		t.Fatalf("%d units, %d of %d matched, want 3 and 6 of 6", len(units), matched, compared)
	}
	if units[2].fixed == "" {
		t.Errorf("the public-map unit is not fixed")
	}
	// On A alone a factor of at least r = 2 wins (gamma where r > f); the
	// nearest to 1/4 of those is 2.
	if f := looChoice(units[:1]); f != 2 {
		t.Errorf("looChoice on A = %g, want 2", f)
	}
	// On B alone the factor must be at most 0.01.
	if f := looChoice(units[1:2]); f >= 0.01 {
		t.Errorf("looChoice on B = %g, want below 0.01", f)
	}
	// A unit that both families tie on leaves the factor where it is.
	tie := looUnit{set: "T", seeds: []looSeed{{obj: 0.5, gamma: 0.5, ratio: 3}}}
	if f := looChoice([]looUnit{tie}); f != selection.OutputFirstFactor {
		t.Errorf("looChoice on a tie = %g, want %g", f, selection.OutputFirstFactor)
	}
	if got := units[0].acc(0.25); got != 0.8 {
		t.Errorf("A at factor 1/4: %g, want gamma's 0.8", got)
	}
	if got := units[0].family(4); got != "objective" {
		t.Errorf("A's family at factor 4: %q", got)
	}
	md := looTable(loo, dss)
	for _, want := range []string{"on 6 of 6 seeds", "| A | 1 |", "| B | 1 |", "C at eps = 1 (public log map"} {
		if !strings.Contains(md, want) {
			t.Errorf("loo.md lacks %q:\n%s", want, md)
		}
	}
}

// TestLOOMismatch: a rule's release that OutputFirst at the current
// factor would not make is not counted as matched.
func TestLOOMismatch(t *testing.T) {
	loo := looRows("A", 1, 2, []float64{0.9}, []float64{0.8}, false)
	for _, r := range loo {
		if r["run"] == looRule {
			r["mechanism"], r["accuracy"] = "objective", "0.9"
		}
	}
	if _, matched, compared := looUnits(loo, []dataSet{twoClass("A")}); matched != 0 || compared != 1 {
		t.Errorf("%d of %d matched, want 0 of 1", matched, compared)
	}
}

func TestGap(t *testing.T) {
	for _, c := range []struct{ acc, maj, np, want float64 }{
		{0.8, 0.6, 1, 0.5}, {0.6, 0.6, 0.9, 0}, {0.5, 0.6, 0.8, -0.5},
	} {
		if got := gap(c.acc, c.maj, c.np); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("gap(%g, %g, %g) = %g, want %g", c.acc, c.maj, c.np, got, c.want)
		}
	}
	if !math.IsNaN(gap(0.7, 0.7, 0.7)) || !strings.Contains(gapCell(0.7, 0.7, 0.6), "not above") {
		t.Errorf("a non-private fit not above the majority has no gap")
	}
}

// TestTargets27: refusals on a table of at least minRows rows, releases
// that do not certify and a gap below the target are all reported.
func TestTargets27(t *testing.T) {
	row := func(set, rows, eps, delta, variant, seed, acc, maj, cert, errMsg string) map[string]string {
		return map[string]string{"dataset": set, "rows": rows, "epsilon": eps, "delta": delta, "variant": variant, "seed": seed,
			"accuracy": acc, "majority": maj, "certified": cert, "error": errMsg}
	}
	rule := variants[0].name
	all := []map[string]string{
		row("A", "600", "0", "0", nonPrivate, "1", "0.9", "0.5", "", ""),
		row("A", "600", "1", "0", rule, "1", "0.6", "0.5", "ok", ""),
		row("A", "600", "1", "0", rule, "2", "", "", "", "refused"),
		row("A", "600", "1", "0", variants[1].name, "1", "0.8", "0.5", "modelfile: bad", ""),
		// B closes 49.8% of its gap: not the 50% its rounding would show.
		row("B", "600", "0", "0", nonPrivate, "1", "0.9", "0.5", "", ""),
		row("B", "600", "1", "0", rule, "1", "0.6992", "0.5", "ok", ""),
	}
	md := targets27(all, nil, []dataSet{twoClass("A"), twoClass("B")}, 1)
	for _, want := range []string{"25% (not met: target 50%)", "49.8% (not met: target 50%)", "not met (A (600 rows): 1)", "Every release certifies: 2 of 3", "not run"} {
		if !strings.Contains(md, want) {
			t.Errorf("targets.md lacks %q:\n%s", want, md)
		}
	}
}

// TestCheckTable: a label that is not a declared class, and an ignored
// column that is not in the header, are errors; NA labels are null rows.
func TestCheckTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("\"id\",\"x\",\"y\"\n1,2.5,\"a\"\n2,NA,NA\n3,4,\"b\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, cols, missing, err := checkTable(path, "y", []string{"a", "b"}, []string{"id"})
	if err != nil || rows != 3 || cols != 3 || missing != 2 {
		t.Errorf("checkTable = %d rows, %d columns, %d missing, %v; want 3, 3, 2, nil", rows, cols, missing, err)
	}
	if _, _, _, err := checkTable(path, "y", []string{"a"}, nil); err == nil || !strings.Contains(err.Error(), `label "b"`) {
		t.Errorf("an undeclared label: %v", err)
	}
	if _, _, _, err := checkTable(path, "y", []string{"a", "b"}, []string{"ID"}); err == nil || !strings.Contains(err.Error(), `"ID"`) {
		t.Errorf("a missing ignored column: %v", err)
	}
}
