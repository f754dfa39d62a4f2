package privbounds

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// The centre-and-spread estimate (EstimateCentres) and the map that reads
// it (preprocess.RowMap.Log): every column x is read as
//
//	z = clamp(g((x - m) / s) / W, -1, 1),  g(t) = sign(t) log2(1 + |t|),
//
// with m a centre and s a spread chosen privately on the public grid of
// Bin, and W a public half-width. The map is a monotone per-row map with
// public constants once m and s are released; it standardizes a column
// whatever its offset, scale and sign, and squashes its tails
// logarithmically instead of clamping them.
const (
	// HalfWidth is W of the estimated map: z reaches +-1 at
	// |x - m| = (2^W - 1) s, seven spreads with W = 3. A public constant,
	// not yet fitted on the defaults benchmark (docs/DESIGN.md, section 6).
	HalfWidth = 3
	// PublicHalfWidth is W of the public map that every numeric column
	// gets when the rows cannot pay for an estimate (PublicRange): m = 0,
	// s = 1, and z = g(x)/32 reaches +-1 at |x| = 2^32 - 1.
	PublicHalfWidth = 32
	// CentreSensitivity is the sensitivity of the utilities of the centre
	// and of the spread (MedianScores) under replace-one: 2.
	CentreSensitivity = 2
	// Spreads is the number of candidate spreads: the bins of Bin from the
	// one around zero up.
	Spreads = half + 1
	// CentreFailure bounds, per selection, the probability that the
	// estimate picks a bin that every row lies on one side of (CentreRows):
	// a centre off the data, or a spread off the column's deviations.
	CentreFailure = 0.01
)

// CentreStep is the ledger entry's description of the centre-and-spread
// estimate.
const CentreStep = "private feature centres and spreads: for every feature column, the bin of the public log2 grid (bins (2^(e-1), 2^e] of either sign and [-2^-24, 2^-24], e up to 40) that holds the median, " +
	"then the bin that holds the median of |x - m| (m the centre's bin's middle, the spread s its upper end), each chosen by permute-and-flip " +
	"(utility -max(0, 2 #{rows below the bin} - n, n - 2 #{rows up to the bin}), sensitivity 2 under replace-one) at eps_bounds/(2d); the map z = clamp(g((x - m)/s)/3, -1, 1), g(t) = sign(t) log2(1 + |t|)"

// PublicRange returns the constants [lo, hi] = [m - s, m + s] and the
// half-width W of the public map that every numeric column gets when the
// rows cannot pay for the estimate (CentreRows): m = 0, s = 1,
// W = PublicHalfWidth. They read no row and cost nothing.
func PublicRange() (lo, hi, w float64) { return -1, 1, PublicHalfWidth }

// centreConst is 4 (ln Bins + ln(1/CentreFailure)): the rows one selection
// needs per unit of its eps (CentreRows).
var centreConst = 4 * (math.Log(Bins) + math.Log(1/CentreFailure))

// CentreRows returns the fewest rows with which the centres and spreads of
// d columns at eps (eps/(2d) per selection) each miss the data with
// probability at most CentreFailure: n >= 8 (ln Bins + ln(1/CentreFailure))
// d / eps, about 75.8 d / eps. A bin that every row lies on one side of has
// the utility -n, n below the median's bin (utility 0), and permute-and-flip
// returns a candidate at most with the probability of its coin,
// exp(-(eps/(2d)) n / (2 CentreSensitivity)); over at most Bins candidates
// that is at most CentreFailure at the bound. It depends on public values
// only; math.MaxInt when the count does not fit an int.
func CentreRows(d int, eps float64) int {
	v := math.Ceil(2 * centreConst * float64(d) / eps)
	if !(v < math.MaxInt32*float64(1<<31)) {
		return math.MaxInt
	}
	return int(v)
}

// CentreShare returns the smallest share of eps with which n rows of d
// columns reach CentreRows: 8 (ln Bins + ln(1/CentreFailure)) d / (n eps).
// A share of 1 or more means no share of eps suffices.
func CentreShare(n, d int, eps float64) float64 {
	return 2 * centreConst * float64(d) / (float64(n) * eps)
}

// CentreValue returns the centre m that bin b of Bin stands for: 0 for the
// bin around zero, the middle 3 * 2^(e-2) of a bin (2^(e-1), 2^e] (the
// outermost bin stands for 3 * 2^(MaxExp-2)), and their negatives.
func CentreValue(b int) float64 {
	switch {
	case b == half:
		return 0
	case b > half:
		return 0.75 * Upper(b)
	}
	return -0.75 * -Lower(b)
}

// SpreadValue returns the spread s that bin b >= half of Bin stands for:
// its upper end, 2^MinExp for the bin around zero up to 2^MaxExp.
func SpreadValue(b int) float64 { return Upper(b) }

