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
// input's index.
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
	cls := func(v float64) string { return schema.Classes[(int(v)+1)/2] }
	for j, in := range inputs {
		for _, k := range []int{1, T / 2, (T + 1) / 2, T} {
			for _, sign := range []int{1, -1} {
				st := stump.Stump{Feature: j, Index: k, Sign: sign}
				r := &modelfile.Released{Model: &trainer.Model{W: st.Weights(len(inputs), T)}, Schema: schema, Preprocessing: rm}
				got := StumpWords(r)
				tz := stump.Threshold(k, T)
				var want string
				if in.cat == "" {
					want = fmt.Sprintf("feature %q, threshold %s in its units", in.name, g6(in.lo+(tz+1)*(in.hi-in.lo)/2))
				} else {
					one, zero := make([]float64, len(inputs)), make([]float64, len(inputs))
					one[j] = 1
					at, other := cls(st.Predict(one, T)), cls(st.Predict(zero, T))
					want = fmt.Sprintf("class %s when %q = %q, else %s", at, in.name, in.cat, other)
					if at == other {
						want = fmt.Sprintf("class %s whatever %q is", at, in.name)
					}
				}
				if !strings.Contains(got, want) || strings.Contains(got, "mapped input") {
					t.Errorf("input %d, threshold %d, sign %d: %q, want it to contain %q", j, k, sign, got, want)
				}
			}
		}
	}
}
