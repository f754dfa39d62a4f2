package stump

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// MaxClasses bounds the number K of classes of a multiclass stump: the
// class has p T K (K-1) candidates, each scored and held until the draw,
// so K is capped at a public constant (10: 90 class pairs per threshold).
const MaxClasses = 10

// MaxMultiCandidates bounds the candidates of a multiclass stump, p T
// K (K-1): their scores (8 bytes each) are held until the draw. 2^24
// candidates are 128 MiB; a wider class (many columns and classes) is
// refused (MultiScores), and the rule does not choose it.
const MaxMultiCandidates = 1 << 24

// MultiGrid is the number T of thresholds per column of a multiclass
// stump when Config.Grid is zero: the 255 interior multiples of 1/128 in
// (-1, 1), exact in float64. It is finer than the binary LegacyGrid (and
// coarser than today's DefaultGrid, whose class has no K (K-1) factor): on
// the public log map (private.Plan, every column read as
// clamp(sign(x) log2(1 + |x|)/32, -1, 1)) LegacyGrid's thresholds fall
// at x = 2^k - 1, a factor 2 apart, which the small multiclass tables'
// columns (sodium 11 to 17, calcium 5 to 16 in fgl's glass) span at most
// once; MultiGrid's fall a factor 2^(1/4) apart. A finer grid costs ln 4
// more in the guarantee's ln N, and permute-and-flip's draw stayed within
// about a row of the best candidate. On the defaults benchmark's small
// multiclass tables at eps = 1 (20 splits each) the grids of 63, 127, 255
// and 511 thresholds gave iris 0.650, 0.632, 0.635, 0.625; wine 0.558,
// 0.649, 0.649, 0.642; fgl 0.392, 0.404, 0.467, 0.440; pbc 0.714, 0.707,
// 0.704, 0.697. Judged leave-one-data-set-out (the grid with the best mean
// over the other three tables, evaluated on the fourth): 255 for iris,
// wine and pbc, 127 for fgl (tied with 255 to 2e-4), giving 0.635, 0.649,
// 0.404 and 0.704, every table above its majority class (0.413, 0.418,
// 0.391 and 0.559 over those splits).
const MultiGrid = 255

// Multi is one classifier of the multiclass stump class for K classes:
//
//	h(z) = Hi             if z_Feature > t,
//	       Lo             if z_Feature < t,
//	       min(Lo, Hi)    if z_Feature = t,
//
// with t = Threshold(Index, T) and Lo != Hi two of the classes 0..K-1. It
// is the stump "class b if s (z_j - t) >= 0, else class a" of the binary
// class with the sign folded into the pair: (s = +1, a, b) and (s = -1,
// b, a) decide alike off the threshold, so the class keeps one of them and
// decides at z_j = t as the reader of its weights does (Weights: a model
// file's argmax takes the first of equal margins, the smaller class).
type Multi struct {
	Feature int
	Index   int
	Lo, Hi  int
}

// MultiCandidates returns the number of classifiers of the multiclass
// class for p columns, T thresholds and K classes: p T K (K-1).
func MultiCandidates(p, T, K int) int { return p * T * K * (K - 1) }

// pair returns the position of the ordered pair (lo, hi), lo != hi, among
// the K (K-1) pairs: lo (K-1) + hi, less one when hi > lo.
func pair(lo, hi, K int) int {
	if hi > lo {
		hi--
	}
	return lo*(K-1) + hi
}

// index returns the position of m among the candidates (the order of
// MultiScores): (Feature T + Index - 1) K (K-1) + pair(Lo, Hi).
func (m Multi) index(T, K int) int {
	return (m.Feature*T+m.Index-1)*K*(K-1) + pair(m.Lo, m.Hi, K)
}

// multiCandidate returns the multiclass stump at position r.
func multiCandidate(r, T, K int) Multi {
	pairs := K * (K - 1)
	q, c := r/pairs, r%pairs
	m := Multi{Feature: q / T, Index: q%T + 1, Lo: c / (K - 1), Hi: c % (K - 1)}
	if m.Hi >= m.Lo {
		m.Hi++
	}
	return m
}

// checkClasses returns an error wrapping ErrInput unless K is in
// [2, MaxClasses] and T in [1, MaxGrid].
func checkClasses(K, T int) error {
	if K < 2 || K > MaxClasses {
		return fmt.Errorf("%w: %d classes; a multiclass stump takes 2 to %d", ErrInput, K, MaxClasses)
	}
	if T < 1 || T > MaxGrid {
		return fmt.Errorf("%w: a grid of %d thresholds, want 1 to %d", ErrInput, T, MaxGrid)
	}
	return nil
}

