package protocol

import (
	"fmt"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
)

// Matrix returns the protocol of the n x d features X and the labels y,
// named name ("custom" when empty): Config.Data holds them, with
// the classes the distinct values of y in increasing order (two: a binary
// task, the larger one +1; more: softmax, class k the k-th value, named
// by strconv.FormatFloat(v, 'g', -1, 64)) and the columns named x1, ...,
// xd. The other fields are the paper's protocol (zero values); set them on
// the result. The sweep reads its classes, SVD and standardization from
// the rows, as for every data set of an experiment: not private (Notes).
// A non-finite value, fewer than two classes or a label count other than
// n is an error wrapping ErrConfig.
func Matrix(name string, X mat.Matrix, y []float64) (Config, error) {
	if X == nil {
		return Config{}, fmt.Errorf("%w: no feature matrix", ErrConfig)
	}
	n, d := X.Dims()
	if len(y) != n {
		return Config{}, fmt.Errorf("%w: %d rows of features but %d labels", ErrConfig, n, len(y))
	}
	ds := &datasets.Dataset{X: mat.DenseCopyOf(X), Y: make([]float64, n)}
	for j := range d {
		ds.Features = append(ds.Features, "x"+strconv.Itoa(j+1))
	}
	if k := check.FirstNonFinite(ds.X.RawMatrix().Data); k >= 0 {
		return Config{}, fmt.Errorf("%w: X[%d][%d] = %v, want a finite value", ErrConfig, k/d, k%d, ds.X.RawMatrix().Data[k])
	}
	if i := check.FirstNonFinite(y); i >= 0 {
		return Config{}, fmt.Errorf("%w: y[%d] = %v, want a finite label", ErrConfig, i, y[i])
	}
	classes := slices.Compact(slices.Sorted(slices.Values(y)))
	if len(classes) < 2 {
		return Config{}, fmt.Errorf("%w: the labels take %d value(s), want 2 classes or more", ErrConfig, len(classes))
	}
	for _, c := range classes {
		ds.Classes = append(ds.Classes, strconv.FormatFloat(c, 'g', -1, 64))
	}
	for i, v := range y {
		k, _ := slices.BinarySearch(classes, v)
		ds.Y[i] = float64(k)
		if len(classes) == 2 {
			ds.Y[i] = float64(2*k - 1)
		}
	}
	return Config{Dataset: name, Data: ds}, nil
}
