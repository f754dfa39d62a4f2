package private

import (
	"fmt"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
)

// preparedRows are the rows of a table as a fit receives them: the
// training rows first, then the held-out ones, one matrix of model inputs
// in the storage the table's values were read into.
type preparedRows struct {
	// rows is the number of rows of the table.
	rows int
	prep *preprocess.RowMap
	// X, y and null are the training rows mapped by prep, their labels and
	// which of them are null rows.
	X    *mat.Dense
	y    []float64
	null []bool
	// testX, testY and testNull are the held-out rows: testX mapped only
	// for the diagnostics (nil otherwise, or without held-out rows).
	testX    *mat.Dense
	testY    []float64
	testNull []bool
}

// prepare parses the table against the schema in the storage of its values
// (datasets.Table.EncodeInPlace: it takes t over), splits its rows by
// position (or stratified, for a non-private fit that asks for it) and
// moves the training rows before the held-out ones, builds the
// preprocessing (a standardizer is fitted on the training rows) and maps
// the rows with it in place: the training rows, and the held-out ones for
// the diagnostics.
func (pl *Plan) prepare(t *datasets.Table) (*preparedRows, error) {
	text := pl.textCells()
	enc, err := t.EncodeInPlace(pl.Schema, pl.Task, text)
	if err != nil {
		return nil, err
	}
	opts := pl.Options
	rows := enc.N
	// From here on the split is two ranges of rows: the training rows
	// first.
	nTrain, err := enc.SplitInPlace(opts.TestFrac, opts.Seed, opts.Stratify)
	if err != nil {
		return nil, err
	}
	if err := pl.CheckRows(nTrain); err != nil {
		return nil, err
	}
	if opts.PCA > 0 {
		// Before any noise: the rows' width is public (the header, the
		// declared categories, the projection's k).
		w := 0
		for _, f := range enc.Features {
			if c, ok := pl.Schema.Categorical(f); ok {
				w += len(c.Values)
			} else {
				w++
			}
		}
		if opts.Project > 0 && opts.Project <= w {
			w = opts.Project
		}
		if err := pl.checkPCA(w); err != nil {
			return nil, err
		}
	}
	rawTrain := rawRows(enc, nTrain)
	schema := pl.Schema
	numeric := preprocess.NumericColumns(rawTrain, enc.Features, schema)
	if pl.EstimateBounds && numeric == nil {
		// Every feature is categorical: nothing to estimate, and the
		// release gets the bounds' part back (a decision of the header
		// and the schema, both public); the principal components, if
		// any, keep theirs.
		pl.EstimateBounds, pl.BoundsEpsilon = false, 0
		pl.setRelease()
	}
	logScale := 0.0
	var textCols []string
	if pl.EstimateBounds {
		if schema, logScale, textCols, err = pl.estimateBounds(enc.Features, numeric); err != nil {
			return nil, err
		}
		if err := pl.spendBounds(logScale); err != nil {
			return nil, err
		}
	} else if text == datasets.TextMark {
		textCols = mostlyText(enc.Features, numeric, schema)
	}
	numeric = nil
	if text == datasets.TextMark {
		if err := pl.retype(enc, &schema, textCols); err != nil {
			return nil, err
		}
	}
	prep, err := preprocess.NewRowMap(pl.Mode, enc.Features, schema, rawTrain)
	if err != nil {
		return nil, err
	}
	prep.Estimated, prep.Log, prep.Text = pl.EstimateBounds, logScale, text == datasets.TextMark
	prep.Words = prep.Explain()
	if sel := pl.Options.Select; sel != nil && sel.Method.IsRule() && opts.PCA == 0 && opts.Project == 0 && pl.Mode == preprocess.Bounds && pl.Task != losses.Regression && pl.Group() <= 1 &&
		pl.stumpRule(nTrain, prep.Width()) {
		if err := pl.useStump(); err != nil {
			return nil, err
		}
	}
	if pl.stump() {
		// The stump decides on z before the unit-ball map: no projection.
		prep.Stump = true
		prep.Words = prep.Explain()
	} else {
		k, err := pl.projectDim(nTrain, prep.Width())
		if err != nil {
			return nil, err
		}
		if err := prep.SetProjection(k, opts.Seed); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
	}
	if opts.PCA > 0 {
		if err := pl.components(prep, enc, nTrain); err != nil {
			return nil, err
		}
		if err := pl.spendComponents(); err != nil {
			return nil, err
		}
	}
	mapped := nTrain
	if opts.Diagnostics {
		mapped = enc.N // the held-out rows too
	}
	y, null := enc.Y, enc.Null
	X, err := prep.RowsInPlace(enc, mapped)
	if err != nil {
		return nil, err
	}
	out := &preparedRows{rows: rows, prep: prep, X: X, y: y[:nTrain], null: null[:nTrain], testY: y[nTrain:], testNull: null[nTrain:]}
	if mapped > nTrain {
		d := prep.Dim()
		out.X = X.Slice(0, nTrain, 0, d).(*mat.Dense)
		out.testX = X.Slice(nTrain, mapped, 0, d).(*mat.Dense)
	}
	return out, nil
}

// rawRows returns the first n raw rows of enc as a matrix (n x D) that
// shares enc's storage, rows Stride apart: the training rows the bounds'
// estimate, the type decision and the standardizer read before they are
// mapped in place.
func rawRows(enc *datasets.Encoded, n int) *mat.Dense {
	s := max(enc.Stride, enc.D)
	var X mat.Dense
	X.SetRawMatrix(blas64.General{Rows: n, Cols: enc.D, Stride: s, Data: enc.X[:(n-1)*s+enc.D]})
	return &X
}

// projectDim returns the dimension of the fit's projection for n training
// rows of w mapped features: Options.Project, or with ProjectAuto (and
// Project 0) the public rule preprocess.AutoProjectDim at the release's
// epsilon (a non-private fit: epsilon 1, the rule's reference budget).
func (pl *Plan) projectDim(n, w int) (int, error) {
	opts := pl.Options
	if opts.Project != 0 || !opts.ProjectAuto || opts.PCA > 0 {
		return opts.Project, nil
	}
	outputs := 1
	if pl.Task == losses.Multiclass {
		outputs = len(pl.Schema.Classes)
	}
	eps := pl.Release.Epsilon
	if eps == 0 {
		eps = 1
	}
	k, err := preprocess.AutoProjectDim(n, w, outputs, eps)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if k > 0 {
		pl.log().WithFields(logrus.Fields{"k": k, "features": w, "rows": n, "eps": eps}).Info("private: the mapped features outnumber the training rows: random projection by the public rule (--project auto)")
	}
	return k, nil
}
