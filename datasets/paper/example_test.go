package paper_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/datasets/paper"
)

// The registry: each data set's folder, the file that marks it and its
// default lambda grid.
func Example() {
	for _, d := range paper.All() {
		fmt.Printf("%-8s %s/%s lambdas %g..%g reduced by the loader: %v\n",
			d.Name, d.Dir, d.Marker, d.Lambdas[0], d.Lambdas[len(d.Lambdas)-1], d.Reduced)
	}
	// Output:
	// adult    adult/adult.data lambdas 0.0001..0.01 reduced by the loader: false
	// lastfm   lastfm_asia/lastfm_asia_target.csv lambdas 0.0001..0.1 reduced by the loader: true
	// gene_all gene_all/labels.csv lambdas 0.001..1 reduced by the loader: false
}
