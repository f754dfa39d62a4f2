package partition

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// shardsOf splits t into k shards of consecutive rows, named
// shard-<i>.csv.
func shardsOf(t *datasets.Table, k int) []*datasets.Table {
	out := make([]*datasets.Table, k)
	for i := range k {
		s := t.Slice(i*t.Len()/k, (i+1)*t.Len()/k)
		s.Source, s.First = fmt.Sprintf("dir/shard-%d.csv", i), 0
		out[i] = s
	}
	return out
}

func cloneShards(ts []*datasets.Table) []*datasets.Table {
	out := make([]*datasets.Table, len(ts))
	for i, t := range ts {
		out[i] = fittest.Clone(t)
	}
	return out
}

func TestPartitionHashIsPositional(t *testing.T) {
	counts := make([]int, 8)
	for row := 1; row <= 80000; row++ {
		p := placement.PartitionOf(3, "a.csv", row, 8)
		if p != placement.PartitionOf(3, "a.csv", row, 8) || p < 0 || p >= 8 {
			t.Fatalf("row %d: partition %d", row, p)
		}
		counts[p]++
	}
	// Each count is Binomial(80000, 1/8): sd 93.5; 6 sd fails with
	// probability below 1e-8 per count.
	for p, c := range counts {
		if math.Abs(float64(c)-10000) > 6*93.5 {
			t.Errorf("partition %d has %d of 80000 rows", p, c)
		}
	}
	if placement.PartitionOf(3, "a.csv", 5, 1<<20) == placement.PartitionOf(4, "a.csv", 5, 1<<20) && placement.PartitionOf(3, "a.csv", 6, 1<<20) == placement.PartitionOf(4, "a.csv", 6, 1<<20) {
		t.Error("the seed does not change the partitions")
	}
	held := 0
	for row := 1; row <= 10000; row++ {
		if placement.HeldOut(1, "b.csv", row, 0.2) {
			held++
		}
	}
	if math.Abs(float64(held)-2000) > 6*40 { // sd sqrt(10000*0.2*0.8) = 40
		t.Errorf("%d of 10000 rows held out at 0.2", held)
	}
}

// TestFitPartitionedOneIsFit checks that one partition of one shard, with
// every row training, is Fit's run: the same rows in the same order, the
// same seed.
func TestFitPartitionedOneIsFit(t *testing.T) {
	tab := fittest.Blobs(120, 3, []string{"a", "b"}, 2)
	tab.Source = "one.csv"
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	opts := private.Options{Seed: 5, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Schedule: trainer.BoundedInverseT, Passes: 4}}
	want, err := private.Fit(context.Background(), tab, schema, dp.Budget{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Fit(context.Background(), []*datasets.Table{tab}, schema, dp.Budget{}, opts, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Model.W, want.Model.W) {
		t.Errorf("one partition: weights %v, Fit's %v", got.Model.W, want.Model.W)
	}
}

type partitionSetup struct {
	name    string
	classes []string
	mode    preprocess.Mode
	cfg     trainer.Config
	auto    bool
	mech    dp.Mechanism
	parts   int
	// rule fits by the public rule (no mechanism named), whose mechanism
	// mech is (RuleMechanism).
	rule bool
}

func partitionSetups() []partitionSetup {
	return []partitionSetup{
		{name: "binary, bounds, auto, P=4", classes: []string{"a", "b"}, mode: preprocess.Bounds, auto: true, mech: perturb.Gamma, parts: 4},
		{name: "binary, none, clip, P=3", classes: []string{"a", "b"}, mode: preprocess.None, mech: perturb.Laplace, parts: 3,
			cfg: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.2}, Clip: 0.3, Schedule: trainer.BoundedInverseT}},
		{name: "softmax, bounds, P=5", classes: []string{"x", "y", "z"}, mode: preprocess.Bounds, mech: perturb.AnalyticGaussian, parts: 5,
			cfg: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.02}, Schedule: trainer.BoundedInverseT, Passes: 3}},
		{name: "binary, convex route, constant step, P=4", classes: []string{"a", "b"}, mode: preprocess.Bounds, mech: perturb.Gamma, parts: 4,
			cfg: trainer.Config{Passes: 2}},
		{name: "softmax, the public rule with delta (analytic Gaussian, auto), P=4", classes: []string{"x", "y", "z"}, mode: preprocess.Bounds, mech: perturb.AnalyticGaussian, parts: 4, rule: true},
	}
}

