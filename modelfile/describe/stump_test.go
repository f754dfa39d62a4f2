package describe

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/stump"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestStumpWordsMixed describes every stump of a table with numeric and
// categorical columns (age in [0, 100], colour one-hot with three
// categories, size in [-10, 10]): a numeric input is named by its column
// with the threshold in the column's units (from that column's bounds, not
// another's), a one-hot input by "column" = "category" with the class of
// the rows of that category and of the others, taken from the stump's own
// prediction on z = 1 and z = 0; no description falls back to the mapped
// input's index. Binary stumps and multiclass stumps of three classes alike.
func TestStumpWordsMixed(t *testing.T) {
	schema := datasets.Schema{Label: "y", Classes: []string{"no", "yes"},
		Bounds:     []datasets.Bound{{Column: "age", Lo: 0, Hi: 100}, {Column: "size", Lo: -10, Hi: 10}},
		Categories: []datasets.Categorical{{Column: "colour", Values: []string{"red", "green", "blue"}}}}
	rm, err := preprocess.NewRowMap(preprocess.Bounds, []string{"age", "colour", "size"}, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	rm.Stump = true
	type input struct {
		name   string
		lo, hi float64 // numeric
		cat    string  // one-hot
	}
	inputs := []input{{name: "age", lo: 0, hi: 100}, {name: "colour", cat: "red"}, {name: "colour", cat: "green"}, {name: "colour", cat: "blue"}, {name: "size", lo: -10, hi: 10}}
	const T = stump.DefaultGrid
	p := len(inputs)
	three := []string{"no", "yes", "maybe"}
	for j, in := range inputs {
		for _, k := range []int{1, 4, T / 2, (T + 1) / 2, T - 3, T} {
			// The binary stumps of both signs, and multiclass stumps of
			// three classes (classes and the class at z = t on either side).
			type stumpCase struct {
				name    string
				model   *trainer.Model
				classes []string
				predict func(z []float64) string
			}
			var cases []stumpCase
			for _, sign := range []int{1, -1} {
				st := stump.Stump{Feature: j, Index: k, Sign: sign}
				cases = append(cases, stumpCase{fmt.Sprintf("sign %d", sign), &trainer.Model{K: 1, D: p + 1, W: st.Weights(p, T)}, schema.Classes,
					func(z []float64) string { return schema.Classes[(int(st.Predict(z, T))+1)/2] }})
			}
			for _, pr := range [][2]int{{0, 2}, {2, 1}, {1, 0}} {
				// The same threshold on the multiclass stump's grid, where
				// the binary grid's point is one of its points.
				const MT = stump.MultiGrid
				if k*(MT+1)%(T+1) != 0 {
					break
				}
				m := stump.Multi{Feature: j, Index: k * (MT + 1) / (T + 1), Lo: pr[0], Hi: pr[1]}
				cases = append(cases, stumpCase{fmt.Sprintf("classes %d below, %d above", pr[0], pr[1]), &trainer.Model{K: 3, D: p + 1, W: m.Weights(p, MT, 3)}, three,
					func(z []float64) string { return three[m.Predict(z, MT)] }})
			}
			for _, c := range cases {
				sc := schema
				sc.Classes = c.classes
				got := StumpWords(&modelfile.Released{Model: c.model, Schema: sc, Preprocessing: rm})
				tz := stump.Threshold(k, T)
				var want string
				if in.cat == "" {
					want = fmt.Sprintf("feature %q, threshold %s in its units", in.name, g6(in.lo+(tz+1)*(in.hi-in.lo)/2))
				} else {
					one, zero := make([]float64, p), make([]float64, p)
					one[j] = 1
					at, other := c.predict(one), c.predict(zero)
					want = fmt.Sprintf("class %s when %q = %q, else %s", at, in.name, in.cat, other)
					if at == other {
						want = fmt.Sprintf("class %s whatever %q is", at, in.name)
					}
				}
				if !strings.Contains(got, want) || strings.Contains(got, "mapped input") {
					t.Errorf("input %d, threshold %d, %s: %q, want it to contain %q", j, k, c.name, got, want)
				}
			}
		}
	}
}

// TestIntervalAndPairWords: an interval on a numeric column reads its two
// thresholds in the column's units (the inverse of the linear and of the
// log map), an interval on a one-hot input the class of its category and
// of the others, and a pair on the public log map the bound on the ratio
// (1 + x_a)/(1 + x_b) it is; each agrees with the member's own prediction.
func TestIntervalAndPairWords(t *testing.T) {
	classes := []string{"a", "b", "c"}
	schema := datasets.Schema{Label: "y", Classes: classes,
		Bounds:     []datasets.Bound{{Column: "age", Lo: 0, Hi: 100}},
		Categories: []datasets.Categorical{{Column: "colour", Values: []string{"red", "blue"}}}}
	linear, err := preprocess.NewRowMap(preprocess.Bounds, []string{"age", "colour"}, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	const T = stump.MultiGrid
	v := stump.Interval{Feature: 0, Lo: 64, Hi: 192, A: 2, B: 0, C: 1} // z = -0.5 and 0.5: ages 25 and 75
	words := func(m *trainer.Model, rm *preprocess.RowMap, cl []string) string {
		sc := schema
		sc.Classes = cl
		return StumpWords(&modelfile.Released{Model: m, Schema: sc, Preprocessing: rm})
	}
	model := func(v stump.Interval) *trainer.Model { return &trainer.Model{K: 3, D: 4, W: v.Weights(3, T, 3)} }
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"linear", words(model(v), linear, classes), `three intervals of column "age", thresholds 25 and 75 in its units (z = -0.5 and 0.5): class c below 25, a between, b above 75`},
		{"one-hot", words(model(stump.Interval{Feature: 2, Lo: 64, Hi: 192, A: 2, B: 0, C: 1}), linear, classes), `column "colour" = "blue" (z = 1 when it is "blue", else 0; t1 = -0.5, t2 = 0.5): class b when it is, else a`},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q, want it to contain %q", c.name, c.got, c.want)
		}
	}
	// The public log map z = g(x)/32 (centre 0, spread 1): z = 1/8 is
	// x = 2^4 - 1 = 15, z = 3/16 is 63.
	lo, hi := []float64{-1, -1}, []float64{1, 1}
	logMap := &preprocess.RowMap{Mode: preprocess.Bounds, Features: []string{"w", "d"}, Lo: lo, Hi: hi, Log: 32, Stump: true}
	got := words(model(stump.Interval{Feature: 1, Lo: 144, Hi: 152, A: 0, B: 2, C: 1}), logMap, classes)
	if want := `three intervals of column "d", thresholds 15 and 63 in its units`; !strings.Contains(got, want) {
		t.Errorf("log map: %q, want it to contain %q", got, want)
	}
	// A pair w - d >= t = 1/32 on that map: (1 + w)/(1 + d) >= 2.
	q := stump.Pair{A: 0, B: 1, Index: (stump.DefaultGrid + 1) / 2 * 33 / 32, Sign: 1}
	pm := &trainer.Model{K: 1, D: 3, W: q.Weights(2, stump.DefaultGrid)}
	got = words(pm, logMap, []string{"no", "yes"})
	if want := `class yes when (1 + w)/(1 + d) >= 2 (for values >= 0`; !strings.Contains(got, want) {
		t.Errorf("pair: %q, want it to contain %q", got, want)
	}
	for _, x := range [][2]float64{{3, 1}, {2.9, 1}, {100, 49}, {100, 51}, {0, 0}} {
		z := []float64{math.Log2(1+x[0]) / 32, math.Log2(1+x[1]) / 32}
		if ratio := (1 + x[0]) / (1 + x[1]); (ratio >= 2) != (q.Predict(z, stump.DefaultGrid) > 0) {
			t.Errorf("pair at %v: the words say %v, the pair %v", x, ratio >= 2, q.Predict(z, stump.DefaultGrid))
		}
	}
}
