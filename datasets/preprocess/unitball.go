package preprocess

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
)

// AddBias returns a copy of ds with a constant feature named "bias" and
// equal to value appended to every row. A bias is an ordinary feature: it
// counts in the row bound kappa (docs/DESIGN.md, section 1). Errors wrap datasets.ErrInvalid: a
// non-finite value, or a data set that already has a "bias" feature.
func AddBias(ds *datasets.Dataset, value float64) (*datasets.Dataset, error) {
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	if !check.Finite(value) {
		return nil, fmt.Errorf("%w: bias value %v, want finite", datasets.ErrInvalid, value)
	}
	if slices.Contains(ds.Features, datasets.BiasFeature) {
		return nil, fmt.Errorf("%w: the data set already has a %q feature", datasets.ErrInvalid, datasets.BiasFeature)
	}
	out := withBias(ds, value)
	out.Notes = append(out.Notes, fmt.Sprintf("constant feature %q = %v appended; it counts in the row bound kappa", datasets.BiasFeature, value))
	return out, nil
}

// withBias returns a copy of ds with the constant column value appended.
func withBias(ds *datasets.Dataset, value float64) *datasets.Dataset {
	n, d := ds.X.Dims()
	x := mat.NewDense(n, d+1, nil)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		copy(row, ds.X.RawRowView(i))
		row[d] = value
	}
	out := ds.WithData(x, slices.Clone(ds.Y))
	if ds.Features != nil {
		out.Features = append(out.Features, datasets.BiasFeature)
	}
	return out
}

// ScaleRows scales, in place, every row of X with L2 norm above kappa to
// norm kappa and returns how many rows it scaled. The result is guaranteed
// in floating point: the sum of squares of every row is at most kappa^2.
// It is a per-row map, so it costs no privacy; the trainer applies the same
// map to enforce kappa, and this function is for preprocessing pipelines.
// Errors wrap datasets.ErrInvalid: kappa not finite and positive, or a row with a NaN
// or infinite entry (X is then unchanged up to that row).
func ScaleRows(X *mat.Dense, kappa float64) (int, error) {
	if k2 := kappa * kappa; !check.Positive(kappa) || !check.Finite(k2) || k2 < 0x1p-1000 {
		return 0, fmt.Errorf("%w: kappa = %v, want finite > 0 with a finite normal square", datasets.ErrInvalid, kappa)
	}
	if X == nil || X.IsEmpty() {
		return 0, nil
	}
	n, _ := X.Dims()
	clipped := 0
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		if j := check.FirstNonFinite(row); j >= 0 {
			return clipped, fmt.Errorf("%w: X[%d,%d] = %v", datasets.ErrInvalid, i, j, row[j])
		}
		if clipRow(row, kappa) {
			clipped++
		}
	}
	return clipped, nil
}

// clipRow scales row to L2 norm at most kappa, checked on the computed sum
// of squares, and reports whether it changed the row. The entries must be
// finite and kappa^2 a normal float64; a few extra shrinks by 1-4eps absorb
// the rounding of the first scaling.
func clipRow(row []float64, kappa float64) bool {
	k2 := kappa * kappa
	sq := sumSq(row)
	if sq <= k2 {
		return false
	}
	if math.IsInf(sq, 0) {
		// Overflow in the squares: scale down by the largest entry first.
		var m float64
		for _, v := range row {
			m = math.Max(m, math.Abs(v))
		}
		for j := range row {
			row[j] /= m
		}
		sq = sumSq(row)
	}
	f := kappa / math.Sqrt(sq)
	for it := 0; sq > k2 && it < 64; it++ {
		for j := range row {
			row[j] *= f
		}
		sq = sumSq(row)
		f = 1 - 4*eps // rounding left the norm a hair above kappa
	}
	return true
}

