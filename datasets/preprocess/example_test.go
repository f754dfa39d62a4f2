package preprocess_test

import (
	"fmt"
	"log"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// The default pipeline: load, split, standardize on the training split, then
// map every row into the unit ball with a bias feature.
func Example() {
	ds, err := datasets.Default()
	if err != nil {
		log.Fatal(err)
	}
	train, test, err := datasets.Split(ds, 0.2, 1, true)
	if err != nil {
		log.Fatal(err)
	}
	std, err := preprocess.FitStandardizer(train.X)
	if err != nil {
		log.Fatal(err)
	}
	if train, err = std.Transform(train); err != nil {
		log.Fatal(err)
	}
	if train, err = preprocess.UnitBallWithBias(train); err != nil {
		log.Fatal(err)
	}
	n, d := train.X.Dims()
	m, _ := test.X.Dims()
	fmt.Println("classes:", train.Classes)
	fmt.Println("train:", n, "x", d, "test rows:", m)
	fmt.Println("last feature:", train.Features[d-1])
	// Output:
	// classes: [benign malignant]
	// train: 455 x 31 test rows: 114
	// last feature: bias
}
