package modelfile_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestTrainingRowsReproduceFit checks that TrainingRows rebuilds the rows
// Fit trained on: training again on them with the same settings (through
// TrainRows, the step of Fit after the preprocessing) must give the same
// weights bit for bit, the non-private weights of a plain fit and the
// released weights of a seeded release alike.
func TestTrainingRowsReproduceFit(t *testing.T) {
	bin := fittest.Blobs(50, 3, []string{"a", "b"}, 7)
	bin.SetCell(4, 3, "zzz") // undeclared labels: null rows
	bin.SetCell(31, 3, "?")
	multi := fittest.Blobs(45, 2, []string{"p", "q", "r"}, 8)
	reg := fittest.Blobs(40, 2, []string{"0.5", "-1.25", "3"}, 9)
	reg.SetCell(7, 2, "n/a") // not a number: a null row
	cases := []struct {
		name   string
		tab    *datasets.Table
		schema datasets.Schema
		budget dp.Budget
		opts   private.Options
	}{
		{"binary, bounds, null rows, non-private", bin, datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(bin, -3, 3)}, dp.Budget{},
			private.Options{TestFrac: 0.3, Seed: 5}},
		{"binary, none, seeded release", bin, datasets.Schema{Label: "y", Classes: []string{"a", "b"}}, dp.Budget{Epsilon: 1, Delta: 1e-5},
			private.Options{Mechanism: perturb.AnalyticGaussian, Preprocess: preprocess.None, TestFrac: 0.2, Seed: 3, Noise: perturb.Seeded(11)}},
		{"softmax, standardize, stratified, non-private", multi, datasets.Schema{Label: "y", Classes: []string{"p", "q", "r"}}, dp.Budget{},
			private.Options{Preprocess: preprocess.Standardize, TestFrac: 0.2, Seed: 2, Stratify: true}},
		{"huber, label bound, seeded release", reg, datasets.Schema{Label: "y", LabelBound: 2, Bounds: fittest.BoundsFor(reg, -4, 4)}, dp.Budget{Epsilon: 2},
			private.Options{Mechanism: perturb.Gamma, TestFrac: 0.25, Seed: 4, Noise: perturb.Seeded(5),
				Trainer: trainer.Config{Loss: losses.Huber{Delta: losses.DefaultHuberDelta}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.Trainer.Reg = regularizers.ElasticNet{Lambda: 0.05}
			opts.Trainer.Passes = 4
			opts.Trainer.Clip = 0
			if len(c.schema.Classes) == 2 {
				opts.Trainer.Clip = 0.3
			}
			r, err := private.Fit(context.Background(), c.tab, c.schema, c.budget, opts)
			if err != nil {
				t.Fatal(err)
			}
			X, y, ids, err := r.TrainingRows(c.tab)
			if err != nil {
				t.Fatal(err)
			}
			n, d := X.Dims()
			if n != r.Split.TrainRows || len(y) != n || len(ids) != n || d != r.Model.D {
				t.Fatalf("rows %d x %d, %d labels, %d ids; the file records %d training rows of dimension %d", n, d, len(y), len(ids), r.Split.TrainRows, r.Model.D)
			}
			if !c.opts.Stratify {
				want, _, err := datasets.SplitIndex(c.tab.Len(), c.opts.TestFrac, c.opts.Seed)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids, want) {
					t.Errorf("ids %v, want the split positions %v", ids, want)
				}
			}
			// A row of the table maps to its training row.
			task := r.Model.Task
			for k, i := range ids {
				raw := make([]string, len(c.tab.Columns))
				for j := range raw {
					raw[j] = c.tab.Cell(i, j)
				}
				lab := raw[len(raw)-1]
				null := false
				switch task {
				case losses.Regression:
					null = lab == "n/a"
				default:
					null = !slices.Contains(c.schema.Classes, lab)
				}
				if null {
					if !slices.Equal(X.RawRowView(k), make([]float64, d)) {
						t.Errorf("null row %d (table row %d) is %v, want 0", k, i, X.RawRowView(k))
					}
					continue
				}
				feat := make([]float64, d-1)
				for j := range feat {
					feat[j] = cellFloat(t, raw[j])
				}
				want := make([]float64, d)
				if err := r.Preprocessing.Apply(want, feat); err != nil {
					t.Fatal(err)
				}
				for j := range want {
					if diff := want[j] - X.At(k, j); diff > 1e-15 || diff < -1e-15 {
						t.Fatalf("row %d (table row %d) = %v, want %v", k, i, X.RawRowView(k), want)
					}
				}
			}

			loss, err := losses.ByName(r.Model.Loss)
			if err != nil {
				t.Fatal(err)
			}
			cfg := opts.Trainer
			cfg.Loss, cfg.Kappa, cfg.Seed, cfg.Classes = loss, 1, opts.Seed, len(r.Schema.Classes)
			tr, err := release.TrainRows(context.Background(), X, y, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			var w []float64
			if r.Certificate == nil {
				m, err := tr.Reveal()
				if err != nil {
					t.Fatal(err)
				}
				w = m.W
			} else {
				c := r.Certificate
				m, _, err := tr.Simulate(c.Mechanism, c.Epsilon, c.Delta, *c.NoiseSeed)
				if err != nil {
					t.Fatal(err)
				}
				w = m.W
			}
			if !slices.Equal(w, r.Model.W) {
				t.Errorf("training on the rebuilt rows gives\n%v\nthe model file holds\n%v", w, r.Model.W)
			}
		})
	}
}

func cellFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTrainingRowsWrongTable checks that a table other than the model's is
// refused with an error that says so.
func TestTrainingRowsWrongTable(t *testing.T) {
	tab := fittest.Blobs(40, 2, []string{"a", "b"}, 3)
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: fittest.BoundsFor(tab, -3, 3)}
	r, err := private.Fit(context.Background(), tab, schema, dp.Budget{}, private.Options{TestFrac: 0.2, Seed: 1, Trainer: trainer.Config{Passes: 1}})
	if err != nil {
		t.Fatal(err)
	}
	shorter := tab.Slice(0, 39)
	renamed := fittest.Clone(tab)
	renamed.Columns[0] = "g0"
	swapped := fittest.Clone(tab)
	swapped.Columns[0], swapped.Columns[1] = swapped.Columns[1], swapped.Columns[0]
	noLabel := fittest.Clone(tab)
	noLabel.Columns[2] = "label"
	badSplit := *r
	badSplit.Split.TrainRows++
	for _, c := range []struct {
		name string
		r    *modelfile.Released
		tab  *datasets.Table
		want error
	}{
		{"a row fewer", r, shorter, datasets.ErrFormat},
		{"a renamed feature", r, renamed, datasets.ErrFormat},
		{"features in another order", r, swapped, datasets.ErrFormat},
		{"no label column", r, noLabel, datasets.ErrFormat},
		{"split record of another table", &badSplit, tab, datasets.ErrFormat},
	} {
		if _, _, _, err := c.r.TrainingRows(c.tab); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}
