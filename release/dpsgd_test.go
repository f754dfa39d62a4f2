package release

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// dpsgdRelease makes a seeded DP-SGD release of objectiveRows: expected
// batch 30 of 300 rows, 4 passes (T = 40), C = 0.7, at (1, 1e-5).
func dpsgdRelease(t *testing.T, seed uint64) (*Outcome, dp.Budget) {
	t.Helper()
	X, y := objectiveRows()
	b := dp.Budget{Epsilon: 1, Delta: 1e-5}
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Batch: 30, Passes: 4, Clip: 0.7, Eta: 0.5, Seed: 2}
	p, err := dpsgdMethod{}.Prepare(context.Background(), Rows{X: X, Y: y, Config: cfg}, b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Release(context.Background(), perturb.Seeded(seed))
	if err != nil {
		t.Fatal(err)
	}
	return out, b
}

// TestDPSGDAccountant checks the certificate's numbers against an
// independent call of the accountant: the noise multiplier is the
// smallest that meets (eps/2, delta/(1 + exp(eps/2))) under add/remove-one
// neighbours, the eps it states is the accountant's at that multiplier,
// tight to 1e-6 of eps/2, and its replace-one consequence is within the
// claim.
func TestDPSGDAccountant(t *testing.T) {
	out, b := dpsgdRelease(t, 3)
	rec := out.Certificate.Run.DPSGD
	if rec == nil {
		t.Fatal("no dp_sgd record")
	}
	// The rate the batches are drawn at: 30/300 rounded down to a
	// multiple of 2^-64, just below the float64 0.1.
	q := trainer.PoissonRate(300, 30)
	if rec.SampleRate != q || q >= 0.1 || rec.Steps != 40 || rec.NoiseStd != rec.NoiseMultiplier*0.7 {
		t.Errorf("record %+v, want q = %v, T = 40, noise std sigma C", rec, q)
	}
	dprime := b.Delta / (1 + math.Exp(b.Epsilon/2))
	sigma, _, err := accountant.NoiseMultiplier(q, 40, dp.Budget{Epsilon: 0.5, Delta: dprime}, accountant.Improved, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := accountant.SampledGaussian{SampleRate: q, NoiseMultiplier: rec.NoiseMultiplier, Steps: 40}.Epsilon(rec.AddRemoveDelta, accountant.Improved, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := g.ReplaceOne()
	switch {
	case rec.NoiseMultiplier != sigma:
		t.Errorf("noise multiplier %v, the accountant's %v", rec.NoiseMultiplier, sigma)
	case rec.AddRemoveEpsilon != g.Epsilon || rec.Order != g.Order || rec.Conversion != "improved":
		t.Errorf("add/remove eps %v at order %v (%s), the accountant's %v at %v", rec.AddRemoveEpsilon, rec.Order, rec.Conversion, g.Epsilon, g.Order)
	case g.Epsilon > 0.5 || g.Epsilon < 0.5*(1-1e-6):
		t.Errorf("add/remove eps %v, want just below eps/2 = 0.5", g.Epsilon)
	case rep.Epsilon > b.Epsilon || rep.Delta > b.Delta || rec.ReplaceOneEpsilon != rep.Epsilon || rec.ReplaceOneDelta != rep.Delta:
		t.Errorf("replace-one %+v (record %v, %v) against the claim %+v", rep, rec.ReplaceOneEpsilon, rec.ReplaceOneDelta, b)
	}
	if math.Abs(rec.AddRemoveDelta-dprime) > 1e-20 {
		t.Errorf("add/remove delta %v, want %v", rec.AddRemoveDelta, dprime)
	}
}

// TestDPSGDRebuildRefusesEdits checks that Rebuild (without automatic
// knobs) gives the released certificate, and another one when the noise
// multiplier, the steps, the sample rate, the passes, the expected batch
// or the clipping norm is edited.
func TestDPSGDRebuildRefusesEdits(t *testing.T) {
	out, _ := dpsgdRelease(t, 3)
	got := out.Certificate
	pub := Public{Classes: 2, K: 1, D: 4}
	js := func(c *Certificate) string { b, _ := json.Marshal(c); return string(b) }
	want, _, err := dpsgdMethod{}.Rebuild(got, pub)
	if err != nil {
		t.Fatal(err)
	}
	want.WeightsSHA256 = got.WeightsSHA256
	if js(want) != js(got) {
		t.Fatalf("rebuilt certificate differs:\n%s\n%s", js(want), js(got))
	}
	for name, edit := range map[string]func(r *trainer.Run){
		"noise multiplier": func(r *trainer.Run) { r.DPSGD.NoiseMultiplier *= 1.5 },
		"noise std":        func(r *trainer.Run) { r.DPSGD.NoiseStd *= 1.5 },
		"steps":            func(r *trainer.Run) { r.DPSGD.Steps-- },
		"sample rate":      func(r *trainer.Run) { r.DPSGD.SampleRate /= 2 },
		"passes":           func(r *trainer.Run) { r.Passes++ },
		"batch":            func(r *trainer.Run) { r.Batch-- },
		"clip":             func(r *trainer.Run) { r.Clip = 2 },
		"add/remove eps":   func(r *trainer.Run) { r.DPSGD.AddRemoveEpsilon /= 2 },
	} {
		forged := *got
		run := *got.Run
		rec := *run.DPSGD
		run.DPSGD = &rec
		edit(&run)
		forged.Run = &run
		again, _, err := dpsgdMethod{}.Rebuild(&forged, pub)
		if err == nil {
			again.WeightsSHA256 = got.WeightsSHA256
			if js(again) == js(&forged) {
				t.Errorf("edited %s: the rebuilt certificate is the forged one", name)
			}
		}
	}
}

// TestDPSGDReproducibleRelease checks that a seeded release is
// bit-reproducible and that another seed gives other weights.
func TestDPSGDReproducibleRelease(t *testing.T) {
	a, _ := dpsgdRelease(t, 3)
	b, _ := dpsgdRelease(t, 3)
	c, _ := dpsgdRelease(t, 4)
	if a.Certificate.WeightsSHA256 != b.Certificate.WeightsSHA256 {
		t.Error("two releases with the same seed differ")
	}
	if a.Certificate.WeightsSHA256 == c.Certificate.WeightsSHA256 {
		t.Error("another seed gives the same weights")
	}
}

// customSource is a caller-supplied source, which dp-sgd refuses for its
// coins.
type customSource struct{ perturb.Source }

func (customSource) Kind() string { return "mine" }

// TestDPSGDRefuses checks the budgets, settings and sources dp-sgd refuses.
func TestDPSGDRefuses(t *testing.T) {
	m := dpsgdMethod{}
	if err := m.CheckBudget(dp.Budget{Epsilon: 1}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("delta = 0: %v, want ErrBudget", err)
	}
	X, y := objectiveRows()
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Batch: 30, Passes: 4}
	if _, err := m.Prepare(context.Background(), Rows{X: X, Y: y, Config: cfg}, dp.Budget{Epsilon: 1, Delta: 0.01}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("delta >= 1/n: %v, want ErrBudget", err)
	}
	bad := cfg
	bad.Tolerance = 1e-3
	if err := m.CheckConfig(bad); !errors.Is(err, ErrConfig) {
		t.Errorf("a tolerance: %v, want ErrConfig", err)
	}
	p, err := m.Prepare(context.Background(), Rows{X: X, Y: y, Config: cfg}, dp.Budget{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Release(context.Background(), customSource{perturb.Seeded(1)}); !errors.Is(err, ErrConfig) {
		t.Errorf("a custom source: %v, want ErrConfig", err)
	}
}

// TestTakenKnobs: a method that releases an SGD run takes every SGD knob,
// DP-SGD takes its six (KnobTaker), the others none.
func TestTakenKnobs(t *testing.T) {
	all := []Knob{KnobPasses, KnobBatch, KnobStep, KnobSchedule, KnobClip, KnobAverage}
	for _, m := range Methods() {
		taken := TakenKnobs(m)
		switch {
		case m.SGD():
			if taken != nil {
				t.Errorf("%s: TakenKnobs %v, want nil", m.Name(), taken)
			}
			for _, k := range append(all, "engine", "dropout") {
				if !TakesKnob(m, k) {
					t.Errorf("%s does not take %s", m.Name(), k)
				}
			}
		case m.Name() == perturb.DPSGD:
			if !slices.Equal(taken, all) {
				t.Errorf("dp-sgd takes %v, want %v", taken, all)
			}
			if TakesKnob(m, "engine") || TakesKnob(m, "dropout") || !TakesKnob(m, KnobBatch) {
				t.Error("dp-sgd's TakesKnob disagrees with its knobs")
			}
		default:
			if taken != nil || TakesKnob(m, KnobBatch) {
				t.Errorf("%s takes %v", m.Name(), taken)
			}
		}
	}
}

// TestDPSGDCertificateText checks that a dp-sgd certificate's text does
// not print the L1 sensitivity and the uniform stability, which DP-SGD
// does not have, as values (the JSON keeps its zeros).
func TestDPSGDCertificateText(t *testing.T) {
	r, _ := dpsgdRelease(t, 3)
	s := r.Certificate.String()
	for _, bad := range []string{"beta = 0", "L1 = 0"} {
		if strings.Contains(s, bad) {
			t.Errorf("the text prints %q:\n%s", bad, s)
		}
	}
	if !strings.Contains(s, "uniform stability beta: not applicable for dp-sgd") || !strings.Contains(s, "L1 not applicable") {
		t.Errorf("the text does not say what is not applicable:\n%s", s)
	}
}
