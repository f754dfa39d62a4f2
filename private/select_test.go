package private

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestFitSelectVerify fits the embedded data with a private selection of
// the setting (each method, pure and with delta, secure and seeded noise),
// writes and reads the model file back and verifies it; then tampers with
// the selection record and the ledger and expects Verify to refuse.
func TestFitSelectVerify(t *testing.T) {
	small, smallSchema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	large, largeSchema := signTable(t, 3000)
	for _, tc := range []struct {
		method  selection.Method
		budget  dp.Budget
		seeded  bool
		large   bool
		skipped bool
	}{
		// 455 rows: the tuning runs would be too noisy, the plan skips.
		{selection.Holdout, dp.Budget{Epsilon: 1}, false, false, true},
		{selection.Holdout, dp.Budget{Epsilon: 2}, false, true, false},
		{selection.Holdout, dp.Budget{Epsilon: 2, Delta: 1e-5}, true, true, false},
		{selection.RandomStopping, dp.Budget{Epsilon: 2}, false, false, false},
		{selection.RandomStopping, dp.Budget{Epsilon: 1, Delta: 1e-6}, true, false, false},
	} {
		tab, schema := small, smallSchema
		if tc.large {
			tab, schema = large, largeSchema
		}
		opts := Options{Select: &selection.Config{Method: tc.method, MeanRuns: 20}, TestFrac: 0.2, Seed: 5}
		if tc.seeded {
			opts.Noise = perturb.Seeded(9)
		}
		r, err := Fit(context.Background(), tab, schema, tc.budget, opts)
		if err != nil {
			t.Fatalf("%s %+v: %v", tc.method, tc.budget, err)
		}
		var buf strings.Builder
		if err := r.Write(&buf); err != nil {
			t.Fatal(err)
		}
		read := func() *modelfile.Released {
			back, err := modelfile.Read(strings.NewReader(buf.String()))
			if err != nil {
				t.Fatal(err)
			}
			return back
		}
		want := modelfile.PrivateRelease
		if tc.seeded {
			want = modelfile.NotPrivate
		}
		if v, why, err := modelfile.Verify(read()); err != nil || v != want {
			t.Fatalf("%s %+v: verdict %v (%s), %v", tc.method, tc.budget, v, why, err)
		}
		c, rec := r.Certificate, r.Selection
		if rec == nil || rec.Method != tc.method || c.Mechanism != rec.Settings[rec.Chosen].Mechanism || !r.AutoKnobs || rec.Skipped != tc.skipped {
			t.Fatalf("%s: record %+v, mechanism %s, want skipped %v", tc.method, rec, c.Mechanism, tc.skipped)
		}
		// The ledger adds up to the budget: a holdout's two parts are
		// disjoint rows (parallel composition), random stopping's entries
		// add up to eps.
		if got := dp.Total(c.Ledger); c.Epsilon != tc.budget.Epsilon || !closeTo(got.Epsilon, tc.budget.Epsilon) || got.Delta > tc.budget.Delta*(1+1e-12) {
			t.Errorf("%s: certificate eps %v, ledger %+v adds up to %+v, want %+v", tc.method, c.Epsilon, c.Ledger, got, tc.budget)
		}
		if tc.method == selection.Holdout && (c.N != rec.ReleaseRows || rec.TuneRows+rec.ValRows+rec.ReleaseRows != r.Split.TrainRows || tc.skipped == (c.Ledger[0].Rows == selection.TuningRows)) {
			t.Errorf("holdout: the release trained on %d rows, the record %+v, %d training rows", c.N, rec, r.Split.TrainRows)
		}
		for _, tt := range []struct {
			name string
			edit func(*modelfile.Released)
			msg  string
		}{
			{"chosen", func(r *modelfile.Released) { r.Selection.Chosen = (r.Selection.Chosen + 1) % len(r.Selection.Settings) }, ""},
			{"chosen out of range", func(r *modelfile.Released) { r.Selection.Chosen = 99 }, "chosen candidate"},
			{"scale", func(r *modelfile.Released) { r.Selection.Settings[r.Selection.Chosen].Scale *= 2 }, "selection record"},
			{"rows", func(r *modelfile.Released) { r.Selection.ValRows++ }, "selection record"},
			{"eta", func(r *modelfile.Released) { r.Selection.Eta = 1 }, ""},
			{"lambda", func(r *modelfile.Released) { r.Certificate.Lambda *= 1.5 }, "want"},
			{"ledger", func(r *modelfile.Released) { r.Certificate.Ledger = r.Certificate.Ledger[1:] }, "ledger"},
			{"dropped", func(r *modelfile.Released) { r.Selection = nil }, ""},
		} {
			bad := read()
			tt.edit(bad)
			if _, _, err := modelfile.Verify(bad); !errors.Is(err, modelfile.ErrVerify) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%s, tampered %s: %v (want modelfile.ErrVerify naming %q)", tc.method, tt.name, err, tt.msg)
			}
		}
	}
}

