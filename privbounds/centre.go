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
	// SubBins is the number of equal parts of every bin of Bin but the one
	// around zero among the candidate centres: a centre is within 1/32 of
	// its bin's outer boundary of the median's part, so an offset column (a
	// year, 1950 to 2020) gets a centre within 32 of its median, not 1536.
	SubBins = 16
	// Centres is the number of candidate centres: SubBins parts of each bin
	// of Bin but the one around zero, which is one candidate (0).
	Centres = 2*half*SubBins + 1
	// TypeSensitivity is the sensitivity of the type's utility
	// (TypeScores) under replace-one: 1.
	TypeSensitivity = 1
	// TypeParts, CentreParts and SpreadParts split a column's eps_b/d
	// among its three choices (EstimateCentres): a ninth for the type, four
	// ninths each for the centre and the spread. The type's two candidates
	// and sensitivity 1 need fewer rows for a miss of at most
	// CentreFailure (18 (ln 2 + ln 100) = 95 per column per unit of eps)
	// than the centre's 2,049 candidates at sensitivity 2 (9 (ln 2049 +
	// ln 100) = 110), so the centres set the rows a column needs
	// (CentreRowsAt).
	TypeParts, CentreParts, SpreadParts = 1, 4, 4
	parts                               = TypeParts + CentreParts + SpreadParts
	// CentreFailure bounds, per selection, the probability that the
	// estimate picks a bin that every row lies on one side of (CentreRows):
	// a centre off the data, or a spread off the column's deviations.
	CentreFailure = 0.01
)

// CentreStepV1 is the ledger entry of the centre-and-spread estimate of
// the version before the type choice (two choices per column at
// eps_bounds/(2d)): files written then still verify.
const CentreStepV1 = "private feature centres and spreads: for every feature column, the part that holds the median among 16 equal parts of each bin of the public log2 grid (bins (2^(e-1), 2^e] of either sign, e up to 40, and [-2^-24, 2^-24] as one part), " +
	"the centre m the part's middle; then the bin that holds the median of max(|x - m|, 2^-24 and 2^-40 of m's magnitude), the spread s its upper end; each chosen by permute-and-flip " +
	"(utility -max(0, 2 #{rows below the candidate} - n, n - 2 #{rows up to it}), sensitivity 2 under replace-one) at eps_bounds/(2d); the map z = clamp(g((x - m)/s)/3, -1, 1), g(t) = sign(t) log2(1 + |t|)"

// CentreStep is the ledger entry's description of the centre-and-spread
// estimate.
const CentreStep = "private feature types, centres and spreads: for every feature column, its type, text if its text cells outnumber its numbers (utility the two counts, sensitivity 1; a text column is one-hot encoded by hashing its cells into public buckets, and a text cell of a numeric column is read as missing), chosen by permute-and-flip at eps_bounds/(9d); for a numeric column, " +
	centreWords

// CentreStepPCA is the ledger entry's description of the centre-and-spread
// estimate of a fit that reads every column as numbers (private principal
// components): there a text cell stops the run before any noise, so the
// type choice is text only by the noise, and such a column keeps the
// public centre 0 and spread 1 instead of being hashed. Files of such fits
// written with CentreStep still verify.
const CentreStepPCA = "private feature types, centres and spreads, every column read as numbers (for the principal components): for every numeric feature column, its type, text if its text cells outnumber its numbers (utility the two counts, sensitivity 1), chosen by permute-and-flip at eps_bounds/(9d); a text cell stops the run before any noise, so a column chosen text (by the noise alone) keeps the public centre m = 0 and spread s = 1; for a column chosen numeric, " +
	centreWords

