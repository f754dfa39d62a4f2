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
	"github.com/stabpriv/stabpriv/perturb"
)

// Features returns the raw feature columns a row must give, in order (none
// for a Released without a preprocessing).
func (r *Released) Features() []string {
	if r == nil || r.Preprocessing == nil {
		return nil
	}
	return slices.Clone(r.Preprocessing.Features)
}

// check returns an error wrapping ErrFile when r is nil or its parts do not
// fit together (checkShape): a zero Released has no model to apply.
func (r *Released) check() error {
	if r == nil {
		return fmt.Errorf("%w: a nil model", ErrFile)
	}
	return r.checkShape()
}

// Margins returns the K margins W x' of the raw row x (the feature columns
// in Features order; a categorical feature's value is the index of its
// category, RowMap.CategoryIndex) after the bundled preprocessing. Errors
// wrap datasets.ErrFormat: a row of the wrong length or with a value that is
// not finite; or ErrFile: a Released whose parts do not fit together (a
// zero one, say).
func (r *Released) Margins(x []float64) ([]float64, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return r.margins(x)
}

// margins is Margins for a checked r.
func (r *Released) margins(x []float64) ([]float64, error) {
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
// Errors are Margins'.
func (r *Released) Predict(x []float64) (string, error) {
	if err := r.check(); err != nil {
		return "", err
	}
	z, err := r.margins(x)
	if err != nil {
		return "", err
	}
	return r.label(z), nil
}

// label returns the prediction of a checked r for the margins z.
func (r *Released) label(z []float64) string {
	switch r.Model.Task {
	case losses.Binary:
		if z[0] >= 0 {
			return r.Schema.Classes[1]
		}
		return r.Schema.Classes[0]
	case losses.Multiclass:
		best := 0
		for k, v := range z {
			if v > z[best] {
				best = k
			}
		}
		return r.Schema.Classes[best]
	}
	return strconv.FormatFloat(z[0], 'g', -1, 64)
}

// PredictProba returns the probability of each class (in Schema.Classes
// order) for the raw row x, for a loss whose margins are log-odds
// (losses.Probabilistic: logistic and softmax). Other losses give an error
// wrapping ErrFile; other errors are Margins'.
func (r *Released) PredictProba(x []float64) ([]float64, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	pl, err := r.probabilistic()
	if err != nil {
		return nil, err
	}
	z, err := r.margins(x)
	if err != nil {
		return nil, err
	}
	return proba(pl, z), nil
}

// probabilistic returns the loss of a checked r as a losses.Probabilistic,
// or an error wrapping ErrFile when its margins are not log-odds (a
// decision stump's never are, whatever loss names its argmax).
func (r *Released) probabilistic() (losses.Probabilistic, error) {
	if c := r.Certificate; c != nil && c.Mechanism == perturb.Stump {
		return nil, fmt.Errorf("%w: a decision stump gives no class probabilities", ErrFile)
	}
	loss, err := losses.ByName(r.Model.Loss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	pl, ok := loss.(losses.Probabilistic)
	if !ok {
		return nil, fmt.Errorf("%w: the %s loss gives no class probabilities", ErrFile, r.Model.Loss)
	}
	return pl, nil
}

// proba returns the class probabilities of the margins z.
func proba(pl losses.Probabilistic, z []float64) []float64 {
	p := make([]float64, max(len(z), 2))
	pl.Proba(p, z)
	return p
}

// PredictTable applies the model to every row of t, whose header must name
// the model's feature columns (other columns are ignored), and writes one
// CSV line per row to w: the row's data row number (from 1, the first row
// after the header, as every message counts rows), the prediction and, for
// a probabilistic loss, the probability of each class.
// When t has the model's label column, it returns the metric of the
// predictions on the rows with a declared class (accuracy) or a numeric
// label (rmse); Rows is 0 otherwise. Errors name the row; lines already
// written stay in w, so a caller that must not leave a partial output
// writes to a buffer or a temporary file. A Released whose parts do not fit
// together (a zero one, say) is an error wrapping ErrFile, and a nil table
// one wrapping datasets.ErrFormat, both before anything is written.
func (r *Released) PredictTable(t *datasets.Table, w io.Writer) (Metric, error) {
	if err := r.check(); err != nil {
		return Metric{}, err
	}
	if t == nil {
		return Metric{}, fmt.Errorf("%w: no table", datasets.ErrFormat)
	}
	features := r.Features()
	cols := make([]int, len(features))
	for j, f := range features {
		if cols[j] = slices.Index(t.Columns, f); cols[j] < 0 {
			return Metric{}, fmt.Errorf("%w: %s has no column %q, a feature of the model (features: %v)", datasets.ErrFormat, t.Source, f, features)
		}
	}
	label := slices.Index(t.Columns, r.Schema.Label)
	cw := csv.NewWriter(w)
	header := []string{"row", "prediction"}
	pl, probaErr := r.probabilistic()
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
			if !ok && !r.Preprocessing.Text && !(r.Preprocessing.Missing && datasets.IsMissing(t.Cell(i, c))) {
				return Metric{}, fmt.Errorf("%w: %s: line %d, data row %d, column %q: %q is not a finite number", datasets.ErrFormat, t.Source, t.Line(i), t.First+i+1, t.Columns[c], t.Cell(i, c))
			}
			x[j] = v
		}
		z, err := r.margins(x)
		if err != nil {
			return Metric{}, fmt.Errorf("%s: line %d, data row %d: %w", t.Source, t.Line(i), t.First+i+1, err)
		}
		pred := r.label(z)
		rec := []string{strconv.Itoa(t.First + i + 1), pred}
		if probaErr == nil {
			for _, v := range proba(pl, z) {
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
