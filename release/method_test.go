package release

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// budgetOf returns a budget the method can spend.
func budgetOf(m Method) dp.Budget {
	if m.Name().Pure() {
		return dp.Budget{Epsilon: 1}
	}
	return dp.Budget{Epsilon: 0.8, Delta: 1e-5}
}

func TestMethodsRegistry(t *testing.T) {
	var names []dp.Mechanism
	for _, m := range Methods() {
		names = append(names, m.Name())
		got, err := Lookup(m.Name())
		if err != nil || got != m {
			t.Errorf("Lookup(%s) = %v, %v", m.Name(), got, err)
		}
		if err := m.CheckBudget(budgetOf(m)); err != nil {
			t.Errorf("%s: %v", m.Name(), err)
		}
		wrong := budgetOf(m)
		wrong.Delta = 1e-5 - wrong.Delta // delta 0 for a non-pure method and positive for a pure one
		if err := m.CheckBudget(wrong); TakesStumpRows(m) != (err == nil) || err != nil && !errors.Is(err, dp.ErrBudget) {
			// The stump accepts a delta it does not use (its certificate
			// says so); the other pure methods refuse one.
			t.Errorf("%s: budget %+v: %v, want dp.ErrBudget", m.Name(), wrong, err)
		}
	}
	want := append(perturb.Mechanisms(), perturb.TrainingMechanisms()...)
	if !slices.Equal(names, want) {
		t.Errorf("methods %v, want %v", names, want)
	}
	if _, err := Lookup("nope"); !errors.Is(err, perturb.ErrMechanism) {
		t.Errorf("unknown name: %v", err)
	}
	// Every method has its other two roles, found by name.
	for _, m := range Methods() {
		tu, errT := LookupTuner(m.Name())
		v, errV := LookupVerifier(m.Name())
		if errT != nil || errV != nil || tu == nil || v == nil {
			t.Errorf("%s: tuner %v (%v), verifier %v (%v)", m.Name(), tu, errT, v, errV)
		}
	}
	if _, err := LookupTuner("nope"); !errors.Is(err, perturb.ErrMechanism) {
		t.Errorf("unknown tuner: %v", err)
	}
	if _, err := LookupVerifier("nope"); !errors.Is(err, perturb.ErrMechanism) {
		t.Errorf("unknown verifier: %v", err)
	}
}

// TestRegister: a method registered from another package takes its place
// in dp's order (packages stump and release/dpsgd, imported by
// registry_test.go); a second registration or a name that is not a release
// mechanism panics; and a program that did not import the package of the
// stump or of DP-SGD is told to import it.
func TestRegister(t *testing.T) {
	var names []dp.Mechanism
	for _, m := range Methods() {
		names = append(names, m.Name())
	}
	if want := dp.ReleaseMechanisms(); !slices.Equal(names, want) {
		t.Fatalf("methods %v, want dp's order %v", names, want)
	}
	st, err := lookup(perturb.Stump)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []registered{st, fakeMethod{st, "permute-and-flip"}, fakeMethod{st, "nope"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%s) did not panic", m.Name())
				}
			}()
			Register(m)
		}()
	}
	for name, pkg := range map[dp.Mechanism]string{perturb.Stump: "stump", perturb.DPSGD: "release/dpsgd"} {
		without := slices.DeleteFunc(slices.Clone(methods), func(m registered) bool { return m.Name() == name })
		_, err = lookupIn(without, name)
		if !errors.Is(err, perturb.ErrMechanism) || !strings.HasSuffix(err.Error(), "import github.com/stabpriv/stabpriv/"+pkg) {
			t.Errorf("%s unregistered: %v, want the package to import", name, err)
		}
	}
}

// fakeMethod is a registered method under another name.
type fakeMethod struct {
	registered
	name dp.Mechanism
}

func (f fakeMethod) Name() dp.Mechanism { return f.name }

