package partition

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// idRow is one row of a table with a privacy ID: features f0, f1, the ID
// and the label.
type idRow struct {
	f    [2]float64
	user string
	y    string
}

// idData is the rows of each shard of a data set with privacy IDs.
type idData [][]idRow

// idBase returns users u0, u1, ... with 1 to 6 rows each, interleaved at
// random over two shards, the label "b" more likely for larger f0.
func idBase(users int, seed uint64) idData {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make(idData, 2)
	for u := range users {
		for range 1 + rng.IntN(6) {
			y := []string{"a", "b"}[rng.IntN(2)]
			r := idRow{f: [2]float64{rng.NormFloat64(), rng.NormFloat64()}, user: "u" + strconv.Itoa(u), y: y}
			if y == "b" {
				r.f[0] += 1.5
			}
			sh := rng.IntN(2)
			at := rng.IntN(len(out[sh]) + 1)
			out[sh] = slices.Insert(out[sh], at, r)
		}
	}
	return out
}

// tables returns the shards as tables named dir/s0.csv, dir/s1.csv.
func (d idData) tables(t *testing.T) []*datasets.Table {
	t.Helper()
	out := make([]*datasets.Table, len(d))
	for s, rows := range d {
		cells := make([][]string, len(rows))
		for i, r := range rows {
			cells[i] = []string{strconv.FormatFloat(r.f[0], 'g', -1, 64), r.user, strconv.FormatFloat(r.f[1], 'g', -1, 64), r.y}
		}
		tab, err := datasets.NewTable(fmt.Sprintf("dir/s%d.csv", s), []string{"f0", "user", "f1", "y"}, cells)
		if err != nil {
			t.Fatal(err)
		}
		out[s] = tab
	}
	return out
}

// replace returns a copy of d with every row of user removed and rows
// inserted: into shard rows[i].shard at position rows[i].at (clamped).
func (d idData) replace(user string, rows []placed) idData {
	out := make(idData, len(d))
	for s, rs := range d {
		for _, r := range rs {
			if r.user != user {
				out[s] = append(out[s], r)
			}
		}
	}
	for _, p := range rows {
		p.row.user = user
		out[p.shard] = slices.Insert(out[p.shard], min(p.at, len(out[p.shard])), p.row)
	}
	return out
}

type placed struct {
	shard, at int
	row       idRow
}

// idNeighbours are replacements of every row of one user: labels flipped,
// features at the bounds and beyond, fewer rows, exactly c, more than c,
// moved to other positions and shards.
func idNeighbours(d idData, user string, c int) map[string][]placed {
	var own []placed
	for s, rs := range d {
		for i, r := range rs {
			if r.user == user {
				own = append(own, placed{s, i, r})
			}
		}
	}
	flip := map[string]string{"a": "b", "b": "a"}
	out := map[string][]placed{}
	var flipped, extreme []placed
	for k, p := range own {
		q := p
		q.row.y = flip[p.row.y]
		flipped = append(flipped, q)
		q.row.f = [2]float64{1e6 * float64(1-2*(k%2)), -1e6 * float64(1-2*(k%2))}
		extreme = append(extreme, q)
	}
	out["labels flipped"] = flipped
	out["features beyond the bounds, labels flipped"] = extreme
	out["one row"] = []placed{{1, 0, idRow{f: [2]float64{-3, 4}, y: "a"}}}
	many := func(k int) []placed {
		var ps []placed
		for i := range k {
			ps = append(ps, placed{i % 2, 3 * i, idRow{f: [2]float64{4 * float64(1-2*(i%2)), -3}, y: []string{"a", "b"}[i%2]}})
		}
		return ps
	}
	out["c rows at the bounds"] = many(c)
	out["3c+1 rows at the bounds, elsewhere"] = many(3*c + 1)
	return out
}

type idSetup struct {
	name  string
	cfg   trainer.Config
	mode  preprocess.Mode
	parts int
}

func idSetups() []idSetup {
	return []idSetup{
		{"strongly convex, inverse-t, P=1", trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05}, Clip: 0.5, Schedule: trainer.BoundedInverseT, Passes: 3}, preprocess.Bounds, 1},
		{"strongly convex, inverse-t, P=3", trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05}, Clip: 0.5, Schedule: trainer.BoundedInverseT, Passes: 3}, preprocess.Bounds, 3},
		{"strongly convex, constant step, P=2", trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05}, Schedule: trainer.Constant, Passes: 2}, preprocess.None, 2},
		{"convex, constant step, P=3", trainer.Config{Passes: 2}, preprocess.Bounds, 3},
	}
}

