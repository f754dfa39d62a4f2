package modelfile

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
)

// Features returns the raw feature columns a row must give, in order.
func (r *Released) Features() []string { return append([]string(nil), r.Preprocessing.Features...) }

// Margins returns the K margins W x' of the raw row x (the feature columns
// in Features order; a categorical feature's value is the index of its
// category, RowMap.CategoryIndex) after the bundled preprocessing. Errors wrap datasets.ErrFormat:
// a row of the wrong length or with a value that is not finite.
func (r *Released) Margins(x []float64) ([]float64, error) {
	in := make([]float64, r.Preprocessing.Dim())
	if err := r.Preprocessing.Apply(in, x); err != nil {
		return nil, err
	}
	z := make([]float64, r.Model.K)
	r.Model.Margins(z, in)
	return z, nil
}

// Predict returns the prediction for the raw row x: the class name for
// classification, the value (formatted with strconv 'g') for regression.
func (r *Released) Predict(x []float64) (string, error) {
	z, err := r.Margins(x)
	if err != nil {
		return "", err
	}
	switch r.Model.Task {
	case losses.Binary:
		if z[0] >= 0 {
			return r.Schema.Classes[1], nil
		}
		return r.Schema.Classes[0], nil
	case losses.Multiclass:
		best := 0
		for k, v := range z {
			if v > z[best] {
				best = k
			}
		}
		return r.Schema.Classes[best], nil
	}
	return strconv.FormatFloat(z[0], 'g', -1, 64), nil
}

// PredictProba returns the probability of each class (in Schema.Classes
// order) for the raw row x, for a loss whose margins are log-odds
// (losses.Probabilistic: logistic and softmax). Other losses give an error
// wrapping ErrFile.
func (r *Released) PredictProba(x []float64) ([]float64, error) {
	loss, err := losses.ByName(r.Model.Loss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	pl, ok := loss.(losses.Probabilistic)
	if !ok {
		return nil, fmt.Errorf("%w: the %s loss gives no class probabilities", ErrFile, r.Model.Loss)
	}
	z, err := r.Margins(x)
	if err != nil {
		return nil, err
	}
	p := make([]float64, max(len(z), 2))
	pl.Proba(p, z)
	return p, nil
}

// PredictTable applies the model to every row of t, whose header must name
// the model's feature columns (other columns are ignored), and writes one
// CSV line per row to w: the row's index among the data rows (from 0), the
// prediction and, for a probabilistic loss, the probability of each class.
// When t has the model's label column, it returns the metric of the
// predictions on the rows with a declared class (accuracy) or a numeric
// label (rmse); Rows is 0 otherwise. Errors name the row; lines already
// written stay in w, so a caller that must not leave a partial output
// writes to a buffer or a temporary file.
func (r *Released) PredictTable(t *datasets.Table, w io.Writer) (Metric, error) {
	cols := make([]int, len(r.Features()))
	for j, f := range r.Features() {
		if cols[j] = slices.Index(t.Columns, f); cols[j] < 0 {
			return Metric{}, fmt.Errorf("%w: %s has no column %q, a feature of the model (features: %v)", datasets.ErrFormat, t.Source, f, r.Features())
		}
	}
	label := slices.Index(t.Columns, r.Schema.Label)
	cw := csv.NewWriter(w)
	header := []string{"row", "prediction"}
	_, probaErr := r.PredictProba(make([]float64, len(cols)))
	if probaErr == nil {
		for _, c := range r.Schema.Classes {
			header = append(header, "p_"+c)
		}
	}
	if err := cw.Write(header); err != nil {
		return Metric{}, err
	}
	x := make([]float64, len(cols))
	categorical := make([]bool, len(cols))
	for j := range cols {
		_, categorical[j] = r.Preprocessing.CategoryIndex(j, "")
	}
	var hit, ss float64
	scored := 0
	for i := range t.Len() {
		for j, c := range cols {
			if categorical[j] {
				x[j], _ = r.Preprocessing.CategoryIndex(j, t.Cell(i, c))
				continue
			}
			v, ok := t.Value(i, c)
			if !ok {
				return Metric{}, fmt.Errorf("%w: %s: row %d (line %d), column %q: %q is not a finite number", datasets.ErrFormat, t.Source, i, t.Line(i), t.Columns[c], t.Cell(i, c))
			}
			x[j] = v
		}
		pred, err := r.Predict(x)
		if err != nil {
			return Metric{}, fmt.Errorf("%s: row %d: %w", t.Source, i, err)
		}
		rec := []string{strconv.Itoa(i), pred}
		if probaErr == nil {
			p, _ := r.PredictProba(x)
			for _, v := range p {
				rec = append(rec, strconv.FormatFloat(v, 'g', 6, 64))
			}
		}
		if err := cw.Write(rec); err != nil {
			return Metric{}, err
		}
		if label < 0 {
			continue
		}
		if r.Schema.Classes == nil {
			if y, ok := t.Value(i, label); ok {
				v, _ := strconv.ParseFloat(pred, 64)
				ss += (v - y) * (v - y)
				scored++
			}
		} else if y := t.Cell(i, label); slices.Contains(r.Schema.Classes, y) {
			scored++
			if y == pred {
				hit++
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return Metric{}, err
	}
	switch {
	case scored == 0:
		return Metric{Name: "none"}, nil
	case r.Schema.Classes == nil:
		return Metric{Name: "rmse", Value: math.Sqrt(ss / float64(scored)), Rows: scored}, nil
	}
	return Metric{Name: "accuracy", Value: hit / float64(scored), Rows: scored}, nil
}
