package pdp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
)

// TestOnAverageKLGaussian checks the fixed-covariance formula against the
// Gaussian KL divergence.
func TestOnAverageKLGaussian(t *testing.T) {
	diffs := []Diff{{V: []float64{0.3, -0.4}, L2: 0.5}, {V: []float64{0, 1}, L2: 1}}
	got, err := OnAverageKL(diffs, 2)
	if err != nil {
		t.Fatal(err)
	}
	id := mat.NewSymDense(2, []float64{4, 0, 0, 4})
	var want float64
	for _, d := range diffs {
		want += pdptest.KLGauss(mat.NewVecDense(2, nil), id, mat.NewVecDense(2, d.V), id) / 2
	}
	if math.Abs(got-want) > 1e-14 {
		t.Errorf("OnAverageKL = %v, want %v", got, want)
	}
	if _, err := OnAverageKL(diffs, 0); err == nil {
		t.Error("sigma 0 accepted")
	}
}

// TestOnAverageKLFresh checks the on-average KL-privacy of a Gaussian
// release (OnAverageKLFresh) against retraining: with one fresh row, every
// training row is replaced by it, and the mean of ||w(Z') - w(Z)||^2 /
// (2 sigma^2) over the retrained Z' must equal the estimate (exact for
// the squared loss, whose one-step differences are exact) and lie below it
// for the logistic loss (the estimate is at the upper bounds). The
// remove-one differences' mean, a different and smaller quantity, is
// logged beside it.
func TestOnAverageKLFresh(t *testing.T) {
	const n, d, sigma = 120, 3, 0.05
	for _, loss := range []losses.Loss{losses.Squared{}, losses.Logistic{}} {
		x, y := pdptest.Synth(n, d, loss, 0, 44)
		fx, fy := pdptest.Synth(1, d, loss, 0, 45)
		cfg := Config{Loss: loss, Lambda: 1e-2}
		a := mustAnalysis(t, x, y, cfg)
		got, err := OnAverageKLFresh(a, fx, fy, sigma, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want float64
		for i := range n {
			xr := mat.DenseCopyOf(x)
			xr.SetRow(i, fx.RawRowView(0))
			yr := append([]float64(nil), y...)
			yr[i] = fy[0]
			cfg.N = n
			sol, err := Solve(xr, yr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			dd := pdptest.Dist(sol.W, a.Solution().W)
			want += dd * dd / (2 * sigma * sigma) / n
		}
		if got.Pairs != n || got.Kind != KindBound {
			t.Errorf("%s: %d pairs of kind %s", loss.Name(), got.Pairs, got.Kind)
		}
		switch loss.Name() {
		case "squared":
			if math.Abs(got.KL-want) > 1e-9*want {
				t.Errorf("squared: on-average KL %v, retrained %v", got.KL, want)
			}
		default:
			if !(got.KL >= want) || got.KL > 2*want {
				t.Errorf("%s: on-average KL bound %v, retrained %v", loss.Name(), got.KL, want)
			}
		}
		rm, err := a.RemoveAll()
		if err != nil {
			t.Fatal(err)
		}
		half, err := OnAverageKL(rm, sigma)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: on-average KL %.4g (retrained %.4g); with remove-one neighbours %.4g", loss.Name(), got.KL, want, half)
	}
}

// TestOnAverageKLAllPairs checks OnAverageKLFresh against brute force on a
// tiny ridge problem: with n m below the pair limit it must average over
// every (training row, fresh row) pair, and for the squared loss (exact
// one-step differences) equal the mean over all n m retrained data sets
// of ||w(Z') - w(Z)||^2 / (2 sigma^2). Its standard error must be positive
// and below the spread of the pair values.
func TestOnAverageKLAllPairs(t *testing.T) {
	const n, m, d, sigma = 12, 5, 2, 0.1
	loss := losses.Squared{}
	x, y := pdptest.Synth(n, d, loss, 0, 7)
	fx, fy := pdptest.Synth(m, d, loss, 0, 8)
	cfg := Config{Loss: loss, Lambda: 0.1}
	a := mustAnalysis(t, x, y, cfg)
	got, err := OnAverageKLFresh(a, fx, fy, sigma, 3)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	for i := range n {
		for j := range m {
			xr := mat.DenseCopyOf(x)
			xr.SetRow(i, fx.RawRowView(j))
			yr := append([]float64(nil), y...)
			yr[i] = fy[j]
			cfg.N = n
			sol, err := Solve(xr, yr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			dd := pdptest.Dist(sol.W, a.Solution().W)
			vals = append(vals, dd*dd/(2*sigma*sigma))
		}
	}
	var want float64
	for _, v := range vals {
		want += v / float64(len(vals))
	}
	if got.Pairs != n*m || got.Pairings != m {
		t.Errorf("%d pairs in %d pairings, want all %d", got.Pairs, got.Pairings, n*m)
	}
	if math.Abs(got.KL-want) > 1e-9*want {
		t.Errorf("on-average KL %v, brute force over all pairs %v", got.KL, want)
	}
	if sd := math.Sqrt(sampleVar(vals)); !(got.StdErr > 0 && got.StdErr < sd) {
		t.Errorf("standard error %v, pair values' standard deviation %v", got.StdErr, sd)
	}
	t.Logf("on-average KL %.4g +- %.2g (brute force %.4g)", got.KL, got.StdErr, want)
}
