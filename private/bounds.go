package private

import (
	"fmt"
	"math"
	"strings"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
)

// planBounds chooses the preprocessing (Options.Preprocess, or its
// default) and whether the bounds are estimated, and splits the budget:
// a private fit in Bounds mode whose schema declares no bounds spends
// BoundsShare of epsilon on the estimate. A share outside (0, 1), which
// leaves nothing for the estimate or for the release, is an error
// wrapping dp.ErrBudget; a share or a bounds method when no bounds are
// estimated (not a private fit, declared bounds, or another mode) is an
// error wrapping ErrOptions.
func (pl *Plan) planBounds() error {
	private := pl.Options.Mechanism != "" || pl.Options.Select != nil
	declared := pl.Schema.Declared()
	pl.Mode = pl.Options.Preprocess
	switch {
	case pl.Mode != "":
	case declared || private:
		pl.Mode = preprocess.Bounds
	default:
		pl.Mode = preprocess.Standardize
	}
	if err := pl.Mode.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	share := pl.Options.BoundsShare
	if share != 0 && (!private || declared || pl.Mode != preprocess.Bounds) {
		return fmt.Errorf("%w: a bounds share of %v, but no bounds are estimated (only a private fit without declared bounds estimates them)", ErrOptions, share)
	}
	switch m := pl.Options.BoundsMethod; {
	case m != "" && m != BoundsCentres && m != BoundsRanges:
		return fmt.Errorf("%w: bounds method %q, want %s or %s", ErrOptions, m, BoundsCentres, BoundsRanges)
	case m != "" && (!private || declared || pl.Mode != preprocess.Bounds):
		return fmt.Errorf("%w: a bounds method (%s), but no bounds are estimated", ErrOptions, m)
	}
	if !private || declared || pl.Mode != preprocess.Bounds {
		return nil
	}
	if share == 0 {
		share = DefaultBoundsShare
	}
	if !check.OpenUnit(share) {
		return fmt.Errorf("%w: bounds share %v of eps = %v: want in (0, 1), a positive part for the estimate and the release", dp.ErrBudget, share, pl.Budget.Epsilon)
	}
	pl.EstimateBounds = true
	pl.BoundsEpsilon = share * pl.Budget.Epsilon
	pl.setRelease()
	if !(pl.BoundsEpsilon > 0) || !(pl.Release.Epsilon > 0) {
		return fmt.Errorf("%w: bounds share %v of eps = %v leaves eps = %v for the bounds and %v for the release, want both > 0", dp.ErrBudget, share, pl.Budget.Epsilon, pl.BoundsEpsilon, pl.Release.Epsilon)
	}
	lap, err := perturb.Lookup(perturb.Laplace)
	if err != nil {
		return err
	}
	if err := lap.CheckBudget(pl.BoundsEpsilon, 0); err != nil {
		return fmt.Errorf("%w: the bounds estimate at eps = %v (share %v of %v): %w", dp.ErrBudget, pl.BoundsEpsilon, share, pl.Budget.Epsilon, err)
	}
	return nil
}

// MaxCentreShare is the largest share of epsilon that a private fit with
// the default bounds share (Options.BoundsShare zero) spends on the
// feature centres and spreads (BoundsFor): a model whose features sit on the wrong scale is
// worth little at any budget, so the centres may take up to half of it.
const MaxCentreShare = 0.5

