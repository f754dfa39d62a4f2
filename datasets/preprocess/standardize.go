package preprocess

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
)

// Standardizer maps each feature column j to (x_j - Mean[j]) / Scale[j].
//
// Fit it on the training split only (FitStandardizer on the training rows),
// then apply it to the training and test splits: statistics fitted on the
// test rows would leak them into the model. Even so, the statistics are a
// function of the training data that is released with the model and is not
// covered by the privacy guarantee of the weights; Transform records this in
// the Notes of the data set so that a certificate can list it.
type Standardizer struct {
	// Mean holds the column means of the fitted rows.
	Mean []float64 `json:"mean"`
	// Scale holds the column standard deviations (divided by n, as in
	// scikit-learn), or 1 for a constant column.
	Scale []float64 `json:"scale"`
	// N is the number of rows the statistics were fitted on.
	N int `json:"n"`
}

// FitStandardizer returns the column means and scales of X. A column is
// constant when its standard deviation is at most 10 machine epsilons times
// its largest absolute value (rounding noise of a constant column); its
// scale is then 1, so it maps to (about) 0 instead of dividing by zero or
// blowing rounding noise up to unit size. Errors wrap datasets.ErrInvalid: no rows,
// or a NaN or infinite entry.
func FitStandardizer(X mat.Matrix) (*Standardizer, error) { return fitStandardizer(X, false) }

// rowViewer is a matrix whose rows can be read as slices (*mat.Dense):
// FitStandardizer reads it a row at a time instead of through At.
type rowViewer interface {
	mat.Matrix
	RawRowView(i int) []float64
}

// fitStandardizer is FitStandardizer; with missing, a NaN entry is a
// missing value: skipped, each column's statistics taken over its other
// entries (mean 0 and scale 1 for a column with none). A rowViewer is
// read a row at a time (fitRows), any other matrix a column at a time
// through At; the statistics are the same bit for bit, since each
// column's sums run over its entries in row order either way.
func fitStandardizer(X mat.Matrix, missing bool) (*Standardizer, error) {
	if X == nil {
		return nil, fmt.Errorf("%w: nil matrix", datasets.ErrInvalid)
	}
	n, _ := X.Dims()
	if n == 0 {
		return nil, fmt.Errorf("%w: no rows to fit a standardizer on", datasets.ErrInvalid)
	}
	if rv, ok := X.(rowViewer); ok {
		if s, ok := fitRows(rv, missing); ok {
			return s, nil
		}
		// A non-finite entry: the column pass names the first one in
		// column order, as it always has.
	}
	return fitColumns(X, missing)
}

// fitColumns is fitStandardizer through At, one column at a time.
func fitColumns(X mat.Matrix, missing bool) (*Standardizer, error) {
	n, d := X.Dims()
	s := &Standardizer{Mean: make([]float64, d), Scale: make([]float64, d), N: n}
	for j := 0; j < d; j++ {
		var maxAbs float64
		rows := 0
		for i := 0; i < n; i++ {
			v := X.At(i, j)
			if missing && math.IsNaN(v) {
				continue
			}
			if !check.Finite(v) {
				return nil, fmt.Errorf("%w: X[%d,%d] = %v", datasets.ErrInvalid, i, j, v)
			}
			maxAbs = math.Max(maxAbs, math.Abs(v))
			rows++
		}
		if rows == 0 {
			s.Mean[j], s.Scale[j] = 0, 1
			continue
		}
		m := colScale(maxAbs)
		var sum float64
		for i := 0; i < n; i++ {
			if v := X.At(i, j); !math.IsNaN(v) {
				sum += v / m
			}
		}
		mean := sum / float64(rows)
		var ss float64
		for i := 0; i < n; i++ {
			if v := X.At(i, j); !math.IsNaN(v) {
				r := v/m - mean
				ss += r * r
			}
		}
		s.Mean[j], s.Scale[j] = colStats(mean, ss, rows, m, maxAbs)
	}
	return s, nil
}

