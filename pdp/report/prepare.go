package report

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/internal/check"
)

// prepare builds the training and test rows (positions trainIdx and testIdx
// of ds) and returns the row bound kappa of the worst-case comparison.
// Each part is one matrix, written row by row from ds in its final form
// (standardized, then mapped with the bias or clipped): no copy of the
// rows is made on the way, so the rows of ds and the prepared rows are
// all that is held (at 1e6 x 20, two intermediate copies were 320 MB). The
// values are those of picking the rows, preprocess.Standardizer.Apply and
// preprocess.UnitBallRow or preprocess.ScaleRows, bit for bit.
func (sim *Simulation) prepare(ds *datasets.Dataset, trainIdx, testIdx []int) (train, test *datasets.Dataset, kappa float64, notes []string, err error) {
	notes = append(notes, fmt.Sprintf("split: %d training rows, %d held out (test fraction %v, seed %d; positions only, labels not used)", len(trainIdx), len(testIdx), sim.TestFrac, sim.Seed))
	var std *preprocess.Standardizer
	if sim.Standardize {
		if std, err = preprocess.FitStandardizer(rowsAt{ds.X, trainIdx}); err != nil {
			return nil, nil, 0, nil, err
		}
		notes = append(notes, "features standardized with statistics of the training rows (not private)")
	}
	if train, err = sim.mapRows(ds, trainIdx, std); err != nil {
		return nil, nil, 0, nil, err
	}
	if len(testIdx) > 0 {
		if test, err = sim.mapRows(ds, testIdx, std); err != nil {
			return nil, nil, 0, nil, err
		}
	}
	kappa = 1
	switch {
	case sim.Bias:
		notes = append(notes, "rows mapped to x' = [clip_1(x), 1]/sqrt(2): ||x'|| <= 1 with the bias")
	case sim.Standardize:
		notes = append(notes, "standardized rows clipped into the unit ball (kappa = 1), no bias")
	default:
		kappa = sim.Kappa
		notes = append(notes, fmt.Sprintf("rows are the features as they are (no bias, no clipping); the worst-case comparison assumes ||x|| <= %g", kappa))
	}
	if sim.LabelBound > 0 {
		notes = append(notes, fmt.Sprintf("labels clipped into [-%g, %g] (a per-row map)", sim.LabelBound, sim.LabelBound))
	}
	return train, test, kappa, notes, nil
}

// mapRows returns the rows of ds at the positions idx, prepared: each
// standardized by std (nil: none), then mapped to [clip_1(x), 1]/sqrt(2)
// with Bias, or clipped into the unit ball when standardized without it;
// their labels clipped into [-LabelBound, LabelBound] when it is positive.
func (sim *Simulation) mapRows(ds *datasets.Dataset, idx []int, std *preprocess.Standardizer) (*datasets.Dataset, error) {
	_, d := ds.X.Dims()
	width := d
	if sim.Bias {
		width = d + 1
	}
	x := mat.NewDense(max(1, len(idx)), width, nil)
	y := make([]float64, len(idx))
	for r, i := range idx {
		dst := x.RawRowView(r)
		src := ds.X.RawRowView(i)
		if std != nil {
			for j, v := range src {
				s := (v - std.Mean[j]) / std.Scale[j]
				if !check.Finite(s) {
					return nil, fmt.Errorf("%w: standardized X[%d,%d] = %v", datasets.ErrInvalid, r, j, s)
				}
				dst[j] = s
			}
			src = dst[:d]
		}
		if sim.Bias {
			// UnitBallRow reads x from dst's first d entries as it writes.
			if err := preprocess.UnitBallRow(dst, src); err != nil {
				return nil, err
			}
		} else if std == nil {
			copy(dst, src)
		}
		y[r] = ds.Y[i]
		if b := sim.LabelBound; b > 0 {
			y[r] = math.Max(-b, math.Min(b, y[r]))
		}
	}
	if std != nil && !sim.Bias {
		if _, err := preprocess.ScaleRows(x, 1); err != nil {
			return nil, err
		}
	}
	return &datasets.Dataset{X: x, Y: y, Classes: ds.Classes}, nil
}

// rowsAt is the matrix of the rows of x at the positions idx, in that
// order, read in place: the training rows for FitStandardizer without a
// copy of them, read a row at a time.
type rowsAt struct {
	x   *mat.Dense
	idx []int
}

// Dims returns the number of positions and of columns.
func (m rowsAt) Dims() (r, c int) {
	_, c = m.x.Dims()
	return len(m.idx), c
}

// At returns entry j of the row at position i.
func (m rowsAt) At(i, j int) float64 { return m.x.At(m.idx[i], j) }

// RawRowView returns the row at position i, in place: FitStandardizer
// reads the rows as slices.
func (m rowsAt) RawRowView(i int) []float64 { return m.x.RawRowView(m.idx[i]) }

// T returns the transpose.
func (m rowsAt) T() mat.Matrix { return mat.Transpose{Matrix: m} }
