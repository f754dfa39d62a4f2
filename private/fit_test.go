package private

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

func TestFitPrivateDefault(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, TestFrac: 0.2, Seed: 1, Auto: true})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Certificate
	if !r.Private || c == nil || !c.Private || c.Source != perturb.SourceSecure || c.NoiseSeed != nil {
		t.Fatalf("private %v, certificate %+v", r.Private, c)
	}
	if r.Diagnostics != nil {
		t.Error("diagnostics without asking for them")
	}
	if r.Model.D != 31 || r.Model.K != 1 || c.Dim != 31 || c.N != 398 || c.Lambda <= 0 || c.L1Ratio != 0 || c.Clip != 0.1 {
		t.Errorf("model %dx%d, certificate dim %d n %d lambda %v l1 %v clip %v", r.Model.K, r.Model.D, c.Dim, c.N, c.Lambda, c.L1Ratio, c.Clip)
	}
	if want := 2 * 0.1 / (c.Lambda * 398); math.Abs(c.L2Sensitivity-want) > 1e-8*want || c.SensitivityRoute != stability.RouteStronglyConvexSGD.String() {
		t.Errorf("Delta %v by %s, want 2G/(mu n) = %v", c.L2Sensitivity, c.SensitivityRoute, want)
	}
	if len(c.Ledger) != 1 || c.Ledger[0].Epsilon != 1 || c.Neighbouring != strings.Replace(modelfile.TableNeighbours, "every feature cell a finite number", modelfile.MissingCells, 1) {
		t.Errorf("ledger %+v, neighbouring %q", c.Ledger, c.Neighbouring)
	}
	if v, _, err := modelfile.Verify(r); err != nil || v != modelfile.PrivateRelease {
		t.Errorf("Verify: %v, %v", v, err)
	}
	text := strings.Join(c.Assumptions, "\n")
	for _, want := range []string{"null row", "well-formed", "split depends only", "declared bounds"} {
		if !strings.Contains(text, want) {
			t.Errorf("the not-covered list does not mention %q", want)
		}
	}
	if strings.Contains(text, "WARNING") {
		t.Errorf("a fit with public bounds warns: %s", text)
	}
}

// TestFitAutoAccuracy checks the target of the automatic knobs on the
// embedded data: gamma noise at eps = 1, mean private test accuracy >= 0.90
// over seeds 1-5 (four noise draws each), none below 0.80.
func TestFitAutoAccuracy(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	var sum, low float64 = 0, 1
	runs := 0
	for seed := uint64(1); seed <= 5; seed++ {
		for ns := range uint64(4) {
			r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{
				Mechanism: perturb.Gamma, TestFrac: 0.2, Seed: seed, Auto: true, Diagnostics: true,
				Noise: perturb.Seeded(100*seed + ns),
			})
			if err != nil {
				t.Fatal(err)
			}
			acc := r.Diagnostics.ReleasedTest.Value
			sum += acc
			low = math.Min(low, acc)
			runs++
		}
	}
	mean := sum / float64(runs)
	t.Logf("gamma, eps = 1, automatic knobs: mean private test accuracy %.4f, min %.4f over %d releases", mean, low, runs)
	if mean < 0.90 || low < 0.80 {
		t.Errorf("mean %.4f (want >= 0.90), min %.4f (want >= 0.80)", mean, low)
	}
}

