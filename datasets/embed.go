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

// DefaultTable returns the embedded Wisconsin diagnostic breast cancer
// table, the UCI file without its reference sample (497 rows, 30 features,
// label "diagnosis"), and its schema: classes benign and malignant (+1), and
// the shipped public feature bounds (DefaultBounds), computed from the
// reference sample, rows the table does not hold.
func DefaultTable() (*Table, Schema, error) {
	text, _ := splitReference(wdbcCSV)
	t, err := ReadTable(bytes.NewReader(text), "embedded Wisconsin diagnostic breast cancer data (497 rows: the UCI file without every 8th row, the public sample of its bounds)")
	if err != nil {
		return nil, Schema{}, err
	}
	return t, Schema{Label: DefaultLabel, Classes: []string{"benign", "malignant"}, Bounds: DefaultBounds()}, nil
}

// DefaultReference returns the public reference sample of the embedded
// breast cancer file: its data rows at positions 0, ReferenceStride, ...
// (72 rows), from which the shipped bounds were computed; DefaultTable
// holds the others.
func DefaultReference() (*Table, error) {
	_, ref := splitReference(wdbcCSV)
	return ReadTable(bytes.NewReader(ref), "reference sample of the embedded Wisconsin diagnostic breast cancer data (every 8th row of the UCI file)")
}

// splitReference splits a CSV text without quoted line breaks into the
// header with the data rows outside the reference sample, and the header
// with the reference rows (positions 0, ReferenceStride, ...).
func splitReference(text []byte) (table, ref []byte) {
	lines := bytes.SplitAfter(text, []byte("\n"))
	table, ref = bytes.Clone(lines[0]), bytes.Clone(lines[0])
	for i, l := range lines[1:] {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if i%ReferenceStride == 0 {
			ref = append(ref, l...)
		} else {
			table = append(table, l...)
		}
	}
	return table, ref
}
