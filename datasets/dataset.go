package datasets

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// BiasFeature is the name of the constant feature appended by
// preprocess.AddBias and preprocess.UnitBallWithBias.
const BiasFeature = "bias"

// Dataset is a labelled data set: one row of X per example.
type Dataset struct {
	// X holds the features, one row per example.
	X *mat.Dense
	// Y holds the labels, encoded for the loss: -1/+1 for binary tasks, a class
	// index 0..K-1 for multiclass tasks, the value for regression.
	Y []float64
	// Features names the columns of X.
	Features []string
	// Classes names the classes: Classes[k] is the name of label index k, and
	// for binary tasks Classes[0] is the label -1 and Classes[1] the label +1.
	// Nil for regression.
	Classes []string
	// Notes records what a loader or a preprocessing step did that a reader
	// of the results must know (for example, features derived from a graph).
	Notes []string
}

// Validate returns an error wrapping ErrInvalid if ds is nil or empty, or
// its parts disagree in size.
func (ds *Dataset) Validate() error {
	if ds == nil || ds.X == nil {
		return fmt.Errorf("%w: nil data set", ErrInvalid)
	}
	if ds.X.IsEmpty() {
		return fmt.Errorf("%w: empty data set", ErrInvalid)
	}
	n, d := ds.X.Dims()
	if len(ds.Y) != n {
		return fmt.Errorf("%w: %d rows but %d labels", ErrInvalid, n, len(ds.Y))
	}
	if ds.Features != nil && len(ds.Features) != d {
		return fmt.Errorf("%w: %d columns but %d feature names", ErrInvalid, d, len(ds.Features))
	}
	return nil
}

// WithData returns a Dataset holding X and Y (not copied) and copies of the
// feature names, class names and notes of ds: the result of a step that
// maps the rows of ds and keeps what they mean.
func (ds *Dataset) WithData(X *mat.Dense, Y []float64) *Dataset {
	return &Dataset{
		X:        X,
		Y:        Y,
		Features: append([]string(nil), ds.Features...),
		Classes:  append([]string(nil), ds.Classes...),
		Notes:    append([]string(nil), ds.Notes...),
	}
}
