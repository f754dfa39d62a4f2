package modelfile

import (
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/stump"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestConstantClass checks the constant-model test on models whose
// answer is known: a bias above the norm of the other weights is constant
// (and which class), at or below it is not, and a multiclass model whose
// bias gap beats every weight difference is constant.
func TestConstantClass(t *testing.T) {
	bin := func(w ...float64) *Released {
		return &Released{Model: &trainer.Model{Task: losses.Binary, K: 1, D: len(w), W: w}, Schema: datasets.Schema{Classes: []string{"no", "yes"}}, Preprocessing: &preprocess.RowMap{}}
	}
	for _, c := range []struct {
		w     []float64
		class string
		ok    bool
	}{
		{[]float64{0.3, 0.4, 0.6}, "yes", true},
		{[]float64{0.3, 0.4, -0.6}, "no", true},
		{[]float64{0.3, 0.4, 0.5}, "", false}, // |b| = ||v||: the margin reaches 0
		{[]float64{0.3, 0.4, 0.1}, "", false},
		{[]float64{0, 0, 0}, "", false},
	} {
		if class, ok := bin(c.w...).ConstantClass(); class != c.class || ok != c.ok {
			t.Errorf("%v: %q %v, want %q %v", c.w, class, ok, c.class, c.ok)
		}
	}
	multi := &Released{Model: &trainer.Model{Task: losses.Multiclass, K: 3, D: 2, W: []float64{0.1, 2, 0, 0, 0.2, 0.5}}, Schema: datasets.Schema{Classes: []string{"a", "b", "c"}}, Preprocessing: &preprocess.RowMap{}}
	if class, ok := multi.ConstantClass(); class != "a" || !ok {
		t.Errorf("multiclass: %q %v, want a", class, ok)
	}
	multi.Model.W[0] = 3 // class a's weight now exceeds its bias gap to b
	if _, ok := multi.ConstantClass(); ok {
		t.Error("multiclass with a large weight: constant")
	}
	// Stumps on a one-hot input (z in {0, 1}) and on a numeric one (z in
	// [-1, 1]): constant only when the one-hot's threshold is at or below 0.
	p := &preprocess.RowMap{Mode: preprocess.Bounds, Features: []string{"shape", "x"}, Lo: []float64{0}, Hi: []float64{1}, Stump: true,
		Categories: []datasets.Categorical{{Column: "shape", Values: []string{"round", "square"}}}}
	T := stump.DefaultGrid
	for k := 1; k <= T; k++ {
		th := stump.Threshold(k, T)
		for _, c := range []struct {
			feature  int
			constant bool
		}{{1, th <= 0}, {2, false}} {
			st := stump.Stump{Feature: c.feature, Index: k, Sign: 1}
			r := &Released{Model: &trainer.Model{Task: losses.Binary, K: 1, D: 4, W: st.Weights(3, T)}, Schema: datasets.Schema{Classes: []string{"no", "yes"}}, Preprocessing: p}
			class, ok := r.ConstantClass()
			if ok != c.constant || ok && class != "yes" {
				t.Errorf("stump on input %d at t = %v: %q %v, want constant %v", c.feature, th, class, ok, c.constant)
			}
			// A multiclass stump: class Hi above t, Lo below, the smaller
			// at t; on the one-hot input constant (Hi) below 0, and at
			// t = 0 when Hi is the smaller class.
			// (The binary grid is the finer one: only its points on the
			// MultiGrid have a multiclass twin.)
			for _, pr := range [][2]int{{0, 2}, {2, 1}} {
				if k*(stump.MultiGrid+1)%(T+1) != 0 {
					break
				}
				m := stump.Multi{Feature: c.feature, Index: k, Lo: pr[0], Hi: pr[1]}
				three := []string{"no", "yes", "maybe"}
				m.Index = (k * (stump.MultiGrid + 1)) / (T + 1)
				r := &Released{Model: &trainer.Model{Task: losses.Multiclass, K: 3, D: 4, W: m.Weights(3, stump.MultiGrid, 3)}, Schema: datasets.Schema{Classes: three}, Preprocessing: p}
				want := c.feature == 1 && (th < 0 || th == 0 && m.Hi < m.Lo)
				if class, ok := r.ConstantClass(); ok != want || ok && class != three[m.Hi] {
					t.Errorf("multiclass stump %+v on input %d at t = %v: %q %v, want constant %v", m, c.feature, th, class, ok, want)
				}
			}
		}
	}
	// Intervals (class 2 below t1, 0 between, 1 above t2): on the one-hot
	// input constant when 0 and 1 fall in one interval (both above t2 < 0),
	// never on the numeric input (its ends -1 and 1 are below t1 and above
	// t2).
	three := []string{"no", "yes", "maybe"}
	for _, c := range []struct {
		feature, lo, hi int
		class           string
	}{{1, 10, 100, "yes"}, {1, 10, 127, "yes"}, {1, 10, 128, ""}, {1, 140, 250, ""}, {1, 10, 200, ""}, {2, 10, 100, ""}, {2, 140, 250, ""}} {
		v := stump.Interval{Feature: c.feature, Lo: c.lo, Hi: c.hi, A: 2, B: 0, C: 1}
		r := &Released{Model: &trainer.Model{Task: losses.Multiclass, K: 3, D: 4, W: v.Weights(3, stump.MultiGrid, 3)}, Schema: datasets.Schema{Classes: three}, Preprocessing: p}
		if class, ok := r.ConstantClass(); class != c.class || ok != (c.class != "") {
			t.Errorf("interval %+v: %q %v, want %q", v, class, ok, c.class)
		}
	}
}
