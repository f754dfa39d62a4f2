package private

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

func objectiveBudget(m dp.Mechanism) dp.Budget {
	if m == perturb.AMP {
		return dp.Budget{Epsilon: 1, Delta: 1e-5}
	}
	return dp.Budget{Epsilon: 1}
}

// TestObjectiveFitVerify fits the embedded data with both mechanisms,
// secure and seeded, verifies the files (after a write and read), and
// checks that tampered files fail.
func TestObjectiveFitVerify(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []dp.Mechanism{perturb.Objective, perturb.AMP} {
		for _, seeded := range []bool{false, true} {
			opts := Options{Mechanism: m, Auto: true, TestFrac: 0.2, Seed: 3}
			if seeded {
				opts.Noise = perturb.Seeded(8)
			}
			r, err := Fit(context.Background(), tab, schema, objectiveBudget(m), opts)
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			var buf strings.Builder
			if err := r.Write(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := modelfile.Read(strings.NewReader(buf.String()))
			if err != nil {
				t.Fatal(err)
			}
			v, why, err := modelfile.Verify(back)
			want := modelfile.PrivateRelease
			if seeded {
				want = modelfile.NotPrivate
			}
			if err != nil || v != want {
				t.Fatalf("%s seeded %v: verdict %v (%s), %v", m, seeded, v, why, err)
			}
			if r.Private == seeded || r.Stability != nil {
				t.Errorf("%s: private %v, stability %v", m, r.Private, r.Stability)
			}
			if m == perturb.AMP && len(r.Certificate.Ledger) != 3 {
				t.Errorf("amp ledger %+v, want the objective part, the output part and the iteration budget", r.Certificate.Ledger)
			}
			if m == perturb.Objective {
				l := r.Certificate.Ledger
				if len(l) != 2 || math.Abs(l[0].Epsilon-0.99) > 1e-12 || math.Abs(l[1].Epsilon-0.01) > 1e-12 {
					t.Errorf("objective ledger %+v, want the objective part (0.99) and the output part (0.01)", l)
				}
				if !strings.Contains(r.Certificate.SensitivityRoute, "gamma-norm noise xi of L2 sensitivity 2r") {
					t.Errorf("objective route %q does not state the output part", r.Certificate.SensitivityRoute)
				}
				for _, a := range r.Certificate.Assumptions {
					if strings.Contains(a, "is not covered (a rounding before") {
						t.Errorf("objective: the lattice note of the construction without xi is still listed: %q", a)
					}
				}
			}
			if seeded {
				continue
			}
			for _, tt := range []struct {
				name string
				edit func(*modelfile.Released)
				msg  string
			}{
				{"weight", func(r *modelfile.Released) { r.Model.W[0] += 1e-9 }, "altered"},
				{"lambda", func(r *modelfile.Released) { r.Certificate.Lambda *= 0.5 }, "want"},
				{"lambda below floor", func(r *modelfile.Released) { r.Certificate.Lambda = 1e-6 }, "lambda floor"},
				{"epsilon", func(r *modelfile.Released) { r.Certificate.Epsilon = 2 }, "want"},
				{"noise scale", func(r *modelfile.Released) { r.Certificate.NoiseScale *= 0.5 }, "noise_scale"},
				{"ledger", func(r *modelfile.Released) { r.Certificate.Ledger[0].Epsilon = 0.1 }, "ledger"},
				{"ledger part dropped", func(r *modelfile.Released) { r.Certificate.Ledger = r.Certificate.Ledger[:1] }, "ledger"},
				{"route", func(r *modelfile.Released) { r.Certificate.SensitivityRoute += " " }, "route"},
				{"not covered", func(r *modelfile.Released) { r.Certificate.Assumptions = r.Certificate.Assumptions[1:] }, "not_covered"},
				{"n", func(r *modelfile.Released) { r.Certificate.N-- }, "training rows"},
				{"loss constants", func(r *modelfile.Released) { r.Certificate.Sz = 0.01 }, "sz"},
				{"stability", func(r *modelfile.Released) { r.Stability = back2(t, tab, schema).Stability }, "stability"},
			} {
				bad, err := modelfile.Read(strings.NewReader(buf.String()))
				if err != nil {
					t.Fatal(err)
				}
				tt.edit(bad)
				if _, _, err := modelfile.Verify(bad); !errors.Is(err, modelfile.ErrVerify) || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("%s, tampered %s: %v (want modelfile.ErrVerify naming %q)", m, tt.name, err, tt.msg)
				}
			}
		}
	}
}

