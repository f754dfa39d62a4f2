package datasets_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
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
	std, err := datasets.FitStandardizer(train.X)
	if err != nil {
		log.Fatal(err)
	}
	if train, err = std.Transform(train); err != nil {
		log.Fatal(err)
	}
	if train, err = datasets.UnitBallWithBias(train); err != nil {
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

func ExampleReadCSV() {
	const data = `height,weight,species
1.0,2.5,cat
1.5,3.5,dog
0.5,2.0,bird
`
	ds, err := datasets.ReadCSV(strings.NewReader(data), datasets.CSVOptions{Label: "species", Task: losses.Multiclass})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ds.Features, ds.Classes, ds.Y)

	_, err = datasets.ReadCSV(strings.NewReader(data), datasets.CSVOptions{Label: "kind"})
	fmt.Println(err)
	// Output:
	// [height weight] [bird cat dog] [1 2 0]
	// datasets: bad data format: no label column "kind"; the columns are height, weight, species
}