func sumSq(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

// UnitBallWithBias returns a copy of ds with the map of the paper's
// experiments applied to every row (UnitBallRow),
//
//	x' = [clip_1(x), 1] / sqrt(2),
//
// where clip_1 scales a row of norm above 1 to norm 1 (ScaleRows with kappa
// = 1). The constant feature is named "bias". Every row then has
// ||x'|| <= 1 (checked in floating point), so kappa = 1 holds with the bias
// counted in it. The map acts on each row alone, never on a statistic of
// the data set (a data-dependent scale such as dividing by the largest row
// norm would not be private), so it costs no privacy. Errors wrap
// datasets.ErrInvalid: ds already has a "bias" feature, or a NaN or infinite entry.
func UnitBallWithBias(ds *datasets.Dataset) (*datasets.Dataset, error) {
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	if slices.Contains(ds.Features, datasets.BiasFeature) {
		return nil, fmt.Errorf("%w: the data set already has a %q feature", datasets.ErrInvalid, datasets.BiasFeature)
	}
	out := withBias(ds, 1)
	n, _ := ds.X.Dims()
	for i := 0; i < n; i++ {
		row := out.X.RawRowView(i)
		if err := UnitBallRow(row, ds.X.RawRowView(i)); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	// The note names the map, not how many rows it clipped: that count is a
	// statistic of the data, and notes travel into certificates.
	out.Notes = append(out.Notes, fmt.Sprintf("rows mapped to x' = [x, 1]/sqrt(2) after scaling rows of norm above 1 into the unit ball (a per-row map); "+
		"||x'|| <= 1, so kappa = 1 holds with the constant %q feature counted in it", datasets.BiasFeature))
	return out, nil
}

// UnitBallRow writes x' = [clip_1(x), 1] / sqrt(2) into dst, which must have
// len(x)+1 entries (it panics otherwise); dst and x may share their first
// len(x) entries. clip_1 scales x to norm 1 when its norm is above 1, also
// when the sum of squares overflows. The result has ||x'|| <= 1 in floating
// point. Errors wrap datasets.ErrInvalid: a NaN or infinite entry of x.
func UnitBallRow(dst, x []float64) error {
	if len(dst) != len(x)+1 {
		panic(fmt.Sprintf("preprocess: unit-ball row of %d entries into %d", len(x), len(dst)))
	}
	if j := check.FirstNonFinite(x); j >= 0 {
		return fmt.Errorf("%w: entry %d is %v", datasets.ErrInvalid, j, x[j])
	}
	d := len(x)
	copy(dst, x)
	dst[d] = 1
	clipRow(dst[:d], 1)
	for j := range dst {
		dst[j] /= math.Sqrt2
	}
	clipRow(dst, 1)
	return nil
}

// UnitBallOptions tunes PrepareUnitBall.
type UnitBallOptions struct {
	// RowScale multiplies every standardized row before the unit-ball map,
	// a fixed data-independent map (for example 1/sqrt(d), so that a typical
	// standardized row is not clipped). Zero means 1.
	RowScale float64
}

// PrepareUnitBall is the preprocessing of the paper's experiments: it fits a
// Standardizer on train, standardizes train and test with it, multiplies
// the rows by opts.RowScale and maps them with UnitBallWithBias, so that
// every row has norm at most 1 with the bias counted (kappa = 1). The
// statistics come from train only; they are not privatized, and the Notes
// of the results say so. test may be nil (testOut is then nil). The fitted
// standardizer is returned for new data.
func PrepareUnitBall(train, test *datasets.Dataset, opts UnitBallOptions) (trainOut, testOut *datasets.Dataset, std *Standardizer, err error) {
	scale := opts.RowScale
	if !check.NonNegative(scale) {
		return nil, nil, nil, fmt.Errorf("%w: row scale %v, want finite >= 0", datasets.ErrInvalid, scale)
	}
	if err := train.Validate(); err != nil {
		return nil, nil, nil, err
	}
	std, err = FitStandardizer(train.X)
	if err != nil {
		return nil, nil, nil, err
	}
	prepare := func(ds *datasets.Dataset) (*datasets.Dataset, error) {
		z, err := std.Transform(ds)
		if err != nil {
			return nil, err
		}
		if scale != 0 && scale != 1 {
			z.X.Scale(scale, z.X)
		}
		return UnitBallWithBias(z)
	}
	if trainOut, err = prepare(train); err != nil {
		return nil, nil, nil, err
	}
	if test != nil {
		if testOut, err = prepare(test); err != nil {
			return nil, nil, nil, err
		}
	}
	return trainOut, testOut, std, nil
}
