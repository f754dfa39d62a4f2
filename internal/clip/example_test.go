package clip_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/internal/clip"
)

// A GLM example's gradient g x^T, clipped to norm C = 1: the margin
// derivative g is scaled, and the products g x_j are what a step adds.
func Example() {
	x := []float64{3, 4} // norm 5
	g := []float64{0.5}  // the gradient's norm is 2.5
	b := clip.New(1, len(x))
	if !b.Fast(0.5 * 5) {
		fmt.Println("scaled:", b.Scale(g, x))
	}
	fmt.Printf("%.12f %.12f\n", g[0]*x[0], g[0]*x[1])
	// Output:
	// scaled: true
	// 0.600000000000 0.800000000000
}
