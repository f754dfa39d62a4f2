package dpsgd

import (
	"errors"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestCalibrateDPSGD checks the exported calibration against the method's
// (the same sigma, q, T and guarantee, within the budget), its refusal of
// a pure budget, and that the exported certificate and coins are the
// method's.
func TestCalibrateDPSGD(t *testing.T) {
	b := dp.Budget{Epsilon: 1, Delta: 1e-5}
	got, err := Calibrate(b, 500, 25, 4)
	if err != nil {
		t.Fatal(err)
	}
	want, err := calibrate(b, 500, 25, 4, PLDAccountant)
	if err != nil {
		t.Fatal(err)
	}
	if got.NoiseMultiplier != want.sigma || got.SampleRate != trainer.PoissonRate(500, 25) || got.Steps != 80 || got.AddRemove.Epsilon != want.eps ||
		got.AddRemove.Delta != want.target.Delta || got.Accountant != PLDAccountant {
		t.Errorf("Calibrate %+v, the method's %+v", got, want)
	}
	if r := want.replaceOne(); r.Epsilon > 1 || r.Delta > 1e-5 {
		t.Errorf("replace-one %+v above the budget", r)
	}
	if _, err := Calibrate(dp.Budget{Epsilon: 1}, 500, 25, 4); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("a pure budget: %v, want dp.ErrBudget", err)
	}
	run, err := runRecord(trainer.Config{Loss: losses.Logistic{}, Batch: 25, Passes: 4, Clip: 1, Schedule: trainer.Constant, Eta: 0.5}, 500, 3, got.NoiseMultiplier)
	if err != nil {
		t.Fatal(err)
	}
	c1, err1 := Certificate(b, got, run, perturb.SourceSecure, nil)
	c2, err2 := certificate(b, want, run, perturb.SourceSecure, nil)
	if err1 != nil || err2 != nil || c1.String() != c2.String() {
		t.Errorf("Certificate differs from the method's (%v, %v)", err1, err2)
	}
	a, _ := Coins(perturb.Seeded(4))
	m, _ := coins(perturb.Seeded(4))
	if a.Uint64() != m.Uint64() {
		t.Error("Coins draws other coins than the method")
	}
}
