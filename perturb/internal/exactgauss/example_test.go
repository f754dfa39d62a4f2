package exactgauss_test

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/perturb/internal/exactgauss"
)

// Each value gets exact N(0, sigma^2) noise and lands on the lattice of
// step 2^Lattice(sigma). (A fixed key makes the output reproducible: a
// release keys the generator from crypto/rand.)
func Example() {
	const sigma = 0.5
	s := exactgauss.New([32]byte{1})
	w := []float64{1, 2, 3}
	s.AddSnapped(w, sigma)
	step := math.Ldexp(1, exactgauss.Lattice(sigma))
	fmt.Println("step", step)
	for _, v := range w {
		fmt.Printf("%.6f on the lattice: %v\n", v, v/step == math.Trunc(v/step))
	}
	// Output:
	// step 4.76837158203125e-07
	// 0.563905 on the lattice: true
	// 1.480877 on the lattice: true
	// 3.341877 on the lattice: true
}