// estimateBounds returns the plan's schema with the bounds of the numeric
// feature columns taken from their raw training rows (rawTrain, n x the
// numeric features; +Inf for a text cell, datasets.TextMark), the
// half-width of their log scale (preprocess.RowMap.Log; 0 for the linear
// map), and the columns found to hold text (a text centre, privbounds.
// EstimateCentres), which get no bounds. It never refuses for too
// few rows: BoundsFor chooses, from public values only, between the ranges
// (privbounds.Estimate, with Options.BoundsMethod BoundsRanges), the
// centres and spreads on the log scale (privbounds.EstimateCentres;
// BoundsEpsilon and Release are set anew when the share is raised), and
// the public constants on the log scale (privbounds.PublicRange), which
// cost nothing: EstimateBounds is then turned off and the release gets the
// bounds' part back, with a warning. The ranges and the public constants
// decide no type: every column is numeric, its text cells missing.
//
// The estimate is the first private step of the fit, drawn before the
// release's noise, with the release's noise source.
func (pl *Plan) estimateBounds(features []string, rawTrain *mat.Dense) (s datasets.Schema, logScale float64, textCols []string, err error) {
	features = pl.Schema.Numeric(features)
	n, d := rawTrain.Dims()
	epsB, logMap := pl.BoundsFor(n, d)
	minRows := privbounds.MinRows(d, pl.BoundsEpsilon) // at the plan's share
	if !logMap {
		if pl.textCells() == datasets.TextMark {
			pl.log().Warn("private: the ranges decide no column's type: a cell that is neither a number nor missing is read as missing; the centres (--bounds-method centres, the default) find the text columns and hash them, and --schema declares categories")
		}
		textMissing(rawTrain.RawMatrix().Data)
		s, err := pl.estimateRanges(features, rawTrain)
		return s, 0, nil, err
	}
	w := float64(privbounds.HalfWidth)
	eps := pl.Budget.Epsilon
	var lo, hi []float64
	var text []bool
	log := pl.log()
	if epsB > 0 {
		if epsB != pl.BoundsEpsilon {
			pl.BoundsEpsilon = epsB
			pl.setRelease()
			if pl.Method != nil {
				if err := pl.Method.CheckBudget(pl.Release); err != nil {
					return datasets.Schema{}, 0, nil, fmt.Errorf("the release's part of the budget after the feature centres (eps %g): %w", epsB, err)
				}
			}
		}
		if lo, hi, text, err = privbounds.EstimateCentres(rawTrain, pl.BoundsEpsilon, pl.Options.Noise); err != nil {
			return datasets.Schema{}, 0, nil, err
		}
		// Why the centres: the default method, or too few rows for the
		// ranges asked for; the message does not call rows too few that
		// would pay for the ranges.
		why := fmt.Sprintf("%d training rows are too few for the feature ranges of %d columns (%d needed)", n, d, minRows)
		if pl.Options.BoundsMethod != BoundsRanges {
			why = fmt.Sprintf("no bounds declared for %d columns (%d training rows)", d, n)
		}
		log.WithFields(logrus.Fields{"eps": epsB, "share": epsB / eps, "columns": d, "rows": n}).Warnf(
			"private: %s: their centres and spreads are estimated privately at eps = %.3g (a share %.3g), "+
				"each off the data with probability at most %.2g (for a column without missing cells); declared bounds cost nothing",
			why, epsB, epsB/eps, privbounds.MissProbability(n, d, epsB))
	} else {
		pl.EstimateBounds, pl.BoundsEpsilon, pl.publicMap = false, 0, true
		pl.setRelease()
		l, h, pw := privbounds.PublicRange()
		w = pw
		lo, hi = make([]float64, d), make([]float64, d)
		for j := range d {
			lo[j], hi[j] = l, h
		}
		given := ""
		if pl.Options.BoundsShare != 0 {
			given = fmt.Sprintf("; given %g", pl.Options.BoundsShare)
		}
		log.Warnf("private: %d training rows are too few to estimate the scale of %d feature columns at eps = %g (a share %.3g needed, at most %g%s): "+
			"each is read on the public log scale sign(x) log2(1 + |x|)/%g at no cost, a text cell as missing; "+
			"declare --bounds or --bounds-all (and --schema) for a better model",
			n, d, eps, privbounds.CentreShare(n, d, eps), MaxCentreShare, given, w)
	}
	s = pl.Schema
	s.Bounds = make([]datasets.Bound, 0, len(features))
	decides := pl.textCells() == datasets.TextMark
	var asNumbers []string
	for j, f := range features {
		if text != nil && text[j] {
			if decides {
				textCols = append(textCols, f)
				continue
			}
			// A fit that reads every column as numbers (--pca) has no
			// use for a text choice: the column keeps the public
			// constants m = 0, s = 1 (lo, hi = -1, 1, among the
			// estimate's outputs), post-processing of the private choice.
			lo[j], hi[j] = -1, 1
			asNumbers = append(asNumbers, f)
		}
		s.Bounds = append(s.Bounds, datasets.Bound{Column: f, Lo: lo[j], Hi: hi[j]})
	}
	if len(asNumbers) > 0 {
		log.WithField("columns", asNumbers).Warnf("private: the private type choice found %d column(s) mostly text, which this fit reads as numbers: "+
			"each keeps the public centre 0 and spread 1 (no cost); declare --bounds for a better map", len(asNumbers))
	}
	if len(textCols) > 0 {
		// Post-processing of the centres, which the model file publishes.
		log.WithField("columns", textCols).Infof("private: %d column(s) hold mostly text (a private choice): each is one-hot encoded by hashing its cells into %d public buckets (--hash-buckets; categories that share a bucket merge, --schema declares them)", len(textCols), pl.hashBuckets())
	}
	return s, w, textCols, nil
}

