package pdp

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestAdult runs the analysis on the real Adult data with the paper's
// preprocessing (truncated SVD to 32 components, standardization, rows
// into the unit ball with a bias: d = 33, 36,178 training rows of an 80/20
// split), and checks the one-step estimates against the exact values of
// the most exposed rows and every pDP epsilon against the DP epsilon.
// It skips when ../shared/datasets/adult is missing.
func TestAdult(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "datasets", "adult")
	if _, err := os.Stat(filepath.Join(dir, paper.AdultTrainFile)); err != nil {
		t.Skipf("Adult data not found in %s (the shared data sets are beside the repository): %v", dir, err)
	}
	if testing.Short() {
		t.Skip("-short: skipping the Adult run")
	}
	full, err := paper.LoadAdult(dir, paper.AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := datasets.Split(full, 0.2, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if train, test, err = preprocess.ReduceSVD(train, test, 32, 10, 2, 1); err != nil {
		t.Fatal(err)
	}
	if train, _, _, err = preprocess.PrepareUnitBall(train, test, preprocess.UnitBallOptions{}); err != nil {
		t.Fatal(err)
	}
	n, d := train.X.Dims()
	const lambda = 1e-4
	start := time.Now()
	a, err := New(train.X, train.Y, Config{Loss: losses.Logistic{}, Lambda: lambda})
	if err != nil {
		t.Fatal(err)
	}
	solve := time.Since(start)
	start = time.Now()
	diffs, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}
	oneStep := time.Since(start)
	one := append([]Diff(nil), diffs...)
	start = time.Now()
	top, err := a.RefineTop(diffs, 20)
	if err != nil {
		t.Fatal(err)
	}
	exact := time.Since(start)
	worstRel := 0.0
	for _, i := range top {
		rel := (one[i].L2 - diffs[i].L2) / diffs[i].L2
		worstRel = max(worstRel, rel, -rel)
		if diffs[i].IdentityGap > 1e-8*max(1, diffs[i].L2) {
			t.Errorf("row %d: identity gap %g", i, diffs[i].IdentityGap)
		}
		if up, _, ok := one[i].Upper(); !ok || up < diffs[i].L2 {
			t.Errorf("row %d: one-step upper bound %g (%v) below the exact %g", i, up, ok, diffs[i].L2)
		}
	}
	// How much the bounds add over the one-step values, over all rows.
	slack := make([]float64, 0, n)
	for _, df := range one {
		if up, _, _ := df.Upper(); df.L2 > 0 {
			slack = append(slack, up/df.L2-1)
		}
	}
	sl, err := Summarize(slack)
	if err != nil {
		t.Fatal(err)
	}
	if worstRel > 0.05 {
		t.Errorf("one-step sensitivity off the exact one by %.3g relative", worstRel)
	}
	replace, _, err := WorstCaseSensitivity(1, 1, lambda, n)
	if err != nil {
		t.Fatal(err)
	}
	m, err := CalibratedLoss(perturb.AnalyticGaussian, 1, 1e-6, replace, d)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := m.UpperEpsilons(diffs)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(eps)
	if err != nil {
		t.Fatal(err)
	}
	if s.Max >= 1 {
		t.Errorf("largest pDP eps %g is not below the DP eps 1", s.Max)
	}
	t.Logf("n = %d, d = %d: solve %v, one-step (all rows) %v, exact (top 20) %v; one-step relative error <= %.2g; the bounds add %.2g (median), %.2g (p90) relative; pDP eps median %.3g, p99 %.3g, max %.3g (DP eps 1)",
		n, d, solve, oneStep, exact, worstRel, sl.Median, sl.P90, s.Median, s.P99, s.Max)
}