// centreWords describes the centre and the spread of a numeric column and
// its map: the common tail of CentreStep and CentreStepPCA.
const centreWords = "the part that holds the median of its numbers among 16 equal parts of each bin of the public log2 grid (bins (2^(e-1), 2^e] of either sign, e up to 40, and [-2^-24, 2^-24] as one part), the centre m the part's middle; then the bin that holds the median of max(|x - m|, 2^-24 and 2^-40 of m's magnitude), the spread s its upper end; each chosen by permute-and-flip " +
	"(utility -max(0, 2 #{rows below the candidate} - n, n - 2 #{rows up to it}), sensitivity 2 under replace-one) at 4 eps_bounds/(9d); the map z = clamp(g((x - m)/s)/3, -1, 1), g(t) = sign(t) log2(1 + |t|)"

// PublicRange returns the constants [lo, hi] = [m - s, m + s] and the
// half-width W of the public map that every numeric column gets when the
// rows cannot pay for the estimate (CentreRows): m = 0, s = 1,
// W = PublicHalfWidth. They read no row and cost nothing.
func PublicRange() (lo, hi, w float64) { return -1, 1, PublicHalfWidth }

// CentreRows returns the fewest rows with which the centres and spreads of
// d columns at eps (4 eps/(9d) per selection, EstimateCentres) each miss
// the data with probability at most CentreFailure: CentreRowsAt(d, eps,
// CentreFailure), about 110 d / eps.
func CentreRows(d int, eps float64) int { return CentreRowsAt(d, eps, CentreFailure) }

// CentreRowsAt returns the fewest rows with which the centres and spreads
// of d columns at eps each miss the data with probability at most failure
// in (0, 1): n >= 9 (ln Centres + ln(1/failure)) d / eps. A candidate that
// every row lies on one side of has the utility -n, n below the median's
// (utility 0), and permute-and-flip returns a candidate at most with the
// probability of its coin, exp(-(4 eps/(9d)) n / (2 CentreSensitivity));
// over at most Centres candidates that is at most failure at the bound
// (MissProbability). It depends on public values only; math.MaxInt when
// the count does not fit an int.
func CentreRowsAt(d int, eps, failure float64) int {
	v := math.Ceil(rowsPerColumn(failure) * float64(d) / eps)
	if !(v < math.MaxInt32*float64(1<<31)) {
		return math.MaxInt
	}
	return int(v)
}

// CentreShare returns the smallest share of eps with which n rows of d
// columns reach CentreRows: 9 (ln Centres + ln(1/CentreFailure)) d /
// (n eps). A share of 1 or more means no share of eps suffices.
func CentreShare(n, d int, eps float64) float64 {
	return rowsPerColumn(CentreFailure) * float64(d) / (float64(n) * eps)
}

// rowsPerColumn is 9 (ln Centres + ln(1/failure)): the rows a column needs
// per unit of eps for its two choices to miss the data with probability at
// most failure each (CentreRowsAt).
func rowsPerColumn(failure float64) float64 {
	return parts * (math.Log(Centres) + math.Log(1/failure))
}

// MissProbability returns the bound of CentreRowsAt for n rows of d
// columns at eps: the probability that a centre or a spread is a
// candidate every row lies on one side of is at most
// Centres exp(-(4 eps/(9d)) n / 4) (capped at 1).
func MissProbability(n, d int, eps float64) float64 {
	return min(1, Centres*math.Exp(-eps*CentreParts/float64(parts*d)*float64(n)/4))
}

// CentreIndex returns the index of the candidate centre whose part holds
// the finite v: the parts of the bins of Bin in increasing order, SubBins
// equal parts of each bin but the one around zero, which is one part
// (index half*SubBins). It is nondecreasing in v (a bin's parts are
// floor((v - Lower(b)) / w), w the part's width, clamped to the bin, and
// correctly rounded subtraction and division are monotone), so the counts
// of the parts are those of a median's utility.
func CentreIndex(v float64) int {
	b := Bin(v)
	if b == half {
		return half * SubBins
	}
	lo := Lower(b)
	w := (Upper(b) - lo) / SubBins
	k := int(max(0, min(SubBins-1, math.Floor((v-lo)/w))))
	if b < half {
		return b*SubBins + k
	}
	return half*SubBins + 1 + (b-half-1)*SubBins + k
}