// MultiFromIndex returns the multiclass stump at position r of the
// candidates for T thresholds and K classes (the order of MultiScores, and
// the index perturb.PermuteAndFlip returns over them), or an error
// wrapping ErrInput for a negative r, K outside [2, MaxClasses] or T
// outside [1, MaxGrid].
func MultiFromIndex(r, T, K int) (Multi, error) {
	if err := checkClasses(K, T); err != nil {
		return Multi{}, err
	}
	if r < 0 {
		return Multi{}, fmt.Errorf("%w: candidate %d", ErrInput, r)
	}
	return multiCandidate(r, T, K), nil
}

// Predict returns the stump's class for the mapped row z.
func (m Multi) Predict(z []float64, T int) int {
	switch t := Threshold(m.Index, T); {
	case z[m.Feature] > t:
		return m.Hi
	case z[m.Feature] < t:
		return m.Lo
	}
	return min(m.Lo, m.Hi)
}

// Weights returns the stump as a linear model of K outputs on [z, 1]
// (K (p + 1) entries, row-major, the bias last in each row): row Hi is
// e_Feature - t e_bias, row Lo is its negation, and every other row is -1
// on the bias; every other entry is +0.
//
// The reader's margins computed in float64 (trainer.Model.Margins: a sum
// from +0 in column order) are exactly m_Hi = fl(z_j - t), m_Lo =
// fl(t - z_j) = -m_Hi (rounding to nearest is symmetric) and -1 for the
// other rows, and fl(z_j - t) has the sign of z_j - t (a difference of
// distinct floats is never rounded to 0). So the argmax taking the first
// of equal margins returns Hi when z_j > t (m_Hi > 0 > -1, m_Lo < 0), Lo
// when z_j < t, and the smaller of Lo and Hi when z_j = t (both margins
// +0 > -1): the stump's decision everywhere.
func (m Multi) Weights(p, T, K int) []float64 {
	t := Threshold(m.Index, T)
	w := make([]float64, K*(p+1))
	for c := range K {
		w[c*(p+1)+p] = -1
	}
	hi, lo := w[m.Hi*(p+1):(m.Hi+1)*(p+1)], w[m.Lo*(p+1):(m.Lo+1)*(p+1)]
	hi[m.Feature], hi[p] = 1, 0-t // +0, not -0, at t = 0
	lo[m.Feature], lo[p] = -1, 0+t
	return w
}

// MultiFromWeights returns the multiclass stump whose weights (Weights)
// are w for K classes, p = len(w)/K - 1 columns and T thresholds, or an
// error wrapping ErrInput when w is not, bit for bit, the weights of a
// member of the class (a zero is +0: see FromWeights). A verifier checks
// with it that a released model is in the public class.
func MultiFromWeights(w []float64, K, T int) (Multi, error) {
	if err := checkClasses(K, T); err != nil {
		return Multi{}, err
	}
	if len(w)%K != 0 || len(w)/K < 2 {
		return Multi{}, fmt.Errorf("%w: %d weights for %d classes: want K (p + 1) with p >= 1 columns", ErrInput, len(w), K)
	}
	d := len(w) / K
	p := d - 1
	m := Multi{Feature: -1, Lo: -1, Hi: -1}
	for c := 0; c < K && m.Hi < 0; c++ {
		if j := slices.Index(w[c*d:c*d+p], 1); j >= 0 {
			m.Hi, m.Feature = c, j
		}
	}
	if m.Hi < 0 {
		return Multi{}, fmt.Errorf("%w: no output has a feature weight +1: a multiclass stump has one", ErrInput)
	}
	var err error
	if m.Lo, err = negatedOutput(w, K, m.Feature, m.Hi); err != nil {
		return Multi{}, err
	}
	t := -w[m.Hi*d+p]
	for k := 1; k <= T; k++ {
		if Threshold(k, T) == t {
			m.Index = k
			if err := canonical(w, m.Weights(p, T, K)); err != nil {
				return Multi{}, err
			}
			return m, nil
		}
	}
	return Multi{}, fmt.Errorf("%w: threshold %v is not a point of the grid of %d thresholds", ErrInput, t, T)
}

// negatedOutput returns the first output of the K outputs w (rows of
// len(w)/K weights) other than hi whose weight on feature is -1, or an
// error wrapping ErrInput when there is none: the low side of a stump (or
// an interval) whose output hi has +1 there.
func negatedOutput(w []float64, K, feature, hi int) (int, error) {
	d := len(w) / K
	for c := range K {
		if c != hi && w[c*d+feature] == -1 {
			return c, nil
		}
	}
	return -1, fmt.Errorf("%w: output %d has weight +1 on feature %d, but no other output has -1 there", ErrInput, hi, feature)
}

