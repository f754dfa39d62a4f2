package private

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/privbounds"
)

// textCells returns what the fit does with the text cells of the numeric
// feature columns (datasets.TextCells), a choice of public settings: a
// private fit without declared bounds and a non-private fit decide each
// column's type (TextMark: a private fit by the centres, estimateBounds,
// else by counting, mostlyText), but for the principal components, which
// check the rows' width before any noise (a text cell is then refused).
// A fit with declared bounds refuses a text cell.
func (pl *Plan) textCells() datasets.TextCells {
	private := pl.Options.Mechanism != "" || pl.Options.Select != nil
	if pl.Options.PCA > 0 || pl.Schema.Declared() || private && !pl.EstimateBounds {
		return datasets.TextError
	}
	return datasets.TextMark
}

// mostlyText returns the numeric features (the columns of X, n raw
// training rows with +Inf for a text cell) whose text cells outnumber
// their numbers: the type decision of a non-private fit, which reads the
// rows as it likes.
func mostlyText(features []string, X *mat.Dense, s datasets.Schema) []string {
	if X == nil {
		return nil
	}
	names := s.Numeric(features)
	n, d := X.Dims()
	col := make([]float64, n)
	var out []string
	for j := range d {
		mat.Col(col, j, X)
		if sc := privbounds.TypeScores(col); sc[1] > sc[0] {
			out = append(out, names[j])
		}
	}
	return out
}

// retype makes the columns textCols hashed categorical columns of schema
// (Options.HashBuckets buckets) and encodes them again in place, every
// other text cell read as missing (datasets.Encoded.HashText, as
// datasets.TextMissing encodes them).
func (pl *Plan) retype(enc *datasets.Encoded, schema *datasets.Schema, textCols []string) error {
	b := pl.Options.HashBuckets
	if b == 0 {
		b = datasets.DefaultHashBuckets
	}
	var hashed []datasets.Categorical
	for _, f := range textCols {
		hashed = append(hashed, datasets.Hashed(f, b))
	}
	if err := enc.HashText(hashed); err != nil {
		return err
	}
	if len(hashed) > 0 {
		s := *schema
		s.Categories = slices.Concat(s.Categories, hashed)
		*schema = s
	}
	return nil
}

// textMissing replaces every +Inf of x (a text cell, datasets.TextMark)
// by NaN (a missing cell).
func textMissing(x []float64) {
	for i, v := range x {
		if math.IsInf(v, 1) {
			x[i] = math.NaN()
		}
	}
}
