package private

import (
	"context"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// TestFitRuleStump: the default (the rule, the zero selection.Config)
// releases a stump on a wide binary table (more mapped features than
// training rows, selection.StumpFirst) with declared bounds, which
// verifies, and keeps a linear mechanism on a narrow one and with a
// projection.
func TestFitRuleStump(t *testing.T) {
	wide := fittest.Blobs(80, 300, []string{"a", "b"}, 3)
	narrow := fittest.Blobs(400, 5, []string{"a", "b"}, 3)
	for _, c := range []struct {
		name  string
		tab   *datasets.Table
		opts  Options
		stump bool
	}{
		{"wide", wide, Options{}, true},
		{"narrow", narrow, Options{}, false},
		{"wide, projected", wide, Options{Project: 10}, false},
	} {
		schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(c.tab, -6, 6)}
		c.opts.Select = &selection.Config{}
		c.opts.Noise, c.opts.Seed, c.opts.TestFrac = perturb.Seeded(1), 2, 0.2
		r, err := Fit(context.Background(), c.tab, schema, dp.Budget{Epsilon: 1}, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := r.Certificate.Mechanism == perturb.Stump; got != c.stump || r.Preprocessing.Stump != c.stump {
			t.Errorf("%s: mechanism %s, stump map %v; want a stump %v", c.name, r.Certificate.Mechanism, r.Preprocessing.Stump, c.stump)
		}
		if _, _, err := modelfile.Verify(r); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestFitStumpEstimatedBounds: a stump named on a table without declared
// bounds spends the bounds' share on their estimate and the rest on the
// choice; the file verifies and its ledger lists both, in order, summing
// to the claim.
func TestFitStumpEstimatedBounds(t *testing.T) {
	tab := fittest.Blobs(6000, 2, []string{"a", "b"}, 4)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 2}, Options{Mechanism: perturb.Stump, Auto: true, Noise: perturb.Seeded(2), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := modelfile.Verify(r); err != nil {
		t.Fatal(err)
	}
	c := r.Certificate
	if !r.Preprocessing.Estimated || len(c.Ledger) != 2 || c.Ledger[1].Mechanism != perturb.Stump || c.Ledger[1].Epsilon != dp.Rest(2, c.Ledger[0].Epsilon) {
		t.Errorf("estimated %v, ledger %+v", r.Preprocessing.Estimated, c.Ledger)
	}
}

// TestFitStumpRefuses: a stump without the bounds preprocessing (its grid
// is the bounds' mapped range), with a projection or principal components,
// or for more classes than the multiclass stump's cap (stump.MaxClasses)
// is refused before any row is read.
func TestFitStumpRefuses(t *testing.T) {
	tab := fittest.Blobs(50, 3, []string{"a", "b"}, 4)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -6, 6)}
	eleven := schema
	eleven.Classes = strings.Split("abcdefghijk", "")
	for _, c := range []struct {
		name   string
		schema datasets.Schema
		opts   Options
		b      dp.Budget
		want   string
	}{
		{"preprocessing none", datasets.Schema{Label: "y", Classes: []string{"a", "b"}}, Options{Preprocess: preprocess.None}, dp.Budget{Epsilon: 1}, "preprocessing bounds"},
		{"projection", schema, Options{Project: 2}, dp.Budget{Epsilon: 1}, "random projection"},
		{"principal components", schema, Options{PCA: 2}, dp.Budget{Epsilon: 1, Delta: 1e-5}, "principal components"},
		{"eleven classes", eleven, Options{}, dp.Budget{Epsilon: 1}, "2 to 10 classes"},
	} {
		c.opts.Mechanism, c.opts.Auto = perturb.Stump, true
		if _, err := NewPlan(c.schema, c.b, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}
