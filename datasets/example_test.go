package datasets_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
)

// The embedded default data set, split into seeded, stratified training and
// test sets.
func Example() {
	ds, err := datasets.Default()
	if err != nil {
		log.Fatal(err)
	}
	train, test, err := datasets.Split(ds, 0.2, 1, true)
	if err != nil {
		log.Fatal(err)
	}
	n, d := train.X.Dims()
	m, _ := test.X.Dims()
	fmt.Println("classes:", train.Classes)
	fmt.Println("train:", n, "x", d, "test rows:", m)
	// Output:
	// classes: [benign malignant]
	// train: 455 x 30 test rows: 114
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
	// datasets: invalid schema: no label column "kind"; the columns are height, weight, species
}
