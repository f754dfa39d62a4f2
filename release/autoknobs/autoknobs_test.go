package autoknobs

import (
	"errors"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestChoose: lambda = G (2/R_0) sqrt(nu)/n for the gamma noise (nu =
// p/eps), unclipped with G = 1 in the formula for K > 1; a shape without
// rows, inputs or outputs wraps ErrInput and a budget the mechanism cannot
// spend dp.ErrBudget; Apply sets the knobs with l1 ratio 0 and the bounded
// inverse-t steps; GroupScale is sqrt(c), 1 for c <= 1.
func TestChoose(t *testing.T) {
	k, err := Choose(400, 10, 1, perturb.Gamma, dp.Budget{Epsilon: 2})
	if want := autoClip * 2 / autoR0 * math.Sqrt(10.0/2) / 400; err != nil || math.Abs(k.Lambda-want) > 1e-15*want || k.Clip != autoClip {
		t.Errorf("binary: %+v, %v; want lambda %v, clip %v", k, err, want, autoClip)
	}
	m, err := Choose(400, 10, 3, perturb.Gamma, dp.Budget{Epsilon: 2})
	if want := 2 / autoR0 * math.Sqrt(30.0/2) / 400; err != nil || math.Abs(m.Lambda-want) > 1e-15*want || m.Clip != 0 {
		t.Errorf("3 classes: %+v, %v; want lambda %v unclipped", m, err, want)
	}
	for _, shape := range [][3]int{{0, 10, 1}, {400, 0, 1}, {400, 10, 0}} {
		if _, err := Choose(shape[0], shape[1], shape[2], perturb.Gamma, dp.Budget{Epsilon: 1}); !errors.Is(err, ErrInput) {
			t.Errorf("shape %v: %v, want ErrInput", shape, err)
		}
	}
	if _, err := Choose(400, 10, 1, perturb.Gamma, dp.Budget{Epsilon: 1, Delta: 1e-5}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("gamma with a delta: %v, want dp.ErrBudget", err)
	}
	cfg := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 9, L1Ratio: 0.5}, Eta: 0.3}
	k.Apply(&cfg)
	if cfg.Reg.Lambda != k.Lambda || cfg.Reg.L1Ratio != 0 || cfg.Clip != k.Clip || cfg.Schedule != trainer.BoundedInverseT || cfg.Eta != 0 {
		t.Errorf("applied: %+v", cfg)
	}
	if GroupScale(0) != 1 || GroupScale(1) != 1 || GroupScale(9) != 3 {
		t.Errorf("GroupScale: %v %v %v, want 1 1 3", GroupScale(0), GroupScale(1), GroupScale(9))
	}
}