// fitRows is fitStandardizer over the rows of X read as slices, with one
// accumulator per column; ok is false at a non-finite entry (not a
// missing one).
func fitRows(X rowViewer, missing bool) (s *Standardizer, ok bool) {
	n, d := X.Dims()
	s = &Standardizer{Mean: make([]float64, d), Scale: make([]float64, d), N: n}
	maxAbs, sum, ss := make([]float64, d), make([]float64, d), make([]float64, d)
	rows := make([]int, d)
	for i := range n {
		for j, v := range X.RawRowView(i)[:d] {
			if missing && math.IsNaN(v) {
				continue
			}
			if !check.Finite(v) {
				return nil, false
			}
			maxAbs[j] = math.Max(maxAbs[j], math.Abs(v))
			rows[j]++
		}
	}
	m := make([]float64, d)
	for j := range m {
		m[j] = colScale(maxAbs[j])
	}
	for i := range n {
		for j, v := range X.RawRowView(i)[:d] {
			if !math.IsNaN(v) {
				sum[j] += v / m[j]
			}
		}
	}
	mean := make([]float64, d)
	for j := range mean {
		if rows[j] > 0 {
			mean[j] = sum[j] / float64(rows[j])
		}
	}
	for i := range n {
		for j, v := range X.RawRowView(i)[:d] {
			if !math.IsNaN(v) {
				r := v/m[j] - mean[j]
				ss[j] += r * r
			}
		}
	}
	for j := range d {
		if rows[j] == 0 {
			s.Mean[j], s.Scale[j] = 0, 1
			continue
		}
		s.Mean[j], s.Scale[j] = colStats(mean[j], ss[j], rows[j], m[j], maxAbs[j])
	}
	return s, true
}

// colScale is the divisor of a column's sums: its largest magnitude, so
// that entries near the float64 range (above about 1e154 their squares
// overflow) give a finite mean and scale; 1 for a zero column.
func colScale(maxAbs float64) float64 {
	if maxAbs == 0 {
		return 1
	}
	return maxAbs
}

// colStats returns a column's mean and scale from its sums over its rows
// entries divided by m: the mean of the quotients, and the sum of their
// squared deviations ss. The scale is 1 for a constant column.
func colStats(mean, ss float64, rows int, m, maxAbs float64) (float64, float64) {
	sd := math.Sqrt(ss/float64(rows)) * m
	mean *= m
	if sd <= 10*eps*maxAbs || math.IsInf(sd, 0) {
		sd = 1
	}
	return mean, sd
}

// eps is the machine epsilon of float64.
const eps = 0x1p-52

// Apply returns a new matrix holding X standardized. Errors wrap datasets.ErrInvalid:
// a column count different from the fitted one, or a non-finite result.
func (s *Standardizer) Apply(X mat.Matrix) (*mat.Dense, error) {
	if X == nil {
		return nil, fmt.Errorf("%w: nil matrix", datasets.ErrInvalid)
	}
	n, d := X.Dims()
	if d != len(s.Mean) || d != len(s.Scale) {
		return nil, fmt.Errorf("%w: standardizer fitted on %d columns applied to %d", datasets.ErrInvalid, len(s.Mean), d)
	}
	if n == 0 {
		return &mat.Dense{}, nil
	}
	out := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			v := (X.At(i, j) - s.Mean[j]) / s.Scale[j]
			if !check.Finite(v) {
				return nil, fmt.Errorf("%w: standardized X[%d,%d] = %v", datasets.ErrInvalid, i, j, v)
			}
			out.Set(i, j, v)
		}
	}
	return out, nil
}

// Transform returns a copy of ds with its features standardized and a note
// saying that the statistics were fitted on s.N training rows without
// privacy protection.
func (s *Standardizer) Transform(ds *datasets.Dataset) (*datasets.Dataset, error) {
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	x, err := s.Apply(ds.X)
	if err != nil {
		return nil, err
	}
	out := ds.WithData(x, slices.Clone(ds.Y))
	out.Notes = append(out.Notes, fmt.Sprintf("features standardized with means and scales fitted on the training split (%d rows); "+
		"these statistics are not privatized and the privacy guarantee does not cover them", s.N))
	return out, nil
}