// TestFitNeighbours trains on tables that differ in one row, with the same
// seeds and the same seeded noise, and checks that the released weights
// differ by at most the certified sensitivity (with the same noise the
// difference of the releases is the difference of the trained weights),
// and that everything else in the release is the same.
func TestFitNeighbours(t *testing.T) {
	type setup struct {
		name    string
		classes []string
		mode    preprocess.Mode
		cfg     trainer.Config
		auto    bool
		mech    dp.Mechanism
	}
	setups := []setup{
		{name: "binary, bounds, auto", classes: []string{"a", "b"}, mode: preprocess.Bounds, auto: true, mech: perturb.Gamma},
		{name: "binary, none, clip", classes: []string{"a", "b"}, mode: preprocess.None, mech: perturb.Laplace,
			cfg: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.2}, Clip: 0.3, Schedule: trainer.BoundedInverseT, Batch: 4}},
		{name: "softmax, bounds", classes: []string{"x", "y", "z"}, mode: preprocess.Bounds, mech: perturb.AnalyticGaussian,
			cfg: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.02}, Schedule: trainer.BoundedInverseT, Passes: 3}},
		{name: "softmax, none, auto", classes: []string{"x", "y", "z"}, mode: preprocess.None, auto: true, mech: perturb.Gamma},
	}
	worst := 0.0
	for _, s := range setups {
		base := fittest.Blobs(90, 4, s.classes, 3)
		schema := datasets.Schema{Label: "y", Classes: s.classes}
		if s.mode == preprocess.Bounds {
			schema.Bounds = fittest.BoundsFor(base, -3, 4)
		}
		budget := dp.Budget{Epsilon: 1}
		if !s.mech.Pure() {
			budget.Delta = 1e-5
		}
		fit := func(tab *datasets.Table) *modelfile.Released {
			t.Helper()
			r, err := Fit(context.Background(), tab, schema, budget, Options{
				Mechanism: s.mech, Preprocess: s.mode, TestFrac: 0.25, Seed: 7, Trainer: s.cfg, Auto: s.auto,
				Noise: perturb.Seeded(11),
			})
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			return r
		}
		r0 := fit(base)
		for _, nc := range fittest.NeighbourCases(s.classes) {
			other := fittest.Clone(base)
			nc.Edit(other, 4)
			r1 := fit(other)
			delta := r0.Certificate.L2Sensitivity
			if r1.Certificate.L2Sensitivity != delta || r1.Model.K != r0.Model.K || r1.Model.D != r0.Model.D ||
				!slices.Equal(r1.Schema.Classes, r0.Schema.Classes) || r1.Certificate.Lambda != r0.Certificate.Lambda {
				t.Errorf("%s, %s: the release's public parts differ between neighbours", s.name, nc.Name)
			}
			dist := floats.Distance(r0.Model.W, r1.Model.W, 2)
			worst = math.Max(worst, dist/delta)
			if dist > delta {
				t.Errorf("%s, %s: ||w_S - w_S'|| = %.6g > Delta = %.6g", s.name, nc.Name, dist, delta)
			}
		}
	}
	t.Logf("largest realized/certified distance over the neighbours: %.4f", worst)
}

// TestFitNeighboursHaveTeeth checks that the neighbour test could fail: the
// Delta of the strongly convex route is nearly attained for some
// neighbour of a small data set with constant full-strength gradients, so
// a bound half as large would be exceeded.
func TestFitNeighboursHaveTeeth(t *testing.T) {
	base := fittest.Blobs(40, 2, []string{"a", "b"}, 5)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	cfg := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 1}, Clip: 0.05, Schedule: trainer.BoundedInverseT, Passes: 1}
	fit := func(tab *datasets.Table) *modelfile.Released {
		r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{
			Mechanism: perturb.Gamma, Preprocess: preprocess.None, Seed: 3, Trainer: cfg, Noise: perturb.Seeded(1),
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r0 := fit(base)
	best := 0.0
	for i := range base.Len() {
		other := fittest.Clone(base)
		for j := range 2 {
			other.SetCell(i, j, strconv.FormatFloat(-1e3*fittest.MustFloat(other.Cell(i, j)), 'g', -1, 64))
		}
		other.SetCell(i, 2, map[string]string{"a": "b", "b": "a"}[other.Cell(i, 2)])
		r1 := fit(other)
		best = math.Max(best, floats.Distance(r0.Model.W, r1.Model.W, 2)/r0.Certificate.L2Sensitivity)
	}
	t.Logf("largest realized/certified distance: %.4f", best)
	if best <= 0.5 {
		t.Errorf("no neighbour moves the weights by more than half of Delta (%.4f): the neighbour test cannot tell a bound twice too small", best)
	}
	if best > 1 {
		t.Errorf("a neighbour exceeds Delta: ratio %.6f", best)
	}
}

// TestFitClassesAreDeclared checks that a label outside the declared
// classes neither adds a class nor changes the release's shape, and that a
// private fit without declared classes is refused.
func TestFitClassesAreDeclared(t *testing.T) {
	tab := fittest.Blobs(60, 3, []string{"a", "b", "c"}, 1)
	tab.SetCell(5, 3, "zzz")
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b", "c"}, Bounds: fittest.BoundsFor(tab, -3, 4)}
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true, Seed: 1, Diagnostics: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Model.K != 3 || !slices.Equal(r.Schema.Classes, []string{"a", "b", "c"}) || r.Certificate.Dim != 3*4 {
		t.Errorf("K = %d, classes %v, dim %d", r.Model.K, r.Schema.Classes, r.Certificate.Dim)
	}
	if r.Diagnostics.NullRows != 1 || r.Diagnostics.Classes != nil {
		t.Errorf("null rows %d, classes seen %v (a private fit must not read them)", r.Diagnostics.NullRows, r.Diagnostics.Classes)
	}
	schema.Classes = nil
	if _, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true}); !errors.Is(err, datasets.ErrSchema) {
		t.Errorf("private fit without classes: %v", err)
	}
}

