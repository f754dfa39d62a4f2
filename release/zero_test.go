package release

import (
	"context"
	"errors"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestZeroTrained checks that every method of a zero or nil Trained value
// returns an error wrapping ErrConfig (or, for the getters, the zero value)
// instead of panicking.
func TestZeroTrained(t *testing.T) {
	for name, tr := range map[string]*Trained{"zero": {}, "nil": nil} {
		if _, _, err := tr.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("%s Trained: Release: %v, want ErrConfig", name, err)
		}
		if _, _, err := tr.Simulate(perturb.Gamma, 1, 0, 1); !errors.Is(err, ErrConfig) {
			t.Errorf("%s Trained: Simulate: %v, want ErrConfig", name, err)
		}
		if _, err := tr.Reveal(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s Trained: Reveal: %v, want ErrConfig", name, err)
		}
		if _, err := tr.Sensitivity(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s Trained: Sensitivity: %v, want ErrConfig", name, err)
		}
		if _, err := tr.Prepared(perturb.Gamma, dp.Budget{Epsilon: 1}); !errors.Is(err, ErrConfig) {
			t.Errorf("%s Trained: Prepared: %v, want ErrConfig", name, err)
		}
		if run := tr.Run(); run.N != 0 || run.PassMaxStep != nil {
			t.Errorf("%s Trained: Run %+v, want the zero run", name, run)
		}
		if rep := tr.Report(); rep != nil {
			t.Errorf("%s Trained: Report %+v, want nil", name, rep)
		}
		if _, ok := tr.metric(func(*trainer.Model) float64 { return 1 }); ok {
			t.Errorf("%s Trained: metric evaluated weights it does not hold", name)
		}
	}
}

// trainedRows trains on objectiveRows by SGD.
func trainedRows(t *testing.T) *Trained {
	t.Helper()
	X, y := objectiveRows()
	cfg := trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.05}, Schedule: trainer.BoundedInverseT, Passes: 2}
	tr, err := TrainRows(context.Background(), X, y, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestHoldGuards checks that a Release of an index outside the hold (every
// index of a zero or nil Hold) is an error wrapping ErrConfig that leaves
// the hold as it was, and that closing a nil Hold does nothing.
func TestHoldGuards(t *testing.T) {
	ctx := context.Background()
	var zero Hold
	if _, err := zero.Release(ctx, 0, perturb.Seeded(1)); !errors.Is(err, ErrConfig) {
		t.Errorf("zero Hold: Release(0): %v, want ErrConfig", err)
	}
	var nilHold *Hold
	if _, err := nilHold.Release(ctx, 0, perturb.Seeded(1)); !errors.Is(err, ErrConfig) {
		t.Errorf("nil Hold: Release(0): %v, want ErrConfig", err)
	}
	nilHold.Close()

	p, err := trainedRows(t).Prepared(perturb.Gamma, dp.Budget{Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHold([]Prepared{p}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{-1, 1, 7} {
		if _, err := h.Release(ctx, i, perturb.Seeded(1)); !errors.Is(err, ErrConfig) {
			t.Errorf("a hold on 1 release: Release(%d): %v, want ErrConfig", i, err)
		}
	}
	if out, err := h.Release(ctx, 0, perturb.Seeded(1)); err != nil || out.Model == nil {
		t.Errorf("Release(0) after refused indices: %v", err)
	}
	h.Close()
	if _, err := h.Release(ctx, 0, perturb.Seeded(1)); !errors.Is(err, ErrReleased) {
		t.Errorf("Release after Close: %v, want ErrReleased", err)
	}
}

// TestNilCertificate checks that every method refuses a nil certificate,
// or one without a run record, with an error wrapping ErrConfig, and so
// does OutputCertificate a nil run.
func TestNilCertificate(t *testing.T) {
	for _, m := range methods {
		for name, c := range map[string]*Certificate{"nil": nil, "no run": {Claim: dp.Claim{Mechanism: m.Name(), Epsilon: 1}}} {
			if err := m.CheckWeights(c, Public{}, []float64{0}); !errors.Is(err, ErrConfig) {
				t.Errorf("%s: CheckWeights of a %s certificate: %v, want ErrConfig", m.Name(), name, err)
			}
			if _, _, err := m.Rebuild(c, Public{}); !errors.Is(err, ErrConfig) {
				t.Errorf("%s: Rebuild of a %s certificate: %v, want ErrConfig", m.Name(), name, err)
			}
		}
	}
	cal, err := perturb.Calibrate(perturb.Gamma, 1, 0, testSens, 6)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := OutputCertificate(cal, testSens, nil, perturb.SourceSecure, nil); !errors.Is(err, ErrConfig) || c != nil {
		t.Errorf("OutputCertificate of a nil run: %v, %v; want nil and ErrConfig", c, err)
	}
	_, run := testModel(1, 6)
	if c, err := OutputCertificate(cal, testSens, run, perturb.SourceSecure, nil); err != nil || c.Run == nil || c.Run.N != run.N {
		t.Errorf("OutputCertificate: %+v, %v", c, err)
	}
}
