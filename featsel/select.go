package featsel

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

// checkWeights validates a K x D row-major weight slice (trainer.Model.W).
func checkWeights(w []float64, k, d int) error {
	if k < 1 || d < 0 {
		return fmt.Errorf("%w: %d x %d model, want K >= 1, D >= 0", ErrShape, k, d)
	}
	if len(w) != k*d {
		return fmt.Errorf("%w: %d weights for a %d x %d model", ErrShape, len(w), k, d)
	}
	if i := check.FirstNonFinite(w); i >= 0 {
		return fmt.Errorf("%w: weight %d (row %d, feature %d) is %v", ErrInvalid, i, i/d, i%d, w[i])
	}
	return nil
}

// Select applies the thresholding rule to a K x D weight matrix stored
// row-major as in trainer.Model.W (W[k*D+j] is weight j of output k): feature
// j is selected when |W[k*D+j]| > t for at least one row k (the "any class"
// rule for a softmax model; for K = 1 it is |w_j| > t). The comparison is
// strict, so t = 0 selects exactly the non-zero weights, which is the
// support of the non-private elastic net (the paper's Section on private
// feature selection).
//
// It returns the selected indices in increasing order and a mask of length
// d. Errors wrap ErrShape (len(w) != k*d, k < 1) or ErrInvalid (a NaN or
// infinite weight, a negative or non-finite t).
func Select(w []float64, k, d int, t float64) (idx []int, mask []bool, err error) {
	if err := checkWeights(w, k, d); err != nil {
		return nil, nil, err
	}
	if err := checkThreshold(t); err != nil {
		return nil, nil, err
	}
	mask = make([]bool, d)
	idx = []int{}
	for j := 0; j < d; j++ {
		for r := 0; r < k; r++ {
			if math.Abs(w[r*d+j]) > t {
				mask[j] = true
				break
			}
		}
		if mask[j] {
			idx = append(idx, j)
		}
	}
	return idx, mask, nil
}
