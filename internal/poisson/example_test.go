package poisson_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/internal/poisson"
)

// Batches of an expected 2 of 10 rows: each row in each step with
// probability q = 2/10 rounded down to a multiple of 2^-64, the batch's
// size varying from step to step.
func Example() {
	s := poisson.New(rand.NewChaCha8([32]byte{1}), 10, 2)
	fmt.Println(s.Rate() <= 0.2, 0.2-s.Rate() < 1e-16)
	var batch []int
	for range 4 {
		batch = s.Sample(batch)
		fmt.Println(batch)
	}
	// Output:
	// true true
	// [9]
	// [5]
	// [3 4 6 8]
	// []
}