func (s partitionSetup) fit(t *testing.T, shards []*datasets.Table, testFrac float64, noise perturb.Source) *modelfile.Released {
	t.Helper()
	schema := datasets.Schema{Label: "y", Classes: s.classes}
	if s.mode == preprocess.Bounds {
		schema.Bounds = fittest.BoundsFor(shards[0], -3, 4)
	}
	budget := dp.Budget{Epsilon: 1}
	if !s.mech.Pure() {
		budget.Delta = 1e-5
	}
	opts := private.Options{
		Mechanism: s.mech, Preprocess: s.mode, TestFrac: testFrac, Seed: 7, Trainer: s.cfg, Auto: s.auto,
		Noise: noise,
	}
	if s.rule {
		opts.Mechanism, opts.Auto, opts.Select = "", false, &selection.Config{}
	}
	r, err := Fit(context.Background(), shards, schema, budget, opts, s.parts)
	if err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	if r.Certificate == nil || r.Certificate.Mechanism != s.mech {
		t.Fatalf("%s: released by %v, want %s", s.name, r.Certificate, s.mech)
	}
	return r
}

// TestFitPartitionedNeighbours trains on shard lists that differ in one row
// (in each shard), with the same seeds and the same seeded noise, and checks
// that the released weights differ by at most the certified sensitivity and
// that the public parts of the release are the same; and that Verify
// accepts the model files.
func TestFitPartitionedNeighbours(t *testing.T) {
	worst := 0.0
	for _, s := range partitionSetups() {
		base := shardsOf(fittest.Blobs(150, 4, s.classes, 3), 3)
		r0 := s.fit(t, base, 0.2, perturb.Seeded(11))
		checkPartitioned(t, s.name, r0)
		delta := r0.Certificate.L2Sensitivity
		for shard := range base {
			for _, nc := range fittest.NeighbourCases(s.classes) {
				other := cloneShards(base)
				nc.Edit(other[shard], 4)
				r1 := s.fit(t, other, 0.2, perturb.Seeded(11))
				if r1.Certificate.L2Sensitivity != delta || r1.Split != r0.Split || !slices.Equal(r1.Certificate.Assumptions, r0.Certificate.Assumptions) {
					t.Errorf("%s, shard %d, %s: the release's public parts differ between neighbours", s.name, shard, nc.Name)
				}
				dist := floats.Distance(r0.Model.W, r1.Model.W, 2)
				worst = math.Max(worst, dist/delta)
				if dist > delta {
					t.Errorf("%s, shard %d, %s: ||w_S - w_S'|| = %.6g > Delta = %.6g", s.name, shard, nc.Name, dist, delta)
				}
			}
		}
		sec := s.fit(t, base, 0, nil)
		checkPartitioned(t, s.name+", secure", sec)
		if !sec.Private || !sec.Certificate.Private {
			t.Errorf("%s: a secure release is not marked private", s.name)
		}
	}
	t.Logf("largest realized/certified distance over the neighbours: %.4f", worst)
}

// TestFitPartitionedDelta checks the sensitivity the noise is calibrated
// to: on the strongly convex route with b = 1, 2L/(mu n) with n all
// training rows (not the 2L/(mu n_p) of a partition); on the convex route
// with a constant step, where a run's Delta does not shrink with its rows,
// max_p (n_p/n) times the single run's, about 1/P of it.
func TestFitPartitionedDelta(t *testing.T) {
	s := partitionSetups()[1]
	r := s.fit(t, shardsOf(fittest.Blobs(150, 4, s.classes, 3), 3), 0, perturb.Seeded(1))
	c := r.Certificate
	want := (1 + stability.RoundingSlack) * 2 * c.Clip / (c.Mu * float64(r.Split.TrainRows))
	if c.SensitivityRoute != "partitioned/"+stability.RouteStronglyConvexSGD.String() || math.Abs(c.L2Sensitivity-want) > 1e-9*want || c.N != 150 {
		t.Errorf("route %s, Delta %.17g, n %d; want partitioned/strongly-convex-sgd, 2G/(mu n) = %.17g, 150", c.SensitivityRoute, c.L2Sensitivity, c.N, want)
	}
	s = partitionSetups()[3]
	r = s.fit(t, shardsOf(fittest.Blobs(200, 4, s.classes, 3), 3), 0, perturb.Seeded(1))
	c = r.Certificate
	single := r.Stability.Delta
	want = float64(slices.Max(r.Partitions.Sizes)) / float64(r.Split.TrainRows) * single
	if c.SensitivityRoute != "partitioned/"+stability.RouteConvexSGD.String() || math.Abs(c.L2Sensitivity-want) > 1e-12*want || c.L2Sensitivity > 0.4*single {
		t.Errorf("convex route, P = 4: route %s, Delta %.17g, want (max n_p/n) Delta_single = %.17g (Delta_single %.17g)", c.SensitivityRoute, c.L2Sensitivity, want, single)
	}
}

