package stump

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// ErrInput is wrapped by every error about the inputs of a stump.
var ErrInput = errors.New("stump: invalid input")

// DefaultGrid is the number T of thresholds per column of a binary stump
// when Config.Grid is zero: the 1023 interior multiples of 1/512 in
// (-1, 1), exact in float64.
//
// Why that fine. On the public log map (private.Plan, every column read as
// clamp(sign(x) log2(1 + |x|)/32, -1, 1)) a grid of spacing 2/(T+1) puts
// its thresholds at x = 2^(64 m/(T+1)) - 1, integer m: with the earlier 63
// thresholds a factor 2 apart. Every informative column of MASS's survey
// (heights 150 to 200 cm, hand spans 13 to 23 cm) lies between two of
// them, so no stump of the class split the rows, and the release was a
// near-constant classifier whose class is the training split's majority:
// on that balanced table (118 and 118) the test split's minority, 0.43 at
// eps = 1 against a majority share of 0.58. The 1023 thresholds fall a
// factor 2^(1/16) (4.4%) apart and cost ln 16 more rows x 2/eps in the
// guarantee. On the six binary tables where the rule releases a stump
// (survey, crabs, Pima, biopsy, birthwt, colon; bench/defaults -task
// stumpgrid: the rule's stump refitted at each grid on the same rows, 5
// splits, eps 0.5, 1 and 2) the grids of 63, 127, 255, 511, 1023 and 4095
// thresholds gave a mean test accuracy of 0.721, 0.754, 0.785, 0.777,
// 0.788 and 0.787 (survey 0.42, 0.68, 0.78, 0.77, 0.78, 0.77). Judged
// leave-one-data-set-out (the grid with the best mean over the other five
// tables, evaluated on the sixth; loo.StumpGrid): 1023 for Pima, biopsy,
// birthwt and colon, 4095 for survey and 255 for crabs; held out, survey
// 0.77 (0.42 on the old grid), colon 0.94 (0.90), crabs 0.62 (0.60), Pima
// 0.75 (0.76), biopsy 0.92 (0.93), birthwt 0.70 (0.71).
const DefaultGrid = 1023

// LegacyGrid is the binary grid of model files written before DefaultGrid
// became 1023: 63 thresholds, the multiples of 1/32, a subset of the
// DefaultGrid's points (so FromWeights on DefaultGrid reads such a stump
// and predicts alike). A certificate that names it is rebuilt on it.
const LegacyGrid = 63

// MaxGrid bounds Config.Grid.
const MaxGrid = 1 << 16

// Sensitivity is the sensitivity of the utility (the number of training
// rows a candidate classifies correctly) under replace-one neighbours: a
// replaced row is counted correct or not by each candidate, before and
// after, so each count moves by at most 1.
const Sensitivity = 1

// Config configures a stump. Every zero value is documented.
type Config struct {
	// Epsilon > 0 is the privacy parameter of the selection.
	Epsilon float64
	// Grid is the number T of thresholds per column, in [1, MaxGrid]
	// (Threshold). Zero means DefaultGrid for Fit, MultiGrid for FitMulti.
	Grid int
}

// grid returns the number of thresholds of c.
func (c Config) grid() int {
	if c.Grid == 0 {
		return DefaultGrid
	}
	return c.Grid
}

// Check returns an error wrapping ErrInput for an eps that is not finite
// and positive or a grid outside [1, MaxGrid].
func (c Config) Check() error {
	if !(c.Epsilon > 0) || math.IsInf(c.Epsilon, 0) {
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrInput, c.Epsilon)
	}
	if g := c.grid(); g < 1 || g > MaxGrid {
		return fmt.Errorf("%w: a grid of %d thresholds, want 1 to %d", ErrInput, g, MaxGrid)
	}
	return nil
}

// Threshold returns the k-th of the T thresholds of the public grid,
// t_k = -1 + 2k/(T+1) for k = 1..T: interior points of [-1, 1], the range
// of every column of the per-feature map. It panics for k outside [1, T].
func Threshold(k, T int) float64 {
	if k < 1 || k > T {
		panic(fmt.Sprintf("stump: threshold %d of %d", k, T))
	}
	return -1 + 2*float64(k)/float64(T+1)
}

