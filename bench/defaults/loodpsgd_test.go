package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
)

// dpsgdRows returns the rows of dpsgd.csv for a data set of n rows and
// classes at eps = 1, each run's accuracy on three seeds.
func dpsgdRows(set string, n, classes int, rule string, acc map[string]float64) []map[string]string {
	var out []map[string]string
	for _, run := range dpsgdRuns {
		mech := run
		if run == looRule {
			mech = rule
		}
		for seed := 1; seed <= 3; seed++ {
			out = append(out, map[string]string{"dataset": set, "n": fmt.Sprint(n), "classes": fmt.Sprint(classes), "epsilon": "1", "delta": "1e-05",
				"run": run, "seed": fmt.Sprint(seed), "accuracy": fmt.Sprint(acc[run] + 0.001*float64(seed)), "mechanism": mech, "release_epsilon": "1"})
		}
	}
	return out
}

// TestDPSGDFit: the threshold is the geometric midpoint between the
// largest n eps where the rule's alternative wins and the smallest where
// DP-SGD wins; a stump's unit does not move it; where the rule released
// DP-SGD, AMP's run stands for its alternative; held out, a table the
// others' threshold misjudges beyond noise is reported.
func TestDPSGDFit(t *testing.T) {
	var rows []map[string]string
	rows = append(rows, dpsgdRows("small", 100, 3, "amp", map[string]float64{"dp-sgd": 0.3, "amp": 0.5, "rule": 0.5})...)
	rows = append(rows, dpsgdRows("large", 900, 3, "dp-sgd", map[string]float64{"dp-sgd": 0.8, "amp": 0.4, "rule": 0.8})...)
	rows = append(rows, dpsgdRows("stumped", 2000, 3, "stump", map[string]float64{"dp-sgd": 0.3, "amp": 0.3, "rule": 0.9})...)
	units := dpsgdUnits(rows)
	if len(units) != 3 || !units[2].stump || units[1].altMech != string(perturb.AMP) || units[1].alt.mean > 0.5 {
		t.Fatalf("units %+v", units)
	}
	if c := dpsgdFit(units); c != 300 {
		t.Errorf("threshold %g, want sqrt(100 * 900) = 300", c)
	}
	table := dpsgdTable(rows)
	// Held out, "small" has no alternative-favouring unit among the
	// others: the threshold is half of 900, and small keeps AMP.
	if !strings.Contains(table, "| small | 3 | 100 | 1 | 100 |") || !strings.Contains(table, "within seed noise of the better of the two on 3 of 3") {
		t.Errorf("table:\n%s", table)
	}
	// A large table where AMP wins: held out, the others' threshold
	// gives it DP-SGD beyond noise; and without it, large is judged by
	// small and flat alone (threshold 2 x 5000), which give it AMP.
	rows = append(rows, dpsgdRows("flat", 5000, 3, "dp-sgd", map[string]float64{"dp-sgd": 0.4, "amp": 0.6, "rule": 0.4})...)
	if table := dpsgdTable(rows); !strings.Contains(table, "on 2 of 4") || !strings.Contains(table, "| flat | 3 | 5000 | 1 | 5000 | 0.4020 ± 0.0010 | 0.6020 ± 0.0010 (amp) | dp-sgd 0.4020 | 300 | dp-sgd 0.4020 | 0.6020 | false |") {
		t.Errorf("a misjudged table not reported:\n%s", table)
	}
}

// TestReleaseEpsilon: the release's eps is its own ledger entry's, after
// the feature scales' charge, or the claim's without a ledger.
func TestReleaseEpsilon(t *testing.T) {
	cert := &release.Certificate{Claim: dp.Claim{Mechanism: perturb.DPSGD, Epsilon: 1, Ledger: []dp.Charge{
		{Mechanism: "permute-and-flip", Epsilon: 0.184}, {Mechanism: dp.Mechanism(perturb.DPSGD), Epsilon: 0.816}}}}
	if got := releaseEpsilon(&modelfile.Released{Certificate: cert}); got != "0.816" {
		t.Errorf("with a ledger: %q, want 0.816", got)
	}
	// AMP's three entries (objective part, output part, iteration budget)
	// are one release: their sum, not the last entry's 0.
	amp := &release.Certificate{Claim: dp.Claim{Mechanism: perturb.AMP, Epsilon: 1, Ledger: []dp.Charge{
		{Mechanism: "permute-and-flip", Epsilon: 0.25}, {Mechanism: dp.AMP, Epsilon: 0.5}, {Mechanism: dp.AMP, Epsilon: 0.25}, {Mechanism: dp.AMP}}}}
	if got := releaseEpsilon(&modelfile.Released{Certificate: amp}); got != "0.75" {
		t.Errorf("AMP's entries: %q, want 0.75", got)
	}
	cert.Ledger = nil
	if got := releaseEpsilon(&modelfile.Released{Certificate: cert}); got != "1" {
		t.Errorf("without a ledger: %q, want 1", got)
	}
	if got := releaseEpsilon(&modelfile.Released{}); got != "" {
		t.Errorf("without a certificate: %q, want empty", got)
	}
}