// TestFitPartitionedNeighboursHaveTeeth checks that the neighbour test could
// fail: some neighbour nearly attains Delta.
func TestFitPartitionedNeighboursHaveTeeth(t *testing.T) {
	base := shardsOf(fittest.Blobs(80, 2, []string{"a", "b"}, 5), 2)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	cfg := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 1}, Clip: 0.05, Schedule: trainer.BoundedInverseT, Passes: 1}
	fit := func(tabs []*datasets.Table) *modelfile.Released {
		r, err := Fit(context.Background(), tabs, schema, dp.Budget{Epsilon: 1}, private.Options{
			Mechanism: perturb.Gamma, Preprocess: preprocess.None, Seed: 3, Trainer: cfg, Noise: perturb.Seeded(1),
		}, 4)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r0 := fit(base)
	best := 0.0
	for sh := range base {
		for i := range base[sh].Len() {
			other := cloneShards(base)
			row := other[sh]
			for j := range 2 {
				row.SetCell(i, j, strconv.FormatFloat(-1e3*fittest.MustFloat(row.Cell(i, j)), 'g', -1, 64))
			}
			row.SetCell(i, 2, map[string]string{"a": "b", "b": "a"}[row.Cell(i, 2)])
			best = math.Max(best, floats.Distance(r0.Model.W, fit(other).Model.W, 2)/r0.Certificate.L2Sensitivity)
		}
	}
	t.Logf("largest realized/certified distance: %.4f", best)
	if best <= 0.5 || best > 1 {
		t.Errorf("largest realized/certified distance %.4f, want in (0.5, 1]", best)
	}
}

func TestFitPartitionedShardOrder(t *testing.T) {
	s := partitionSetups()[0]
	base := shardsOf(fittest.Blobs(150, 4, s.classes, 3), 3)
	r0 := s.fit(t, base, 0.2, perturb.Seeded(4))
	rev := []*datasets.Table{base[2], base[0], base[1]}
	r1 := s.fit(t, rev, 0.2, perturb.Seeded(4))
	if !slices.Equal(r0.Model.W, r1.Model.W) {
		t.Error("the order of the shards changes the release")
	}
}

