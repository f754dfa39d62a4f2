package release

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// objectiveRows returns 300 seeded rows of norm at most 1 in 4 dimensions
// and their labels.
func objectiveRows() (*mat.Dense, []float64) {
	n, d := 300, 4
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		row := X.RawRowView(i)
		for j := range d - 1 {
			row[j] = math.Sin(float64(3*i+7*j)) / 2
		}
		row[d-1] = 0.5
		y[i] = 1
		if row[0]+0.2*math.Cos(float64(i)) < 0 {
			y[i] = -1
		}
	}
	return X, y
}

// TestObjectiveMethodSeeded checks a seeded release by objective
// perturbation and AMP: it is objpert.Release with the seeded source,
// reproducible, marked not private, carries the notes, is made once, and
// the method refuses what the mechanism does not certify.
func TestObjectiveMethodSeeded(t *testing.T) {
	X, y := objectiveRows()
	n, d := X.Dims()
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Reg: regularizers.ElasticNet{Lambda: 0.05}, Kappa: 1}
	ctx := context.Background()
	for _, name := range []dp.Mechanism{perturb.Objective, perturb.AMP} {
		m, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		b := dp.Budget{Epsilon: 1}
		if !m.Name().Pure() {
			b.Delta = 1e-5
		}
		release := func(seed uint64) *Outcome {
			t.Helper()
			p, err := m.Prepare(ctx, Rows{X: X, Y: y, Config: cfg, Notes: []string{"a note"}}, b)
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Release(ctx, perturb.Seeded(seed))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Release(ctx, perturb.Seeded(seed)); !errors.Is(err, ErrReleased) {
				t.Errorf("%s: a second release: %v", name, err)
			}
			return out
		}
		out := release(42)
		cert := out.Certificate
		if cert.Private || cert.Source != perturb.SourceSeeded || cert.NoiseSeed == nil || *cert.NoiseSeed != 42 || cert.Mechanism != name ||
			cert.WeightsSHA256 != dp.WeightsSHA256(out.Model.W) || !strings.Contains(strings.Join(cert.Assumptions, "\n"), "a note") || len(cert.Ledger) == 0 {
			t.Errorf("%s: certificate %+v", name, cert)
		}
		pr := objpert.Problem{Loss: losses.Logistic{}, N: n, D: d, K: 1, Kappa: 1, Lambda: 0.05}
		cal, err := objpert.Calibrate(name, b.Epsilon, b.Delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := objpert.Release(ctx, X, y, pr, cal, perturb.Seeded(42))
		if err != nil || !floats.Equal(want.W, out.Model.W) {
			t.Errorf("%s: weights %v, objpert.Release with the same seed %v (%v)", name, out.Model.W, want.W, err)
		}
		if other := release(43); floats.Equal(other.Model.W, out.Model.W) {
			t.Errorf("%s: another seed gave the same weights", name)
		}
	}
	bad := func(edit func(*trainer.Config)) trainer.Config { c := cfg; edit(&c); return c }
	m, _ := Lookup(perturb.Objective)
	for name, c := range map[string]trainer.Config{
		"l1":    bad(func(c *trainer.Config) { c.Reg.L1Ratio = 0.15 }),
		"clip":  bad(func(c *trainer.Config) { c.Clip = 0.1 }),
		"floor": bad(func(c *trainer.Config) { c.Reg.Lambda = 1e-6 }),
	} {
		if _, err := m.Prepare(ctx, Rows{X: X, Y: y, Config: c}, dp.Budget{Epsilon: 1}); !errors.Is(err, ErrConfig) || !errors.Is(err, objpert.ErrCondition) {
			t.Errorf("%s: %v, want ErrConfig and objpert.ErrCondition", name, err)
		}
	}
	if _, err := m.Prepare(ctx, Rows{X: X, Y: y, Config: cfg}, dp.Budget{Epsilon: 1, Delta: 1e-5}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("objective with delta: %v, want dp.ErrBudget", err)
	}
}

// TestObjectiveRefusesWideHessian: rows wider than glm.MaxHessianWeights
// (K d weights, whose Hessian the solver holds dense) are refused before
// the matrix is made, naming the way out; at the limit they are not.
func TestObjectiveRefusesWideHessian(t *testing.T) {
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Reg: regularizers.ElasticNet{Lambda: 0.05}, Kappa: 1}
	m, err := Lookup(perturb.Objective)
	if err != nil {
		t.Fatal(err)
	}
	X := mat.NewDense(2, glm.MaxHessianWeights+1, nil)
	_, err = m.Prepare(context.Background(), Rows{X: X, Y: []float64{-1, 1}, Config: cfg}, dp.Budget{Epsilon: 1})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "--project") {
		t.Errorf("%d weights: %v, want ErrConfig naming --project", glm.MaxHessianWeights+1, err)
	}
}
