package modelfile

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"gonum.org/v1/gonum/mat"
)

// TrainingRows rebuilds, from the table t the release was fitted on, the
// exact rows its trainer received: the table is parsed against the model's
// schema (label, declared classes; a row whose label is not declared is a
// null row, the zero vector with its bias), split by datasets.SplitIndex
// with the model's test fraction and seed (or the stratified split the
// file records for a non-private fit), mapped by the model's Preprocessing
// (bias included) and, as the trainer does, scaled to norm 1 where rounding
// left a row above it. X is n x Preprocessing.Dim(), y the encoded labels
// (binary -1/+1, multiclass 0..K-1, regression clamped to the label bound),
// and ids[r] the index of training row r among the table's data rows (from
// 0; the first data row after the header is 0).
//
// The table must be the one the model was fitted on: its header must give
// the model's feature columns in the model's order, and its row count and
// the size of the training split must match the file's split record. A
// mismatch is an error wrapping datasets.ErrFormat that says so. Nothing here is
// private: the rows are the data themselves, for an analysis by the data
// curator (per-instance DP, package pdp).
func (r *Released) TrainingRows(t *datasets.Table) (X *mat.Dense, y []float64, ids []int, err error) {
	return r.splitRows(t, false)
}

// HeldOutRows rebuilds, as TrainingRows does and with its checks, the rows
// of t that the release's split held out (its test rows), with their ids:
// rows drawn from the same data but not trained on, the fresh rows of a
// per-instance analysis (package pdp: targets added to the data set, and
// the replacements of on-average KL-privacy). X is nil when the split held
// out no row.
func (r *Released) HeldOutRows(t *datasets.Table) (X *mat.Dense, y []float64, ids []int, err error) {
	return r.splitRows(t, true)
}

// splitRows is TrainingRows (held false) or HeldOutRows (held true).
func (r *Released) splitRows(t *datasets.Table, held bool) (X *mat.Dense, y []float64, ids []int, err error) {
	if err := r.checkShape(); err != nil {
		return nil, nil, nil, err
	}
	task, err := r.task()
	if err != nil {
		return nil, nil, nil, err
	}
	if t != nil && !slices.Contains(t.Columns, r.Schema.Label) {
		return nil, nil, nil, fmt.Errorf("%w: %s has no column %q, the model's label: not the table of this model", datasets.ErrFormat, t.Source, r.Schema.Label)
	}
	for _, f := range r.Preprocessing.Features {
		if t != nil && !slices.Contains(t.Columns, f) {
			return nil, nil, nil, fmt.Errorf("%w: %s has no column %q, a feature of the model: not the table of this model", datasets.ErrFormat, t.Source, f)
		}
	}
	// The columns the fit left out by name (train --ignore, --features) are
	// left out again: the model's features, in order, must remain.
	var extra []string
	for _, c := range columnsOf(t) {
		if c != r.Schema.Label && !slices.Contains(r.Preprocessing.Features, c) && (r.Partitions == nil || c != r.Partitions.PrivacyID) {
			extra = append(extra, c)
		}
	}
	if len(extra) > 0 {
		if t, err = t.Drop(extra); err != nil {
			return nil, nil, nil, err
		}
	}
	schema := r.Schema
	schema.Categories = r.Preprocessing.Categories
	enc, err := t.EncodeText(schema, task, r.Preprocessing.TextCells())
	if err != nil {
		return nil, nil, nil, err
	}
	if !slices.Equal(enc.Features, r.Preprocessing.Features) {
		return nil, nil, nil, fmt.Errorf("%w: %s: the feature columns are %s, the model was fitted on %s: not the table of this model",
			datasets.ErrFormat, t.Source, strings.Join(enc.Features, ","), strings.Join(r.Preprocessing.Features, ","))
	}
	if enc.N != r.Split.Rows {
		return nil, nil, nil, fmt.Errorf("%w: %s has %d data rows, the model was fitted on a table of %d rows: not the table of this model",
			datasets.ErrFormat, t.Source, enc.N, r.Split.Rows)
	}
	train, test, err := enc.Split(r.Split.TestFrac, r.Split.Seed, r.Split.Stratified)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: the split of the model file: %w", datasets.ErrFormat, err)
	}
	if len(train) != r.Split.TrainRows {
		return nil, nil, nil, fmt.Errorf("%w: the split (test fraction %v, seed %d) gives %d training rows of %s, the model has %d: not the table of this model",
			datasets.ErrFormat, r.Split.TestFrac, r.Split.Seed, len(train), t.Source, r.Split.TrainRows)
	}
	if held {
		if len(test) == 0 {
			return nil, nil, nil, nil
		}
		train = test
	}
	X, y, _, err = r.Preprocessing.Rows(enc, train)
	if err != nil {
		return nil, nil, nil, err
	}
	// The trainer scales a row of norm above kappa = 1 down to norm 1
	// (trainer.Train); the preprocessing ends in the unit ball, so this
	// only undoes rounding, and is done the same way.
	_, d := X.Dims()
	for i := range len(train) {
		row := X.RawRowView(i)
		var sq float64
		for _, v := range row[:d] {
			sq += float64(v * v)
		}
		if nrm := math.Sqrt(sq); nrm > 1 {
			s := 1 / nrm
			for j := range row {
				row[j] *= s
			}
		}
	}
	return X, y, train, nil
}

// columnsOf returns the header of t, nil for no table.
func columnsOf(t *datasets.Table) []string {
	if t == nil {
		return nil
	}
	return t.Columns
}