func TestFitPartitionedErrors(t *testing.T) {
	base := shardsOf(fittest.Blobs(60, 3, []string{"a", "b"}, 3), 3)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(base[0], -3, 4)}
	opts := private.Options{Mechanism: perturb.Gamma, Auto: true, Seed: 1}
	budget := dp.Budget{Epsilon: 1}
	chunk := cloneShards(base)
	chunk[1].First = 20
	badCell := cloneShards(base)
	badCell[2].SetCell(5, 0, "abc")
	dup := cloneShards(base)
	dup[2].Source = "dir/shard-0.csv"
	unclean := cloneShards(base)
	unclean[1].Source = "/abs/shard-1.csv"
	header := cloneShards(base)
	header[1].Columns[0] = "g0"
	for _, c := range []struct {
		name   string
		tables []*datasets.Table
		opts   private.Options
		parts  int
		want   error
	}{
		{"more partitions than rows", base, opts, 61, private.ErrOptions},
		{"zero partitions", base, opts, 0, private.ErrOptions},
		{"a chunk for a shard", chunk, opts, 4, datasets.ErrFormat},
		{"malformed cell", badCell, opts, 4, datasets.ErrFormat},
		{"duplicate shard names", dup, opts, 4, datasets.ErrFormat},
		{"an absolute shard name", unclean, opts, 4, datasets.ErrFormat},
		{"a batch above a partition's size", base, private.Options{Mechanism: perturb.Gamma, Seed: 1, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}, Batch: 30}}, 4, private.ErrOptions},
		{"no route (inverse-t steps above 1/beta)", base, private.Options{Mechanism: perturb.Gamma, Seed: 1, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 1e-4}, Schedule: trainer.InverseT}}, 4, private.ErrOptions},
		{"different headers", header, opts, 4, datasets.ErrFormat},
		{"standardize", base, private.Options{Mechanism: perturb.Gamma, Auto: true, Preprocess: preprocess.Standardize}, 4, private.ErrOptions},
		{"stratified", base, private.Options{Mechanism: perturb.Gamma, Auto: true, Stratify: true, TestFrac: 0.2}, 4, private.ErrOptions},
		{"holdout selection", base, private.Options{Select: &selection.Config{Method: selection.Holdout}}, 4, private.ErrOptions},
		{"random stopping", base, private.Options{Select: &selection.Config{Method: selection.RandomStopping}}, 4, private.ErrOptions},
		{"the rule with a lambda", base, private.Options{Select: &selection.Config{}, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}}}, 4, private.ErrOptions},
		{"the rule and a mechanism", base, private.Options{Select: &selection.Config{}, Mechanism: perturb.Gamma}, 4, private.ErrOptions},
		{"no shards", nil, opts, 4, datasets.ErrFormat},
	} {
		r, err := Fit(context.Background(), c.tables, schema, budget, c.opts, c.parts)
		if !errors.Is(err, c.want) || r != nil {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// checkPartitioned writes a partitioned release's model file, reads it
// back and verifies it as certify does.
func checkPartitioned(t *testing.T, name string, r *modelfile.Released) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Read(&buf)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want := modelfile.PrivateRelease
	if !r.Private {
		want = modelfile.NotPrivate
	}
	if v, why, err := modelfile.Verify(back); err != nil || v != want {
		t.Errorf("%s: Verify: %v %q %v, want %v", name, v, why, err, want)
	}
}

// TestVerifyPartitionedTampered checks that Verify recomputes the
// partitioned bound from the published sizes: a changed size or count is
// found.
func TestVerifyPartitionedTampered(t *testing.T) {
	tab := fittest.Blobs(120, 3, []string{"a", "b"}, 2)
	tab.Source = "s0.csv"
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	r, err := Fit(context.Background(), []*datasets.Table{tab}, schema, dp.Budget{Epsilon: 1}, private.Options{Mechanism: perturb.Gamma, Auto: true, Seed: 3}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := modelfile.Verify(r); err != nil || v != modelfile.PrivateRelease {
		t.Fatalf("untouched: %v %v", v, err)
	}
	sizes := r.Partitions.Sizes
	rows := r.Split.Rows
	// A file that claims more rows than a verification lays out, or row
	// counts that overflow, is refused at once rather than hashed for
	// hours (or for ever).
	for name, edit := range map[string]func(){
		"size moved":     func() { sizes[0]++; sizes[1]-- },
		"count":          func() { r.Partitions.Count++ },
		"no partitions":  func() { r.Partitions = nil },
		"one size grown": func() { sizes[2] += 5 },
		"1e15 rows":      func() { r.Partitions.Shards[0].Rows, r.Split.Rows = 1e15, 1e15 },
		"max rows twice": func() {
			r.Partitions.Shards = []placement.Shard{{Name: "a", Rows: math.MaxInt}, {Name: "b", Rows: math.MaxInt}}
		},
		"rows overflow to n": func() {
			r.Partitions.Shards = []placement.Shard{{Name: "a", Rows: math.MaxInt}, {Name: "b", Rows: rows + 1}}
		},
	} {
		saved, savedSizes, savedShards := r.Partitions, slices.Clone(sizes), slices.Clone(r.Partitions.Shards)
		edit()
		if _, _, err := modelfile.Verify(r); !errors.Is(err, modelfile.ErrVerify) {
			t.Errorf("%s: Verify %v, want modelfile.ErrVerify", name, err)
		}
		r.Partitions = saved
		copy(sizes, savedSizes)
		r.Partitions.Count = len(sizes)
		r.Partitions.Shards = savedShards
		r.Split.Rows = rows
	}
	if _, _, _, err := placement.PartitionLayout([]placement.Shard{{Name: "a", Rows: math.MaxInt}, {Name: "b", Rows: 1}}, 1, 0, 2); !errors.Is(err, datasets.ErrFormat) {
		t.Errorf("PartitionLayout of rows that overflow: %v, want ErrFormat", err)
	}
}

// TestNewPlanMethods checks, for every release method, that NewPlan takes
// the methods that release an SGD run (release.Method.SGD), whose runs a
// partitioned fit averages, and refuses the others with private.ErrOptions
// before any row is read.
func TestNewPlanMethods(t *testing.T) {
	tab := fittest.Blobs(20, 2, []string{"a", "b"}, 1)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	for _, m := range release.Methods() {
		budget := dp.Budget{Epsilon: 0.5}
		if !m.Name().Pure() {
			budget.Delta = 1e-5
		}
		opts := private.Options{Mechanism: m.Name(), Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}}}
		if release.TakesStumpRows(m) {
			opts.Trainer = trainer.Config{} // the stump refuses every knob first
		}
		pl, err := NewPlan(tab.Columns, schema, budget, opts, 2)
		switch {
		case m.SGD() && (err != nil || pl.Dim() != 3):
			t.Errorf("%s: %v, want a plan (it releases an SGD run)", m.Name(), err)
		case !m.SGD() && (!errors.Is(err, private.ErrOptions) || !strings.Contains(fmt.Sprint(err), release.SGDList())):
			t.Errorf("%s: %v, want private.ErrOptions naming %s", m.Name(), err, release.SGDList())
		}
	}
}