func (s idSetup) fit(t *testing.T, d idData, c int, testFrac float64) *modelfile.Released {
	t.Helper()
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	if s.mode == preprocess.Bounds {
		schema.Bounds = []datasets.Bound{{Column: "f0", Lo: -3, Hi: 4}, {Column: "f1", Lo: -3, Hi: 4}}
	}
	r, err := Fit(context.Background(), d.tables(t), schema, dp.Budget{Epsilon: 1}, private.Options{
		Mechanism: perturb.Gamma, Preprocess: s.mode, TestFrac: testFrac, Seed: 9, Trainer: s.cfg,
		Noise: perturb.Seeded(5), PrivacyID: "user", MaxRowsPerID: c,
	}, s.parts)
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	return r
}

// TestFitPrivacyIDNeighbours trains on data sets that differ in every row
// of one privacy ID (their labels, their features at and beyond the
// bounds, their number from 1 to beyond c, their positions and shards),
// with the same seeds and the same seeded noise, and checks that the
// released weights differ by at most the certified sensitivity
// c max_p (n_p/n) Delta_p, on each route; that the public parts of the
// release (sizes, n, Delta) are the neighbours'; and that Verify accepts
// the model files. It also checks that the group factor c is needed:
// some neighbour moves the weights by more than Delta/c, the bound for
// one row.
func TestFitPrivacyIDNeighbours(t *testing.T) {
	const c = 3
	base := idBase(40, 1)
	worstGroup := 0.0
	for _, s := range idSetups() {
		for _, testFrac := range []float64{0, 0.2} {
			r0 := s.fit(t, base, c, testFrac)
			checkPartitioned(t, s.name, r0)
			delta := r0.Certificate.L2Sensitivity
			if r0.Partitions.MaxRowsPerID != c || r0.Partitions.IDs != 40 || r0.Split.Rows != 40*c || r0.Partitions.Shards != nil || r0.Certificate.Neighbouring != strings.Replace(modelfile.IDNeighbours, "every feature cell a finite number", modelfile.MissingCells, 1) {
				t.Errorf("%s: partitions %+v, split %+v, neighbours %q", s.name, r0.Partitions, r0.Split, r0.Certificate.Neighbouring)
			}
			for _, user := range []string{"u0", "u7", "u39"} {
				for name, rows := range idNeighbours(base, user, c) {
					r1 := s.fit(t, base.replace(user, rows), c, testFrac)
					if r1.Certificate.L2Sensitivity != delta || r1.Split != r0.Split || !slices.Equal(r1.Partitions.Sizes, r0.Partitions.Sizes) {
						t.Errorf("%s, %s, %s: the release's public parts differ between neighbours", s.name, user, name)
					}
					dist := floats.Distance(r0.Model.W, r1.Model.W, 2)
					worstGroup = math.Max(worstGroup, dist/(delta/c))
					if dist > delta {
						t.Errorf("%s, test fraction %g, %s, %s: ||w_S - w_S'|| = %.6g > Delta = %.6g", s.name, testFrac, user, name, dist, delta)
					}
				}
			}
		}
	}
	t.Logf("largest realized distance over Delta/c (one row's bound): %.4f", worstGroup)
	if worstGroup <= 1 {
		t.Errorf("no neighbour moved the weights by more than one row's bound Delta/c (largest ratio %.4f): the test could not tell a per-row bound from the per-ID one", worstGroup)
	}
}

// TestFitPrivacyIDSensitivity checks the calibration: c times the
// partitioned bound of the same layout, and that a fit per privacy ID
// with one partition is the release of the padded rows.
func TestFitPrivacyIDSensitivity(t *testing.T) {
	s := idSetups()[3]
	base := idBase(30, 2)
	r1 := s.fit(t, base, 1, 0)
	r4 := s.fit(t, base, 4, 0)
	// n = c * IDs; with c = 4 every size is 4x, and Delta = 4 max_p (n_p/n) Delta_p
	// with Delta_p of the convex constant-step route (independent of n_p).
	if r4.Split.TrainRows != 120 || r1.Split.TrainRows != 30 {
		t.Fatalf("training rows %d and %d, want 120 and 30", r4.Split.TrainRows, r1.Split.TrainRows)
	}
	for p := range r1.Partitions.Sizes {
		if r4.Partitions.Sizes[p] != 4*r1.Partitions.Sizes[p] {
			t.Fatalf("sizes %v for c = 4, %v for c = 1", r4.Partitions.Sizes, r1.Partitions.Sizes)
		}
	}
	if got, want := r4.Certificate.L2Sensitivity, 4*r1.Certificate.L2Sensitivity; math.Abs(got-want) > 1e-12*want {
		t.Errorf("Delta %.17g for c = 4, want 4 x %.17g", got, r1.Certificate.L2Sensitivity)
	}
}