// MultiScores returns the utility of every multiclass candidate (in the
// order of the candidates: column, threshold, then the pairs (Lo, Hi) by
// Lo, then Hi): the number of rows i with null[i] false that the candidate
// classifies as y[i]. Z holds the n mapped rows (n x p, finite), y their
// classes (0..K-1 as float64), null marks rows that count for no
// candidate (nil: none). Each column is sorted once and the grid swept,
// counting each class below, at and above every threshold: the score of
// (Lo, Hi) is below[Lo] + above[Hi] + at[min(Lo, Hi)].
// O(p n log n + p T K^2).
func MultiScores(Z mat.Matrix, y []float64, null []bool, K, T int) ([]int64, error) {
	if err := checkClasses(K, T); err != nil {
		return nil, err
	}
	if err := checkMultiRows(Z, y, null, K, T); err != nil {
		return nil, err
	}
	n, p := Z.Dims()
	total := make([]int64, K)
	for i := range n {
		if null == nil || !null[i] {
			total[int(y[i])]++
		}
	}
	pairs := K * (K - 1)
	scores := make([]int64, MultiCandidates(p, T, K))
	col := make([]cell, 0, n)
	lt, le := make([]int64, K), make([]int64, K)
	for j := range p {
		col = classColumn(col, Z, y, null, j)
		clear(lt)
		clear(le)
		a, b := 0, 0
		for k := 1; k <= T; k++ {
			t := Threshold(k, T)
			for ; a < len(col) && col[a].v < t; a++ {
				lt[col[a].c]++
			}
			for ; b < len(col) && col[b].v <= t; b++ {
				le[col[b].c]++
			}
			r := (j*T + k - 1) * pairs
			for lo := range K {
				for hi := range K {
					if lo == hi {
						continue
					}
					at := min(lo, hi)
					scores[r+pair(lo, hi, K)] = lt[lo] + (total[hi] - le[hi]) + (le[at] - lt[at])
				}
			}
		}
	}
	return scores, nil
}

// checkMultiRows checks the inputs of MultiScores: the rows as checkRows
// does, classes in 0..K-1, and at most MaxMultiCandidates candidates.
func checkMultiRows(Z mat.Matrix, y []float64, null []bool, K, T int) error {
	if Z == nil {
		return fmt.Errorf("%w: no rows", ErrInput)
	}
	n, p := Z.Dims()
	if p >= 1 && MultiCandidates(1, T, K) > MaxMultiCandidates/p {
		return fmt.Errorf("%w: %d columns x %d thresholds x %d class pairs make more than %d candidates: declare fewer columns or classes",
			ErrInput, p, T, K*(K-1), MaxMultiCandidates)
	}
	return checkLabelled(Z, y, null, func(v float64) bool { return v >= 0 && v < float64(K) && v == math.Trunc(v) },
		fmt.Sprintf("a class 0 to %d", K-1), n, p)
}

// FitMulti chooses a multiclass stump for the rows Z (n x p), classes y
// (0..K-1) and null rows null (nil: none; see MultiScores) by
// permute-and-flip at cfg.Epsilon with the utility MultiScores on the grid
// of cfg.Grid thresholds (zero: MultiGrid), drawing from src (nil means
// perturb.Secure()).
//
// # Privacy
//
// The class, MultiCandidates(p, T, K) classifiers, is fixed by public
// values (p, T, K and the grid) before any row is read. For replace-one
// neighbours (Z, y) and (Z', y') that differ in one row i (its features,
// its class or whether it is null), with the same n, p, K and grid, every
// candidate h's utility u(h) = sum over the non-null rows of 1[h(z_i) =
// y_i] is a sum of per-row terms in {0, 1}; the other rows' terms are
// unchanged, so |u(h) - u'(h)| <= 1 = Sensitivity for every h. Permute-and-
// flip with sensitivity 1 at eps is then eps-DP (McKenna & Sheldon 2020,
// "Permute-and-Flip: A new mechanism for differentially private
// selection", NeurIPS, Theorem 1; perturb.PermuteAndFlip samples it
// exactly), and the released index, its stump and its weights (Weights, a
// fixed function of the index) are post-processing. The learner is that of
// Kasiviswanathan, Lee, Nissim, Raskhodnikova & Smith (2011), "What can we
// learn privately?", SIAM J. Comput. 40(3), Section 3, over this finite
// class: with probability at least 1 - beta the exponential mechanism errs
// on at most 2 (ln N + ln(1/beta)) / eps more training rows than the best
// multiclass stump, N = p T K (K-1) (McSherry & Talwar 2007; Dwork & Roth
// 2014, Theorem 3.11), and permute-and-flip's expected utility is at least
// the exponential mechanism's (McKenna & Sheldon 2020, Theorem 2).
//
// Errors wrap ErrInput (before any draw) or perturb.ErrSource.
func FitMulti(Z mat.Matrix, y []float64, null []bool, K int, cfg Config, src perturb.Source) (Multi, error) {
	T := cfg.Grid
	if T == 0 {
		T = MultiGrid
	}
	r, T, err := chooseOn(cfg, T, src, func(T int) ([]int64, error) { return MultiScores(Z, y, null, K, T) })
	if err != nil {
		return Multi{}, err
	}
	return multiCandidate(r, T, K), nil
}