// TestMethodsRebuild releases with every method and checks that Rebuild
// gives the certificate and the stability analysis of the release from
// the certificate's published constants alone, and that a changed constant
// gives another certificate.
func TestMethodsRebuild(t *testing.T) {
	X, y := objectiveRows()
	n, d := X.Dims()
	ctx := context.Background()
	notes, extra := []string{"a note of the rows"}, []string{"a note of the release"}
	for _, m := range methods {
		if TakesStumpRows(m) {
			continue // other rows and no knobs: TestStumpMethod
		}
		t.Run(string(m.Name()), func(t *testing.T) {
			cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Reg: regularizers.ElasticNet{Lambda: 0.05}, Schedule: trainer.BoundedInverseT, Passes: 2, Seed: 4}
			if err := m.CheckConfig(cfg); err != nil {
				t.Fatal(err)
			}
			b := budgetOf(m)
			cfg, rule, err := m.Auto(cfg, n, d, b)
			if err != nil || rule == "" {
				t.Fatalf("Auto: %q, %v", rule, err)
			}
			p, err := m.Prepare(ctx, Rows{X: X, Y: y, Config: cfg, Notes: notes}, b)
			if err != nil {
				t.Fatal(err)
			}
			if p.Budget() != b || p.Mechanism() != m.Name() {
				t.Errorf("prepared for %+v by %s", p.Budget(), p.Mechanism())
			}
			if k, dd := p.Shape(); k != 1 || dd != d {
				t.Errorf("shape %d x %d", k, dd)
			}
			out, err := p.Release(ctx, perturb.Seeded(3), extra...)
			if err != nil {
				t.Fatal(err)
			}
			got := out.Certificate
			if got.WeightsSHA256 != dp.WeightsSHA256(out.Model.W) || got.NoiseSeed == nil || *got.NoiseSeed != 3 || len(got.Ledger) == 0 {
				t.Errorf("certificate: hash %s, seed %v, ledger %v", got.WeightsSHA256, got.NoiseSeed, got.Ledger)
			}
			var sum dp.Budget
			for _, c := range got.Ledger {
				sum.Epsilon += c.Epsilon
				sum.Delta += c.Delta
			}
			if sum.Epsilon > b.Epsilon*(1+1e-12) || sum.Delta > b.Delta*(1+1e-12) {
				t.Errorf("the ledger spends %+v of %+v", sum, b)
			}
			pub := Public{Classes: 2, K: 1, D: d, Notes: notes, Extra: extra, Auto: true}
			want, rep, err := m.Rebuild(got, pub)
			if err != nil {
				t.Fatal(err)
			}
			want.WeightsSHA256 = got.WeightsSHA256
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Errorf("rebuilt certificate differs:\n%s\n%s", wj, gj)
			}
			rj, _ := json.Marshal(rep)
			pj, _ := json.Marshal(p.Stability())
			if string(rj) != string(pj) {
				t.Errorf("rebuilt stability analysis differs:\n%s\n%s", rj, pj)
			}
			// A published constant changed: another certificate, or an
			// error naming the inconsistency.
			forged := *got
			run := *got.Run
			run.Lambda *= 2
			forged.Run = &run
			if again, _, err := m.Rebuild(&forged, pub); err == nil {
				aj, _ := json.Marshal(again)
				fj, _ := json.Marshal(&forged)
				if string(aj) == string(fj) {
					t.Error("a doubled lambda rebuilds to the forged certificate")
				}
			}
		})
	}
}

// TestPreparedTrainedAfterRelease checks, for every method, that
// Prepared.Trained gives the non-private weights before the release and
// fails with ErrReleased, without calling f, after Release or after a Hold
// that used the release up, as the Prepared interface states.
func TestPreparedTrainedAfterRelease(t *testing.T) {
	X, y := objectiveRows()
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Reg: regularizers.ElasticNet{Lambda: 0.05}, Kappa: 1, Passes: 2}
	ctx := context.Background()
	for _, m := range Methods() {
		if TakesStumpRows(m) {
			continue // other rows, no knobs, never held: TestStumpMethod
		}
		prepare := func() Prepared {
			t.Helper()
			p, err := m.Prepare(ctx, Rows{X: X, Y: y, Config: cfg}, budgetOf(m))
			if err != nil {
				t.Fatalf("%s: %v", m.Name(), err)
			}
			return p
		}
		called := false
		f := func(w *trainer.Model, _ trainer.Stats) { called = w != nil && len(w.W) > 0 }
		p := prepare()
		if err := p.Trained(ctx, f); err != nil || !called {
			t.Errorf("%s: Trained before the release: %v, f called %v", m.Name(), err, called)
		}
		if _, err := p.Release(ctx, perturb.Seeded(3)); err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		called = false
		if err := p.Trained(ctx, f); !errors.Is(err, ErrReleased) || called {
			t.Errorf("%s: Trained after Release: %v, f called %v; want ErrReleased", m.Name(), err, called)
		}
		p = prepare()
		h, err := NewHold([]Prepared{p}, false)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		if _, err := h.Release(ctx, 0, nil); err != nil {
			t.Fatalf("%s: a run of the hold: %v", m.Name(), err)
		}
		h.Close()
		if err := p.Trained(ctx, f); !errors.Is(err, ErrReleased) || called {
			t.Errorf("%s: Trained after a Hold used it up: %v, f called %v; want ErrReleased", m.Name(), err, called)
		}
	}
}

// TestMethodSGD checks that a method reports SGD exactly when
// Trained.Prepared releases an SGD run with it, and that SGDList names
// those methods.
func TestMethodSGD(t *testing.T) {
	tr := trainedRows(t)
	var sgd []string
	for _, m := range Methods() {
		_, err := tr.Prepared(m.Name(), budgetOf(m))
		if m.SGD() != (err == nil) {
			t.Errorf("%s: SGD %v, but Trained.Prepared gives %v", m.Name(), m.SGD(), err)
		}
		if m.SGD() {
			sgd = append(sgd, string(m.Name()))
		}
	}
	if len(sgd) == 0 || len(sgd) == len(Methods()) {
		t.Errorf("SGD methods %v: want some, not all", sgd)
	}
	if got, want := SGDList(), strings.Join(sgd, ", "); got != want {
		t.Errorf("SGDList %q, want %q", got, want)
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