// TestBoundKeepsOwnRows checks Plan.Bound: c rows in slot order, the kept
// rows a choice of the ID's own rows, the padding null rows, and that
// another ID's rows (which shift the row numbers) do not change the choice.
func TestBoundKeepsOwnRows(t *testing.T) {
	d := idData{{}, {}}
	for i := range 9 {
		d[0] = append(d[0], idRow{f: [2]float64{float64(i), 0}, user: "x", y: "a"})
	}
	d[1] = append(d[1], idRow{user: "y", y: "b"})
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	opts := private.Options{Preprocess: preprocess.None, Seed: 3, PrivacyID: "user", MaxRowsPerID: 4}
	pl, err := NewPlan([]string{"f0", "user", "f1", "y"}, schema, dp.Budget{}, opts, 2)
	if err != nil {
		t.Fatal(err)
	}
	kept := func(d idData) (x, y []Row) {
		byID := map[string][]Row{}
		for i, tab := range d.tables(t) {
			rows, _, err := pl.Rows(tab, tab.Source)
			if err != nil {
				t.Fatal(i, err)
			}
			for _, r := range rows {
				byID[r.ID] = append(byID[r.ID], r)
			}
		}
		x, err := pl.Bound(byID["x"])
		if err != nil {
			t.Fatal(err)
		}
		y, err = pl.Bound(byID["y"])
		if err != nil {
			t.Fatal(err)
		}
		return x, y
	}
	x0, y0 := kept(d)
	if len(x0) != 4 || len(y0) != 4 {
		t.Fatalf("%d and %d rows kept, want 4", len(x0), len(y0))
	}
	for k, r := range y0 {
		if r.Slot != k || r.ID != "y" || (k > 0) != (r.Shard == "") || k > 0 && floats.Norm(r.X, 2) != 0 {
			t.Errorf("ID y, slot %d: %+v, want its row then null rows", k, r)
		}
	}
	// Interleave rows of other IDs before and between x's rows.
	var mixed []idRow
	for i, r := range d[0] {
		mixed = append(mixed, idRow{user: "z" + strconv.Itoa(i), y: "b"}, r)
	}
	x1, _ := kept(idData{mixed, d[1]})
	for k := range x0 {
		if x0[k].Slot != k || x0[k].Row >= x0[min(k+1, 3)].Row && k < 3 || !slices.Equal(x0[k].X, x1[k].X) {
			t.Errorf("slot %d: kept %+v, with other IDs interleaved %+v", k, x0[k], x1[k])
		}
	}
	if _, err := pl.Bound(append(slices.Clone(x0[:1]), y0[0])); !errors.Is(err, datasets.ErrFormat) {
		t.Errorf("rows of two IDs: %v", err)
	}
}

