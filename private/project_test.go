package private

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
)

// wideTable returns n rows of d features (many more than n) whose label
// depends on the first ten, with bounds [-3, 3] for every column.
func wideTable(t *testing.T, n, d int) (*datasets.Table, datasets.Schema) {
	t.Helper()
	r := rand.New(rand.NewPCG(2, 3))
	cols := make([]string, d+1)
	for j := range d {
		cols[j] = "g" + strconv.Itoa(j)
	}
	cols[d] = "y"
	rows := make([][]string, n)
	for i := range rows {
		row := make([]string, d+1)
		var s float64
		for j := range d {
			v := r.NormFloat64()
			if j < 10 {
				s += v
			}
			row[j] = strconv.FormatFloat(v, 'g', 5, 64)
		}
		row[d] = map[bool]string{true: "T", false: "B"}[s > 0]
		rows[i] = row
	}
	tab, err := datasets.NewTable("wide", cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	return tab, datasets.Schema{Label: "y", Classes: []string{"B", "T"}, All: &datasets.Bound{Lo: -3, Hi: 3}}
}

// TestFitProjectNeighbours projects 2000 features to 16 dimensions: the
// model has 17 inputs, the file verifies and names the seed, neighbouring
// tables (adversarial replacements) give releases within the certified
// Delta, and a projection up, or a negative one, is refused.
func TestFitProjectNeighbours(t *testing.T) {
	tab, schema := wideTable(t, 120, 2000)
	opts := Options{Mechanism: perturb.Gamma, TestFrac: 0.2, Seed: 6, Auto: true, Project: 16}
	fit := func(tab *datasets.Table) *modelfile.Released {
		o := opts
		o.Noise = perturb.Seeded(4)
		r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := fit(tab)
	if base.Model.D != 17 || base.Preprocessing.Project == nil || base.Preprocessing.Project.Seed != 6 {
		t.Fatalf("model of %d inputs, projection %+v", base.Model.D, base.Preprocessing.Project)
	}
	if v, _, err := modelfile.Verify(base); err != nil || v != modelfile.NotPrivate {
		t.Errorf("Verify: %v, %v", v, err)
	}
	for _, i := range []int{0, 60, 119} {
		nb := tab.Clone()
		for j := range 2000 {
			nb.SetCell(i, j, []string{"1e300", "-1e300", "0"}[j%3])
		}
		nb.SetCell(i, 2000, map[bool]string{true: "B", false: "T"}[tab.Cell(i, 2000) == "T"])
		r := fit(nb)
		if dist := floats.Distance(base.Model.W, r.Model.W, 2); dist > base.Certificate.L2Sensitivity {
			t.Errorf("row %d replaced: ||w - w'|| = %v > Delta = %v", i, dist, base.Certificate.L2Sensitivity)
		}
	}
	altered := fit(tab)
	altered.Preprocessing.Project.Seed = 7
	if _, _, err := modelfile.Verify(altered); !errors.Is(err, modelfile.ErrVerify) {
		t.Errorf("a file whose projection seed was altered verifies: %v", err)
	}
	for _, k := range []int{2001, -1} {
		o := opts
		o.Project = k
		if _, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, o); !errors.Is(err, ErrOptions) {
			t.Errorf("project %d: %v, want ErrOptions", k, err)
		}
	}
}

// TestFitProjectAuto checks ProjectAuto: 2000 features and 96 training rows
// are projected to the rule's k (a public function of n, w, K and eps: a
// neighbouring table, one row replaced, gets the same k), and the release
// stays within the certified Delta of its neighbour's; 50 features and 96
// rows are not projected; a given Project wins over the rule.
func TestFitProjectAuto(t *testing.T) {
	fit := func(tab *datasets.Table, schema datasets.Schema, project int) *modelfile.Released {
		t.Helper()
		o := Options{Mechanism: perturb.Gamma, TestFrac: 0.2, Seed: 6, Auto: true, ProjectAuto: true, Project: project, Noise: perturb.Seeded(4)}
		r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tab, schema := wideTable(t, 120, 2000)
	want, err := preprocess.AutoProjectDim(96, 2000, 1, 1)
	if err != nil || want < preprocess.AutoProjectMin || want >= 2000 {
		t.Fatalf("AutoProjectDim(96, 2000, 1, 1) = %d, %v", want, err)
	}
	base := fit(tab, schema, 0)
	if base.Preprocessing.Project == nil || base.Preprocessing.Project.K != want || base.Model.D != want+1 {
		t.Fatalf("projection %+v, %d inputs, want k = %d", base.Preprocessing.Project, base.Model.D, want)
	}
	nb := tab.Clone()
	for j := range 2000 {
		nb.SetCell(7, j, "1e300")
	}
	nb.SetCell(7, 2000, map[bool]string{true: "B", false: "T"}[tab.Cell(7, 2000) == "T"])
	r := fit(nb, schema, 0)
	if r.Preprocessing.Project == nil || r.Preprocessing.Project.K != want {
		t.Errorf("the neighbour's projection %+v, want k = %d", r.Preprocessing.Project, want)
	}
	if dist := floats.Distance(base.Model.W, r.Model.W, 2); dist > base.Certificate.L2Sensitivity {
		t.Errorf("||w - w'|| = %v > Delta = %v", dist, base.Certificate.L2Sensitivity)
	}
	if r := fit(tab, schema, 8); r.Preprocessing.Project == nil || r.Preprocessing.Project.K != 8 {
		t.Errorf("Project 8 with ProjectAuto: projection %+v", r.Preprocessing.Project)
	}
	narrow, nschema := wideTable(t, 120, 50)
	if r := fit(narrow, nschema, 0); r.Preprocessing.Project != nil || r.Model.D != 51 {
		t.Errorf("50 features, 96 rows: projection %+v, %d inputs", r.Preprocessing.Project, r.Model.D)
	}
}
