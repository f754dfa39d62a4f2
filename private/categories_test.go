package private

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
)

// categoricalTable returns n rows of a numeric feature, two categorical
// ones (one with values outside its declared categories) and a label, with
// the schema declaring the categories.
func categoricalTable(t *testing.T, n int) (*datasets.Table, datasets.Schema) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 9))
	colors := []string{"red", "green", "blue", "?"}
	rows := make([][]string, n)
	for i := range rows {
		c, size := colors[r.IntN(4)], []string{"S", "L"}[r.IntN(2)]
		x := r.NormFloat64() * 10
		y := "no"
		if x/10+map[string]float64{"red": 1, "green": -1}[c]+r.NormFloat64()/2 > 0 {
			y = "yes"
		}
		rows[i] = []string{strconv.FormatFloat(x, 'g', 6, 64), c, size, y}
	}
	tab, err := datasets.NewTable("categorical", []string{"x", "color", "size", "y"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	return tab, datasets.Schema{Label: "y", Classes: []string{"no", "yes"},
		Categories: []datasets.Categorical{{Column: "color", Values: []string{"red", "green", "blue"}}, {Column: "size", Values: []string{"S", "L"}}}}
}

// TestFitCategoricalNeighbours trains on a table with categorical columns
// and on neighbours that replace one row adversarially (an undeclared
// category, extreme numbers, a flipped label, another row's category): with
// the same seeds and noise, the released weights differ by at most the
// certified Delta, and everything else in the model file is the same. The
// file verifies, says how undeclared categories map, and predicts the table.
func TestFitCategoricalNeighbours(t *testing.T) {
	tab, schema := categoricalTable(t, 300)
	schema.All = &datasets.Bound{Lo: -30, Hi: 30}
	fit := func(tab *datasets.Table) *modelfile.Released {
		r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, TestFrac: 0.2, Seed: 4, Auto: true, Noise: perturb.Seeded(2)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := fit(tab)
	if base.Model.D != 1+3+2+1 || len(base.Preprocessing.Categories) != 2 {
		t.Fatalf("model of %d inputs, preprocessing %+v", base.Model.D, base.Preprocessing)
	}
	if !strings.Contains(strings.Join(base.Certificate.Assumptions, "\n"), "not a declared category") {
		t.Error("the certificate does not say how an undeclared category maps")
	}
	if v, _, err := modelfile.Verify(base); err != nil || v != modelfile.NotPrivate {
		t.Errorf("Verify: %v, %v", v, err)
	}
	var sb strings.Builder
	if m, err := base.PredictTable(tab, &sb); err != nil || m.Rows != 300 {
		t.Errorf("PredictTable: %v, %+v", err, m)
	}
	for _, i := range []int{0, 17, 299} {
		for _, cells := range [][]string{{"1e300", "purple", "XL", "yes"}, {"-1e300", "red", "S", "no"}, {"0", "", "L", "maybe"}, {tab.Cell(i, 0), "green", tab.Cell(i, 2), tab.Cell(i, 3)}} {
			nb := tab.Clone()
			for j, c := range cells {
				nb.SetCell(i, j, c)
			}
			r := fit(nb)
			if dist := floats.Distance(base.Model.W, r.Model.W, 2); dist > base.Certificate.L2Sensitivity {
				t.Errorf("row %d replaced by %v: ||w - w'|| = %v > Delta = %v", i, cells, dist, base.Certificate.L2Sensitivity)
			}
			r.Model.W, r.Certificate.WeightsSHA256 = base.Model.W, base.Certificate.WeightsSHA256
			if !slices.Equal(r.Certificate.Assumptions, base.Certificate.Assumptions) || r.Certificate.NoiseScale != base.Certificate.NoiseScale || !slices.Equal(r.Preprocessing.Lo, base.Preprocessing.Lo) {
				t.Errorf("row %d replaced: the public parts of the file changed", i)
			}
		}
	}
}

// TestFitCategoricalOnly: a table whose features are all categorical needs
// no bounds, and its release gets the whole budget.
func TestFitCategoricalOnly(t *testing.T) {
	tab, schema := categoricalTable(t, 200)
	rows := make([][]string, tab.Len())
	for i := range rows {
		rows[i] = []string{tab.Cell(i, 1), tab.Cell(i, 2), tab.Cell(i, 3)}
	}
	only, err := datasets.NewTable("categorical only", []string{"color", "size", "y"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fit(context.Background(), only, schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Seed: 1, Auto: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Certificate; len(c.Ledger) != 1 || c.Ledger[0].Epsilon != 1 || c.EstimatedBounds != nil || r.Preprocessing.Estimated {
		t.Errorf("ledger %+v, estimated %v", c.Ledger, c.EstimatedBounds)
	}
	if v, _, err := modelfile.Verify(r); err != nil || v != modelfile.PrivateRelease {
		t.Errorf("Verify: %v, %v", v, err)
	}
}