// back2 returns a gamma release, whose stability analysis a tampered
// objective file borrows.
func back2(t *testing.T, tab *datasets.Table, schema datasets.Schema) *modelfile.Released {
	r, err := Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma, Auto: true, Noise: perturb.Seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestObjectiveRefusals checks the conditions through Fit: each failing
// condition is named and nothing is released.
func TestObjectiveRefusals(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	hinge, err := losses.NewHuberHinge(0.5)
	if err != nil {
		t.Fatal(err)
	}
	base := func() Options {
		return Options{Mechanism: perturb.Objective, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.05}}}
	}
	for _, tt := range []struct {
		name   string
		edit   func(*Options, *dp.Budget)
		target error
		msg    string
	}{
		{"smoothed hinge", func(o *Options, _ *dp.Budget) { o.Trainer.Loss = hinge }, objpert.ErrCondition, "smoothness"},
		{"clip", func(o *Options, _ *dp.Budget) { o.Trainer.Clip = 0.1 }, objpert.ErrCondition, "clipping"},
		{"dropout", func(o *Options, _ *dp.Budget) { o.Trainer.Dropout = 0.5 }, objpert.ErrCondition, "dropout"},
		{"l1", func(o *Options, _ *dp.Budget) { o.Trainer.Reg.L1Ratio = 0.15 }, objpert.ErrCondition, "L1 ratio"},
		{"radius", func(o *Options, _ *dp.Budget) { o.Trainer.Radius = 3 }, objpert.ErrCondition, "projection"},
		{"below floor", func(o *Options, _ *dp.Budget) { o.Trainer.Reg.Lambda = 1e-4 }, objpert.ErrCondition, "lambda floor"},
		{"delta", func(_ *Options, b *dp.Budget) { b.Delta = 1e-5 }, dp.ErrBudget, "delta"},
		{"amp without delta", func(o *Options, _ *dp.Budget) { o.Mechanism = perturb.AMP }, dp.ErrBudget, "delta"},
		{"stratified", func(o *Options, _ *dp.Budget) { o.Stratify = true }, ErrOptions, "stratified"},
	} {
		opts, b := base(), dp.Budget{Epsilon: 1}
		tt.edit(&opts, &b)
		r, err := Fit(context.Background(), tab, schema, b, opts)
		if r != nil || !errors.Is(err, tt.target) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, %v (want %v naming %q)", tt.name, r, err, tt.target, tt.msg)
		}
	}
}

// trainRowsOf returns the preprocessed training rows of a fit of tab, as
// Fit computes them.
func trainRowsOf(t *testing.T, tab *datasets.Table, schema datasets.Schema, opts Options) (*mat.Dense, []float64) {
	t.Helper()
	enc, err := tab.Encode(schema, losses.Binary)
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := enc.Split(opts.TestFrac, opts.Seed, opts.Stratify)
	if err != nil {
		t.Fatal(err)
	}
	raw := mat.NewDense(len(tr), enc.D, nil)
	for r, i := range tr {
		raw.SetRow(r, enc.Row(i))
	}
	prep, err := preprocess.NewRowMap(preprocess.Bounds, enc.Features, schema, raw)
	if err != nil {
		t.Fatal(err)
	}
	X, y, _, err := prep.Rows(enc, tr)
	if err != nil {
		t.Fatal(err)
	}
	return X, y
}

// summedGradient returns sum_i grad l_i(w) + n lambda w on the rows: minus
// the noise b for which w is the minimizer (objective perturbation's
// inverse map).
func summedGradient(X *mat.Dense, y []float64, lambda float64, w []float64) []float64 {
	n, d := X.Dims()
	g := make([]float64, d)
	l := losses.Logistic{}
	for i := range n {
		x := X.RawRowView(i)
		floats.AddScaled(g, l.Deriv(floats.Dot(w, x), y[i]), x)
	}
	floats.AddScaled(g, float64(n)*lambda, w)
	return g
}