// hashBuckets returns the buckets of a text column: Options.HashBuckets,
// or datasets.DefaultHashBuckets.
func (pl *Plan) hashBuckets() int {
	if b := pl.Options.HashBuckets; b != 0 {
		return b
	}
	return datasets.DefaultHashBuckets
}

// BoundsFor returns what the bounds' step of a private fit without
// declared bounds spends for n training rows of d numeric columns, and
// whether it reads them on the log scale (estimateBounds):
//
//   - with Options.BoundsMethod BoundsRanges, the plan's BoundsEpsilon and
//     false for the ranges (n >= privbounds.MinRows);
//   - for the centres and spreads, their eps and true: at the plan's share,
//     or with the default share at the smallest share that reaches
//     privbounds.CentreRows (a miss of the data at most 1% per choice),
//     rounded up at 3 significant digits and capped at MaxCentreShare, when
//     n reaches privbounds.CentreRowsAt at that share and CentreFallback
//     (a miss more likely than not: the public map is no better then);
//   - 0 and true for the public map, which costs nothing.
//
// It reads public values only (n, d, the budget, the shares), so a caller
// may forecast the release's part of the budget before the rows are read.
func (pl *Plan) BoundsFor(n, d int) (eps float64, logScale bool) {
	if pl.Options.BoundsMethod == BoundsRanges && n >= privbounds.MinRows(d, pl.BoundsEpsilon) {
		return pl.BoundsEpsilon, false
	}
	total := pl.Budget.Epsilon
	eps = pl.BoundsEpsilon
	share := eps / total
	if need := min(privbounds.CentreShare(n, d, total), MaxCentreShare); pl.Options.BoundsShare == 0 && need > share {
		// Rounded up at 3 significant digits, by an integer over a power
		// of ten: 0.237, not 237 * 0.001.
		inv := math.Pow(10, 2-math.Floor(math.Log10(need)))
		share = math.Ceil(need*inv) / inv
		eps = share * total
	}
	ps := pl.PCABudget.Epsilon / total
	if n >= privbounds.CentreRowsAt(d, eps, CentreFallback) && share+ps < 1 {
		return eps, true
	}
	return 0, true
}

// CentreFallback is the probability, per choice, of a centre or a spread
// off the data below which a fit estimates them (BoundsFor): at a larger
// one the public map, which reads no row, serves as well.
const CentreFallback = 0.5

// estimateRanges returns the plan's schema with the ranges of the numeric
// feature columns features (their training rows rawTrain) estimated
// privately (privbounds.Estimate at BoundsEpsilon), and warns about the
// ranges that look like the noise's pick (post-processing of the
// published bounds).
func (pl *Plan) estimateRanges(features []string, rawTrain *mat.Dense) (datasets.Schema, error) {
	lo, hi, err := privbounds.Estimate(rawTrain, pl.BoundsEpsilon, pl.Options.Noise)
	if err != nil {
		return datasets.Schema{}, err
	}
	s := pl.Schema
	s.Bounds = make([]datasets.Bound, len(features))
	for j, f := range features {
		s.Bounds[j] = datasets.Bound{Column: f, Lo: lo[j], Hi: hi[j]}
	}
	if g := privbounds.Guessed(lo, hi); len(g) > 0 {
		// Post-processing of the estimate, which the model file publishes.
		cols := make([]string, len(g))
		for i, j := range g {
			cols[i] = fmt.Sprintf("%s [%g, %g]", features[j], lo[j], hi[j])
		}
		pl.log().Warnf("private: the estimated range of %d of %d columns is one power-of-two bin: %s. Either their values lie in one bin, or no bin rose above the noise and the range is the noise's pick (too narrow: the values outside it are clamped). Check them, or declare the bounds (--bounds, --bounds-all), or give more rows or a larger --bounds-share",
			len(g), len(features), strings.Join(cols, ", "))
	}
	if w := modelfile.ImplausibleBounds(features, lo, hi); w != "" {
		// Post-processing of the estimate, which the model file publishes
		// (its certificate carries the same note).
		pl.log().Warn("private: " + w)
	}
	pl.log().WithFields(logrus.Fields{"eps": pl.BoundsEpsilon, "columns": len(features)}).Info("private: feature bounds estimated privately")
	return s, nil
}