// signTable returns a table of n rows of two features in [-1, 1] whose
// label is the sign of the first, and its schema.
func signTable(t *testing.T, n int) (*datasets.Table, datasets.Schema) {
	t.Helper()
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range n {
		a := float64((i*7919)%2001)/1000 - 1
		c := float64((i*104729)%2001)/1000 - 1
		y := "neg"
		if a > 0 {
			y = "pos"
		}
		fmt.Fprintf(&b, "%g,%g,%s\n", a, c, y)
	}
	tab, err := datasets.ReadTable(strings.NewReader(b.String()), "sign")
	if err != nil {
		t.Fatal(err)
	}
	return tab, datasets.Schema{Label: "y", Classes: []string{"neg", "pos"}, Bounds: []datasets.Bound{{Column: "a", Lo: -1, Hi: 1}, {Column: "b", Lo: -1, Hi: 1}}}
}

func closeTo(a, b float64) bool { return a == b || (a-b) < 1e-12*b && (b-a) < 1e-12*b }

// TestFitSelectRefusals: a selection excludes a named mechanism, the
// automatic knobs and knobs it would override, and one whose parts would
// leave nothing to release is refused before training.
func TestFitSelectRefusals(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	sel := &selection.Config{}
	for _, tc := range []struct {
		name   string
		budget dp.Budget
		opts   Options
		want   error
	}{
		{"with a mechanism", dp.Budget{Epsilon: 1}, Options{Select: sel, Mechanism: perturb.Gamma}, ErrOptions},
		{"with auto", dp.Budget{Epsilon: 1}, Options{Select: sel, Auto: true}, ErrOptions},
		{"with lambda", dp.Budget{Epsilon: 1}, Options{Select: sel, Trainer: trainerWithLambda(0.1)}, ErrOptions},
		{"eps 0", dp.Budget{}, Options{Select: sel}, dp.ErrBudget},
		{"delta 1", dp.Budget{Epsilon: 1, Delta: 1}, Options{Select: sel}, dp.ErrBudget},
		{"tune fraction 1", dp.Budget{Epsilon: 1}, Options{Select: &selection.Config{Method: selection.Holdout, TuneFrac: 1}}, selection.ErrSelect},
		{"tuning rows too few", dp.Budget{Epsilon: 1}, Options{Select: &selection.Config{Method: selection.Holdout, TuneFrac: 0.001}}, selection.ErrSelect},
		{"the rule (zero method) with a tuning fraction", dp.Budget{Epsilon: 1}, Options{Select: &selection.Config{TuneFrac: 0.2}}, selection.ErrSelect},
		{"the rule with a law of the runs", dp.Budget{Epsilon: 1}, Options{Select: &selection.Config{Method: selection.Rule, MeanRuns: 5}}, selection.ErrSelect},
		{"random stopping with a tuning fraction", dp.Budget{Epsilon: 1}, Options{Select: &selection.Config{Method: selection.RandomStopping, TuneFrac: 0.2}}, selection.ErrSelect},
		{"unknown method", dp.Budget{Epsilon: 1}, Options{Select: &selection.Config{Method: "grid"}}, selection.ErrSelect},
		{"undeclared classes", dp.Budget{Epsilon: 1}, Options{Select: sel, Preprocess: "none"}, datasets.ErrSchema},
	} {
		schema := schema
		if tc.name == "undeclared classes" {
			// A private selection never reads the classes from the rows.
			schema.Classes, schema.Bounds = nil, nil
		}
		r, err := Fit(context.Background(), tab, schema, tc.budget, tc.opts)
		if !errors.Is(err, tc.want) || r != nil {
			t.Errorf("%s: %v, %v; want an error wrapping %v", tc.name, r, err, tc.want)
		}
	}
}

func trainerWithLambda(l float64) (c trainer.Config) {
	c.Reg = regularizers.ElasticNet{Lambda: l}
	return c
}