// Stump is one classifier of the class: h(z) = +1 if Sign (z_Feature -
// t_Index) >= 0, else -1, with t_Index = Threshold(Index, T).
type Stump struct {
	Feature int
	Index   int
	Sign    int
}

// Candidates returns the number of classifiers of the class for p columns
// and T thresholds: 2 p T.
func Candidates(p, T int) int { return 2 * p * T }

// index returns the position of s among the candidates (the order of
// Scores): ((Feature T + Index - 1) 2 + b), b = 0 for Sign +1, 1 for -1.
func (s Stump) index(T int) int {
	b := 0
	if s.Sign < 0 {
		b = 1
	}
	return (s.Feature*T+s.Index-1)*2 + b
}

// candidate returns the stump at position r of the candidates.
func candidate(r, T int) Stump {
	s := Stump{Sign: 1}
	if r%2 == 1 {
		s.Sign = -1
	}
	r /= 2
	s.Feature, s.Index = r/T, r%T+1
	return s
}

// FromIndex returns the stump at position r of the candidates for T
// thresholds (the order of Scores, and the index perturb.PermuteAndFlip
// returns over them), or an error wrapping ErrInput for a negative r or T
// outside [1, MaxGrid].
func FromIndex(r, T int) (Stump, error) {
	if r < 0 || T < 1 || T > MaxGrid {
		return Stump{}, fmt.Errorf("%w: candidate %d of a grid of %d", ErrInput, r, T)
	}
	return candidate(r, T), nil
}

// Predict returns the stump's label, +1 or -1, for the mapped row z.
func (s Stump) Predict(z []float64, T int) float64 {
	d := z[s.Feature] - Threshold(s.Index, T)
	if float64(s.Sign)*d >= 0 {
		return 1
	}
	return -1
}

// Weights returns the stump as the weights of a linear classifier on
// [z, 1] (p + 1 entries, the bias last): Sign on Feature, -Sign t on the
// bias, zero elsewhere. The margin <w, [z, 1]> computed in float64 is
// fl(Sign z_j - Sign t), whose sign is that of Sign (z_j - t) exactly, so
// the classifier (class +1 when the margin is >= 0) decides as the stump.
func (s Stump) Weights(p, T int) []float64 {
	w := make([]float64, p+1)
	w[s.Feature] = float64(s.Sign)
	w[p] = 0 - float64(s.Sign)*Threshold(s.Index, T) // +0, not -0, at t = 0
	return w
}

// FromWeights returns the stump whose weights (Weights) are w for p = len(w)
// - 1 columns and T thresholds, or an error wrapping ErrInput when w is
// not the weights of a member of the class: exactly one of the first p
// entries nonzero and equal to +1 or -1, and the bias -Sign t_k for a k of
// the grid, every entry bit for bit what Weights writes (a zero is +0, not
// -0: the sign bits of p zeros would carry p bits that the mechanism
// never chose). A verifier checks with it that a released model is in the
// public class.
func FromWeights(w []float64, T int) (Stump, error) {
	p := len(w) - 1
	if p < 1 || T < 1 || T > MaxGrid {
		return Stump{}, fmt.Errorf("%w: %d weights with a grid of %d thresholds", ErrInput, len(w), T)
	}
	feat := -1
	for j, v := range w[:p] {
		if v == 0 {
			continue
		}
		if feat >= 0 || (v != 1 && v != -1) {
			return Stump{}, fmt.Errorf("%w: weight %d is %v: a stump has one feature weight, +1 or -1, and zeros", ErrInput, j, v)
		}
		feat = j
	}
	if feat < 0 {
		return Stump{}, fmt.Errorf("%w: no feature weight", ErrInput)
	}
	s := Stump{Feature: feat, Sign: int(w[feat])}
	t := -w[p] * float64(s.Sign)
	for k := 1; k <= T; k++ {
		if Threshold(k, T) == t {
			s.Index = k
			if err := canonical(w, s.Weights(p, T)); err != nil {
				return Stump{}, err
			}
			return s, nil
		}
	}
	return Stump{}, fmt.Errorf("%w: threshold %v is not a point of the grid of %d thresholds", ErrInput, t, T)
}

