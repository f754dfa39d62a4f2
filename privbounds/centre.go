package privbounds

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/perturb"
)

// The public grid and width of the centre estimate (Centres), on the
// signed-log scale g(x) = sign(x) log2(1 + |x|) (preprocess.SignedLog2):
// the same for every column and every data set, fixed before any row is
// read.
const (
	// CentreMin and CentreMax bound the candidates: the unit bins [c, c + 1)
	// of the log scale for the integers c in CentreMin..CentreMax, values
	// from about -2^64 to 2^65 (a value beyond them lies outside every
	// candidate, and the feature map clamps it).
	CentreMin = -64
	CentreMax = 64
	// Centres is the number of candidate centres of a column.
	Centres = CentreMax - CentreMin + 1
	// HalfWidth is the half-width W, in bits, of the range a centre gives:
	// [c - W, c + W] on the log scale, the values from about 2^-W to 2^W
	// times the centre's. A public constant, not yet fitted on the
	// defaults benchmark (docs/DESIGN.md, section 6).
	HalfWidth = 3
	// CentreSensitivity is the sensitivity of a centre's utility
	// (CentreScores) under replace-one: 2.
	CentreSensitivity = 2
	// PublicHalfWidth is the half-width of the public range [-W, W] that
	// a column gets when no estimate is affordable (PublicRange): the log
	// scale of every value from -2^32 to 2^32.
	PublicHalfWidth = 32
)

// CentreStep is the ledger entry's description of the centre estimate.
const CentreStep = "private feature centres: for every feature column, the unit bin [c, c + 1) (c an integer in -64..64) of g(x) = sign(x) log2(1 + |x|) that holds the median, chosen by permute-and-flip " +
	"(utility -max(0, 2 #{g(x) < c} - n, n - 2 #{g(x) < c + 1}), sensitivity 2 under replace-one) at eps_bounds/d each; the range [c + 1/2 - 3, c + 1/2 + 3] on that scale"

// PublicRange returns the range [lo, hi] on the log scale that every
// numeric column gets when the rows cannot pay for the centres
// (CentreRows): [-PublicHalfWidth, PublicHalfWidth], public constants that
// cost nothing.
func PublicRange() (lo, hi float64) { return -PublicHalfWidth, PublicHalfWidth }

// CentreFailure bounds, per column, the probability that the centre
// estimate picks a bin that every row lies on one side of (CentreRows): a
// range off the data, which clamps the column to one value.
const CentreFailure = 0.01

// centreConst is 4 (ln Centres + ln(1/CentreFailure)): the rows a column
// needs per unit of its eps (CentreRows).
var centreConst = 4 * (math.Log(Centres) + math.Log(1/CentreFailure))

// CentreRows returns the fewest rows with which the centres of d columns
// at eps (eps/d per column) are found with probability at least
// 1 - CentreFailure per column: n >= 4 (ln Centres + ln(1/CentreFailure))
// d / eps, about 37.9 d / eps. A bin that every row lies on one side of
// has the utility -n, n below the median's bin (utility 0), and
// permute-and-flip returns a candidate at most with the probability of its
// coin, exp(-(eps/d) n / (2 CentreSensitivity)); over the Centres
// candidates that is at most Centres exp(-(eps/d) n / 4) <= CentreFailure
// at the bound. It depends on public values only; math.MaxInt when the
// count does not fit an int.
func CentreRows(d int, eps float64) int {
	v := math.Ceil(centreConst * float64(d) / eps)
	if !(v < math.MaxInt32*float64(1<<31)) {
		return math.MaxInt
	}
	return int(v)
}

// CentreShare returns the smallest share of eps with which n rows of d
// columns reach CentreRows: 4 (ln Centres + ln(1/CentreFailure)) d /
// (n eps). A share of 1 or more means no share of eps suffices.
func CentreShare(n, d int, eps float64) float64 {
	return centreConst * float64(d) / (float64(n) * eps)
}

// centreIndex returns the bucket of g: 0 for g < CentreMin, Centres + 1
// for g >= CentreMax + 1, and i + 1 for g in the unit bin [c, c + 1) of
// the candidate c = CentreMin + i.
func centreIndex(g float64) int {
	f := math.Floor(g)
	switch {
	case f < CentreMin:
		return 0
	case f > CentreMax:
		return Centres + 1
	}
	return int(f) - CentreMin + 1
}

