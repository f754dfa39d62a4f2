package selection

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/stump"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestPlanParts checks the premise of both proofs: the parts of the
// training rows are disjoint, cover them, and are a function of (n, the
// fractions, the seed) alone.
func TestPlanParts(t *testing.T) {
	for _, cfg := range []Config{{Method: Holdout}, {Method: RandomStopping}, {Method: Holdout, TuneFrac: 0.5, ValFrac: 0.5}, {Method: Holdout, TuneFrac: 0.05}} {
		for _, n := range []int{40, 97, 1000} {
			for seed := uint64(1); seed <= 3; seed++ {
				pl, err := NewPlan(cfg, n, losses.Logistic{}, 2, 5, dp.Budget{Epsilon: 1}, seed)
				if err != nil {
					t.Fatalf("%+v n %d: %v", cfg, n, err)
				}
				again, _ := NewPlan(cfg, n, losses.Logistic{}, 2, 5, dp.Budget{Epsilon: 1}, seed)
				if !slices.Equal(pl.tune, again.tune) || !slices.Equal(pl.val, again.val) || !slices.Equal(pl.rel, again.rel) {
					t.Errorf("%+v n %d seed %d: two plans differ", cfg, n, seed)
				}
				all := append(append(slices.Clone(pl.tune), pl.val...), pl.rel...)
				if pl.cfg.Method == RandomStopping {
					all = append(slices.Clone(pl.tune), pl.val...)
					if !slices.Equal(pl.rel, pl.tune) {
						t.Errorf("random stopping releases a run trained on other rows")
					}
				}
				slices.Sort(all)
				for i, v := range all {
					if v != i {
						t.Fatalf("%+v n %d seed %d: the parts are not a partition of the %d rows (%d at %d)", cfg, n, seed, n, v, i)
					}
				}
				if len(all) != n {
					t.Fatalf("%+v n %d: %d rows in the parts", cfg, n, len(all))
				}
			}
		}
	}
}

// signRows returns n rows of norm at most 1 whose label is the sign of
// the first feature, with label noise of rate flip.
func signRows(n int, seed uint64, flip float64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	X := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range n {
		a := 2*rng.Float64() - 1
		X.SetRow(i, []float64{0.6 * a, 0.3 * (2*rng.Float64() - 1), 0.5})
		y[i] = math.Copysign(1, a)
		if rng.Float64() < flip {
			y[i] = -y[i]
		}
	}
	return X, y
}

