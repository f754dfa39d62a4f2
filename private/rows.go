package private

import (
	"fmt"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
)

// preparedRows are the training rows of a table as a fit receives them.
type preparedRows struct {
	enc               *datasets.Encoded
	trainIdx, testIdx []int
	prep              *preprocess.RowMap
	// X, y and null are the training rows mapped by prep, their labels and
	// which of them are null rows.
	X    *mat.Dense
	y    []float64
	null []bool
}

// prepare parses the table against the schema, splits its rows by
// position (or stratified, for a non-private fit that asks for it), builds
// the preprocessing (a standardizer is fitted on the training rows) and
// maps the training rows with it.
func (pl *Plan) prepare(t *datasets.Table) (*preparedRows, error) {
	text := pl.textCells()
	enc, err := t.EncodeText(pl.Schema, pl.Task, text)
	if err != nil {
		return nil, err
	}
	opts := pl.Options
	trainIdx, testIdx, err := enc.Split(opts.TestFrac, opts.Seed, opts.Stratify)
	if err != nil {
		return nil, err
	}
	if err := pl.CheckRows(len(trainIdx)); err != nil {
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
	rawTrain := mat.NewDense(len(trainIdx), enc.D, nil)
	for r, i := range trainIdx {
		rawTrain.SetRow(r, enc.Row(i))
	}
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
	if text == datasets.TextMark {
		if enc, rawTrain, err = pl.retype(t, enc, rawTrain, trainIdx, &schema, textCols); err != nil {
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
		pl.stumpRule(len(trainIdx), prep.Width()) {
		if err := pl.useStump(); err != nil {
			return nil, err
		}
	}
	if pl.stump() {
		// The stump decides on z before the unit-ball map: no projection.
		prep.Stump = true
		prep.Words = prep.Explain()
	} else {
		k, err := pl.projectDim(len(trainIdx), prep.Width())
		if err != nil {
			return nil, err
		}
		if err := prep.SetProjection(k, opts.Seed); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
	}
	if opts.PCA > 0 {
		if err := pl.components(prep, enc, trainIdx); err != nil {
			return nil, err
		}
		if err := pl.spendComponents(); err != nil {
			return nil, err
		}
	}
	X, y, null, err := prep.Rows(enc, trainIdx)
	if err != nil {
		return nil, err
	}
	return &preparedRows{enc: enc, trainIdx: trainIdx, testIdx: testIdx, prep: prep, X: X, y: y, null: null}, nil
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