// canonical returns an error wrapping ErrInput unless w is bit for bit
// want, the weights Weights writes: a -0 or another encoding of the value
// could carry what the mechanism did not choose.
func canonical(w, want []float64) error {
	for j := range want {
		if math.Float64bits(w[j]) != math.Float64bits(want[j]) {
			return fmt.Errorf("%w: weight %d is %v (bits %#016x), not %v as a stump writes it (bits %#016x)",
				ErrInput, j, w[j], math.Float64bits(w[j]), want[j], math.Float64bits(want[j]))
		}
	}
	return nil
}

// Scores returns the utility of every candidate (in the order of the
// candidates: column, threshold, sign +1 then -1): the number of rows i
// with null[i] false that the candidate classifies as y[i]. Z holds the n
// mapped rows (n x p, finite), y their labels (+1 or -1), null marks rows
// that count for no candidate (nil: none). Each column is sorted once and
// the grid swept: O(p n log n + p T).
func Scores(Z mat.Matrix, y []float64, null []bool, T int) ([]int64, error) {
	if err := checkRows(Z, y, null, T); err != nil {
		return nil, err
	}
	n, p := Z.Dims()
	negTotal := negatives(y, null)
	scores := make([]int64, Candidates(p, T))
	col := make([]cell, 0, n)
	for j := range p {
		col = col[:0]
		for i := range n {
			if null != nil && null[i] {
				continue
			}
			col = append(col, cell{Z.At(i, j), int(max(y[i], 0))})
		}
		sweep(col, negTotal, T, scores[j*T*2:(j+1)*T*2])
	}
	return scores, nil
}

// negatives returns the number of rows with null[i] false and label -1.
func negatives(y []float64, null []bool) int64 {
	var neg int64
	for i := range y {
		if (null == nil || !null[i]) && y[i] < 0 {
			neg++
		}
	}
	return neg
}

// sweep sorts col (one value per counted row and its class, 1 for the
// label +1) and writes into dst (2 T entries) the score of each threshold
// of the grid of T and each sign (+1 then -1) of the stump "+1 if
// s (v - t) >= 0": the rows it classifies as their label. negTotal is the
// number of -1 rows in col.
func sweep(col []cell, negTotal int64, T int, dst []int64) {
	sortCells(col)
	// lt counts the rows with v < t, le those with v <= t, by label.
	var ltPos, ltNeg, lePos, leNeg int64
	a, b := 0, 0
	posTotal := int64(len(col)) - negTotal
	for k := 1; k <= T; k++ {
		t := Threshold(k, T)
		for ; a < len(col) && col[a].v < t; a++ {
			if col[a].c == 1 {
				ltPos++
			} else {
				ltNeg++
			}
		}
		for ; b < len(col) && col[b].v <= t; b++ {
			if col[b].c == 1 {
				lePos++
			} else {
				leNeg++
			}
		}
		r := (k - 1) * 2
		// Sign +1: +1 when v >= t, so the +1 rows at or above t and the
		// -1 rows below t are correct.
		dst[r] = (posTotal - ltPos) + ltNeg
		// Sign -1: +1 when v <= t.
		dst[r+1] = lePos + (negTotal - leNeg)
	}
}

// cell is a row's value in one column and its class (for Scores, 1 for
// the label +1 and 0 for -1).
type cell struct {
	v float64
	c int
}

