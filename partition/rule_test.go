package partition

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/selection"
)

// TestFitRule checks that a partitioned fit by the public rule (the
// selection.Rule Config, or the zero one) releases the model file that
// naming RuleMechanism with the automatic knobs releases, byte for byte
// with the same seeded noise, for a pure budget (gamma) and with delta
// (the analytic Gaussian), binary and multiclass; and that the rule's
// mechanism is the output family where the single fit's rule picks
// objective perturbation or AMP (the multiclass shapes).
func TestFitRule(t *testing.T) {
	for _, classes := range [][]string{{"a", "b"}, {"x", "y", "z"}} {
		shards := shardsOf(fittest.Blobs(400, 3, classes, 4), 3)
		schema := datasets.Schema{Label: "y", Classes: classes, Bounds: fittest.BoundsFor(shards[0], -3, 4)}
		for _, b := range []dp.Budget{{Epsilon: 1}, {Epsilon: 0.9, Delta: 1e-5}} {
			fit := func(opts private.Options) string {
				t.Helper()
				opts.Noise, opts.Seed, opts.TestFrac = perturb.Seeded(11), 3, 0.2
				r, err := Fit(context.Background(), cloneShards(shards), schema, b, opts, 4)
				if err != nil {
					t.Fatalf("%v %+v: %v", classes, b, err)
				}
				if !r.AutoKnobs || r.Selection != nil || r.Certificate == nil || r.Certificate.Epsilon != b.Epsilon || r.Certificate.Delta != b.Delta {
					t.Fatalf("%v %+v: auto knobs %v, selection %v, certificate %+v", classes, b, r.AutoKnobs, r.Selection, r.Certificate)
				}
				var w strings.Builder
				if err := r.Write(&w); err != nil {
					t.Fatal(err)
				}
				return w.String()
			}
			want := perturb.Gamma
			if b.Delta > 0 {
				want = perturb.AnalyticGaussian
			}
			if got := RuleMechanism(b); got != want {
				t.Fatalf("%+v: RuleMechanism %s, want %s", b, got, want)
			}
			if k := len(classes); k > 2 {
				if single := selection.RuleSetting(b, losses.Softmax{}, k, 320, 4, 1); single.Mechanism == want {
					t.Fatalf("%v %+v: the single fit's rule picks %s too; the case does not test the partitioned rule", classes, b, want)
				}
			}
			rule := fit(private.Options{Select: &selection.Config{Method: selection.Rule}})
			named := fit(private.Options{Mechanism: want, Auto: true})
			if rule != named {
				t.Errorf("%v %+v: the rule's release differs from %s with the automatic knobs", classes, b, want)
			}
			if zero := fit(private.Options{Select: &selection.Config{}}); zero != rule {
				t.Errorf("%v %+v: the zero selection.Config's release differs from the rule's", classes, b)
			}
			if !strings.Contains(rule, string(want)) {
				t.Errorf("%v %+v: the model file does not name %s", classes, b, want)
			}
			// The rule differs from naming another mechanism: the test
			// above can fail.
			other := perturb.Laplace
			if b.Delta > 0 {
				other = perturb.Gaussian
			}
			if fit(private.Options{Mechanism: other, Auto: true}) == rule {
				t.Errorf("%v %+v: %s releases the rule's model file", classes, b, other)
			}
		}
	}
}

// TestUseRule checks the options UseRule returns: unchanged without a
// selection, the rule's mechanism with the automatic knobs for the rule,
// and an error naming why for a private selection.
func TestUseRule(t *testing.T) {
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, All: &datasets.Bound{Lo: 0, Hi: 1}}
	b := dp.Budget{Epsilon: 0.5, Delta: 1e-6}
	named := private.Options{Mechanism: perturb.Laplace, Seed: 2}
	if got, err := UseRule(schema, dp.Budget{Epsilon: 1}, named); err != nil || got.Mechanism != perturb.Laplace || got.Auto {
		t.Errorf("a named mechanism: %+v, %v", got, err)
	}
	got, err := UseRule(schema, b, private.Options{Select: &selection.Config{}, Seed: 2})
	if err != nil || got.Mechanism != perturb.AnalyticGaussian || !got.Auto || got.Select != nil || got.Seed != 2 {
		t.Errorf("the rule: %+v, %v", got, err)
	}
	// A multiclass model at a budget where a single fit's rule releases
	// DP-SGD (selection.DPSGDFirst) keeps the output family: a partitioned
	// fit averages SGD runs.
	three := schema
	three.Classes = []string{"a", "b", "c"}
	big := dp.Budget{Epsilon: 1, Delta: 1e-9}
	if !selection.DPSGDFirst(big, 3, 1e6) {
		t.Fatal("the single fit's rule does not take dp-sgd at this budget")
	}
	if got, err := UseRule(three, big, private.Options{Select: &selection.Config{}}); err != nil || got.Mechanism != perturb.AnalyticGaussian {
		t.Errorf("three classes, %+v: %s (%v), want %s", big, got.Mechanism, err, perturb.AnalyticGaussian)
	}
	for _, m := range selection.Methods() {
		_, err := UseRule(schema, b, private.Options{Select: &selection.Config{Method: m}})
		if !errors.Is(err, private.ErrOptions) || !strings.Contains(err.Error(), "proven for a single fit") {
			t.Errorf("%s: %v, want a refusal naming why", m, err)
		}
	}
	if _, err := UseRule(schema, dp.Budget{Epsilon: -1}, private.Options{Select: &selection.Config{}}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("eps = -1: %v, want dp.ErrBudget", err)
	}
}
