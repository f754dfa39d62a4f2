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
	// TextCentre is the index of one more candidate centre, above every
	// number: a text cell (+Inf in the rows, datasets.TextMark) counts in
	// it, and a column whose chosen centre it is, a column of mostly text
	// cells, is a text column (EstimateCentres), one-hot encoded by
	// hashing (datasets.Hashed). A column without text cells gives it the
	// utility -n of a candidate every row lies below.
	TextCentre = Centres
	// Candidates is the number of candidate centres: Centres and
	// TextCentre.
	Candidates = Centres + 1
	// CentreFailure bounds, per selection, the probability that the
	// estimate picks a bin that every row lies on one side of (CentreRows):
	// a centre off the data, or a spread off the column's deviations.
	CentreFailure = 0.01
)

// CentreStep is the ledger entry's description of the centre-and-spread
// estimate.
const CentreStep = "private feature centres and spreads: for every feature column, the part that holds the median among 16 equal parts of each bin of the public log2 grid (bins (2^(e-1), 2^e] of either sign, e up to 40, and [-2^-24, 2^-24] as one part) and one part above them all that holds the text cells (a column whose median is text is one-hot encoded by hashing its cells into public buckets; a text cell of another column is read as missing), " +
	"the centre m the part's middle; then the bin that holds the median of max(|x - m|, 2^-24 and 2^-40 of m's magnitude), the spread s its upper end; each chosen by permute-and-flip " +
	"(utility -max(0, 2 #{rows below the candidate} - n, n - 2 #{rows up to it}), sensitivity 2 under replace-one) at eps_bounds/(2d); the map z = clamp(g((x - m)/s)/3, -1, 1), g(t) = sign(t) log2(1 + |t|)"

// PublicRange returns the constants [lo, hi] = [m - s, m + s] and the
// half-width W of the public map that every numeric column gets when the
// rows cannot pay for the estimate (CentreRows): m = 0, s = 1,
// W = PublicHalfWidth. They read no row and cost nothing.
func PublicRange() (lo, hi, w float64) { return -1, 1, PublicHalfWidth }

// CentreRows returns the fewest rows with which the centres and spreads of
// d columns at eps (eps/(2d) per selection) each miss the data with
// probability at most CentreFailure: CentreRowsAt(d, eps, CentreFailure),
// about 97.8 d / eps.
func CentreRows(d int, eps float64) int { return CentreRowsAt(d, eps, CentreFailure) }

// CentreRowsAt returns the fewest rows with which the centres and spreads
// of d columns at eps each miss the data with probability at most failure
// in (0, 1): n >= 8 (ln Candidates + ln(1/failure)) d / eps. A candidate that
// every row lies on one side of has the utility -n, n below the median's
// (utility 0), and permute-and-flip returns a candidate at most with the
// probability of its coin, exp(-(eps/(2d)) n / (2 CentreSensitivity));
// over at most Candidates candidates that is at most failure at the bound
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
// columns reach CentreRows: 8 (ln Candidates + ln(1/CentreFailure)) d /
// (n eps). A share of 1 or more means no share of eps suffices.
func CentreShare(n, d int, eps float64) float64 {
	return rowsPerColumn(CentreFailure) * float64(d) / (float64(n) * eps)
}

// rowsPerColumn is 8 (ln Candidates + ln(1/failure)): the rows a column needs
// per unit of eps for its two choices to miss the data with probability at
// most failure each (CentreRowsAt).
func rowsPerColumn(failure float64) float64 {
	return 8 * (math.Log(Candidates) + math.Log(1/failure))
}

// MissProbability returns the bound of CentreRowsAt for n rows of d
// columns at eps: the probability that a centre or a spread is a
// candidate every row lies on one side of is at most
// Candidates exp(-(eps/(2d)) n / 4) (capped at 1).
func MissProbability(n, d int, eps float64) float64 {
	return min(1, Candidates*math.Exp(-eps/float64(2*d)*float64(n)/4))
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
// feature values: finite, NaN for a missing cell, +Inf for a text cell),
// the constants lo_j = m_j - s_j and hi_j = m_j + s_j of
// the map z = clamp(g((x - m_j)/s_j)/HalfWidth, -1, 1) (package doc;
// preprocess.RowMap.Log): m_j = CentreValue of the bin of Bin that holds
// the column's median, then s_j = SpreadValue of the bin that holds the
// median of |x - m_j| over its numbers. When the chosen centre is
// TextCentre, text[j] is true, lo_j and hi_j are NaN, and the column has
// no spread: its median is a text cell.
//
// # Privacy
//
// eps-DP for replace-one neighbours (same n, one row's features changed).
// Each of the 2d choices is permute-and-flip (perturb.PermuteAndFlip,
// exact; McKenna & Sheldon 2020, Theorem 1) at eps/(2d) over public
// candidates with a utility of MedianScores, of sensitivity
// CentreSensitivity: the spread's counts are of |x - m_j| with m_j already
// chosen, and one row still moves one count (a row that turns text or
// missing leaves the counts: each score moves by at most 1). The text
// candidate is one more public candidate: one row moves one count, from
// or to it, and a column's type is the choice itself, post-processing. The 2d choices compose
// adaptively to eps-DP (Dwork & Roth 2014, Theorem 3.16), and lo, hi are
// post-processing. The draws come from src (perturb.Secure() when nil; a
// Source other than Secure and Seeded is an error, see PermuteAndFlip).
//
// It never refuses for too few rows: with fewer than CentreRows(d, eps) a
// choice is more often the noise's pick, and a caller takes PublicRange
// instead. Errors wrap ErrEstimate: no rows or columns, a value that is not
// finite nor +Inf, and eps not finite and positive; and the source's errors.
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
	epsSel := eps / float64(2*d)
	lo, hi, text = make([]float64, d), make([]float64, d), make([]bool, d)
	col := make([]float64, n)
	for j := range d {
		mat.Col(col, j, X)
		c, err := perturb.PermuteAndFlip(src, MedianScores(CentreCounts(col)), epsSel, CentreSensitivity)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %w", ErrEstimate, err)
		}
		if c == TextCentre {
			lo[j], hi[j], text[j] = math.NaN(), math.NaN(), true
			continue
		}
		m := CentreValue(c)
		counts, first := SpreadCounts(col, m)
		b, err := perturb.PermuteAndFlip(src, MedianScores(counts), epsSel, CentreSensitivity)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %w", ErrEstimate, err)
		}
		s := SpreadValue(first + b)
		lo[j], hi[j] = m-s, m+s
	}
	return lo, hi, text, nil
}

// CentreCounts returns the number of values of col (finite; NaN for a
// missing cell, counted nowhere; +Inf for a text cell, counted in
// TextCentre) in every candidate centre's part (CentreIndex): the counts
// of the centre's utility. n in MedianScores is
// then the column's values that are not missing; a row that turns missing
// moves each cumulative count by at most 1 and n by 1, so each score by at
// most 1.
func CentreCounts(col []float64) []int64 {
	counts := make([]int64, Candidates)
	for _, v := range col {
		switch {
		case math.IsInf(v, 1):
			counts[TextCentre]++
		case !math.IsNaN(v):
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
