package categorical_test

import (
	"fmt"
	"log"

	"github.com/stabpriv/stabpriv/datasets/categorical"
)

// Class names to labels, and two categorical columns to indicator columns.
func Example() {
	y, classes, err := categorical.EncodeClasses([]string{"spam", "ham", "spam"}, "spam")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(classes, y)

	enc, err := categorical.FitOneHot([]string{"color", "size"}, [][]string{{"red", "L"}, {"blue", "S"}})
	if err != nil {
		log.Fatal(err)
	}
	row := make([]float64, enc.Width())
	if err := enc.Encode(row, []string{"red", "S"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(enc.FeatureNames(), row)
	// Output:
	// [ham spam] [1 -1 1]
	// [color=blue color=red size=L size=S] [0 1 0 1]
}