// sortCells sorts col by value.
func sortCells(col []cell) {
	slices.SortFunc(col, func(a, b cell) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
}

// classColumn refills col with column j of Z and the classes y (class
// indices, 0..K-1), the null rows left out, sorted by value: the sweep's
// input of the multiclass scores (MultiScores, IntervalScores).
func classColumn(col []cell, Z mat.Matrix, y []float64, null []bool, j int) []cell {
	n, _ := Z.Dims()
	col = col[:0]
	for i := range n {
		if null == nil || !null[i] {
			col = append(col, cell{Z.At(i, j), int(y[i])})
		}
	}
	sortCells(col)
	return col
}

// checkRows checks the inputs of Scores and Fit.
func checkRows(Z mat.Matrix, y []float64, null []bool, T int) error {
	if Z == nil {
		return fmt.Errorf("%w: no rows", ErrInput)
	}
	n, p := Z.Dims()
	switch {
	case T < 1 || T > MaxGrid:
		return fmt.Errorf("%w: a grid of %d thresholds, want 1 to %d", ErrInput, T, MaxGrid)
	case p >= 1 && Candidates(p, T) > math.MaxInt32:
		return fmt.Errorf("%w: %d columns and %d thresholds make more than %d candidates", ErrInput, p, T, math.MaxInt32)
	}
	return checkLabelled(Z, y, null, func(v float64) bool { return v == 1 || v == -1 }, "+1 or -1", n, p)
}

// checkLabelled checks n >= 1 rows of p >= 1 finite columns, n labels that
// label accepts (want says which) and n null flags (or nil): a null row's
// label and features are not read.
func checkLabelled(Z mat.Matrix, y []float64, null []bool, label func(float64) bool, want string, n, p int) error {
	switch {
	case n < 1 || p < 1:
		return fmt.Errorf("%w: %d rows of %d columns", ErrInput, n, p)
	case len(y) != n:
		return fmt.Errorf("%w: %d rows, %d labels", ErrInput, n, len(y))
	case null != nil && len(null) != n:
		return fmt.Errorf("%w: %d rows, %d null flags", ErrInput, n, len(null))
	}
	for i := range n {
		if null != nil && null[i] {
			continue
		}
		if !label(y[i]) {
			return fmt.Errorf("%w: row %d has label %v, want %s", ErrInput, i, y[i], want)
		}
		for j := range p {
			if v := Z.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: row %d, column %d is %v", ErrInput, i, j, v)
			}
		}
	}
	return nil
}

// Fit chooses a stump for the rows Z (n x p), labels y (+1 or -1) and null
// rows null (nil: none; see Scores) by permute-and-flip at cfg.Epsilon with
// the utility Scores, drawing from src (nil means perturb.Secure()).
//
// # Privacy
//
// For replace-one neighbours (Z, y) and (Z', y') that differ in one row
// (its features, its label or whether it is null), with the same n, p and
// grid, the output is cfg.Epsilon-DP: every candidate's score moves by at
// most Sensitivity = 1, and permute-and-flip with sensitivity 1 is eps-DP
// (McKenna & Sheldon 2020, Theorem 1; perturb.PermuteAndFlip, exact). The
// class (p, T, the grid) is public. The exponential mechanism over the
// finite class (the learner of Kasiviswanathan et al. 2011, Section 3)
// errs, with probability at least 1 - beta, on at most
// 2 (ln(2 p T) + ln(1/beta)) / eps more training rows than the best stump
// (McSherry & Talwar 2007; Dwork & Roth 2014, Theorem 3.11), and
// permute-and-flip's expected utility is at least the exponential
// mechanism's (McKenna & Sheldon 2020, Theorem 2).
//
// Errors wrap ErrInput (before any draw) or perturb.ErrSource.
func Fit(Z mat.Matrix, y []float64, null []bool, cfg Config, src perturb.Source) (Stump, error) {
	r, T, err := choose(cfg, src, func(T int) ([]int64, error) { return Scores(Z, y, null, T) })
	if err != nil {
		return Stump{}, err
	}
	return candidate(r, T), nil
}

// choose checks cfg, computes the candidates' scores for its grid of T
// thresholds and draws a candidate r by permute-and-flip at cfg.Epsilon
// with Sensitivity from src (nil means perturb.Secure()).
func choose(cfg Config, src perturb.Source, scores func(T int) ([]int64, error)) (r, T int, err error) {
	return chooseOn(cfg, cfg.grid(), src, scores)
}

// chooseOn is choose on a grid of T thresholds.
func chooseOn(cfg Config, T int, src perturb.Source, scores func(T int) ([]int64, error)) (r, _ int, err error) {
	if err := cfg.Check(); err != nil {
		return 0, 0, err
	}
	q, err := scores(T)
	if err != nil {
		return 0, 0, err
	}
	if src == nil {
		src = perturb.Secure()
	}
	r, err = perturb.PermuteAndFlip(src, q, cfg.Epsilon, Sensitivity)
	return r, T, err
}
