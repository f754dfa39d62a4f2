package release

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
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
	tr, err := TrainRows(context.Background(), X, y, trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.1}, Schedule: trainer.BoundedInverseT}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := tr.s.model.W
	sim, simCert, err := tr.Simulate(perturb.Gamma, 1, 0, 5)
	if err != nil || simCert.Private || simCert.NoiseSeed == nil || *simCert.NoiseSeed != 5 {
		t.Fatalf("Simulate: %v, %+v", err, simCert)
	}
	sim2, _, _ := tr.Simulate(perturb.Gamma, 1, 0, 5)
	if !slices.Equal(sim.W, sim2.W) {
		t.Error("two simulations with one noise seed differ")
	}
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
	tr2, err := TrainRows(context.Background(), X, y, trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.1}, Schedule: trainer.BoundedInverseT}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := tr2.Reveal(); err != nil || len(m.W) != 3 {
		t.Fatalf("Reveal: %v", err)
	}
	if _, _, err := tr2.Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, ErrReleased) {
		t.Errorf("release after Reveal: %v", err)
	}
	if _, _, err := tr2.Simulate(perturb.Gamma, 1, 0, 1); err != nil {
		t.Errorf("simulation after Reveal: %v", err)
	}
}
