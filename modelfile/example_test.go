package modelfile_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

func ExampleVerify() {
	table, schema, err := datasets.DefaultTable()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := private.Fit(context.Background(), table, schema, dp.Budget{Epsilon: 1}, private.Options{
		Mechanism: perturb.Gamma, Auto: true, TestFrac: 0.2, Seed: 1,
		Noise: perturb.Seeded(7), // reproducible, so not private: the seed is published
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var file bytes.Buffer
	if err := r.Write(&file); err != nil {
		fmt.Println(err)
		return
	}
	back, err := modelfile.Read(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	verdict, why, err := modelfile.Verify(back)
	fmt.Println(verdict == modelfile.NotPrivate, why, err)
	label, err := back.Predict(make([]float64, len(back.Features())))
	fmt.Println(label, err)

	// Output:
	// true the noise was drawn from a seeded generator whose seed (7) is published: anyone can subtract it <nil>
	// benign <nil>
}
