package private

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/forecast"
	"github.com/stabpriv/stabpriv/selection"
)

// Label is the name of the label column of a fit from a matrix (FitMatrix):
// the model file's schema names it.
const Label = "label"

// Domain is what a caller declares about numeric data before seeing it, the
// counterpart for a matrix of a table's datasets.Schema: the classes, the
// feature names and the feature bounds. Everything in it is public: it is
// written into the model file and costs no privacy.
//
// A Domain says nothing of the mechanism: with only the classes and a
// budget, FitMatrix lets the public rule choose it, which may be objective
// perturbation. To select features from the release
// (featsel.SelectReleased), which needs noise added to the weights, name an
// output-perturbation mechanism in Options.Mechanism (perturb.Gamma, say).
type Domain struct {
	// Classes are the label values of a classification task, in order:
	// for two classes Classes[1] is the positive one; for more, the model
	// is softmax and Classes[k] is class k. A private fit needs them (the
	// classes are never read from the rows); the released model names them
	// by strconv.FormatFloat(v, 'f', -1, 64) ("0", "1"; -0 is "0"), and a
	// label y is of class c when it is written as c is (y == c). Nil means
	// regression for a regression loss, and for a non-private fit the
	// values the labels take.
	Classes []float64
	// LabelBound is B in |y| <= B for regression (datasets.Schema.
	// LabelBound): every label is clamped to [-B, B]. Zero means none.
	LabelBound float64
	// Features names the columns of X. Nil means x1, x2, ..., xd.
	Features []string
	// Ranges declares the range [Lo, Hi] of every column, in column order:
	// each value is clamped to it and mapped onto [-1, 1] (preprocess.
	// Bounds), at no privacy cost. Nil means none.
	Ranges []Range
	// Norm > 0 declares ||x|| <= Norm for every row: x is mapped to
	// x/Norm, and a row of larger norm is scaled down into the unit ball
	// (a per-row map, at no privacy cost). It is the range [-Norm, Norm]
	// of every column (datasets.Schema.All). Zero means none.
	//
	// Without Ranges or Norm a private fit estimates the bounds privately
	// from a share of the budget (Options.BoundsShare), as for a table.
	Norm float64
}

// Range is a declared interval [Lo, Hi] of a feature's values.
type Range struct {
	Lo, Hi float64
}

// Fitted is the result of FitMatrix: the released model and what the
// public values of the release say about its use.
type Fitted struct {
	*modelfile.Released
	// Warnings are the messages of Warnings(Released), also logged to
	// Options.Logger: a release they describe is of little or no use.
	Warnings []string
}

// Label returns the class that the released model predicts for the raw
// features x (one value per column of the matrix it was fitted on), as the
// number Domain.Classes declared: Released.Predict's class name read back.
// A prediction is post-processing of the release.
func (f *Fitted) Label(x []float64) (float64, error) {
	name, err := f.Predict(x)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(name, 64)
}

// FitRows is FitMatrix on the rows of a [][]float64, row i holding the
// features of label y[i]. Rows of different lengths are an error wrapping
// ErrOptions.
func FitRows(ctx context.Context, rows [][]float64, y []float64, dom Domain, budget dp.Budget, opts Options) (*Fitted, error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, fmt.Errorf("%w: no rows or no columns: want n x d features, n, d >= 1", ErrOptions)
	}
	d := len(rows[0])
	X := mat.NewDense(len(rows), d, nil)
	for i, r := range rows {
		if len(r) != d {
			return nil, fmt.Errorf("%w: row %d has %d values, row 0 has %d", ErrOptions, i, len(r), d)
		}
		X.SetRow(i, r)
	}
	return FitMatrix(ctx, X, y, dom, budget, opts)
}