// CentreScores returns the utility of every candidate c = CentreMin + i,
// the unit bin [c, c + 1) of the log scale g = preprocess.SignedLog2, for
// the column col (raw finite values, n = len(col)):
//
//	u(c) = -max(0, 2 #{g(x) < c} - n, n - 2 #{g(x) < c + 1}),
//
// 0 when a median of g lies in the bin, and otherwise twice the number of
// rows that lie between the bin and the median. Replacing one value moves
// each count by at most 1, so every score moves by at most
// CentreSensitivity. One pass over the column.
func CentreScores(col []float64) []int64 {
	var buckets [Centres + 2]int64
	for _, v := range col {
		buckets[centreIndex(preprocess.SignedLog2(v))]++
	}
	n := int64(len(col))
	scores := make([]int64, Centres)
	below := buckets[0] // #{g < c} for the current c
	for i := range scores {
		upTo := below + buckets[i+1] // #{g < c + 1}
		scores[i] = -max(0, 2*below-n, n-2*upTo)
		below = upTo
	}
	return scores
}

// EstimateCentres returns, for every column j of X (n rows of d raw finite
// feature values), a range [lo_j, hi_j] = [m_j - HalfWidth, m_j + HalfWidth]
// on the log scale g (preprocess.SignedLog2), m_j = c_j + 1/2 the middle of
// the unit bin [c_j, c_j + 1) chosen near the median of g over the column
// (c_j an integer in CentreMin..CentreMax): a feature map in the
// preprocessing bounds with RowMap.Log reads it.
//
// # Privacy
//
// eps-DP for replace-one neighbours (same n, one row's features changed).
// Each column's centre is chosen by permute-and-flip (perturb.
// PermuteAndFlip, exact, McKenna & Sheldon 2020, Theorem 1) at eps/d over
// the public candidates with the utility CentreScores, whose sensitivity
// is CentreSensitivity: eps/d-DP per column. The d choices compose to
// eps-DP (Dwork & Roth 2014, Theorem 3.16, basic composition), and the
// ranges are post-processing of the centres. The draws come from src
// (perturb.Secure() when nil; a Source other than Secure and Seeded is an
// error, see PermuteAndFlip).
//
// It never refuses for too few rows: with fewer than CentreRows(d, eps)
// a column's centre is more often the noise's pick, and a caller takes
// PublicRange instead. The log scale loses columns whose values are all
// far below 1 in magnitude (g is then about 0) and columns of both signs
// spread far from 0 (the median of g falls in the empty gap around 0,
// where every bin scores alike, and the range covers one sign at most):
// declared bounds serve those. Errors wrap ErrEstimate: no rows or columns, a
// value that is not finite, eps not finite and positive; and the
// source's errors.
func EstimateCentres(X mat.Matrix, eps float64, src perturb.Source) (lo, hi []float64, err error) {
	n, d, err := checkInput(X, eps)
	if err != nil {
		return nil, nil, err
	}
	if src == nil {
		src = perturb.Secure()
	}
	epsCol := eps / float64(d)
	col := make([]float64, n)
	lo, hi = make([]float64, d), make([]float64, d)
	for j := range d {
		for i := range n {
			col[i] = X.At(i, j)
		}
		k, err := perturb.PermuteAndFlip(src, CentreScores(col), epsCol, CentreSensitivity)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrEstimate, err)
		}
		c := float64(CentreMin+k) + 0.5 // the bin's middle
		lo[j], hi[j] = c-HalfWidth, c+HalfWidth
	}
	return lo, hi, nil
}

// OnCentreGrid reports whether [lo, hi] is a range EstimateCentres can
// give: [m - HalfWidth, m + HalfWidth] for m = c + 1/2, c an integer in
// CentreMin..CentreMax.
func OnCentreGrid(lo, hi float64) bool {
	c := lo + HalfWidth - 0.5
	return c == math.Trunc(c) && c >= CentreMin && c <= CentreMax && hi == lo+2*HalfWidth
}
