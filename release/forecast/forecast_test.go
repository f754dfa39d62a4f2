package forecast

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestPredict: the forecast depends on public values only, its ratio is
// exactly proportional to 1/n, it warns that gene-expression-sized data
// (102 rows of 12,626 inputs) is near chance at eps = 1 and names what
// helps, and stays silent for Adult-sized data.
func TestPredict(t *testing.T) {
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2}
	all := release.Methods()
	var pure []release.Method
	for _, m := range all {
		if m.Name().Pure() {
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
	gm, _ := release.LookupTuner(perturb.Gamma)
	if r, err := gm.NoiseRatio(cfg, 1000, 10, dp.Budget{Epsilon: 2}); err != nil || math.Abs(r-2*5.0/1000) > 1e-12 {
		t.Errorf("gamma ratio %v, want 2 (p/eps)/n = 0.01 (%v)", r, err)
	}
}

// TestPredictIn: the advice in the caller's terms. The gene_all shape at
// eps = 0.1 of which the release gets a tenth (EpsScale 0.1, two shares of
// 0.45): the eps advised is at least ten times the release's need, each
// lower share leaves the sum below 1, the inputs are named by the format
// given and never fewer than one beside the bias; a forecast whose ratio
// is +Inf (no mechanism takes the budget) warns of nothing.
func TestPredictIn(t *testing.T) {
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2}
	amp, err := release.Lookup(perturb.AMP)
	if err != nil {
		t.Fatal(err)
	}
	ms := []release.Method{amp}
	b := dp.Budget{Epsilon: 0.01, Delta: 1e-9}
	terms := Terms{EpsScale: 0.1, Shares: []Share{{"--bounds-share", 0.45}, {"--pca-share", 0.45}}, Inputs: "--pca %d"}
	plain, err := Predict(ms, cfg, 4000, 3, b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := PredictIn(ms, cfg, 4000, 3, b, terms)
	if err != nil || f.Level() != "useless" || f.Ratio != plain.Ratio {
		t.Fatalf("%+v, %v; Predict %+v", f, err, plain)
	}
	var need float64
	for _, a := range plain.Advice {
		fmt.Sscanf(a, "eps = %g", &need)
	}
	shares := 0
	for _, a := range f.Advice {
		var v float64
		if _, err := fmt.Sscanf(a, "eps = %g", &v); err == nil && v < need/0.1 {
			t.Errorf("advice %q: the release needs eps = %v, a tenth of the eps given", a, need)
		}
		for _, s := range terms.Shares {
			if _, err := fmt.Sscanf(a, s.Name+" %g", &v); err == nil {
				shares++
				if !(v > 0) || v >= s.Value || v+0.45 >= 1 {
					t.Errorf("advice %q: not a feasible lower share", a)
				}
			}
		}
		if strings.Contains(a, "model inputs") || strings.HasPrefix(a, "--pca ") {
			t.Errorf("advice %q: 3 inputs leave none to drop but one", a)
		}
	}
	if shares != 2 {
		t.Errorf("the advice %q names %d lower shares, want 2", f.Advice, shares)
	}
	// Many inputs: the advice names --pca k with k >= 1.
	g, err := PredictIn(ms, cfg, 4000, 64, dp.Budget{Epsilon: 0.05, Delta: 1e-9}, terms)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, a := range g.Advice {
		var k int
		if _, err := fmt.Sscanf(a, "--pca %d", &k); err == nil {
			named = k >= 1
		}
		if strings.Contains(a, "model inputs") {
			t.Errorf("advice %q: the inputs are --pca's", a)
		}
	}
	if g.Level() == "" || !named {
		t.Errorf("64 inputs, ratio %v: the advice %q names no --pca k", g.Ratio, g.Advice)
	}
	// Never below the bias and one input.
	for _, dim := range []int{2, 3} {
		h, err := Predict(ms, cfg, 10, dim, b)
		for _, a := range h.Advice {
			if strings.Contains(a, "at most 1 model inputs") || strings.Contains(a, "at most 0 model") || err != nil {
				t.Errorf("dim %d: advice %q (%v)", dim, a, err)
			}
		}
	}
	if w := (Forecast{Ratio: math.Inf(1)}).Warning(); w != "" {
		t.Errorf("a +Inf forecast warns %q", w)
	}
	if _, err := PredictIn(ms, cfg, 10, 3, b, Terms{EpsScale: 2}); !errors.Is(err, ErrTerms) {
		t.Errorf("EpsScale 2: %v, want ErrTerms", err)
	}
}