// FitMatrix is Fit on numeric data: the n x d features X and the n labels
// y, with the declarations of dom. It builds the table of X and y (the
// columns dom.Features and Label, every value v the cell
// strconv.FormatFloat(v, 'f', -1, 64) would be, which reads back as v,
// with -0 written "0": datasets.NewTableValues, one copy of the values,
// which the fit then maps in place, FitInPlace) and the schema of dom,
// and runs Fit on them: the same split,
// preprocessing, release and certificate as the CSV file of these cells,
// and the same guarantee, for the neighbouring relation of two matrices
// that differ in one row (features and label). Fit's rules decide every
// cell, so whether FitMatrix refuses depends on a row only as Fit's does:
// a NaN feature is a missing cell ("NaN"); an infinite one the text cell
// "+Inf" or "-Inf" (Fit refuses it, datasets.ErrFormat, when the bounds
// are declared, and otherwise decides its column's type); a label that is
// NaN or infinite, or for a classification task not among dom.Classes, is
// a null row (Fit's undeclared label). The shapes of X, y and dom are
// checked first: errors wrap ErrOptions.
//
// With a budget and neither Options.Mechanism nor Options.Select, the
// setting is chosen by the public rule (Options.Select the zero
// selection.Config), as the train command does; a zero budget without
// them is a non-private fit.
//
// The result carries Warnings (logged to Options.Logger): a release whose
// expected noise swamps the weights the run can produce, or that predicts
// one class for every row, says so.
func FitMatrix(ctx context.Context, X mat.Matrix, y []float64, dom Domain, budget dp.Budget, opts Options) (*Fitted, error) {
	t, schema, err := matrixTable(X, y, dom)
	if err != nil {
		return nil, err
	}
	if opts.Mechanism == "" && opts.Select == nil && budget != (dp.Budget{}) {
		opts.Select = &selection.Config{}
	}
	rel, err := FitInPlace(ctx, t, schema, budget, opts)
	if err != nil {
		return nil, err
	}
	out := &Fitted{Released: rel, Warnings: Warnings(rel)}
	for _, w := range out.Warnings {
		if opts.Logger != nil {
			opts.Logger.Warn(w)
		}
	}
	return out, nil
}

// matrixTable returns the table of X and y and the schema of dom: the
// feature columns, then the label column.
func matrixTable(X mat.Matrix, y []float64, dom Domain) (*datasets.Table, datasets.Schema, error) {
	if X == nil {
		return nil, datasets.Schema{}, fmt.Errorf("%w: no feature matrix", ErrOptions)
	}
	n, d := X.Dims()
	names := dom.Features
	if names == nil {
		names = make([]string, d)
		for j := range names {
			names[j] = "x" + strconv.Itoa(j+1)
		}
	}
	switch {
	case len(y) != n:
		return nil, datasets.Schema{}, fmt.Errorf("%w: %d rows of features but %d labels", ErrOptions, n, len(y))
	case len(names) != d:
		return nil, datasets.Schema{}, fmt.Errorf("%w: %d feature names for %d columns", ErrOptions, len(names), d)
	case dom.Ranges != nil && len(dom.Ranges) != d:
		return nil, datasets.Schema{}, fmt.Errorf("%w: %d ranges for %d columns, want one per column", ErrOptions, len(dom.Ranges), d)
	case dom.Ranges != nil && dom.Norm != 0:
		return nil, datasets.Schema{}, fmt.Errorf("%w: both ranges and a norm bound declared; give one", ErrOptions)
	case !(dom.Norm >= 0) || math.IsInf(dom.Norm, 1):
		return nil, datasets.Schema{}, fmt.Errorf("%w: norm bound %v, want finite > 0 (0 for none)", ErrOptions, dom.Norm)
	}
	schema := datasets.Schema{Label: Label, LabelBound: dom.LabelBound}
	for _, c := range dom.Classes {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, datasets.Schema{}, fmt.Errorf("%w: class %v, want a finite value", ErrOptions, c)
		}
		schema.Classes = append(schema.Classes, number(c))
	}
	for j, r := range dom.Ranges {
		schema.Bounds = append(schema.Bounds, datasets.Bound{Column: names[j], Lo: r.Lo, Hi: r.Hi})
	}
	if dom.Norm > 0 {
		schema.All = &datasets.Bound{Lo: -dom.Norm, Hi: dom.Norm}
	}
	vals := make([]float64, 0, n*(d+1))
	raw, _ := X.(mat.RawMatrixer)
	for i := range n {
		if raw != nil {
			m := raw.RawMatrix()
			vals = append(vals, m.Data[i*m.Stride:i*m.Stride+d]...)
		} else {
			for j := range d {
				vals = append(vals, X.At(i, j))
			}
		}
		vals = append(vals, y[i])
	}
	t, err := datasets.NewTableValues("matrix", append(slices.Clone(names), Label), vals)
	if err != nil {
		return nil, datasets.Schema{}, err
	}
	return t, schema, nil
}

