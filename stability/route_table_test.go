package stability

import (
	"fmt"
	"testing"

	"github.com/stabpriv/stabpriv/trainer"
)

// TestRouteTable checks the table's invariants: IDs 1, 2, ... in order,
// distinct names that round-trip through the text form, a citation, a
// formula and assumptions, and that every entry evaluates to its own route.
func TestRouteTable(t *testing.T) {
	run := &trainer.Run{
		Loss: "logistic", N: 10, D: 2, K: 1, Kappa: 1, Lz: 1, Sz: 0.25, L: 1, BetaS: 0.25, Convex: true,
		Lambda: 0.1, Mu: 0.1, Schedule: trainer.Constant.String(), Eta: 0.5, Passes: 2, Batch: 10,
		PassMaxStep: []float64{0.5, 0.5},
	}
	c, err := checkRun(run)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i, d := range routeTable {
		if d.ID != RouteID(i+1) || Routes[i] != d.ID {
			t.Errorf("entry %d has ID %d, Routes[%d] = %d", i, d.ID, i, Routes[i])
		}
		if d.Name == "" || names[d.Name] || d.Citation == "" || d.Formula == "" || len(d.Assumptions) == 0 || d.Evaluate == nil {
			t.Errorf("entry %d (%q) is incomplete or repeats a name", i, d.Name)
		}
		names[d.Name] = true
		var back RouteID
		if err := back.UnmarshalText([]byte(d.ID.String())); err != nil || back != d.ID {
			t.Errorf("route %d: text %q reads back as %d, %v", d.ID, d.ID.String(), back, err)
		}
		if e := d.evaluate(c); e.Route != d.ID || e.Citation != d.Citation {
			t.Errorf("route %v evaluates to the entry of %v", d.ID, e.Route)
		}
	}
	if got, want := RouteID(len(routeTable)+1).String(), fmt.Sprintf("Route(%d)", len(routeTable)+1); got != want {
		t.Errorf("an unknown route prints as %q", got)
	}
}
