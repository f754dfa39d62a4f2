package pdp

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
	"github.com/stabpriv/stabpriv/perturb"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/onestep_golden.json")

// goldenValues are the per-instance values of one fixed problem: every
// batched kind of neighbour, the refined rows and the epsilons.
type goldenValues struct {
	Remove, Flip, Replace, Add [][3]float64 // L2, L1, ErrBound
	Exact                      [][2]float64 // L2, ErrBound of the refined rows
	Epsilons                   []float64
}

// goldenProblems are the fixed problems of testdata/onestep_golden.json.
var goldenProblems = []struct {
	name    string
	loss    losses.Loss
	classes int
}{
	{"logistic", losses.Logistic{}, 0},
	{"softmax", losses.Softmax{}, 3},
}

// computeGolden returns the values of a problem.
func computeGolden(t *testing.T, loss losses.Loss, classes int) goldenValues {
	t.Helper()
	const n, d = 400, 6
	x, y := pdptest.Synth(n, d, loss, classes, 41)
	a := mustAnalysis(t, x, y, Config{Loss: loss, Classes: classes, Lambda: 3e-3})
	fx, fy := pdptest.Synth(50, d, loss, classes, 43)
	rows := make([]int, 50)
	for i := range rows {
		rows[i] = 7 * i
	}
	norms := func(ds []Diff, err error) [][3]float64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := make([][3]float64, len(ds))
		for i, d := range ds {
			out[i] = [3]float64{d.L2, d.L1, d.ErrBound}
		}
		return out
	}
	var g goldenValues
	all, err := a.RemoveAll()
	g.Remove = norms(all, err)
	g.Flip = norms(a.FlipAll())
	g.Replace = norms(a.ReplaceAll(rows, fx, fy))
	g.Add = norms(a.AddAll(fx, fy))
	top, err := a.RefineTop(all, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range top {
		g.Exact = append(g.Exact, [2]float64{all[i].L2, all[i].ErrBound})
	}
	m, err := NewPrivacyLoss(perturb.AnalyticGaussian, 0.02, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if g.Epsilons, err = m.UpperEpsilons(all); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestOneStepGolden compares the per-instance values with those the
// implementation before the batched rewrite gave on fixed data
// (testdata/onestep_golden.json): the one-step values to 1e-12 relative
// (the arithmetic's order changed: merged rows of a label flip, a 2 x 2
// solve for a replacement; beside 1e-15 of the largest, for a flip to the
// same class, once rounding and now exactly 0), their error bounds to
// 1e-9, the refined exact
// values within their solver tolerance (Diff.ErrBound, from ||grad F|| <=
// 1e-10), and the epsilons to 1e-12 relative.
func TestOneStepGolden(t *testing.T) {
	path := filepath.Join("testdata", "onestep_golden.json")
	got := map[string]goldenValues{}
	for _, p := range goldenProblems {
		got[p.name] = computeGolden(t, p.loss, p.classes)
	}
	if *updateGolden {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]goldenValues
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	// near allows rel of the value, and 1e-3 rel of the set's largest
	// one (scale): a flip to the same class was rounding, now exactly 0.
	near := func(what string, i int, g, w, rel, scale float64) {
		t.Helper()
		if math.IsInf(w, 1) && math.IsInf(g, 1) {
			return
		}
		if !(math.Abs(g-w) <= rel*(math.Abs(w)+1e-3*scale)) {
			t.Errorf("%s %d: %.17g, before %.17g (relative %.3g > %g)", what, i, g, w, math.Abs(g-w)/math.Abs(w), rel)
		}
	}
	for _, p := range goldenProblems {
		g, w := got[p.name], want[p.name]
		for _, c := range []struct {
			what     string
			got, was [][3]float64
		}{{"remove", g.Remove, w.Remove}, {"flip", g.Flip, w.Flip}, {"replace", g.Replace, w.Replace}, {"add", g.Add, w.Add}} {
			if len(c.got) != len(c.was) {
				t.Fatalf("%s %s: %d values, before %d", p.name, c.what, len(c.got), len(c.was))
			}
			var scale [3]float64
			for _, v := range c.was {
				for j := range scale {
					if !math.IsInf(v[j], 1) {
						scale[j] = math.Max(scale[j], v[j])
					}
				}
			}
			for i := range c.got {
				near(p.name+" "+c.what+" L2", i, c.got[i][0], c.was[i][0], 1e-12, scale[0])
				near(p.name+" "+c.what+" L1", i, c.got[i][1], c.was[i][1], 1e-12, scale[1])
				near(p.name+" "+c.what+" error bound", i, c.got[i][2], c.was[i][2], 1e-9, scale[2])
			}
		}
		if len(g.Exact) != len(w.Exact) {
			t.Fatalf("%s: %d refined, before %d", p.name, len(g.Exact), len(w.Exact))
		}
		for i := range g.Exact {
			if tol := g.Exact[i][1] + w.Exact[i][1]; !(math.Abs(g.Exact[i][0]-w.Exact[i][0]) <= tol) {
				t.Errorf("%s exact %d: %.17g, before %.17g (beyond the tolerance %.3g)", p.name, i, g.Exact[i][0], w.Exact[i][0], tol)
			}
		}
		for i := range g.Epsilons {
			near(p.name+" epsilon", i, g.Epsilons[i], w.Epsilons[i], 1e-12, 0)
		}
	}
}

// TestNormsMatchAll checks RemoveNorms, FlipNorms and AddNorms against
// RemoveAll, FlipAll and AddAll: the same norms, bounds and upper bounds, V dropped, Dim kept;
// FlipSensitivities against FlipNorms' L2, and RemoveNormsFlips against
// RemoveNorms and FlipSensitivities, bit for bit. The rows make at least two chunks for every goroutine of batch, so that
// the norms come from chunks in reused memory (batchScratch).
func TestNormsMatchAll(t *testing.T) {
	x, y := pdptest.Synth(2*chunkRows*runtime.GOMAXPROCS(0)+17, 5, losses.Softmax{}, 3, 8)
	a := mustAnalysis(t, x, y, Config{Loss: losses.Softmax{}, Classes: 3, Lambda: 1e-3})
	fx, fy := pdptest.Synth(chunkRows+5, 5, losses.Softmax{}, 3, 9)
	flipL2, err := a.FlipSensitivities()
	if err != nil {
		t.Fatal(err)
	}
	checkRemoveFlips(t, a, flipL2)
	lx, ly := pdptest.Synth(chunkRows*runtime.GOMAXPROCS(0)+33, 4, losses.Logistic{}, 0, 10)
	checkRemoveFlips(t, mustAnalysis(t, lx, ly, Config{Loss: losses.Logistic{}, Lambda: 1e-3}), nil)
	for _, c := range []struct {
		name       string
		all, norms func() ([]Diff, error)
	}{{"remove", a.RemoveAll, a.RemoveNorms}, {"flip", a.FlipAll, a.FlipNorms},
		{"add", func() ([]Diff, error) { return a.AddAll(fx, fy) }, func() ([]Diff, error) { return a.AddNorms(fx, fy) }}} {
		all, err := c.all()
		if err != nil {
			t.Fatal(err)
		}
		norms, err := c.norms()
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range all {
			n := norms[i]
			if n.V != nil || n.Dim != len(d.V) || n.Dim != 15 {
				t.Fatalf("%s %d: V %v, Dim %d, want nil and %d", c.name, i, n.V, n.Dim, len(d.V))
			}
			n.V = d.V
			if fmt.Sprintf("%+v", n) != fmt.Sprintf("%+v", d) { // NaN leverages: compare the printed values
				t.Fatalf("%s %d: %+v, want %+v", c.name, i, n, d)
			}
			if c.name == "flip" && flipL2[i] != n.L2 {
				t.Errorf("flip %d: FlipSensitivities %v, want %v", i, flipL2[i], n.L2)
			}
			l2, l1, _ := norms[i].Upper()
			w2, w1, _ := d.Upper()
			if l2 != w2 || l1 != w1 {
				t.Errorf("%s %d: upper %v %v, want %v %v", c.name, i, l2, l1, w2, w1)
			}
		}
	}
}

// checkRemoveFlips checks RemoveNormsFlips against RemoveNorms and
// FlipSensitivities (flipL2, nil: computed), bit for bit.
func checkRemoveFlips(t *testing.T, a *Analysis, flipL2 []float64) {
	t.Helper()
	var err error
	if flipL2 == nil {
		if flipL2, err = a.FlipSensitivities(); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := a.RemoveNorms()
	if err != nil {
		t.Fatal(err)
	}
	both, flips, err := a.RemoveNormsFlips()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range removed {
		if fmt.Sprintf("%+v", both[i]) != fmt.Sprintf("%+v", d) || math.Float64bits(flips[i]) != math.Float64bits(flipL2[i]) {
			t.Fatalf("row %d: RemoveNormsFlips %+v, %v; want %+v, %v", i, both[i], flips[i], d, flipL2[i])
		}
	}
}