// number writes v as a table cell that reads back as v exactly, -0 as 0
// (the cell "-0" would not match the class "0"): a finite v as a number,
// NaN as "NaN" (a missing cell), an infinite v as "+Inf" or "-Inf" (text
// cells).
func number(v float64) string {
	if v == 0 {
		v = 0 // +0 for -0
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Warnings returns what the public values of a release say against its use,
// post-processing at no privacy cost. For output perturbation, from the
// certificate's noise (its expected norm E||b|| and RMS norm
// sqrt(E||b||^2), perturb.Noise) and the released weights w~:
//   - when E||b|| is at least forecast.Weak times the bound on the norm of
//     the weights the run can produce (release.TrainedBound of the
//     certificate's run), and at forecast.Useless or more near chance
//     whatever the data (forecast.Forecast.Warning);
//   - otherwise, when ||w~||^2 < 2 E||b||^2: since E||w~||^2 = ||w||^2 +
//     E||b||^2 for the trained weights w, the noise then holds about half
//     of the release or more (hand-picked knobs with a large sensitivity,
//     say, whose bound on the weights is far above the weights). It is an
//     estimate from one draw: a release of pure noise whose norm is
//     unusually large passes it (for gamma-norm noise in 6 dimensions,
//     about 1 time in 10).
//
// And for every release, when the model predicts one class for every row
// its feature map can produce (modelfile.Released.ConstantClass). Nil when
// none holds.
func Warnings(rel *modelfile.Released) []string {
	if rel == nil || rel.Model == nil {
		return nil
	}
	var out []string
	if c := rel.Certificate; c != nil {
		if w := noiseWarning(c, rel.Model.W); w != "" {
			out = append(out, w)
		}
	}
	if class, ok := rel.ConstantClass(); ok {
		out = append(out, fmt.Sprintf("private: the released model predicts %q for every row its feature map can produce: it is useless; a larger eps or more rows may help", class))
	}
	return out
}

// noiseWarning is the warning of Warnings about the output-perturbation
// noise of the release w of certificate c ("" for none, or for another
// mechanism).
func noiseWarning(c *release.Certificate, w []float64) string {
	noise, err := perturb.LookupTuning(c.Mechanism)
	if err != nil {
		return ""
	}
	cal := perturb.Calibration{Mechanism: c.Mechanism, Epsilon: c.Epsilon, Delta: c.Delta, Dim: c.Dim, L2: c.L2Sensitivity, L1: c.L1Sensitivity, Scale: c.NoiseScale}
	const help = "Options.Auto or the rule choose knobs of a smaller Delta"
	if c.Run != nil {
		if b := release.TrainedBound(c.Run); b > 0 && !math.IsInf(b, 1) {
			f := forecast.Forecast{Mechanism: c.Mechanism, Ratio: noise.ExpectedNorm(cal) / b}
			if msg := f.Warning(); msg != "" {
				return fmt.Sprintf("private: %s (Delta = %.3g); %s", msg, c.L2Sensitivity, help)
			}
		}
	}
	if rms, nw := noise.RMSNorm(cal), floats.Norm(w, 2); nw*nw < 2*rms*rms {
		return fmt.Sprintf("private: the release is mostly noise: ||w~|| = %.3g, the noise's RMS norm %.3g (Delta = %.3g); %s", nw, rms, c.L2Sensitivity, help)
	}
	return ""
}
