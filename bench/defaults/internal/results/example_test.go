package results_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
)

// The accuracy of three seeds, as the tables write it.
func ExampleStatOf() {
	rows := []map[string]string{{"accuracy": "0.81"}, {"accuracy": "0.83"}, {"accuracy": "0.85"}}
	s := results.StatOf(results.Column(rows, "accuracy"))
	fmt.Println(s, s.N)
	fmt.Println(results.StatOf(nil))
	// Output:
	// 0.8300 ± 0.0200 3
	// -
}
