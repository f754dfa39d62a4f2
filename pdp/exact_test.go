package pdp

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
)

// refineOneByOne is the refinement before the lockstep one, kept as the
// reference: the simplified Newton steps of one neighbour, each gradient
// a pass of its own (glm.Objective.Grad), then full Newton steps when
// they stall. It returns the refined weights' difference, the steps and
// whether it took full Newton steps.
func refineOneByOne(t *testing.T, a *Analysis, skip int, px []float64, py float64) ([]float64, int, bool) {
	t.Helper()
	p := a.p
	sign := 1.0
	var start Diff
	var err error
	if skip >= 0 {
		sign = -1
		start, err = a.Remove(skip)
	} else {
		start, err = a.Add(px, py)
	}
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.neighbour(skip, map[bool][]float64{true: px}[skip < 0], py)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, p.dim())
	for i := range w {
		w[i] = a.sol.W[i] + start.V[i]
	}
	b, err := a.pointBasis(px)
	if err != nil {
		t.Fatal(err)
	}
	apply, err := a.frozenSolve(px, py, sign, b)
	if err != nil {
		t.Fatal(err)
	}
	m := float64(v.obj.Rows())
	g := make([]float64, p.dim())
	v.obj.Grad(g, w)
	gn := norm2(g)
	steps := 0
	for gn > p.tol && steps < 20 {
		for i := range g {
			g[i] *= m
		}
		s := apply(g)
		for i := range w {
			w[i] -= s[i]
		}
		steps++
		v.obj.Grad(g, w)
		next := norm2(g)
		if math.IsNaN(next) || next > gn/4 {
			gn = next
			break
		}
		gn = next
	}
	full := !(gn <= p.tol)
	if full {
		sol, err := p.solve(v, w)
		if err != nil {
			t.Fatal(err)
		}
		steps += sol.Iterations
		w = sol.W
	}
	for i := range w {
		w[i] -= a.sol.W[i]
	}
	return w, steps, full
}

// TestRefineLockstep checks RefineTop and RefineTopTargets, whose
// refinements run lockstep at a time on one pass over the rows, against
// the refinement of one row at a time (refineOneByOne) bit for bit, the
// steps too, on rows enough for glm's two parts, in batches of lockstep
// and a shorter last one; a simplified Newton method that stalls (a large
// step at a loose lambda) falls back to full Newton steps in both.
func TestRefineLockstep(t *testing.T) {
	for _, c := range []struct {
		loss    losses.Loss
		classes int
		n       int
		lambda  float64
	}{{losses.Logistic{}, 0, 17000, 1e-4}, {losses.Softmax{}, 3, 700, 1e-3}, {losses.Logistic{}, 0, 60, 1e-4}} {
		t.Run(fmt.Sprintf("%s/n=%d", c.loss.Name(), c.n), func(t *testing.T) {
			x, y := pdptest.Synth(c.n, 5, c.loss, c.classes, 5)
			a := mustAnalysis(t, x, y, Config{Loss: c.loss, Classes: c.classes, Lambda: c.lambda})
			k := 2*lockstep + 1
			diffs, err := a.RemoveAll()
			if err != nil {
				t.Fatal(err)
			}
			top, err := a.RefineTop(diffs, k)
			if err != nil {
				t.Fatal(err)
			}
			tx, ty := pdptest.Synth(k+3, 5, c.loss, c.classes, 6)
			tdiffs, err := a.AddAll(tx, ty)
			if err != nil {
				t.Fatal(err)
			}
			ttop, err := a.RefineTopTargets(tdiffs, tx, ty, k)
			if err != nil {
				t.Fatal(err)
			}
			if len(top) != k || len(ttop) != k {
				t.Fatalf("%d and %d refined, want %d", len(top), len(ttop), k)
			}
			var steps []int
			fulls := 0
			check := func(what string, i int, d Diff, skip int, px []float64, py float64) {
				t.Helper()
				want, st, full := refineOneByOne(t, a, skip, px, py)
				steps = append(steps, st)
				if full {
					fulls++
				}
				if !d.Exact || d.Steps != st || !slices.Equal(d.V, want) || d.L2 != norm2(want) {
					t.Errorf("%s %d: exact %v, %d steps, V %v; one by one %d steps, V %v", what, i, d.Exact, d.Steps, d.V, st, want)
				}
			}
			for _, i := range top {
				check("row", i, diffs[i], i, x.RawRowView(i), y[i])
			}
			for _, i := range ttop {
				check("target", i, tdiffs[i], -1, tx.RawRowView(i), ty[i])
			}
			t.Logf("steps %v, %d with full Newton steps", steps, fulls)
			if c.n == 60 && fulls == 0 {
				t.Error("no refinement fell back to full Newton steps")
			}
		})
	}
}
