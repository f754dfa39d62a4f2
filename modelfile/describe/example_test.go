package describe_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/modelfile/describe"
	"github.com/stabpriv/stabpriv/stump"
	"github.com/stabpriv/stabpriv/trainer"
)

// A released decision stump on the column age, declared in [0, 100],
// described with its threshold in years.
func ExampleStumpWords() {
	schema := datasets.Schema{Label: "y", Classes: []string{"no", "yes"}, Bounds: []datasets.Bound{{Column: "age", Lo: 0, Hi: 100}}}
	rm, err := preprocess.NewRowMap(preprocess.Bounds, []string{"age"}, schema, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	rm.Stump = true
	st := stump.Stump{Feature: 0, Index: stump.DefaultGrid / 2, Sign: 1}
	r := &modelfile.Released{Model: &trainer.Model{W: st.Weights(1, stump.DefaultGrid)}, Schema: schema, Preprocessing: rm}
	fmt.Println(describe.StumpWords(r))
	// Output: feature "age", threshold 49.9023 in its units (z = -0.00195312): class yes when z >= t, else no
}