// TestFitRule: the rule (selection.Rule, train's default, and the zero
// selection.Config, which means it) is the fit of selection.RuleSetting
// with the automatic knobs, bit for bit, and costs nothing: objective perturbation for a pure budget, AMP with delta, the
// mechanisms of output perturbation above selection.MaxObjectiveInputs
// weights or, for a scalar loss, when the objective rule's lambda is above
// the curvature scale (selection.OutputFirst; the embedded data is such a
// case), checked on RuleSetting, a function of public values.
func TestFitRule(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []dp.Budget{{Epsilon: 1}, {Epsilon: 1, Delta: 1e-5}} {
		fit := func(opts Options) *modelfile.Released {
			t.Helper()
			opts.Noise, opts.Seed, opts.TestFrac = perturb.Seeded(7), 3, 0.2
			r, err := Fit(context.Background(), tab, schema, b, opts)
			if err != nil {
				t.Fatalf("%+v: %v", b, err)
			}
			return r
		}
		rule := fit(Options{Select: &selection.Config{Method: selection.Rule}})
		want := selection.RuleSetting(b, losses.Logistic{}, 1, rule.Split.TrainRows, len(rule.Model.W), 1)
		named := fit(Options{Mechanism: want.Mechanism, Auto: true})
		var gb, wb strings.Builder
		if err := rule.Write(&gb); err != nil {
			t.Fatal(err)
		}
		if err := named.Write(&wb); err != nil {
			t.Fatal(err)
		}
		if gb.String() != wb.String() || rule.Selection != nil || !rule.AutoKnobs {
			t.Errorf("%+v: the rule's release differs from --mechanism %s with the automatic knobs", b, want.Mechanism)
		}
		var zb strings.Builder
		if err := fit(Options{Select: &selection.Config{}}).Write(&zb); err != nil {
			t.Fatal(err)
		}
		if zb.String() != gb.String() {
			t.Errorf("%+v: the zero selection.Config's release differs from the rule's", b)
		}
		if c := rule.Certificate; c.Epsilon != b.Epsilon || c.Delta != b.Delta {
			t.Errorf("%+v: the rule's claim is (%v, %v)", b, c.Epsilon, c.Delta)
		}
	}
	for _, tc := range []struct {
		b         dp.Budget
		k, n, dim int
		want      dp.Mechanism
	}{
		// Many rows per weight: the objective rule's lambda is far below
		// the curvature scale S_z/(4 dim) (Adult's shape).
		{dp.Budget{Epsilon: 1}, 1, 36178, 33, perturb.Objective},
		{dp.Budget{Epsilon: 1, Delta: 1e-6}, 1, 36178, 33, perturb.AMP},
		// Few rows per weight (the breast cancer data's shape): above it,
		// output perturbation with clipping.
		{dp.Budget{Epsilon: 1}, 1, 398, 31, perturb.Gamma},
		{dp.Budget{Epsilon: 1, Delta: 1e-6}, 1, 398, 31, perturb.AnalyticGaussian},
		// More outputs keep objective perturbation at any n (their output
		// perturbation runs unclipped), below DPSGDFirstRows with a delta.
		{dp.Budget{Epsilon: 1, Delta: 1e-6}, 3, 200, 31, perturb.AMP},
		{dp.Budget{Epsilon: 1, Delta: 1e-6}, 3, 398, 31, perturb.DPSGD},
		{dp.Budget{Epsilon: 1}, 3, 398, 31, perturb.Objective},
		{dp.Budget{Epsilon: 1}, 10, 100, 65, perturb.Objective},
		{dp.Budget{Epsilon: 1}, 2, 36178, selection.MaxObjectiveInputs, perturb.Gamma},
		{dp.Budget{Epsilon: 1, Delta: 1e-6}, 1, 36178, selection.MaxObjectiveInputs + 1, perturb.AnalyticGaussian},
	} {
		loss := losses.Loss(losses.Logistic{})
		if tc.k > 1 {
			loss = losses.Softmax{}
		}
		if s := selection.RuleSetting(tc.b, loss, tc.k, tc.n, tc.dim, 1); s.Mechanism != tc.want || s.Scale != 1 {
			t.Errorf("RuleSetting(%+v, K = %d, n = %d, dim = %d) = %v, want %s at factor 1", tc.b, tc.k, tc.n, tc.dim, s, tc.want)
		}
	}
}
