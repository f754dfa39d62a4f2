package demo_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/examples/internal/demo"
)

// TestUnitBall checks the shapes (455 training and 114 test rows of 30
// features and the bias) and that every row lies in the unit ball.
func TestUnitBall(t *testing.T) {
	train, test, err := demo.UnitBall()
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range []struct {
		name string
		n    int
	}{{"train", 455}, {"test", 114}} {
		d := train
		if ds.name == "test" {
			d = test
		}
		r, c := d.X.Dims()
		if r != ds.n || c != 31 {
			t.Errorf("%s: %d x %d, want %d x 31", ds.name, r, c, ds.n)
		}
		for i := range r {
			var s float64
			for j := range c {
				s += d.X.At(i, j) * d.X.At(i, j)
			}
			if math.Sqrt(s) > 1+1e-12 {
				t.Fatalf("%s row %d: norm %v > 1", ds.name, i, math.Sqrt(s))
			}
		}
	}
}

func ExampleUnitBall() {
	train, test, err := demo.UnitBall()
	if err != nil {
		fmt.Println(err)
		return
	}
	n, d := train.X.Dims()
	m, _ := test.X.Dims()
	fmt.Println(n, m, d)
	// Output: 455 114 31
}