// CentreValue returns the centre m that candidate i stands for: 0 for the
// part around zero, the middle Lower(b) + (k + 1/2) w of part k of bin b
// otherwise (exact: w is a power of two).
func CentreValue(i int) float64 {
	if i == half*SubBins {
		return 0
	}
	var b, k int
	if i < half*SubBins {
		b, k = i/SubBins, i%SubBins
	} else {
		j := i - half*SubBins - 1
		b, k = half+1+j/SubBins, j%SubBins
	}
	lo := Lower(b)
	w := (Upper(b) - lo) / SubBins
	return lo + (float64(k)+0.5)*w
}

// MinSpread returns the smallest spread around the centre m: 2^MinExp, or
// 2^(e-40) for |m| in [2^(e-1), 2^e) when that is larger, so that m - s and
// m + s are distinct float64 values (s is 2^13 units in the last place of
// m at least) from which m and s are recovered (OnCentreGrid).
func MinSpread(m float64) float64 {
	_, e := math.Frexp(m)
	return max(math.Ldexp(1, MinExp), math.Ldexp(1, e-40))
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

// EstimateCentres returns, for every column j of X (n rows of d raw
// feature values: finite, NaN for a missing cell, +Inf for a text cell,
// datasets.TextMark), whether it is a text column, text[j], and for a
// numeric column the constants lo_j = m_j - s_j and hi_j = m_j + s_j of
// the map z = clamp(g((x - m_j)/s_j)/HalfWidth, -1, 1) (package doc;
// preprocess.RowMap.Log): m_j = CentreValue of the bin of Bin that holds
// the median of the column's numbers, then s_j = SpreadValue of the bin
// that holds the median of their |x - m_j|. A text column has no centre
// or spread: lo_j and hi_j are NaN.
//
// # Privacy
//
// eps-DP for replace-one neighbours (same n, one row's features changed).
// Each column takes up to three choices by permute-and-flip
// (perturb.PermuteAndFlip, exact; McKenna & Sheldon 2020, Theorem 1) over
// public candidates: its type at TypeParts/9 of eps/d with the utility
// TypeScores (the counts of numbers and of text cells: one row moves each
// by at most TypeSensitivity), then, for a numeric column, the centre and
// the spread at CentreParts/9 and SpreadParts/9 of eps/d with a utility of
// MedianScores, of sensitivity CentreSensitivity, over the numbers alone
// (a text cell is counted nowhere, like a missing one: a row that turns
// text or missing moves each score by at most 1); the spread's counts are
// of |x - m_j| with m_j already chosen, and one row still moves one count.
// A text column skips its centre and spread and spends less. The choices
// compose adaptively to eps-DP (Dwork & Roth 2014, Theorem 3.16), and the
// types, lo and hi are post-processing. The draws come from src
// (perturb.Secure() when nil; a Source other than Secure and Seeded is an
// error, see PermuteAndFlip).
//
// It never refuses for too few rows: with fewer than CentreRows(d, eps) a
// choice is more often the noise's pick, and a caller takes PublicRange
// instead. Errors wrap ErrEstimate: no rows or columns, a value that is
// -Inf, and eps not finite and positive; and the source's errors.
func EstimateCentres(X mat.Matrix, eps float64, src perturb.Source) (lo, hi []float64, text []bool, err error) {
	n, d, err := checkShape(X, eps)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkValues(X, math.Inf(1)); err != nil {
		return nil, nil, nil, err
	}
	if src == nil {
		src = perturb.Secure()
	}
	per := eps / float64(parts*d)
	lo, hi, text = make([]float64, d), make([]float64, d), make([]bool, d)
	col := make([]float64, n)
	choose := func(scores []int64, share float64, sens int64) (int, error) {
		k, err := perturb.PermuteAndFlip(src, scores, share*per, sens)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrEstimate, err)
		}
		return k, nil
	}
	for j := range d {
		mat.Col(col, j, X)
		t, err := choose(TypeScores(col), TypeParts, TypeSensitivity)
		if err != nil {
			return nil, nil, nil, err
		}
		if t == 1 {
			lo[j], hi[j], text[j] = math.NaN(), math.NaN(), true
			continue
		}
		c, err := choose(MedianScores(CentreCounts(col)), CentreParts, CentreSensitivity)
		if err != nil {
			return nil, nil, nil, err
		}
		m := CentreValue(c)
		counts, first := SpreadCounts(col, m)
		b, err := choose(MedianScores(counts), SpreadParts, CentreSensitivity)
		if err != nil {
			return nil, nil, nil, err
		}
		s := SpreadValue(first + b)
		lo[j], hi[j] = m-s, m+s
	}
	return lo, hi, text, nil
}

