// Package demo prepares the data of the examples: the embedded Wisconsin
// breast-cancer set (569 rows, 30 features, labels benign = -1 and
// malignant = +1), 20% held out (stratified, seed 1), the rows
// standardized with the training split's statistics and mapped into the
// unit ball with a bias feature, x' = [x, 1]/sqrt(2), so kappa = 1.
//
// The standardization reads the training rows: a private release trained
// on these rows covers the standardized rows, not the file (its
// certificate says so). The stratified split reads the labels. Both are
// fine for a demonstration; `stabpriv train` and private.Fit keep every
// step inside the privacy boundary.
package demo

import (
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// UnitBall returns the training and test splits of the embedded data,
// prepared as the package comment says.
func UnitBall() (train, test *datasets.Dataset, err error) {
	ds, err := datasets.Default()
	if err != nil {
		return nil, nil, err
	}
	if train, test, err = datasets.Split(ds, 0.2, 1, true); err != nil {
		return nil, nil, err
	}
	train, test, _, err = preprocess.PrepareUnitBall(train, test, preprocess.UnitBallOptions{})
	return train, test, err
}
