package private

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
)

// pcaFit fits boundsTable's rows with the bounds estimated (share 0.25)
// and two private principal directions (share 0.25) at (2, 1e-5), with the
// noise source src.
func pcaFit(t *testing.T, tab *datasets.Table, schema datasets.Schema, src perturb.Source) *modelfile.Released {
	t.Helper()
	opts := Options{Mechanism: perturb.AnalyticGaussian, Auto: true, TestFrac: 0.2, Seed: 3, BoundsShare: 0.25, BoundsMethod: BoundsRanges, PCA: 2, PCAShare: 0.25, Noise: src}
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 2, Delta: 1e-5}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// copyReleased returns a deep copy of r through its model file.
func copyReleased(t *testing.T, r *modelfile.Released) *modelfile.Released {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	c, err := modelfile.Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFitPCA checks a fit with private principal directions: the ledger
// lists the bounds, the directions and the release in that order and sums
// to the claim (basic composition); the release is calibrated to the rest;
// the directions are in the preprocessing (k x the mapped features,
// orthonormal) and bound by the certificate; Verify accepts the file; and
// a prediction through the model file read back is the model's margin on
// the row mapped by hand (bounds, clip_1, V, the unit-ball map).
func TestFitPCA(t *testing.T) {
	tab, schema := boundsTable(t, 3000)
	for _, src := range []perturb.Source{perturb.Seeded(11), nil} {
		r := pcaFit(t, tab, schema, src)
		c, p := r.Certificate, r.Preprocessing
		if c.Epsilon != 2 || c.Delta != 1e-5 || len(c.Ledger) != 3 {
			t.Fatalf("claim (%v, %v), ledger %+v", c.Epsilon, c.Delta, c.Ledger)
		}
		if c.Ledger[0] != modelfile.BoundsCharge(0.5) || c.Ledger[1] != modelfile.ComponentsCharge(dp.Budget{Epsilon: 0.5, Delta: 0.25 * 1e-5}) || c.Ledger[2].Mechanism != perturb.AnalyticGaussian {
			t.Errorf("ledger %+v", c.Ledger)
		}
		if tot := dp.Total(c.Ledger); math.Abs(tot.Epsilon-c.Epsilon) > 1e-12 || math.Abs(tot.Delta-c.Delta) > 1e-18 {
			t.Errorf("the ledger sums to %+v, the claim is (%v, %v)", tot, c.Epsilon, c.Delta)
		}
		eps, delta, share := 2.0, 1e-5, 0.25 // the rest rounded down, as the fit's
		if b := r.ReleaseBudget(); b != (dp.Budget{Epsilon: dp.Rest(eps, share*eps, share*eps), Delta: dp.Rest(delta, share*delta)}) || c.Ledger[2].Epsilon != b.Epsilon || c.Ledger[2].Delta != b.Delta {
			t.Errorf("release budget %+v, release charge %+v", b, c.Ledger[2])
		}
		if p.PCA == nil || len(p.PCA.V) != 2 || len(p.PCA.V[0]) != 3 || p.Dim() != 3 || r.Model.D != 3 {
			t.Fatalf("preprocessing %+v, model d = %d", p, r.Model.D)
		}
		if c.ComponentsSHA256 != p.PCA.SHA256() || !strings.Contains(p.Words, "private principal directions") {
			t.Errorf("hash %s, words %q", c.ComponentsSHA256, p.Words)
		}
		want := modelfile.PrivateRelease
		if src != nil {
			want = modelfile.NotPrivate
		}
		// The directions' note names the exact sampler's rounding for
		// secure noise, as the release's note does for its noise.
		note := pcaNote(t, c)
		if got := strings.Contains(note, perturb.SecurePCANote); got != (src == nil) {
			t.Errorf("secure noise %v: the directions' note %q", src == nil, note)
		}
		if strings.Contains(note, "standardized") {
			t.Errorf("bounds mode: the directions' note %q speaks of standardized rows", note)
		}
		if v, why, err := modelfile.Verify(r); err != nil || v != want {
			t.Errorf("Verify: %v (%s), %v; want %v", v, why, err, want)
		}
		back := copyReleased(t, r)
		if v, _, err := modelfile.Verify(back); err != nil || v != want {
			t.Errorf("Verify of the file read back: %v, %v", v, err)
		}
		for i := range 20 {
			x := make([]float64, 3)
			for j := range x {
				x[j], _ = tab.Value(i, j)
			}
			got, err := back.Margins(x)
			if err != nil {
				t.Fatal(err)
			}
			z := make([]float64, 3)
			for j, v := range x {
				lo, hi := p.Lo[j], p.Hi[j]
				z[j] = 2*(math.Max(lo, math.Min(hi, v))-lo)/(hi-lo) - 1
			}
			if nrm := floats.Norm(z, 2); nrm > 1 {
				floats.Scale(1/nrm, z)
			}
			in := []float64{floats.Dot(p.PCA.V[0], z), floats.Dot(p.PCA.V[1], z), 1}
			if nrm := floats.Norm(in[:2], 2); nrm > 1 {
				floats.Scale(1/nrm, in[:2])
			}
			floats.Scale(1/math.Sqrt2, in)
			m := floats.Dot(r.Model.W, in)
			if math.Abs(got[0]-m) > 1e-12 {
				t.Errorf("row %d: margin %v through the file, %v by hand", i, got[0], m)
			}
		}
	}
}

// TestComponentRowsNeighbours is the sensitivity of the second moments the
// directions are computed from, through the pipeline: each of a set of
// training rows is replaced by adversarial cells (huge values of either
// sign, a label that is not declared, so a null row, and another real row),
// the rows stay in the unit ball, and the upper triangle of Z^T Z moves by
// at most dppca.Sensitivity = sqrt(2); some replacement moves it.
func TestComponentRowsNeighbours(t *testing.T) {
	tab, schema := boundsTable(t, 400)
	schema.All = &datasets.Bound{Lo: -1, Hi: 1}
	pl, err := NewPlan(schema, dp.Budget{Epsilon: 1, Delta: 1e-5}, Options{Mechanism: perturb.AnalyticGaussian, PCA: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	second := func(tab *datasets.Table) []float64 {
		enc, err := tab.Encode(pl.Schema, pl.Task)
		if err != nil {
			t.Fatal(err)
		}
		idx, _, err := enc.Split(0, 4, false)
		if err != nil {
			t.Fatal(err)
		}
		prep, err := preprocess.NewRowMap(pl.Mode, enc.Features, pl.Schema, nil)
		if err != nil {
			t.Fatal(err)
		}
		Z, err := prep.ComponentRows(enc, idx)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := Z.Dims()
		for i := range n {
			if nrm := floats.Norm(Z.RawRowView(i), 2); nrm > 1+1e-12 {
				t.Fatalf("row %d has norm %v", i, nrm)
			}
		}
		return dppca.UpperTriangle(Z)
	}
	base := second(tab)
	worst := 0.0
	for _, i := range []int{0, 1, 200, 399} {
		for _, cells := range [][]string{{"1e300", "-1e300", "1e300", "yes"}, {"-1e300", "1e300", "-1e300", "no"}, {"0.5", "0.5", "0.5", "zebra"}, {"-0.9", "0.9", "0.1", "no"}} {
			nb := tab.Clone()
			for j, c := range cells {
				nb.SetCell(i, j, c)
			}
			d := floats.Distance(base, second(nb), 2)
			if d > dppca.Sensitivity+1e-12 {
				t.Errorf("row %d replaced by %v: the second moments move by %v > sqrt(2)", i, cells, d)
			}
			worst = max(worst, d)
		}
	}
	if worst < 1 {
		t.Errorf("the largest move is %v: the adversarial rows should move the second moments by more than 1", worst)
	}
}

// TestPCARefused checks what NewPlan and Fit refuse before any noise: a
// negative k, a share without components, components in a fit that is not
// private, a pure eps budget, shares that leave nothing for the release,
// and k above the mapped features.
func TestPCARefused(t *testing.T) {
	schema := datasets.Schema{Label: "y", Classes: []string{"no", "yes"}}
	budget := dp.Budget{Epsilon: 1, Delta: 1e-5}
	ag := perturb.AnalyticGaussian
	for name, c := range map[string]struct {
		budget dp.Budget
		opts   Options
		want   error
	}{
		"k negative":         {budget, Options{Mechanism: ag, PCA: -1}, ErrOptions},
		"share without k":    {budget, Options{Mechanism: ag, PCAShare: 0.3}, ErrOptions},
		"not private":        {dp.Budget{}, Options{PCA: 2}, ErrOptions},
		"pure eps":           {dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, PCA: 2}, dp.ErrBudget},
		"share 1":            {budget, Options{Mechanism: ag, PCA: 2, PCAShare: 1}, dp.ErrBudget},
		"share NaN":          {budget, Options{Mechanism: ag, PCA: 2, PCAShare: math.NaN()}, dp.ErrBudget},
		"shares sum to 1":    {budget, Options{Mechanism: ag, PCA: 2, PCAShare: 0.5, BoundsShare: 0.5}, dp.ErrBudget},
		"shares sum above 1": {budget, Options{Mechanism: ag, PCA: 2, PCAShare: 0.7, BoundsShare: 0.4}, dp.ErrBudget},
	} {
		if _, err := NewPlan(schema, c.budget, c.opts); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	pl, err := NewPlan(schema, budget, Options{Mechanism: ag, PCA: 2})
	eps, delta, bs, ps := budget.Epsilon, budget.Delta, DefaultBoundsShare, DefaultPCAShare // float64 arithmetic, as the plan's
	if err != nil || pl.PCABudget != (dp.Budget{Epsilon: ps * eps, Delta: ps * delta}) ||
		pl.Release != (dp.Budget{Epsilon: dp.Rest(dp.Rest(eps, ps*eps), bs*eps), Delta: dp.Rest(delta, ps*delta)}) {
		t.Errorf("default shares: %v, %+v", err, pl)
	}
	tab, _ := boundsTable(t, 300)
	declared := schema
	declared.All = &datasets.Bound{Lo: -1, Hi: 1}
	for _, k := range []int{4, 100} {
		_, err = Fit(context.Background(), tab, declared, budget, Options{Mechanism: ag, Auto: true, PCA: k, Seed: 1})
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "principal components of rows of 3 entries") {
			t.Errorf("k = %d of 3 features: %v", k, err)
		}
	}
}

// TestVerifyPCATampered alters the principal directions' parts of a model
// file: each alteration makes Verify fail (a rotation of the directions
// keeps them orthonormal, and the certificate's hash catches it).
func TestVerifyPCATampered(t *testing.T) {
	tab, schema := boundsTable(t, 3000)
	r := pcaFit(t, tab, schema, perturb.Seeded(5))
	if _, _, err := modelfile.Verify(r); err != nil {
		t.Fatal(err)
	}
	for name, alter := range map[string]func(r *modelfile.Released){
		"entry":       func(r *modelfile.Released) { r.Preprocessing.PCA.V[0][1] += 1e-3 },
		"swapped":     func(r *modelfile.Released) { v := r.Preprocessing.PCA.V; v[0], v[1] = v[1], v[0] },
		"negated":     func(r *modelfile.Released) { floats.Scale(-1, r.Preprocessing.PCA.V[1]) },
		"short":       func(r *modelfile.Released) { r.Preprocessing.PCA.V[0] = r.Preprocessing.PCA.V[0][:2] },
		"one dropped": func(r *modelfile.Released) { r.Preprocessing.PCA.V = r.Preprocessing.PCA.V[:1] },
		"no matrix":   func(r *modelfile.Released) { r.Preprocessing.PCA = nil },
		"no charge": func(r *modelfile.Released) {
			c := r.Certificate
			c.Ledger = append(c.Ledger[:1:1], c.Ledger[2:]...)
		},
		"charge eps":   func(r *modelfile.Released) { r.Certificate.Ledger[1].Epsilon = 0.4 },
		"charge delta": func(r *modelfile.Released) { r.Certificate.Ledger[1].Delta = 0 },
		"charge all":   func(r *modelfile.Released) { r.Certificate.Ledger[1].Epsilon = 1.5 },
		"no hash":      func(r *modelfile.Released) { r.Certificate.ComponentsSHA256 = "" },
		"claim delta":  func(r *modelfile.Released) { r.Certificate.Delta = 0.75e-5 },
	} {
		c := copyReleased(t, r)
		alter(c)
		_, _, err := modelfile.Verify(c)
		if !errors.Is(err, modelfile.ErrVerify) && !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("%s: Verify %v, want an error", name, err)
		}
	}
}

// categoricalOnlyTable returns n rows of three categorical features
// (color, shape and size) and a label that depends on them, with the
// schema declaring the categories and no bounds.
func categoricalOnlyTable(t *testing.T, n int) (*datasets.Table, datasets.Schema) {
	t.Helper()
	r := rand.New(rand.NewPCG(2, 7))
	colors, shapes, sizes := []string{"red", "green", "blue"}, []string{"sq", "ci"}, []string{"s", "m", "l"}
	rows := make([][]string, n)
	for i := range rows {
		c, sh, sz := r.IntN(3), r.IntN(2), r.IntN(3)
		y := "no"
		if float64(c)-float64(sz)+r.NormFloat64()/2 > 0 {
			y = "yes"
		}
		rows[i] = []string{colors[c], shapes[sh], sizes[sz], y}
	}
	tab, err := datasets.NewTable("categorical only", []string{"color", "shape", "size", "y"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	return tab, datasets.Schema{Label: "y", Classes: []string{"no", "yes"}, Categories: []datasets.Categorical{
		{Column: "color", Values: colors}, {Column: "shape", Values: shapes}, {Column: "size", Values: sizes}}}
}

// TestFitPCACategoricalOnly: on a table whose features are all
// categorical no bounds are estimated, and the release gets the bounds'
// part of the budget back but not the principal components' part: with a
// named mechanism and with a holdout selection, the ledger lists the
// directions and the release and sums to the claim, and Verify accepts the
// file.
func TestFitPCACategoricalOnly(t *testing.T) {
	tab, schema := categoricalOnlyTable(t, 2000)
	eps, delta, ps := 1.0, 1e-5, 0.2 // float64 arithmetic, as the plan's
	budget := dp.Budget{Epsilon: eps, Delta: delta}
	for name, opts := range map[string]Options{
		"mechanism": {Mechanism: perturb.AnalyticGaussian, Auto: true, PCA: 2, PCAShare: ps},
		"holdout":   {Select: &selection.Config{Method: selection.Holdout}, PCA: 2, PCAShare: ps},
	} {
		opts.Seed = 3
		r, err := Fit(context.Background(), tab, schema, budget, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := r.Certificate
		if tot := dp.Total(c.Ledger); math.Abs(tot.Epsilon-budget.Epsilon) > 1e-12 || math.Abs(tot.Delta-budget.Delta) > 1e-18 {
			t.Errorf("%s: the ledger %+v sums to %+v, the claim is %+v", name, c.Ledger, tot, budget)
		}
		if len(c.Ledger) < 2 || c.Ledger[0] != modelfile.ComponentsCharge(dp.Budget{Epsilon: ps * eps, Delta: ps * delta}) || c.EstimatedBounds != nil {
			t.Errorf("%s: ledger %+v, estimated bounds %v", name, c.Ledger, c.EstimatedBounds)
		}
		if b := r.ReleaseBudget(); b != (dp.Budget{Epsilon: dp.Rest(eps, ps*eps), Delta: dp.Rest(delta, ps*delta)}) {
			t.Errorf("%s: the release is calibrated to %+v", name, b)
		}
		if v, why, err := modelfile.Verify(r); err != nil || v != modelfile.PrivateRelease {
			t.Errorf("%s: Verify %v (%s), %v", name, v, why, err)
		}
	}
}

// pcaNote returns the certificate's note on the principal directions.
func pcaNote(t *testing.T, c *release.Certificate) string {
	t.Helper()
	for _, a := range c.Assumptions {
		if strings.Contains(a, "principal directions") && strings.Contains(a, "Analyze Gauss") {
			return a
		}
	}
	t.Fatalf("no note on the principal directions in %q", c.Assumptions)
	return ""
}

// TestFitPCAStandardize: with rows standardized by statistics of the
// training split, the directions' note qualifies the sensitivity sqrt(2):
// it holds for the standardized rows, not for the table.
func TestFitPCAStandardize(t *testing.T) {
	tab, schema := boundsTable(t, 1000)
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 2, Delta: 1e-5},
		Options{Mechanism: perturb.AnalyticGaussian, Auto: true, Preprocess: preprocess.Standardize, PCA: 2, Seed: 3, Noise: perturb.Seeded(2)})
	if err != nil {
		t.Fatal(err)
	}
	note := pcaNote(t, r.Certificate)
	if !strings.Contains(note, "sqrt(2) under replace-one of the standardized rows only") || !strings.Contains(note, "not private") {
		t.Errorf("the directions' note %q does not qualify the sensitivity", note)
	}
	if _, _, err := modelfile.Verify(r); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
