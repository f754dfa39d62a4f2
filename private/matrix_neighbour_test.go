package private_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// neighbourRows returns n seeded rows of d features in [-0.3, 0.3] and
// their labels 0/1, the sign of x1 - x2 plus noise.
func neighbourRows(n, d int) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	rows, y := make([][]float64, n), make([]float64, n)
	for i := range rows {
		x := make([]float64, d)
		for j := range x {
			x[j] = 0.6 * (rng.Float64() - 0.5)
		}
		rows[i] = x
		if x[0]-x[1]+0.1*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	return rows, y
}

// TestFitRowsNeighbourSensitivity: FitRows on two [][]float64 differing in
// one row (adversarial replacements), noise seeded identically: neither is
// refused, and the realized ||w~_S - w~_S'|| = ||w_S - w_S'|| does not
// exceed the certificate's Delta.
func TestFitRowsNeighbourSensitivity(t *testing.T) {
	const n, d = 120, 3
	rows, y := neighbourRows(n, d)
	big := math.MaxFloat64
	repl := map[string][]float64{
		"huge+":     {big, big, big},
		"huge-":     {-big, -big, -big},
		"nan":       {math.NaN(), math.NaN(), math.NaN()},
		"mixnan":    {big, math.NaN(), -big},
		"atnorm":    {1, 0, 0},
		"overnorm":  {3, -3, 3},
		"subnormal": {5e-324, -5e-324, 0},
		"negzero":   {math.Copysign(0, -1), 0, 0},
		"flip":      nil, // same x, flipped label
	}
	doms := map[string]private.Domain{
		"norm":   {Classes: []float64{0, 1}, Norm: 1},
		"ranges": {Classes: []float64{0, 1}, Ranges: []private.Range{{-0.3, 0.3}, {-0.3, 0.3}, {-0.3, 0.3}}},
		"none":   {Classes: []float64{0, 1}},
	}
	knobs := map[string]private.Options{
		"gamma-auto": {Mechanism: perturb.Gamma, Auto: true},
		"gauss-hand": {Mechanism: perturb.AnalyticGaussian, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Passes: 3, Batch: 4}},
		"lap-l1":     {Mechanism: perturb.Laplace, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.5}, Passes: 2}},
		"rule":       {Select: &selection.Config{}},
		"gamma-clip": {Mechanism: perturb.Gamma, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Passes: 2, Clip: 0.3}},
		"gamma-avg":  {Mechanism: perturb.Gamma, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Passes: 2, Average: true}},
	}
	budget := dp.Budget{Epsilon: 1, Delta: 1e-6}
	for dn, dom := range doms {
		for kn, o := range knobs {
			for rn, r := range repl {
				for _, at := range []int{0, n - 1} {
					fit := func(rs [][]float64, ys []float64) (*private.Fitted, error) {
						o := o
						o.Seed, o.Noise = 3, perturb.Seeded(9)
						b := budget
						if o.Mechanism == perturb.Gamma || o.Mechanism == perturb.Laplace {
							b.Delta = 0
						}
						return private.FitRows(context.Background(), rs, ys, dom, b, o)
					}
					a, err := fit(rows, y)
					if err != nil {
						t.Fatalf("%s/%s: %v", dn, kn, err)
					}
					rows2, y2 := append([][]float64(nil), rows...), append([]float64(nil), y...)
					if r == nil {
						y2[at] = 1 - y2[at]
					} else {
						rows2[at] = r
					}
					b, err := fit(rows2, y2)
					if err != nil {
						t.Errorf("%s/%s/%s@%d: refused on one row: %v", dn, kn, rn, at, err)
						continue
					}
					if len(a.Model.W) != len(b.Model.W) {
						t.Errorf("%s/%s/%s@%d: width %d vs %d", dn, kn, rn, at, len(a.Model.W), len(b.Model.W))
						continue
					}
					ca, cb := a.Certificate, b.Certificate
					if ca.Mechanism != cb.Mechanism || ca.L2Sensitivity != cb.L2Sensitivity || ca.NoiseScale != cb.NoiseScale {
						t.Errorf("%s/%s/%s@%d: public constants differ: %v/%v %v/%v", dn, kn, rn, at, ca.Mechanism, cb.Mechanism, ca.L2Sensitivity, cb.L2Sensitivity)
					}
					if len(a.Warnings) != len(b.Warnings) {
						t.Logf("%s/%s/%s@%d: warnings differ (from the release: allowed) %q vs %q", dn, kn, rn, at, a.Warnings, b.Warnings)
					}
					if rn == "huge+" && at == 0 {
						t.Logf("%s/%s: mech %s est %v", dn, kn, ca.Mechanism, ca.EstimatedBounds != nil)
					}
					if ca.Mechanism == perturb.Objective || ca.Mechanism == "stump" || ca.EstimatedBounds != nil {
						continue // no L2 sensitivity of w / bounds paid separately
					}
					diff := make([]float64, len(a.Model.W))
					floats.SubTo(diff, a.Model.W, b.Model.W)
					dist := floats.Norm(diff, 2)
					if ca.Mechanism == perturb.Laplace {
						dist = floats.Norm(diff, 1)
						if dist > ca.L1Sensitivity*(1+1e-9) {
							t.Errorf("%s/%s/%s@%d: ||w-w'||_1 = %.6g > Delta_1 = %.6g", dn, kn, rn, at, dist, ca.L1Sensitivity)
						}
						continue
					}
					if rn == "huge+" && at == 0 {
						t.Logf("%s/%s: %s ratio %.3f route %.60s", dn, kn, ca.Mechanism, dist/ca.L2Sensitivity, ca.SensitivityRoute)
					}
					if dist > ca.L2Sensitivity*(1+1e-9) {
						t.Errorf("%s/%s/%s@%d: %s ||w-w'|| = %.6g > Delta = %.6g (route %s)", dn, kn, rn, at, ca.Mechanism, dist, ca.L2Sensitivity, ca.SensitivityRoute)
					}
				}
			}
		}
	}
}

// TestFitRowsNegativeZeroLabel: y = -0.0 equals the declared class 0
// (FitMatrix's own check accepts it), so it must train as class 0, not as a
// null row: a non-private fit of the same labels written as -0 and as +0
// gives the same weights.
func TestFitRowsNegativeZeroLabel(t *testing.T) {
	rows, y := neighbourRows(200, 3)
	yneg := append([]float64(nil), y...)
	for i := range yneg {
		if yneg[i] == 0 {
			yneg[i] = math.Copysign(0, -1)
		}
	}
	dom := private.Domain{Classes: []float64{0, 1}, Norm: 1}
	opts := private.Options{Diagnostics: true}
	a, err := private.FitRows(context.Background(), rows, y, dom, dp.Budget{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := private.FitRows(context.Background(), rows, yneg, dom, dp.Budget{}, opts)
	if err != nil {
		t.Fatalf("-0 label refused: %v", err)
	}
	if b.Diagnostics.NullRows != a.Diagnostics.NullRows {
		t.Errorf("labels -0 make %d null rows, +0 make %d", b.Diagnostics.NullRows, a.Diagnostics.NullRows)
	}
	for j := range a.Model.W {
		if a.Model.W[j] != b.Model.W[j] {
			t.Fatalf("weights differ: %v vs %v", a.Model.W, b.Model.W)
		}
	}
}