// TestFitPrivacyIDErrors checks the refusals before any training.
func TestFitPrivacyIDErrors(t *testing.T) {
	base := idBase(10, 3)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	fit := func(tabs []*datasets.Table, id string, c int) error {
		_, err := Fit(context.Background(), tabs, schema, dp.Budget{Epsilon: 1}, private.Options{
			Mechanism: perturb.Gamma, Preprocess: preprocess.None, Seed: 1, Trainer: trainer.Config{Passes: 1}, PrivacyID: id, MaxRowsPerID: c,
		}, 2)
		return err
	}
	empty := base.tables(t)
	empty[1].SetCell(2, 1, "")
	for _, tc := range []struct {
		name string
		tabs []*datasets.Table
		id   string
		c    int
		want error
	}{
		{"missing column", base.tables(t), "uid", 2, datasets.ErrSchema},
		{"the label", base.tables(t), "y", 2, datasets.ErrSchema},
		{"empty ID", empty, "user", 2, datasets.ErrFormat},
		{"c = 0", base.tables(t), "user", 0, private.ErrOptions},
		{"c < 0", base.tables(t), "user", -1, private.ErrOptions},
		{"c without an ID", base.tables(t), "", 2, private.ErrOptions},
	} {
		if err := fit(tc.tabs, tc.id, tc.c); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	_, err := private.Fit(context.Background(), base.tables(t)[0], schema, dp.Budget{Epsilon: 1}, private.Options{
		Mechanism: perturb.Gamma, Preprocess: preprocess.None, PrivacyID: "user", MaxRowsPerID: 2,
	})
	if !errors.Is(err, private.ErrOptions) {
		t.Errorf("private.Fit with a privacy ID: %v, want ErrOptions", err)
	}
}

// TestFitPrivacyIDPartitions: per privacy ID, an ID's rows train in one
// partition, so the partitions are at most the training IDs, not the
// training rows (c of them per ID): 3 IDs of c = 2 rows, all training,
// fit in 3 partitions and are refused in 4 and in 6 (6 training rows),
// with an error in IDs wrapping ErrOptions, before any training; the plan
// (LayoutIDs) refuses the counts alike, while rows without an ID still
// take as many partitions as rows.
func TestFitPrivacyIDPartitions(t *testing.T) {
	tabs := idBase(3, 3).tables(t)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	opts := private.Options{Mechanism: perturb.Gamma, Preprocess: preprocess.None, Seed: 1, Trainer: trainer.Config{Passes: 1}, PrivacyID: "user", MaxRowsPerID: 2}
	for _, parts := range []int{3, 4, 6} {
		rel, err := Fit(context.Background(), tabs, schema, dp.Budget{Epsilon: 1}, opts, parts)
		switch {
		case parts == 3 && err != nil:
			t.Errorf("3 partitions for 3 training IDs: %v", err)
		case parts == 3 && rel.Split.TrainRows != 6:
			t.Errorf("3 IDs of c = 2: %d training rows, want 6", rel.Split.TrainRows)
		case parts > 3 && (!errors.Is(err, private.ErrOptions) || !strings.Contains(err.Error(), fmt.Sprintf("%d partitions for 3 training privacy IDs", parts))):
			t.Errorf("%d partitions for 3 training IDs (6 rows): %v, want ErrOptions in IDs", parts, err)
		}
	}
	pl, err := NewPlan([]string{"f0", "user", "f1", "y"}, schema, dp.Budget{Epsilon: 1}, opts, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pl.LayoutIDs(placement.IDCounts{IDs: 4, Train: []int{1, 1, 1, 0, 0, 0}}); !errors.Is(err, private.ErrOptions) {
		t.Errorf("LayoutIDs of 3 training IDs in 6 partitions: %v, want ErrOptions", err)
	}
	opts.PrivacyID, opts.MaxRowsPerID = "", 0
	rows, err := NewPlan([]string{"f0", "f1", "y"}, schema, dp.Budget{Epsilon: 1}, opts, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rows.Layout([]placement.Shard{{Name: "s0.csv", Rows: 6}}); err != nil {
		t.Errorf("6 partitions for 6 training rows without a privacy ID: %v", err)
	}
}

// TestVerifyPrivacyIDTampered checks that Verify recomputes the per-ID
// bound from the published c and sizes: a changed c, size, ID count or
// unit of privacy is found.
func TestVerifyPrivacyIDTampered(t *testing.T) {
	r := idSetups()[1].fit(t, idBase(20, 4), 2, 0)
	for _, tc := range []struct {
		name string
		edit func(r *modelfile.Released)
	}{
		{"c = 1", func(r *modelfile.Released) { r.Partitions.MaxRowsPerID = 1 }},
		{"c = 1 and the rows", func(r *modelfile.Released) { r.Partitions.MaxRowsPerID, r.Split.Rows = 1, 20 }},
		{"a size", func(r *modelfile.Released) { r.Partitions.Sizes[0] += 2; r.Partitions.Sizes[1] -= 2 }},
		{"a size not a multiple of c", func(r *modelfile.Released) { r.Partitions.Sizes[0]++; r.Partitions.Sizes[1]-- }},
		{"the IDs", func(r *modelfile.Released) { r.Partitions.IDs++ }},
		{"no privacy ID", func(r *modelfile.Released) { r.Partitions.PrivacyID = "" }},
		{"shards", func(r *modelfile.Released) { r.Partitions.Shards = []placement.Shard{{Name: "a.csv", Rows: 40}} }},
	} {
		var buf bytes.Buffer
		if err := r.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := modelfile.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(back)
		if v, _, err := modelfile.Verify(back); err == nil {
			t.Errorf("%s: Verify accepts the file (%v)", tc.name, v)
		}
	}
}
