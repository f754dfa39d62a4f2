package datasets

import (
	"bytes"
	_ "embed"

	"github.com/stabpriv/stabpriv/losses"
)

//go:embed data/wdbc.csv
var wdbcCSV []byte

// DefaultLabel is the label column of the default data set.
const DefaultLabel = "diagnosis"

// Default returns the embedded Wisconsin diagnostic breast cancer data set:
// 569 examples, 30 real-valued features, binary label "diagnosis" encoded
// benign = -1, malignant = +1. The features are raw (not standardized).
func Default() (*Dataset, error) {
	ds, err := ReadCSV(bytes.NewReader(wdbcCSV), CSVOptions{Label: DefaultLabel, Task: losses.Binary, Positive: "malignant"})
	if err != nil {
		return nil, err
	}
	ds.Notes = append([]string{
		"data: Wisconsin diagnostic breast cancer (Street, Wolberg & Mangasarian), 569 x 30, " +
			"from scikit-learn (BSD-3) / UCI Machine Learning Repository (CC BY 4.0)",
	}, ds.Notes...)
	return ds, nil
}

// DefaultCSV returns a copy of the embedded default data set as CSV text,
// header included.
func DefaultCSV() []byte { return bytes.Clone(wdbcCSV) }
