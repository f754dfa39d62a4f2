package pdptest_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
)

// Example draws five logistic rows in the unit ball, removes the first and
// adds it back at the end.
func Example() {
	x, y := pdptest.Synth(5, 3, losses.Logistic{}, 0, 1)
	xo, yo := pdptest.Without(x, y, 0)
	xb, yb := pdptest.With(xo, yo, x.RawRowView(0), y[0])
	n, d := xb.Dims()
	fmt.Println(n, d, len(yb), pdptest.Dist(xb.RawRowView(4), x.RawRowView(0)), x.At(0, 2))
	// Output:
	// 5 3 5 0 0.5
}
