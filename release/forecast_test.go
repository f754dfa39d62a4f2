package release

import (
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestPredict: the forecast depends on public values only, its ratio is
// exactly proportional to 1/n, it warns that gene-expression-sized data
// (102 rows of 12,626 inputs) is near chance at eps = 1 and names what
// helps, and stays silent for Adult-sized data.
func TestPredict(t *testing.T) {
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2}
	all := Methods()
	var pure []Method
	for _, m := range all {
		if m.Pure() {
			pure = append(pure, m)
		}
	}
	f, err := Predict(pure, cfg, 102, 12626, dp.Budget{Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f.Level() != "useless" || !strings.Contains(f.Warning(), "near chance") {
		t.Errorf("gene_all shape: %+v, %q", f, f.Warning())
	}
	for _, want := range []string{"training rows", "a delta", "model inputs"} {
		if !strings.Contains(f.Warning(), want) {
			t.Errorf("the advice %q does not name %q", f.Warning(), want)
		}
	}
	g, err := Predict(pure, cfg, 204, 12626, dp.Budget{Epsilon: 1})
	if err != nil || math.Abs(g.Ratio*2-f.Ratio) > 1e-12*f.Ratio || g.Mechanism != f.Mechanism {
		t.Errorf("ratio at 2n %v, at n %v: want half (%v)", g.Ratio, f.Ratio, err)
	}
	a, err := Predict(pure, cfg, 36178, 33, dp.Budget{Epsilon: 1})
	if err != nil || a.Warning() != "" || !(a.Ratio > 0) {
		t.Errorf("Adult shape: %+v, %q, %v", a, a.Warning(), err)
	}
	// The gamma ratio is 2 nu/n with nu = p/eps.
	gm, _ := Lookup(perturb.Gamma)
	if r, err := gm.NoiseRatio(cfg, 1000, 10, dp.Budget{Epsilon: 2}); err != nil || math.Abs(r-2*5.0/1000) > 1e-12 {
		t.Errorf("gamma ratio %v, want 2 (p/eps)/n = 0.01 (%v)", r, err)
	}
}
