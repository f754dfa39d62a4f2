package featsel

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

// ThresholdKind says how the selection threshold T is chosen.
type ThresholdKind int

const (
	// Static is a threshold T >= 0 given by the user.
	Static ThresholdKind = iota + 1
	// Dynamic is a threshold set from the noise model alone: the smallest T
	// at which a weight whose true value is zero is selected with
	// probability at most Rate (per coordinate, or per feature of K rows
	// when PerFeature is set).
	Dynamic
)

// ThresholdSpec chooses the threshold T of the rule |w~_j| > T.
//
// A Dynamic threshold depends only on the noise model, never on the data, so
// selecting with it is post-processing of the private release (provided the
// noise scale itself is data-independent, as it is for a certificate whose
// sensitivity is a worst-case bound).
//
// The paper sets its threshold from the noise scale; its exact definition is
// not reproduced here. The dynamic rule below is our own, stated precisely:
// T is the (1 - q) quantile of the magnitude of a noise coordinate,
//
//	Laplace(b):      P(|N| > T) = exp(-T/b)           =>  T = b ln(1/q)
//	Gaussian(sigma): P(|N| > T) = erfc(T/(sigma√2))   =>  T = sigma Phi^{-1}(1 - q/2)
//	gamma-norm:      P(|N_j| > T) = q solved by bisection on the exact
//	                 marginal tail (TailProb), bracketed above by the
//	                 per-coordinate quantile at the largest scale of the law.
//
// In general T is the law's quantile (Coord.Quantile) when the coordinates
// are independent, and the root of the mixture's tail otherwise.
//
// With PerFeature set, q is the probability that a feature whose K true
// weights are all zero survives the "any class" rule: for independent
// coordinates the per-coordinate rate is 1 - (1-q)^(1/K); for gamma-norm
// noise P(any |N_kj| > T) = 1 - E[(1 - erfc(T/sqrt(2V)))^K] is solved
// exactly (the K coordinates are independent given V, see TailProb).
// Without it a null feature of a K-row model is selected with probability
// 1-(1-q)^K <= Kq for independent noise.
//
// The zero value is invalid.
type ThresholdSpec struct {
	Kind ThresholdKind
	// T >= 0 is the Static threshold; ignored for Dynamic.
	T float64
	// Rate in (0, 1) is the Dynamic false-selection rate q; ignored for Static.
	Rate float64
	// PerFeature makes Rate apply to a whole feature (K rows) instead of a
	// single coordinate. Ignored for Static and for K = 1.
	PerFeature bool
}

// StaticThreshold returns the spec of the fixed threshold t.
func StaticThreshold(t float64) ThresholdSpec { return ThresholdSpec{Kind: Static, T: t} }

// DynamicThreshold returns the spec of the per-coordinate dynamic threshold
// with false-selection rate q.
func DynamicThreshold(q float64) ThresholdSpec { return ThresholdSpec{Kind: Dynamic, Rate: q} }

// Resolve returns the threshold T for a model of k rows under the noise
// model. The noise model is only consulted for Dynamic specs. Errors wrap
// ErrInvalid (negative or non-finite T, q outside (0, 1), invalid noise) or
// ErrShape (k < 1).
func (s ThresholdSpec) Resolve(noise NoiseModel, k int) (float64, error) {
	switch s.Kind {
	case Static:
		if err := checkThreshold(s.T); err != nil {
			return 0, err
		}
		return s.T, nil
	case Dynamic:
		if k < 1 {
			return 0, fmt.Errorf("%w: %d rows, want >= 1", ErrShape, k)
		}
		if !s.PerFeature {
			k = 1
		}
		return dynamicThreshold(s.Rate, k, noise)
	default:
		return 0, fmt.Errorf("%w: threshold kind %d", ErrInvalid, int(s.Kind))
	}
}

func checkThreshold(t float64) error {
	if !check.NonNegative(t) {
		return fmt.Errorf("%w: threshold %v, want finite >= 0", ErrInvalid, t)
	}
	return nil
}

// dynamicThreshold returns the T at which a feature of k all-zero weights is
// selected with probability q.
func dynamicThreshold(q float64, k int, noise NoiseModel) (float64, error) {
	if !check.OpenUnit(q) {
		return 0, fmt.Errorf("%w: rate %v, want in (0, 1)", ErrInvalid, q)
	}
	if err := checkNoise(noise); err != nil {
		return 0, err
	}
	// Per-coordinate rate for independent coordinates: 1-(1-q1)^k = q.
	q1 := q
	if k > 1 {
		q1 = -math.Expm1(math.Log1p(-q) / float64(k))
	}
	if noise.Independent() {
		return noise.Coord.Quantile(q1, noise.Scales[0]), nil
	}
	if err := checkGroup(noise, k, fmt.Sprintf("%d rows per feature", k)); err != nil {
		return 0, err
	}
	// Given the shared scale S the k coordinates are independent.
	rate := func(t float64) float64 {
		return noise.Expect(func(sd float64) float64 {
			return -math.Expm1(float64(k) * math.Log1p(-noise.Coord.Tail(t, sd)))
		})
	}
	// At the per-coordinate quantile of the largest scale every scale's
	// rate is at most q: an upper end of the bracket.
	lo, hi := 0.0, noise.Coord.Quantile(q1, noise.MaxScale())
	if !(hi > 0) || math.IsInf(hi, 0) {
		hi = noise.MaxScale()
	}
	for i := 0; rate(hi) > q && i < 200; i++ {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 200 && hi-lo > 1e-13*hi; i++ {
		mid := (lo + hi) / 2
		if rate(mid) > q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}
