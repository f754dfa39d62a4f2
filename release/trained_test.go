package release

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestTrainedReleaseOnce checks that the trained weights are released once,
// whoever holds a copy of the handle, and wiped.
func TestTrainedReleaseOnce(t *testing.T) {
	tab := fittest.Blobs(40, 2, []string{"a", "b"}, 1)
	enc, err := tab.Encode(datasets.Schema{Label: "y", Classes: []string{"a", "b"}}, losses.Binary)
	if err != nil {
		t.Fatal(err)
	}
	p, err := preprocess.NewRowMap(preprocess.None, enc.Features, datasets.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, enc.N)
	for i := range idx {
		idx[i] = i
	}
	X, y, _, err := p.Rows(enc, idx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.1}, Schedule: trainer.BoundedInverseT}
	train := func() *Trained {
		tr, err := TrainRows(context.Background(), X, y, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	// A simulation publishes its seed, so it gives the weights back: no
	// release of them afterwards.
	sim := train()
	s1, simCert, err := sim.Simulate(perturb.Gamma, 1, 0, 5)
	if err != nil || simCert.Private || simCert.NoiseSeed == nil || *simCert.NoiseSeed != 5 {
		t.Fatalf("Simulate: %v, %+v", err, simCert)
	}
	s2, _, _ := sim.Simulate(perturb.Gamma, 1, 0, 5)
	if !slices.Equal(s1.W, s2.W) {
		t.Error("two simulations with one noise seed differ")
	}
	if _, _, err := sim.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("release after a simulation: %v, want ErrReleased", err)
	}
	// Simulate and Reveal come in either order: after a simulation the
	// weights are no longer secret, and Reveal gives them.
	if m, err := sim.Reveal(); err != nil || len(m.W) != 3 {
		t.Errorf("Reveal after a simulation: %v", err)
	}

	tr := train()
	w := tr.s.model.W
	cp := *tr
	if _, _, err := tr.Release(perturb.Gamma, 1, 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, v := range w {
		if v != 0 {
			t.Fatal("the trained weights were not wiped")
		}
	}
	if _, _, err := cp.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("second release through a copy: %v", err)
	}
	if _, _, err := tr.Simulate(perturb.Gamma, 1, 0, 5); !errors.Is(err, ErrReleased) {
		t.Errorf("simulation after the release: %v", err)
	}
	if _, err := tr.Reveal(); !errors.Is(err, ErrReleased) {
		t.Errorf("reveal after the release: %v", err)
	}
	// Revealed weights are no longer secret: no release of them.
	tr2 := train()
	if m, err := tr2.Reveal(); err != nil || len(m.W) != 3 {
		t.Fatalf("Reveal: %v", err)
	}
	if _, _, err := tr2.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("release after Reveal: %v", err)
	}
	if _, _, err := tr2.Simulate(perturb.Gamma, 1, 0, 1); err != nil {
		t.Errorf("simulation after Reveal: %v", err)
	}

	// A hold: its runs are not releases on their own; while it holds the
	// weights nothing else releases them (and nothing waits for it); a
	// seeded hold releases with seeded noise only; after a secure run,
	// Close uses the weights up.
	held := train()
	hp, err := held.Prepared(perturb.Gamma, dp.Budget{Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	seededHold, err := NewHold([]Prepared{hp}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seededHold.Release(context.Background(), 0, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("secure release from a seeded hold: %v, want ErrConfig", err)
	}
	if _, err := seededHold.Release(context.Background(), 1, perturb.Seeded(1)); !errors.Is(err, ErrConfig) {
		t.Errorf("release 1 of a hold of 1: %v, want ErrConfig", err)
	}
	if out, err := seededHold.Release(context.Background(), 0, perturb.Seeded(1)); err != nil || out.Certificate.Private {
		t.Errorf("seeded run of a seeded hold: %v, private %v", err, out != nil && out.Certificate.Private)
	}
	seededHold.Close()
	hold, err := NewHold([]Prepared{hp}, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		out, err := hold.Release(context.Background(), 0, nil)
		if err != nil || out.Certificate.Private {
			t.Fatalf("run of a secure hold: %v; a run's certificate must not claim a private release on its own", err)
		}
	}
	if _, _, err := held.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrHeld) {
		t.Errorf("release while held: %v, want ErrHeld", err)
	}
	if _, _, err := held.Simulate(perturb.Gamma, 1, 0, 1); !errors.Is(err, ErrHeld) {
		t.Errorf("simulation while held: %v, want ErrHeld", err)
	}
	hold.Close()
	hold.Close()
	if _, err := hold.Release(context.Background(), 0, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("release from a closed hold: %v, want ErrReleased", err)
	}
	if _, _, err := held.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("release after a secure hold ran: %v, want ErrReleased (used up)", err)
	}
	var none *Hold
	none.Close()
	if _, err := none.Release(context.Background(), 0, nil); err == nil {
		t.Error("release from a nil hold: no error")
	}
}

// TestDropoutWarning checks the warning of a dropout that clipping makes
// useless (G <= s L, one output; logistic: L = kappa), and silence where s
// lowers Delta.
func TestDropoutWarning(t *testing.T) {
	lg := losses.Logistic{}
	for _, tc := range []struct {
		name string
		cfg  trainer.Config
		warn bool
	}{
		{"clip below s L", trainer.Config{Loss: lg, Clip: 0.1, Dropout: 0.5}, true},
		{"clip at s L", trainer.Config{Loss: lg, Clip: 1, Dropout: 0.5, Kappa: 2}, true},
		{"clip above s L", trainer.Config{Loss: lg, Clip: 0.8, Dropout: 0.5}, false},
		{"no clip", trainer.Config{Loss: lg, Dropout: 0.5}, false},
		{"no dropout", trainer.Config{Loss: lg, Clip: 0.1, Dropout: 1}, false},
		{"softmax", trainer.Config{Loss: losses.Softmax{}, Classes: 3, Clip: 0.1, Dropout: 0.5}, false},
		{"no loss", trainer.Config{Clip: 0.1, Dropout: 0.5}, false},
	} {
		if got := DropoutWarning(tc.cfg); (got != "") != tc.warn || len(got) > 120 {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
}
