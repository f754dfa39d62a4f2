package datasets

import "gonum.org/v1/gonum/mat"

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