// TestSelectionScoreSensitivity is the neighbour test of the selection's
// score: with the runs' weights fixed (they never read the validation
// rows), replacing one validation row by an adversarial one (its label
// flipped, or its features moved across the decision boundary, or both)
// changes a run's accuracy by at most 1/n_val, the sensitivity the Laplace
// noise of Select is calibrated to; some replacement attains it, so a
// smaller claim would fail here.
func TestSelectionScoreSensitivity(t *testing.T) {
	X, y := signRows(300, 4, 0.1)
	pl, err := NewPlan(Config{Method: Holdout}, 300, losses.Logistic{}, 2, 3, dp.Budget{Epsilon: 2}, 7)
	if err != nil {
		t.Fatal(err)
	}
	Xt, yt := Rows(X, y, pl.tune)
	Xv, yv := Rows(X, y, pl.val)
	nval := len(yv)
	base := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Passes: 3, Seed: 7}
	attained := false
	for i, s := range pl.settings {
		m, cfg := lookupScaled(t, s, base, len(pl.tune), dp.Budget{Epsilon: 1})
		p, err := m.Prepare(context.Background(), releaseRows(Xt, yt, cfg), dp.Budget{Epsilon: 1})
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Release(context.Background(), perturb.Seeded(uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		w := out.Model
		acc := w.Accuracy(Xv, yv)
		for j := range nval {
			x := slices.Clone(Xv.RawRowView(j))
			for _, repl := range [][]float64{
				nil, // label flipped only
				{-x[0], -x[1], -x[2]},
				{1, 0, 0}, {-1, 0, 0},
			} {
				Xn := mat.DenseCopyOf(Xv)
				yn := slices.Clone(yv)
				yn[j] = -yn[j]
				if repl != nil {
					Xn.SetRow(j, repl)
				}
				d := math.Abs(w.Accuracy(Xn, yn) - acc)
				if d > 1/float64(nval)+1e-15 {
					t.Fatalf("candidate %d, validation row %d: accuracy moved by %v > 1/n_val = %v", i, j, d, 1/float64(nval))
				}
				attained = attained || d > 1/float64(nval)-1e-15
			}
		}
	}
	if !attained {
		t.Error("no replacement attained 1/n_val: the test has no teeth")
	}
}

// TestHoldoutIsolation checks the parallel composition of a holdout
// selection on neighbours (seeded noise, the same seeds): a replaced
// release row never changes the choice, and a replaced tuning or
// validation row never changes the released weights when the choice is
// the same; the negative control, a replaced release row, does change
// them.
func TestHoldoutIsolation(t *testing.T) {
	X, y := signRows(400, 9, 0.05)
	base := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Passes: 2, Seed: 3}
	b := dp.Budget{Epsilon: 3}
	pl, err := NewPlan(Config{Method: Holdout, MeanRuns: 15}, 400, losses.Logistic{}, 2, 3, b, 3)
	if err != nil {
		t.Fatal(err)
	}
	run := func(X *mat.Dense, y []float64) *Outcome {
		o, err := pl.Run(context.Background(), X, y, base, nil, perturb.Seeded(5), nil)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	ref := run(X, y)
	neighbour := func(i int) (*mat.Dense, []float64) {
		Xn, yn := mat.DenseCopyOf(X), slices.Clone(y)
		Xn.SetRow(i, []float64{-0.6 * y[i], 0.3, 0.5})
		yn[i] = -y[i]
		return Xn, yn
	}
	same := 0
	for _, i := range append(pl.tune[:3:3], pl.val[:3]...) {
		o := run(neighbour(i))
		if o.Record.Chosen != ref.Record.Chosen {
			continue
		}
		same++
		if !slices.Equal(o.Release.Model.W, ref.Release.Model.W) {
			t.Errorf("tuning row %d replaced, same choice: the released weights differ", i)
		}
	}
	if same == 0 {
		t.Error("no neighbour in the tuning rows kept the choice: nothing was checked")
	}
	changed := false
	for _, i := range pl.rel[:3] {
		o := run(neighbour(i))
		if o.Record.Chosen != ref.Record.Chosen {
			t.Errorf("release row %d replaced: the choice moved from %d to %d", i, ref.Record.Chosen, o.Record.Chosen)
		}
		changed = changed || !slices.Equal(o.Release.Model.W, ref.Release.Model.W)
	}
	if !changed {
		t.Error("replacing release rows never changed the released weights: the test has no teeth")
	}
}

// TestRecordCheck: a record rebuilt from the public values matches, and
// a record for other public values does not.
func TestRecordCheck(t *testing.T) {
	X, y := signRows(200, 2, 0)
	b := dp.Budget{Epsilon: 1, Delta: 1e-6}
	pl, err := NewPlan(Config{Method: Holdout, MeanRuns: 12}, 200, losses.Logistic{}, 2, 3, b, 4)
	if err != nil {
		t.Fatal(err)
	}
	o, err := pl.Run(context.Background(), X, y, trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Passes: 2, Seed: 4}, nil, perturb.Seeded(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, rb, rows, err := o.Record.Check(200, losses.Logistic{}, 2, 3, b, 4)
	if err != nil || s != pl.settings[o.Record.Chosen] || rb != b || rows != len(pl.rel) {
		t.Fatalf("Check: %v %v %v %v", s, rb, rows, err)
	}
	if s.Mechanism != perturb.AMP && s.Mechanism != perturb.AnalyticGaussian {
		t.Errorf("delta > 0: chose %s, want amp or the analytic Gaussian", s.Mechanism)
	}
	for _, tc := range []struct {
		n, dim int
		b      dp.Budget
		seed   uint64
	}{{201, 3, b, 4}, {200, 5000, b, 4}, {200, 3, dp.Budget{Epsilon: 1}, 4}} {
		if _, _, _, err := o.Record.Check(tc.n, losses.Logistic{}, 2, tc.dim, tc.b, tc.seed); !errors.Is(err, ErrRecord) {
			t.Errorf("%+v: %v, want ErrRecord", tc, err)
		}
	}
}

// lookupScaled returns the pure method of a setting's runs and its knobs
// for n rows at budget b.
func lookupScaled(t *testing.T, s Setting, base trainer.Config, n int, b dp.Budget) (release.Method, trainer.Config) {
	t.Helper()
	m, err := release.Lookup(pureTwin(s.Mechanism))
	if err != nil {
		t.Fatal(err)
	}
	tu, err := release.LookupTuner(m.Name())
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := tu.AutoScaled(base, n, 3, b, s.Scale)
	if err != nil {
		t.Fatal(err)
	}
	return m, cfg
}

func releaseRows(X *mat.Dense, y []float64, cfg trainer.Config) release.Rows {
	return release.Rows{X: X, Y: y, Config: cfg}
}

// TestConfigZeroIsRule: the zero Config means the rule, the train
// command's default: it is valid, selects nothing (NewPlan refuses it, as
// it refuses Rule), and the rule refuses the knobs of a selection.
func TestConfigZeroIsRule(t *testing.T) {
	if !(Config{}).Method.IsRule() || !Rule.IsRule() || Holdout.IsRule() || RandomStopping.IsRule() {
		t.Error("IsRule: want the empty method and Rule only")
	}
	for _, c := range []Config{{}, {Method: Rule}, {Method: Holdout, TuneFrac: 0.3}, {Method: RandomStopping, MeanRuns: 5}} {
		if err := c.Check(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	for _, c := range []Config{{TuneFrac: 0.2}, {ValFrac: 0.1}, {Method: Rule, Eta: 1}, {MeanRuns: 3}, {Method: "grid"}} {
		if err := c.Check(); !errors.Is(err, ErrSelect) {
			t.Errorf("%+v: %v, want ErrSelect", c, err)
		}
	}
	for _, c := range []Config{{}, {Method: Rule}} {
		if _, err := NewPlan(c, 300, losses.Logistic{}, 2, 3, dp.Budget{Epsilon: 1}, 1); !errors.Is(err, ErrSelect) {
			t.Errorf("NewPlan(%+v): %v, want ErrSelect (the rule has no plan)", c, err)
		}
	}
}

// TestRuleSettingGroup checks the rule for a unit of privacy of c rows:
// the output family at the factor sqrt(c) on the automatic lambda, which
// is the rule at c times the sensitivity (for gamma, exactly the rule at
// eps/c: its expected noise norm per unit sensitivity is p/eps), with the
// same clipping norm; at c = 1 the rule for rows.
func TestRuleSettingGroup(t *testing.T) {
	for _, b := range []dp.Budget{{Epsilon: 1}, {Epsilon: 0.5, Delta: 1e-6}} {
		for _, k := range []int{1, 3} {
			loss := losses.Loss(losses.Logistic{})
			if k > 1 {
				loss = losses.Softmax{}
			}
			if got, want := RuleSetting(b, loss, k, 36178, 33, 1), RuleSetting(b, loss, k, 36178, 33, 0); got != want {
				t.Errorf("%+v K = %d: group 1 %v, group 0 %v", b, k, got, want)
			}
			for _, c := range []int{2, 3, 10} {
				s := RuleSetting(b, loss, k, 36178, 33, c)
				if s.Mechanism != OutputFamily(b) || s.Scale != math.Sqrt(float64(c)) {
					t.Errorf("%+v K = %d, c = %d: %v, want %s at factor sqrt(c)", b, k, c, s, OutputFamily(b))
				}
			}
		}
	}
	for _, c := range []int{2, 3, 7} {
		n, dim := 3000*c, 20
		row, err := autoknobs.Choose(n, dim, 1, perturb.Gamma, dp.Budget{Epsilon: 1})
		if err != nil {
			t.Fatal(err)
		}
		atEps, err := autoknobs.Choose(n, dim, 1, perturb.Gamma, dp.Budget{Epsilon: 1 / float64(c)})
		if err != nil {
			t.Fatal(err)
		}
		group := row.Lambda * RuleSetting(dp.Budget{Epsilon: 1}, losses.Logistic{}, 1, n, dim, c).Scale
		if math.Abs(group-atEps.Lambda) > 1e-12*atEps.Lambda || atEps.Clip != row.Clip {
			t.Errorf("c = %d: the group's lambda %v, the rule at eps/c %v (clip %v and %v)", c, group, atEps.Lambda, row.Clip, atEps.Clip)
		}
	}
}

// TestStumpFirst: the rule releases a stump for a model with at least as
// many mapped features as training rows when the stump's guarantee is not
// vacuous (the gene_all shape at eps = 1; three classes on 2,000
// features), and not for more classes than the guarantee affords, more
// classes or candidates than the caps, fewer features than rows, or a
// budget too small for the guarantee (the gene_all shape at eps = 0.5).
func TestStumpFirst(t *testing.T) {
	for _, c := range []struct {
		eps     float64
		k, n, p int
		want    bool
	}{
		{1, 1, 102, 12625, true},
		{1, 1, 102, 102, true},
		{0.5, 1, 102, 12625, false},
		{1, 3, 102, 2000, true},     // (2/eps)(ln(2000 255 6) + 1) = 31.9 rows <= n/3 = 34
		{1, 3, 102, 12625, false},   // 12625 x 255 x 6 candidates: above stump.MaxMultiCandidates
		{1, 5, 102, 2000, false},    // five classes: 34.7 rows > n/5 = 20.4
		{1, 11, 1000, 12625, false}, // more classes than stump.MaxClasses
		{1, 1, 29000, 104, false},
		{1, 1, 569, 30, false},    // the breast cancer data
		{1, 10, 1437, 64, true},   // digits: ten classes at a pure budget (MultiStumpFirst)
		{1, 4, 2160, 29, true},    // Chile: four classes at a pure budget
		{0.5, 4, 2160, 29, true},  // (4)(ln(29 255 12) + 1) = 49.6 rows <= n/4
		{1, 2, 2160, 29, false},   // two outputs (softmax on two classes): p < n
		{1, 1, 2160, 29, false},   // two classes: p < n
		{1, 3, 20, 4, false},      // multiclass, pure, but not useful: 19.4 rows > n/3
		{1, 18, 6099, 128, false}, // LastFM: eighteen classes
		{1, 1, 20, 40, false},     // (2/eps)(ln(2 40 1023) + 1) = 24.5 rows > n/2
		{0, 1, 102, 12625, false},
	} {
		if got := StumpFirst(dp.Budget{Epsilon: c.eps}, c.k, c.n, c.p); got != c.want {
			t.Errorf("eps %v, k %d, n %d, p %d: %v, want %v", c.eps, c.k, c.n, c.p, got, c.want)
		}
		// With a delta, only p >= n releases the stump (MultiStumpFirst
		// holds at pure budgets only).
		want := c.want && c.p >= c.n
		if got := StumpFirst(dp.Budget{Epsilon: c.eps, Delta: 1e-6}, c.k, c.n, c.p); got != want {
			t.Errorf("eps %v, delta 1e-6, k %d, n %d, p %d: %v, want %v", c.eps, c.k, c.n, c.p, got, want)
		}
	}
}

// TestStumpFirstDocumentedLimits checks the figures the documents give for
// the rule's stump: the private bounds estimate needs MinRows(100, 0.1) =
// 188,282 training rows for 100 numeric columns at the default share 0.1 of
// eps = 1 (so on wide numeric data the stump runs with declared bounds,
// or on the public log map), as docs/DESIGN.md section 12.1 and
// docs/GUIDE.md state; and the rule has no upper limit in eps, so on the
// dense-signal case those documents measure (320 training rows of 400
// features) it releases the stump at eps = 1, 2, 10 and 100 alike, and both
// documents say so and name --mechanism objective as the way to a linear
// release there.
// TestStumpUsefulMulticlass: for K classes the stump is useful when
// (2/eps)(ln(p T K (K-1)) + 1) <= n/K, T = stump.MultiGrid, exactly at the
// boundary, and
// on the shapes of the defaults bench's small multiclass tables at eps = 1
// (iris 120 x 4, wine 142 x 13, fgl 171 x 9 with six classes, pbc 334 x
// 18 training rows and features), and not for the eighteen classes of
// LastFM (above stump.MaxClasses) nor at eps = 0.1 on iris.
func TestStumpUsefulMulticlass(t *testing.T) {
	excess := func(eps float64, K, p int) float64 {
		return 2 / eps * (math.Log(float64(p*stump.MultiGrid*K*(K-1))) + 1)
	}
	for _, c := range []struct {
		eps     float64
		k, n, p int
		want    bool
	}{
		{1, 3, 120, 4, true},
		{1, 3, 142, 13, true},
		{1, 6, 171, 9, true},
		{1, 3, 334, 18, true},
		{0.1, 3, 120, 4, false},
		{1, 18, 6099, 32, false},
		{1, 10, 1e6, 800, false}, // 800 x 255 x 90 candidates, above stump.MaxMultiCandidates
		{1, 3, int(math.Ceil(3 * excess(1, 3, 4))), 4, true},
		{1, 3, int(math.Ceil(3*excess(1, 3, 4))) - 1, 4, false},
		{1, 6, int(math.Ceil(6 * excess(1, 6, 9))), 9, true},
		{1, 6, int(math.Ceil(6*excess(1, 6, 9))) - 1, 9, false},
		{1, 2, int(math.Ceil(2 * excess(1, 2, 4))), 4, true},
		{1, 2, int(math.Ceil(2*excess(1, 2, 4))) - 1, 4, false},
	} {
		if got := StumpUseful(dp.Budget{Epsilon: c.eps}, c.k, c.n, c.p); got != c.want {
			t.Errorf("eps %v, k %d, n %d, p %d: %v, want %v (excess %.1f rows)", c.eps, c.k, c.n, c.p, got, c.want, excess(c.eps, c.k, c.p))
		}
	}
	// The fewest training rows docs/GUIDE.md gives at eps = 1.
	b, err := os.ReadFile("../docs/GUIDE.md")
	if err != nil {
		t.Fatal(err)
	}
	fewest := func(k, p int) int {
		n := 1
		for !StumpUseful(dp.Budget{Epsilon: 1}, k, n, p) {
			n++
		}
		return n
	}
	want := fmt.Sprintf("about %d training rows for 8 features and two classes at eps = 1, %d for 4 features and three classes, %d for 9 features and six", fewest(1, 8), fewest(3, 4), fewest(6, 9))
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
		t.Errorf("docs/GUIDE.md does not say %q", want)
	}
}

func TestStumpFirstDocumentedLimits(t *testing.T) {
	const need = "188,282 rows for 100 columns"
	if got := privbounds.MinRows(100, 0.1); fmt.Sprintf("%d,%03d rows for 100 columns", got/1000, got%1000) != need {
		t.Errorf("privbounds.MinRows(100, 0.1) = %d: the documents say %q", got, need)
	}
	for _, eps := range []float64{1, 2, 10, 100} {
		if !StumpFirst(dp.Budget{Epsilon: eps}, 1, 320, 400) {
			t.Errorf("eps %v: StumpFirst false on 320 rows of 400 features, where the documents measure the stump", eps)
		}
	}
	for _, doc := range []string{"../docs/DESIGN.md", "../docs/GUIDE.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{need, "no upper limit in eps", "`--mechanism objective`, `gamma`, ...", "declared bounds"} {
			if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
				t.Errorf("%s does not say %q", doc, want)
			}
		}
	}
}
