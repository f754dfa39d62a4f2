package protocol_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/experiments/protocol"
)

// The protocol of a matrix: 10 rows of 2 features and their labels, split
// 80/20 (stratified, seeded), standardized on the training rows and mapped
// into the unit ball with a bias feature; the notes say what was fitted on
// what.
func ExampleMatrix() {
	X := mat.NewDense(10, 2, []float64{
		1, 2, 2, 1, 3, 3, 4, 2, 5, 4,
		-1, -2, -2, -1, -3, -3, -4, -2, -5, -4,
	})
	y := []float64{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}
	cfg, err := protocol.Matrix("toy", X, y)
	if err != nil {
		panic(err)
	}
	p, err := protocol.New(cfg)
	if err != nil {
		panic(err)
	}
	train, test, err := p.Split(1)
	if err != nil {
		panic(err)
	}
	n, d := train.X.Dims()
	fmt.Printf("%s: %d classes, loss %s; %d training rows of %d inputs (the bias last), %d test rows\n", p.Name(), p.Classes(), p.Loss().Name(), n, d, len(test.Y))
	for _, note := range cfg.Notes()[1:] {
		fmt.Println(note)
	}
	// Output:
	// toy: 2 classes, loss logistic; 8 training rows of 3 inputs (the bias last), 2 test rows
	// truncated SVD to 32 components fitted on each training split (skipped when there are at most 32 features); not privatized
	// standardization fitted on each training split; not privatized
	// row map "clip", then x' = [clip_1(x), 1]/sqrt(2): ||x'|| <= 1, kappa = 1 with the bias counted
}
