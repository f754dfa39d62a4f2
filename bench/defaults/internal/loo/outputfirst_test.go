package loo

import (
	"fmt"
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
		out = append(out, row("objective", "objective", obj[i]), row("gamma", "gamma", gamma[i]), row(Rule, ruleMech, ruleAcc))
	}
	return out
}

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
	sets := []string{"A", "B", "C"}
	units, matched, compared := readUnits(loo, sets)
	if len(units) != 3 || matched != 6 || compared != 6 {
		t.Fatalf("%d units, %d of %d matched, want 3 and 6 of 6", len(units), matched, compared)
	}
	if units[2].fixed == "" {
		t.Errorf("the public-map unit is not fixed")
	}
	// On A alone a factor of at least r = 2 wins (gamma where r > f); the
	// nearest to 1/4 of those is 2.
	if f := choose(units[:1]); f != 2 {
		t.Errorf("choose on A = %g, want 2", f)
	}
	// On B alone the factor must be at most 0.01.
	if f := choose(units[1:2]); f >= 0.01 {
		t.Errorf("choose on B = %g, want below 0.01", f)
	}
	// A unit that both families tie on leaves the factor where it is.
	tie := unit{set: "T", seeds: []seedAcc{{obj: 0.5, gamma: 0.5, ratio: 3}}}
	if f := choose([]unit{tie}); f != selection.OutputFirstFactor {
		t.Errorf("choose on a tie = %g, want %g", f, selection.OutputFirstFactor)
	}
	if got := units[0].acc(0.25); got != 0.8 {
		t.Errorf("A at factor 1/4: %g, want gamma's 0.8", got)
	}
	if got := units[0].family(4); got != "objective" {
		t.Errorf("A's family at factor 4: %q", got)
	}
	md := OutputFirst(loo, sets)
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
		if r["run"] == Rule {
			r["mechanism"], r["accuracy"] = "objective", "0.9"
		}
	}
	if _, matched, compared := readUnits(loo, []string{"A"}); matched != 0 || compared != 1 {
		t.Errorf("%d of %d matched, want 0 of 1", matched, compared)
	}
}
