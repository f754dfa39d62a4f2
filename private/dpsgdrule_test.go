package private

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/selection"
)

// TestRuleDPSGDPublicMap: on the public log map (rows too few for any
// feature scale) with more classes than the stump takes, the rule releases
// DP-SGD where selection.DPSGDFirst says so, not objective perturbation's
// family, and the forecast before training follows it (the warning of
// --mechanism dp-sgd, not AMP's); below the threshold it keeps AMP.
func TestRuleDPSGDPublicMap(t *testing.T) {
	const classes, cols = 12, 40
	r := rand.New(rand.NewPCG(5, 6))
	var names []string
	for j := range cols {
		names = append(names, fmt.Sprintf("x%d", j))
	}
	var labels []string
	for c := range classes {
		labels = append(labels, fmt.Sprintf("k%d", c))
	}
	table := func(n int) *datasets.Table {
		rows := make([][]string, n)
		for i := range rows {
			for range cols {
				rows[i] = append(rows[i], strconv.FormatFloat(r.NormFloat64()*100, 'g', -1, 64))
			}
			rows[i] = append(rows[i], labels[i%classes])
		}
		tab, err := datasets.NewTable("wide", append(names, "y"), rows)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	schema := datasets.Schema{Label: "y", Classes: labels}
	b := dp.Budget{Epsilon: 1, Delta: 1e-6}
	for _, c := range []struct {
		n    int
		want dp.Mechanism
	}{{600, perturb.DPSGD}, {200, perturb.AMP}} {
		tab := table(c.n)
		if selection.DPSGDFirst(b, classes, c.n) != (c.want == perturb.DPSGD) {
			t.Fatalf("n = %d: DPSGDFirst does not make the case", c.n)
		}
		opts := Options{Select: &selection.Config{}, Seed: 1}
		got, err := Fit(context.Background(), tab, schema, b, opts)
		if err != nil {
			t.Fatalf("n = %d: %v", c.n, err)
		}
		if p := got.Preprocessing; p.Estimated || p.Log != privbounds.PublicHalfWidth || got.Certificate.Mechanism != c.want {
			t.Errorf("n = %d: %s (estimated %v, log %v), want %s on the public map", c.n, got.Certificate.Mechanism, p.Estimated, p.Log, c.want)
		}
		rule, named := Forecast(tab, nil, schema, b, opts, 1), Forecast(tab, nil, schema, b, Options{Mechanism: c.want, Auto: true, Seed: 1}, 1)
		other := perturb.AMP
		if c.want == perturb.AMP {
			other = perturb.DPSGD
		}
		if rule != named || rule == Forecast(tab, nil, schema, b, Options{Mechanism: other, Auto: true, Seed: 1}, 1) {
			t.Errorf("n = %d: the rule's forecast %q, --mechanism %s's %q", c.n, rule, c.want, named)
		}
	}
}
