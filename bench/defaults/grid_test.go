package main

import (
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
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