// TestTrainSorted: a partition's rows as a matrix in position order train
// to the weights TrainPartition gives from the rows in any order, bit for
// bit; a matrix of another width, labels of another length, no rows or a
// partition out of range are refused.
func TestTrainSorted(t *testing.T) {
	tab := fittest.Blobs(60, 2, []string{"a", "b"}, 4)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	opts := private.Options{Seed: 5, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}}}
	pl, err := NewPlan(tab.Columns, schema, dp.Budget{}, opts, 2)
	if err != nil {
		t.Fatal(err)
	}
	tab.Source = "s.csv"
	rows, _, err := pl.Rows(tab, "s.csv")
	if err != nil {
		t.Fatal(err)
	}
	var part []Row
	for _, r := range rows {
		if r.Partition == 1 {
			part = append(part, r)
		}
	}
	ctx := context.Background()
	slices.Reverse(part) // TrainPartition sorts them
	want, err := pl.TrainPartition(ctx, 1, len(rows), part)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(part, comparePosition)
	d := pl.Dim()
	X := mat.NewDense(len(part), d, nil)
	y := make([]float64, len(part))
	for i, r := range part {
		X.SetRow(i, r.X)
		y[i] = r.Y
	}
	got, err := pl.TrainSorted(ctx, 1, len(rows), X, y)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.W, want.W) || got.N != want.N {
		t.Errorf("TrainSorted: %d rows, weights %v; TrainPartition: %d rows, %v", got.N, got.W, want.N, want.W)
	}
	for name, c := range map[string]struct {
		p int
		X *mat.Dense
		y []float64
	}{
		"another width":       {1, mat.NewDense(len(part), d+1, nil), y},
		"labels of another n": {1, X, y[1:]},
		"no rows":             {1, nil, nil},
		"partition 2 of 2":    {2, X, y},
	} {
		if _, err := pl.TrainSorted(ctx, c.p, len(rows), c.X, c.y); !errors.Is(err, datasets.ErrFormat) && !errors.Is(err, private.ErrOptions) {
			t.Errorf("%s: %v, want an error wrapping datasets.ErrFormat or private.ErrOptions", name, err)
		}
	}
}

// TestRowsAllHeldOut: a chunk whose rows are all held out (a one-row shard,
// or the last chunk of a shard, at a seed that holds its row out) gives no
// training row and counts the row as held out; it built a matrix of no
// rows, which panics.
func TestRowsAllHeldOut(t *testing.T) {
	tab := fittest.Blobs(1, 2, []string{"a", "b"}, 3)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	for _, first := range []int{0, 4096} {
		seed := uint64(0)
		for !placement.HeldOut(seed, "s.csv", first+1, 0.2) {
			seed++
		}
		opts := private.Options{Seed: seed, TestFrac: 0.2, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}}}
		pl, err := NewPlan(tab.Columns, schema, dp.Budget{}, opts, 2)
		if err != nil {
			t.Fatal(err)
		}
		chunk := tab.Slice(0, 1)
		chunk.First = first
		rows, held, err := pl.Rows(chunk, "s.csv")
		if err != nil || len(rows) != 0 || held != 1 {
			t.Errorf("chunk at row %d, seed %d: %d rows, %d held out, %v; want 0, 1, nil", first, seed, len(rows), held, err)
		}
	}
}

// TestReleaseRefusesSettingsFirst checks that a release with no partition
// results for a refused partition count reports the refusal (ErrOptions,
// exit 2), not "no partition has rows" (ErrFormat, exit 4): a runner may
// run the release after the layout refused the setting.
func TestReleaseRefusesSettingsFirst(t *testing.T) {
	tab := fittest.Blobs(6, 2, []string{"a", "b"}, 3)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	opts := private.Options{Mechanism: perturb.Gamma, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}}}
	pl, err := NewPlan(tab.Columns, schema, dp.Budget{Epsilon: 1}, opts, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Release(context.Background(), nil, []placement.Shard{{Name: "s0", Rows: tab.Len()}}); !errors.Is(err, private.ErrOptions) || errors.Is(err, datasets.ErrFormat) {
		t.Errorf("10 partitions for %d rows, no results: %v, want ErrOptions alone", tab.Len(), err)
	}
}