// MedianScores returns the utility of every candidate bin of the counts
// (counts[b] the number of rows in bin b, n their sum):
//
//	u(b) = -max(0, 2 #{rows below bin b} - n, n - 2 #{rows up to bin b}),
//
// 0 when a median lies in bin b, and otherwise twice the number of rows
// between the bin and the median. Replacing one row moves it from one bin
// to another, each cumulative count by at most 1, so every score moves by
// at most CentreSensitivity.
func MedianScores(counts []int64) []int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	scores := make([]int64, len(counts))
	var below int64
	for b, c := range counts {
		upTo := below + c
		scores[b] = -max(0, 2*below-n, n-2*upTo)
		below = upTo
	}
	return scores
}

// EstimateCentres returns, for every column j of X (n rows of d raw finite
// feature values), the constants lo_j = m_j - s_j and hi_j = m_j + s_j of
// the map z = clamp(g((x - m_j)/s_j)/HalfWidth, -1, 1) (package doc;
// preprocess.RowMap.Log): m_j = CentreValue of the bin of Bin that holds
// the column's median, then s_j = SpreadValue of the bin that holds the
// median of |x - m_j|.
//
// # Privacy
//
// eps-DP for replace-one neighbours (same n, one row's features changed).
// Each of the 2d choices is permute-and-flip (perturb.PermuteAndFlip,
// exact; McKenna & Sheldon 2020, Theorem 1) at eps/(2d) over public
// candidates with a utility of MedianScores, of sensitivity
// CentreSensitivity: the spread's counts are of |x - m_j| with m_j already
// chosen, and one row still moves one count. The 2d choices compose
// adaptively to eps-DP (Dwork & Roth 2014, Theorem 3.16), and lo, hi are
// post-processing. The draws come from src (perturb.Secure() when nil; a
// Source other than Secure and Seeded is an error, see PermuteAndFlip).
//
// It never refuses for too few rows: with fewer than CentreRows(d, eps) a
// choice is more often the noise's pick, and a caller takes PublicRange
// instead. Errors wrap ErrEstimate: no rows or columns, a value that is not
// finite, eps not finite and positive; and the source's errors.
func EstimateCentres(X mat.Matrix, eps float64, src perturb.Source) (lo, hi []float64, err error) {
	n, d, err := checkInput(X, eps)
	if err != nil {
		return nil, nil, err
	}
	if src == nil {
		src = perturb.Secure()
	}
	epsSel := eps / float64(2*d)
	lo, hi = make([]float64, d), make([]float64, d)
	col := make([]float64, n)
	for j := range d {
		mat.Col(col, j, X)
		b, err := perturb.PermuteAndFlip(src, MedianScores(CentreCounts(col)), epsSel, CentreSensitivity)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrEstimate, err)
		}
		m := CentreValue(b)
		b, err = perturb.PermuteAndFlip(src, MedianScores(SpreadCounts(col, m)), epsSel, CentreSensitivity)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrEstimate, err)
		}
		s := SpreadValue(half + b)
		lo[j], hi[j] = m-s, m+s
	}
	return lo, hi, nil
}

// CentreCounts returns the number of values of col (finite, or NaN for a
// missing cell, counted in no bin) in every bin of Bin: the counts of the
// centre's candidates. n in MedianScores is then the column's values that
// are not missing; a row that turns missing moves each cumulative count
// by at most 1 and n by 1, so each score by at most 1.
func CentreCounts(col []float64) []int64 {
	counts := make([]int64, Bins)
	for _, v := range col {
		if !math.IsNaN(v) { // NaN: a missing cell, in no bin
			counts[Bin(v)]++
		}
	}
	return counts
}

// SpreadCounts returns the number of deviations |x - m| of the values x of
// col (finite; NaN, missing, in no bin) in every bin of Bin from the one around zero up (Spreads
// bins): the counts of the spread's candidates.
func SpreadCounts(col []float64, m float64) []int64 {
	counts := make([]int64, Spreads)
	for _, v := range col {
		if !math.IsNaN(v) {
			counts[Bin(math.Abs(v-m))-half]++
		}
	}
	return counts
}

// OnCentreGrid reports whether [lo, hi] is a pair EstimateCentres can
// give: lo = m - s and hi = m + s (in float64) for a centre m = CentreValue
// and a spread s = SpreadValue of some bins.
func OnCentreGrid(lo, hi float64) bool {
	for b := half; b < Bins; b++ {
		s := SpreadValue(b)
		for c := range Bins {
			if m := CentreValue(c); m-s == lo && m+s == hi {
				return true
			}
		}
	}
	return false
}