func TestFitErrors(t *testing.T) {
	tab := fittest.Blobs(30, 2, []string{"a", "b"}, 1)
	good := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 3)}
	priv := Options{Mechanism: perturb.Gamma, Auto: true}
	nan := fittest.Clone(tab)
	nan.SetCell(3, 0, "-Inf") // NaN is a missing cell
	word := fittest.Clone(tab)
	word.SetCell(4, 1, "x")
	tests := []struct {
		name   string
		tab    *datasets.Table
		schema datasets.Schema
		budget dp.Budget
		opts   Options
		want   error
	}{
		{"no label column", tab, datasets.Schema{Label: "nope", Classes: good.Classes, Bounds: good.Bounds}, dp.Budget{Epsilon: 1}, priv, datasets.ErrSchema},
		{"bound missing", tab, datasets.Schema{Label: "y", Classes: good.Classes, Bounds: good.Bounds[:1]}, dp.Budget{Epsilon: 1}, priv, datasets.ErrSchema},
		{"bound of no column", tab, datasets.Schema{Label: "y", Classes: good.Classes, Bounds: append(slices.Clone(good.Bounds), datasets.Bound{Column: "q", Lo: 0, Hi: 1})}, dp.Budget{Epsilon: 1}, priv, datasets.ErrSchema},
		{"bound lo >= hi", tab, datasets.Schema{Label: "y", Classes: good.Classes, Bounds: []datasets.Bound{{Column: "f0", Lo: 1, Hi: 1}, {Column: "f1", Lo: 0, Hi: 1}}}, dp.Budget{Epsilon: 1}, priv, datasets.ErrSchema},
		{"three classes, binary loss", tab, datasets.Schema{Label: "y", Classes: []string{"a", "b", "c"}, Bounds: good.Bounds}, dp.Budget{Epsilon: 1},
			Options{Mechanism: perturb.Gamma, Auto: true, Trainer: trainer.Config{Loss: losses.Logistic{}}}, datasets.ErrSchema},
		{"repeated class", tab, datasets.Schema{Label: "y", Classes: []string{"a", "a"}, Bounds: good.Bounds}, dp.Budget{Epsilon: 1}, priv, datasets.ErrSchema},
		{"eps 0", tab, good, dp.Budget{}, priv, dp.ErrBudget},
		{"eps negative", tab, good, dp.Budget{Epsilon: -5}, priv, dp.ErrBudget},
		{"eps NaN", tab, good, dp.Budget{Epsilon: math.NaN()}, priv, dp.ErrBudget},
		{"delta with a pure mechanism", tab, good, dp.Budget{Epsilon: 1, Delta: 1e-5}, priv, dp.ErrBudget},
		{"delta 1", tab, good, dp.Budget{Epsilon: 1, Delta: 1}, Options{Mechanism: perturb.AnalyticGaussian, Auto: true}, dp.ErrBudget},
		{"budget without mechanism", tab, good, dp.Budget{Epsilon: 1}, Options{}, dp.ErrBudget},
		{"stratified private", tab, good, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true, Stratify: true, TestFrac: 0.2}, ErrOptions},
		{"auto without mechanism", tab, good, dp.Budget{}, Options{Auto: true}, ErrOptions},
		{"test fraction 1", tab, good, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true, TestFrac: 1}, ErrOptions},
		{"infinite cell", nan, good, dp.Budget{Epsilon: 1}, priv, datasets.ErrFormat},
		{"word cell", word, good, dp.Budget{Epsilon: 1}, priv, datasets.ErrFormat},
		{"unknown preprocessing", tab, good, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true, Preprocess: "log"}, ErrOptions},
	}
	for _, tt := range tests {
		r, err := Fit(context.Background(), tt.tab, tt.schema, tt.budget, tt.opts)
		if !errors.Is(err, tt.want) || r != nil {
			t.Errorf("%s: err %v, want %v", tt.name, err, tt.want)
		}
	}
	// A tolerance stop is data-dependent: no route certifies it.
	cfg := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}, Tolerance: 1e-3}
	if _, err := Fit(context.Background(), tab, good, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Trainer: cfg}); !errors.Is(err, release.ErrConfig) {
		t.Errorf("tolerance run released: %v", err)
	}
}