// TestObjectiveNeighbours fits neighbouring tables (one row replaced by
// adversarial rows: extreme features at the bounds, flipped label, an
// undeclared label) with the same seeded noise b, and checks through Fit the
// quantities the proof bounds: the released weights of each table map back
// to the same b on its own rows (so they are the minimizers for that b,
// once the output noise xi is subtracted), and at the iterate of the
// original table the two tables' noises differ by at most 2L = 2. It also
// checks that the replacement moves the weights (a test that could not
// fail would pass with a constant release).
func TestObjectiveNeighbours(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Mechanism: perturb.Objective, TestFrac: 0.2, Seed: 2, Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}}}
	fit := func(tb *datasets.Table) *modelfile.Released {
		o := opts
		o.Noise = perturb.Seeded(42)
		r, err := Fit(context.Background(), tb, schema, dp.Budget{Epsilon: 1}, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tr, _, err := (&datasets.Encoded{N: tab.Len()}).Split(opts.TestFrac, opts.Seed, opts.Stratify)
	if err != nil {
		t.Fatal(err)
	}
	row := tr[0] // a training row
	label := indexOf(tab.Columns, schema.Label)
	bounds := datasets.DefaultBounds()
	replace := map[string]func([]string) []string{
		"flipped label": func(r []string) []string {
			if r[label] == "benign" {
				r[label] = "malignant"
			} else {
				r[label] = "benign"
			}
			return r
		},
		"features at the upper bounds": func(r []string) []string {
			for j, c := range tab.Columns {
				if j != label {
					r[j] = formatFloat(boundOf(bounds, c, true) * 10)
				}
			}
			return r
		},
		"undeclared label": func(r []string) []string { r[label] = "unknown"; return r },
	}
	// iterate returns the solver's iterate of a release: the released
	// weights minus the output noise xi, redrawn from the seed after b.
	iterate := func(r *modelfile.Released) []float64 {
		run := r.Certificate.Run
		loss, err := losses.ByName(run.Loss)
		if err != nil {
			t.Fatal(err)
		}
		cal, err := objpert.Calibrate(perturb.Objective, 1, 0, objpert.Problem{Loss: loss, N: run.N, D: run.D, K: loss.Outputs(len(schema.Classes)), Kappa: 1, Lambda: run.Lambda})
		if err != nil {
			t.Fatal(err)
		}
		src := perturb.Seeded(42)
		xi := make([]float64, cal.P)
		if err := src.AddGammaNorm(xi, 2*cal.L, cal.EpsNoise); err != nil {
			t.Fatal(err)
		}
		clear(xi)
		if err := src.AddGammaNorm(xi, cal.OutSensitivity, cal.EpsOutput); err != nil {
			t.Fatal(err)
		}
		w := append([]float64(nil), r.Model.W...)
		floats.Sub(w, xi)
		return w
	}
	base := fit(tab)
	X, y := trainRowsOf(t, tab, schema, opts)
	baseW := iterate(base)
	b := summedGradient(X, y, 0.01, baseW)
	for name, edit := range replace {
		t2 := fittest.Clone(tab)
		cells := make([]string, len(t2.Columns))
		for j := range cells {
			cells[j] = t2.Cell(row, j)
		}
		for j, c := range edit(cells) {
			t2.SetCell(row, j, c)
		}
		nb := fit(t2)
		X2, y2 := trainRowsOf(t, t2, schema, opts)
		b2 := summedGradient(X2, y2, 0.01, iterate(nb))
		if d := floats.Distance(b, b2, 2); d > 1e-6*floats.Norm(b, 2) {
			t.Errorf("%s: the two releases map back to noises %v apart: not the minimizers for one b", name, d)
		}
		at := summedGradient(X2, y2, 0.01, baseW)
		if d := floats.Distance(b, at, 2); d > 2*(1+1e-9) {
			t.Errorf("%s: ||b(w;S) - b(w;S')|| = %v > 2L = 2", name, d)
		}
		if floats.Distance(base.Model.W, nb.Model.W, 2) == 0 {
			t.Errorf("%s: the replacement does not move the release", name)
		}
		if _, _, err := modelfile.Verify(nb); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestObjectiveAccuracy measures the mean test accuracy on the embedded data
// at eps = 1 (lambda auto, seeded noise, 20 seeds) for objective, amp and
// the gamma output perturbation, and logs it; it fails only below a sanity
// floor (the target, 0.94, is reported, not enforced).
func TestObjectiveAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("accuracy over seeds")
	}
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	const seeds = 20
	for _, m := range []dp.Mechanism{perturb.Objective, perturb.AMP, perturb.Gamma} {
		var sum float64
		for s := range seeds {
			r, err := Fit(context.Background(), tab, schema, objectiveBudget(m), Options{
				Mechanism: m, Auto: true, TestFrac: 0.2, Seed: uint64(s), Noise: perturb.Seeded(uint64(100 + s)), Diagnostics: true})
			if err != nil {
				t.Fatal(err)
			}
			sum += r.Diagnostics.ReleasedTest.Value
		}
		mean := sum / seeds
		t.Logf("%s at eps = 1 (lambda auto): mean test accuracy %.4f over %d seeds", m, mean, seeds)
		if mean < 0.88 || math.IsNaN(mean) {
			t.Errorf("%s: mean test accuracy %.4f below the sanity floor 0.88", m, mean)
		}
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// boundOf returns the declared upper (or lower) bound of column c.
func boundOf(bs []datasets.Bound, c string, upper bool) float64 {
	for _, b := range bs {
		if b.Column == c {
			if upper {
				return b.Hi
			}
			return b.Lo
		}
	}
	return 1
}
