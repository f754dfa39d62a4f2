package report

import (
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestSimulateKinds runs Simulate on synthetic data and checks what every
// output says about its values: with the logistic loss every row and every
// held-out target is exact (the ExactTop most exposed; AddExact and
// RemoveExact are checked against retraining elsewhere) or a proven upper
// bound, the replace-one
// epsilons bound the remove-one ones, and the on-average KL is reported;
// with the Huber loss, whose curvature jumps, the unrefined values are
// estimates and the notes say so in capitals.
func TestSimulateKinds(t *testing.T) {
	const n, d = 400, 4
	for _, tc := range []struct {
		loss losses.Loss
		kind string
	}{{losses.Logistic{}, pdp.KindBound}, {losses.Huber{Delta: 1}, pdp.KindEstimate}} {
		x, y := pdptest.Synth(n, d, tc.loss, 0, 31)
		ds := &datasets.Dataset{X: x, Y: y}
		if tc.loss.Task() == losses.Binary {
			ds.Classes = []string{"a", "b"}
		}
		sim := Simulation{Rows: Rows{ExactTop: 7, Top: 3}, Loss: tc.loss, Lambda: 1e-2, Mechanism: perturb.AnalyticGaussian,
			Epsilon: 1, Delta: 1e-6, TestFrac: 0.25, Seed: 2, Bias: true, Kappa: 1, Source: "synthetic"}
		if tc.loss.Task() == losses.Regression {
			sim.LabelBound = 3
		}
		res, err := Simulate(ds, sim)
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		if rep.Kinds[pdp.KindExact] != 7 || rep.Kinds[tc.kind] != len(res.Diffs)-7 {
			t.Errorf("%s: kinds %v", tc.loss.Name(), rep.Kinds)
		}
		if rep.TargetKinds[pdp.KindExact] != 7 || rep.TargetKinds[tc.kind] != len(res.TargetDiffs)-7 {
			t.Errorf("%s: target kinds %v", tc.loss.Name(), rep.TargetKinds)
		}
		for i, e := range res.Epsilons {
			if res.ReplaceEpsilons[i] < e {
				t.Fatalf("%s row %d: replace-one eps %v below remove-one %v", tc.loss.Name(), i, res.ReplaceEpsilons[i], e)
			}
		}
		if rep.OnAverageKL == nil || rep.FlipToRemove == nil || rep.ReplaceEpsilon == nil {
			t.Errorf("%s: on-average KL %v, flip ratios %v, replace eps %v", tc.loss.Name(), rep.OnAverageKL, rep.FlipToRemove, rep.ReplaceEpsilon)
		}
		notes := strings.Join(rep.Notes, "\n")
		if got := strings.Contains(notes, "ESTIMATE"); got != (tc.kind == pdp.KindEstimate) {
			t.Errorf("%s: notes say ESTIMATE: %v\n%s", tc.loss.Name(), got, notes)
		}
		for i, df := range res.TargetDiffs {
			if up, _, _ := df.Upper(); up < df.L2 || (df.Kind() == pdp.KindExact && math.IsNaN(df.L2)) {
				t.Fatalf("%s target %d: upper %v, value %v", tc.loss.Name(), i, up, df.L2)
			}
		}
	}
}