// TestFitNonPrivate checks the non-private fit: classes from the rows,
// stratified split allowed, trained weights returned with their run.
func TestFitNonPrivate(t *testing.T) {
	tab := fittest.Blobs(60, 3, []string{"2", "10", "1"}, 4)
	r, err := Fit(context.Background(), tab, datasets.Schema{Label: "y"}, dp.Budget{}, Options{TestFrac: 0.25, Stratify: true, Seed: 2, Diagnostics: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Private || r.Certificate != nil || r.Run == nil || r.Preprocessing.Mode != preprocess.Standardize || !slices.Equal(r.Schema.Classes, []string{"1", "2", "10"}) {
		t.Errorf("private %v, cert %v, run %v, mode %s, classes %v", r.Private, r.Certificate, r.Run, r.Preprocessing.Mode, r.Schema.Classes)
	}
	if d := r.Diagnostics; d.TrainedTest.Rows != 15 || d.TrainedTest.Value < 0.7 {
		t.Errorf("test metric %+v", d.TrainedTest)
	}
	if v, why, err := modelfile.Verify(r); err != nil || v != modelfile.NotPrivate || why == "" {
		t.Errorf("Verify: %v %q %v", v, why, err)
	}
}

func ExampleFit() {
	tab, schema, err := datasets.DefaultTable() // the embedded breast cancer data, its classes and bounds
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{
		Mechanism: perturb.Gamma, TestFrac: 0.2, Seed: 1, Auto: true,
		Noise: perturb.Seeded(42), // reproducible here; the default secure source is the private one
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := r.Certificate
	fmt.Printf("%s, eps = %g, private: %v, route %s, Delta = %.4f\n", c.Mechanism, c.Epsilon, c.Private, c.SensitivityRoute, c.L2Sensitivity)
	label, _ := r.Predict(make([]float64, len(r.Features())))
	fmt.Println("prediction for an all-zero row:", label)
	// Output:
	// gamma, eps = 1, private: false, route strongly-convex-sgd, Delta = 0.1024
	// prediction for an all-zero row: benign
}

// TestPlanConfigNotFromNewPlan checks that Config of a Plan NewPlan did not
// make (nil, zero, automatic knobs without a method) is an error wrapping
// ErrOptions instead of a panic or a config without a loss.
func TestPlanConfigNotFromNewPlan(t *testing.T) {
	for name, pl := range map[string]*Plan{
		"nil":  nil,
		"zero": {},
		"auto": {Loss: losses.Logistic{}, Options: Options{Auto: true}},
	} {
		if _, err := pl.Config(10, 3, 1); !errors.Is(err, ErrOptions) {
			t.Errorf("%s Plan: Config: %v, want ErrOptions", name, err)
		}
	}
	pl, err := NewPlan(datasets.Schema{Label: "y", Classes: []string{"a", "b"}}, dp.Budget{}, Options{Preprocess: preprocess.None})
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := pl.Config(10, 3, 1); err != nil || cfg.Loss == nil {
		t.Errorf("Config of a Plan from NewPlan: %+v, %v", cfg, err)
	}
}