// TypeScores returns the utility of a column's two types, numeric and
// text: the number of its numbers (finite values) and of its text cells
// (+Inf); a missing cell (NaN) counts for neither. Replacing one row
// moves each count by at most 1 (TypeSensitivity).
func TypeScores(col []float64) []int64 {
	scores := make([]int64, 2)
	for _, v := range col {
		switch {
		case math.IsInf(v, 1):
			scores[1]++
		case !math.IsNaN(v):
			scores[0]++
		}
	}
	return scores
}

// CentreCounts returns the number of values of col (finite; NaN for a
// missing cell and +Inf for a text cell, counted nowhere) in every
// candidate centre's part (CentreIndex): the counts of the centre's
// utility. n in MedianScores is
// then the column's values that are not missing; a row that turns missing
// moves each cumulative count by at most 1 and n by 1, so each score by at
// most 1.
func CentreCounts(col []float64) []int64 {
	counts := make([]int64, Centres)
	for _, v := range col {
		if !math.IsNaN(v) && !math.IsInf(v, 1) {
			counts[CentreIndex(v)]++
		}
	}
	return counts
}

// SpreadCounts returns the counts of the candidate spreads around the
// centre m: the deviations max(|x - m|, MinSpread(m)) of the values x of
// col (finite; NaN, missing, and +Inf, text, counted nowhere) in the bins of Bin from
// first, the bin of MinSpread(m), up; candidate i is the spread
// SpreadValue(first + i). The candidates depend on m alone, which the
// estimate has released before it counts them.
func SpreadCounts(col []float64, m float64) (counts []int64, first int) {
	floor := MinSpread(m)
	first = Bin(floor)
	counts = make([]int64, Bins-first)
	for _, v := range col {
		if !math.IsNaN(v) && !math.IsInf(v, 1) {
			counts[Bin(max(math.Abs(v-m), floor))-first]++
		}
	}
	return counts, first
}

// OnCentreGrid reports whether [lo, hi] is a pair EstimateCentres can
// give: lo = m - s < hi = m + s (in float64) for a centre m = CentreValue
// and a spread s = SpreadValue at least MinSpread(m). m and s are found
// from lo/2 + hi/2 and hi/2 - lo/2, which the spread's floor makes close
// to them: the neighbouring candidates are checked.
func OnCentreGrid(lo, hi float64) bool {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return false
	}
	mid, spread := lo/2+hi/2, hi/2-lo/2
	i := CentreIndex(mid)
	_, e := math.Frexp(spread)
	for c := max(0, i-1); c <= min(Centres-1, i+1); c++ {
		m := CentreValue(c)
		for k := e - 2; k <= e+1; k++ {
			s := math.Ldexp(1, k)
			if k >= MinExp && k <= MaxExp && s >= MinSpread(m) && m-s == lo && m+s == hi {
				return true
			}
		}
	}
	return false
}
