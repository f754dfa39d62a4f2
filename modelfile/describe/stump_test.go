package describe

import (
	"fmt"
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
