package main

import (
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stump"
)

// TestGridDPSGD: every data set's grid has DP-SGD once, at delta 1e-5 and
// its automatic knobs, and train's flag check reads its flags so.
func TestGridDPSGD(t *testing.T) {
	var found []setting
	for _, s := range gridSettings(twoClass("A"), 4) {
		if s.mech == string(perturb.DPSGD) {
			found = append(found, s)
		}
	}
	if len(found) != 1 || found[0].delta != gridDelta {
		t.Fatalf("dp-sgd settings %+v, want one at delta %g", found, gridDelta)
	}
	run, _, err := parseRun(dataSet{name: "embedded"}, append(budgetArgs(1, 0, 1), found[0].args()...))
	if err != nil {
		t.Fatal(err)
	}
	if run.Options.Mechanism != perturb.DPSGD || !run.Options.Auto || run.Budget.Delta != gridDelta {
		t.Errorf("mechanism %s, auto %v, budget %+v: want dp-sgd at its automatic knobs, delta %g", run.Options.Mechanism, run.Options.Auto, run.Budget, gridDelta)
	}
}

// TestGridStump: the grid has the decision stump once for a table of two
// to stump.MaxClasses classes read with bounds, none above the cap or on
// rows read as they are (--standardize none).
func TestGridStump(t *testing.T) {
	stumps := func(ds dataSet) int {
		k := 0
		for _, s := range gridSettings(ds, 4) {
			if s.mech == string(perturb.Stump) {
				k++
			}
		}
		return k
	}
	classes := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = string(rune('a' + i))
		}
		return out
	}
	for _, c := range []struct {
		ds   dataSet
		want int
	}{
		{twoClass("A"), 1},
		{dataSet{name: "K", classes: classes(stump.MaxClasses)}, 1},
		{dataSet{name: "wide", classes: classes(stump.MaxClasses + 1)}, 0},
		{dataSet{name: "scaled", classes: classes(3), flags: []string{"--standardize", "none"}}, 0},
	} {
		if got := stumps(c.ds); got != c.want {
			t.Errorf("%s (%d classes, flags %v): %d stump settings, want %d", c.ds.name, len(c.ds.classes), c.ds.flags, got, c.want)
		}
	}
}
