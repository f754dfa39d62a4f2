package dpsgd

import (
	"context"
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// dpsgdAuditAlpha is the false-rejection probability of TestDPSGDAudit: if
// the release is (eps, delta)-DP, the empirical lower bound exceeds eps
// with probability at most this over the draws (each of its two one-sided
// Clopper-Pearson bounds fails with probability at most half of it).
const dpsgdAuditAlpha = 1e-6

// auditDPSGD returns draws released weights of a DP-SGD release of four
// one-input rows: a canary x = 2 with label y and three rows x = 0, whose
// gradients are zero, in one step that takes every row with probability
// q = 1 (expected batch 4 of 4, one pass). The neighbours y = 1 and y = -1
// differ in one row, and the canary's gradient (norm 1 at w = 0, so
// clipping to C = 1 keeps it) flips its sign between them: the step's sum
// moves by 2C, the largest change one replaced row can make. The release is prepared once
// and its run made draws times with seeded sources seed, seed+1, ...
// (noise and Poisson coins), scale multiplying the calibrated noise
// multiplier (1 for the release as certified).
func auditDPSGD(t *testing.T, y float64, b dp.Budget, scale float64, seed uint64, draws int) []float64 {
	t.Helper()
	X := mat.NewDense(4, 1, []float64{2, 0, 0, 0})
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 2, Batch: 4, Passes: 1, Clip: 1, Eta: 1, Seed: 1}
	p, err := method{}.Prepare(context.Background(), release.Rows{X: X, Y: []float64{y, 1, 1, 1}, Config: cfg}, b)
	if err != nil {
		t.Fatal(err)
	}
	pr := p.(*prepared)
	pr.cal.sigma *= scale
	out := make([]float64, draws)
	for i := range out {
		o, err := pr.draw(context.Background(), perturb.Seeded(seed+uint64(i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = o.Model.W[0]
	}
	sort.Float64s(out)
	return out
}

// auditBound returns ln((p1_lo - delta) / p0_hi) for the test "w < thr"
// (the canary y = 1 pushes w up, so y = -1 is the side below): p1_lo the
// lower one-sided Clopper-Pearson bound of P(w < thr) on the draws y1 of
// the y = -1 neighbour, p0_hi the upper one of the draws y0 of y = 1,
// each at level dpsgdAuditAlpha/2. (eps, delta)-DP implies P1 <= e^eps P0
// + delta for every event.
func auditBound(y0, y1 []float64, thr, delta float64) float64 {
	n := float64(len(y0))
	below := func(x []float64) float64 { return float64(sort.SearchFloat64s(x, thr)) }
	k0, k1 := below(y0), below(y1)
	p0hi := 1.0
	if k0 < n {
		p0hi = distuv.Beta{Alpha: k0 + 1, Beta: n - k0}.Quantile(1 - dpsgdAuditAlpha/2)
	}
	p1lo := 0.0
	if k1 > 0 {
		p1lo = distuv.Beta{Alpha: k1, Beta: n - k1 + 1}.Quantile(dpsgdAuditAlpha / 2)
	}
	if p1lo <= delta {
		return math.Inf(-1)
	}
	return math.Log((p1lo - delta) / p0hi)
}

// dpsgdLowerBound returns the empirical eps lower bound of the DP-SGD
// release with its noise multiplier times scale: the threshold is chosen
// on a first set of draws of each neighbour, the bound computed with it on
// fresh draws, so that the choice does not bias it.
func dpsgdLowerBound(t *testing.T, b dp.Budget, scale float64, draws int) float64 {
	choose1, choose0 := auditDPSGD(t, -1, b, scale, 1<<40, draws), auditDPSGD(t, 1, b, scale, 2<<40, draws)
	best, thr := math.Inf(-1), 0.0
	for i := 1; i < 200; i++ {
		c := choose1[i*draws/200]
		if v := auditBound(choose0, choose1, c, b.Delta); v > best {
			best, thr = v, c
		}
	}
	return auditBound(auditDPSGD(t, 1, b, scale, 3<<40, draws), auditDPSGD(t, -1, b, scale, 4<<40, draws), thr, b.Delta)
}

// TestDPSGDAudit is the empirical lower-bound attack of
// perturb.TestPrivacyAudit on a DP-SGD release (q = 1, T = 1 step, C =
// 1: auditDPSGD): neighbouring data sets that differ in a canary's label, many seeded
// runs, a threshold test on the released weight. The lower bound must stay
// below the certified eps; a correct release fails with probability at
// most dpsgdAuditAlpha = 1e-6 (the seeded draws make it deterministic).
// Negative control: 0.3 times the noise multiplier must be caught, or the
// attack has no power.
func TestDPSGDAudit(t *testing.T) {
	const draws = 10000
	b := dp.Budget{Epsilon: 1, Delta: 1e-5}
	lb := dpsgdLowerBound(t, b, 1, draws)
	t.Logf("dp-sgd: certified eps %v, empirical lower bound %.3f", b.Epsilon, lb)
	if lb > b.Epsilon {
		t.Errorf("empirical eps lower bound %v exceeds the certified eps %v", lb, b.Epsilon)
	}
	low := dpsgdLowerBound(t, b, 0.3, draws)
	t.Logf("dp-sgd with 0.3 of the noise: empirical lower bound %.3f", low)
	if low <= b.Epsilon {
		t.Errorf("0.3 of the noise: lower bound %v does not exceed eps %v: the attack has no power", low, b.Epsilon)
	}
}
