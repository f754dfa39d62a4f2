package stump

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// Interval is a two-threshold candidate of the multiclass class for K >= 3
// classes: one column cut into three intervals, each with its class,
//
//	h(z) = A            if z_Feature < t1,
//	       min(A, B)    if z_Feature = t1,
//	       B            if t1 < z_Feature < t2,
//	       min(B, C)    if z_Feature = t2,
//	       C            if z_Feature > t2,
//
// t1 = Threshold(Lo, T) < t2 = Threshold(Hi, T), A, B and C three distinct
// classes (a linear model's argmax on one feature can give three classes
// in turn, not one class on both sides of another: Weights).
//
// Why. A one-threshold stump tells at most two classes apart: on Fisher's
// iris (three species ordered by petal length) its best training accuracy
// is 0.68 and the rule's release 0.62 at eps = 1; with the intervals the
// best is 0.93, and the rule's stump refitted from each class on the same
// rows (bench/defaults -task stumpclass, 5 splits) gave 0.62 against 0.89
// at eps 1 and 2 (at 0.5 the 120 training rows cannot pay for the
// intervals: IntervalsUseful), wine 0.66 against 0.76 at eps 1 and 0.81 at
// 2, pbc 0.69 against 0.70; fgl's six classes make the class too large.
// The class is larger, p T (T-1)/2 K (K-1) (K-2) candidates against
// the one-threshold class's p T K (K-1), so it is used only where its
// guarantee still holds (IntervalsUseful) and its size fits
// MaxMultiCandidates.
type Interval struct {
	Feature int
	Lo, Hi  int
	A, B, C int
}

// IntervalCandidates returns the number of interval candidates for p
// columns, T thresholds and K classes, p T (T-1)/2 K (K-1) (K-2) (0 for K
// < 3), as an int64 (it can exceed MaxMultiCandidates by far).
func IntervalCandidates(p, T, K int) int64 {
	if K < 3 || p < 1 || T < 2 {
		return 0
	}
	return int64(p) * int64(T) * int64(T-1) / 2 * int64(K*(K-1)*(K-2))
}

// IntervalsUseful reports whether the multiclass class for eps, n
// training rows, p columns, T thresholds and K classes holds the interval
// candidates: when K >= 3, the two families together have at most
// MaxMultiCandidates candidates, and the guarantee of the larger class is
// not vacuous, (2/eps)(ln N + 1) <= n/K for its N candidates (the
// condition of selection.StumpUseful: the expected excess error over the
// best candidate at most the rows a uniform guess gets right). Every
// input is public (the budget, the published n, the header's p, the
// declared K, the grid), so the class is public too.
func IntervalsUseful(eps float64, n, p, T, K int) bool {
	iv := IntervalCandidates(p, T, K)
	if iv == 0 || !(eps > 0) || n < 1 {
		return false
	}
	N := iv + int64(MultiCandidates(p, T, K))
	if N > MaxMultiCandidates {
		return false
	}
	return 2/eps*(math.Log(float64(N))+1) <= float64(n)/float64(K)
}

// triple returns the position of the distinct classes (a, b, c) among the
// K (K-1) (K-2) ordered triples, in lexicographic order.
func triple(a, b, c, K int) int {
	bb, cc := b, c
	if b > a {
		bb--
	}
	if c > a {
		cc--
	}
	if c > b {
		cc--
	}
	return (a*(K-1)+bb)*(K-2) + cc
}

// tripleAt returns the distinct classes at position r of the triples.
func tripleAt(r, K int) (a, b, c int) {
	a, r = r/((K-1)*(K-2)), r%((K-1)*(K-2))
	b, c = r/(K-2), r%(K-2)
	if b >= a {
		b++
	}
	for _, x := range []int{min(a, b), max(a, b)} {
		if c >= x {
			c++
		}
	}
	return a, b, c
}

// intervalCandidate returns the interval at position r of the interval
// candidates for T thresholds and K classes (the order of IntervalScores:
// column, the threshold pair (Lo, Hi) in lexicographic order, the class
// triple).
func intervalCandidate(r, T, K int) Interval {
	per := K * (K - 1) * (K - 2)
	q, c := r/per, r%per
	pairs := T * (T - 1) / 2
	v := Interval{Feature: q / pairs}
	lo, hi := pairAt(q%pairs, T)
	v.Lo, v.Hi = lo+1, hi+1
	v.A, v.B, v.C = tripleAt(c, K)
	return v
}

// Predict returns the interval's class for the mapped row z.
func (v Interval) Predict(z []float64, T int) int {
	x, t1, t2 := z[v.Feature], Threshold(v.Lo, T), Threshold(v.Hi, T)
	switch {
	case x < t1:
		return v.A
	case x == t1:
		return min(v.A, v.B)
	case x < t2:
		return v.B
	case x == t2:
		return min(v.B, v.C)
	}
	return v.C
}

// Weights returns the interval as a linear model of K outputs on [z, 1]
// (K (p + 1) entries, row-major, the bias last in each row): row A is
// -e_Feature + t1 e_bias, row B is all zero, row C is e_Feature -
// t2 e_bias, every other row -1 on the bias; every other entry is +0.
//
// The reader's margins in float64 (trainer.Model.Margins, a sum from +0
// in column order; the products by 0 and +-1 are exact) are m_A =
// fl(t1 - z_j), m_B = +0, m_C = fl(z_j - t2) and -1, each rounded
// difference of the sign of the exact one (zero only for equal operands).
// As t1 < t2, m_A > 0 only for z_j < t1 (then m_C < 0), m_C > 0 only for
// z_j > t2, and the argmax taking the first of equal margins returns A
// below t1, min(A, B) at t1 (m_A = m_B = 0 > m_C), B between, min(B, C) at
// t2 and C above: the interval's decision everywhere.
func (v Interval) Weights(p, T, K int) []float64 {
	w := make([]float64, K*(p+1))
	for c := range K {
		if c != v.B {
			w[c*(p+1)+p] = -1
		}
	}
	a, c := w[v.A*(p+1):(v.A+1)*(p+1)], w[v.C*(p+1):(v.C+1)*(p+1)]
	a[v.Feature], a[p] = -1, 0+Threshold(v.Lo, T) // +0, not -0, at t = 0
	c[v.Feature], c[p] = 1, 0-Threshold(v.Hi, T)
	return w
}

// IntervalFromWeights returns the interval whose weights (Weights) are w
// for K classes, p = len(w)/K - 1 columns and T thresholds, or an error
// wrapping ErrInput when w is not, bit for bit, the weights of a member
// of the interval class.
func IntervalFromWeights(w []float64, K, T int) (Interval, error) {
	if err := checkClasses(K, T); err != nil {
		return Interval{}, err
	}
	if K < 3 || len(w)%K != 0 || len(w)/K < 2 {
		return Interval{}, fmt.Errorf("%w: %d weights for %d classes: an interval has K >= 3 outputs of p + 1 inputs", ErrInput, len(w), K)
	}
	d := len(w) / K
	p := d - 1
	v := Interval{Feature: -1, A: -1, B: -1, C: -1}
	for c := range K {
		row := w[c*d : (c+1)*d]
		switch j := firstNonzero(row[:p]); {
		case j < 0 && row[p] == 0 && v.B < 0:
			v.B = c
		case j >= 0 && row[j] == 1 && v.C < 0:
			v.C, v.Feature = c, j
		}
	}
	if v.B < 0 || v.C < 0 {
		return Interval{}, fmt.Errorf("%w: no all-zero output or no output with a feature weight +1: not an interval", ErrInput)
	}
	var err error
	if v.A, err = negatedOutput(w, K, v.Feature, v.C); err != nil {
		return Interval{}, err
	}
	if v.Lo, err = gridIndex(w[v.A*d+p], T); err != nil {
		return Interval{}, err
	}
	if v.Hi, err = gridIndex(-w[v.C*d+p], T); err != nil {
		return Interval{}, err
	}
	if v.Lo >= v.Hi {
		return Interval{}, fmt.Errorf("%w: thresholds %v and %v are not increasing", ErrInput, Threshold(v.Lo, T), Threshold(v.Hi, T))
	}
	if err := canonical(w, v.Weights(p, T, K)); err != nil {
		return Interval{}, err
	}
	return v, nil
}

// firstNonzero returns the index of the first nonzero entry of x, or -1.
func firstNonzero(x []float64) int {
	for j, v := range x {
		if v != 0 {
			return j
		}
	}
	return -1
}

// gridIndex returns the k with Threshold(k, T) == t exactly (the grid's
// points are the multiples of 2/(T+1) in (-1, 1)), or an error wrapping
// ErrInput.
func gridIndex(t float64, T int) (int, error) {
	k := int(math.Round((t + 1) * float64(T+1) / 2))
	if k < 1 || k > T || Threshold(k, T) != t {
		return 0, fmt.Errorf("%w: threshold %v is not a point of the grid of %d thresholds", ErrInput, t, T)
	}
	return k, nil
}

// IntervalScores returns the utility of every interval candidate (in the
// order of intervalCandidate) for the rows of MultiScores: the number of
// counted rows each classifies as their class. Each column is sorted once,
// the rows below and at every threshold counted by class, and each
// candidate scored from those counts: O(p n log n + p T^2 K^3). It refuses
// a class of more than MaxMultiCandidates candidates.
func IntervalScores(Z mat.Matrix, y []float64, null []bool, K, T int) ([]int64, error) {
	if err := checkClasses(K, T); err != nil {
		return nil, err
	}
	if err := checkMultiRows(Z, y, null, K, T); err != nil {
		return nil, err
	}
	n, p := Z.Dims()
	if N := IntervalCandidates(p, T, K); N > MaxMultiCandidates {
		return nil, fmt.Errorf("%w: %d interval candidates, more than %d", ErrInput, N, MaxMultiCandidates)
	}
	total := make([]int64, K)
	for i := range n {
		if null == nil || !null[i] {
			total[int(y[i])]++
		}
	}
	per := K * (K - 1) * (K - 2)
	scores := make([]int64, IntervalCandidates(p, T, K))
	col := make([]cell, 0, n)
	lt, eq := make([]int64, T*K), make([]int64, T*K) // rows below and at t_k, by class
	r := 0
	for j := range p {
		col = classColumn(col, Z, y, null, j)
		clear(lt)
		clear(eq)
		a := 0
		for k := range T {
			t := Threshold(k+1, T)
			if k > 0 {
				copy(lt[k*K:(k+1)*K], lt[(k-1)*K:k*K])
				for c := range K {
					lt[k*K+c] += eq[(k-1)*K+c]
				}
			}
			for ; a < len(col) && col[a].v < t; a++ {
				lt[k*K+col[a].c]++
			}
			for ; a < len(col) && col[a].v == t; a++ {
				eq[k*K+col[a].c]++
			}
		}
		for k1 := range T {
			for k2 := k1 + 1; k2 < T; k2++ {
				for x := range per {
					ca, cb, cc := tripleAt(x, K)
					below := lt[k1*K+ca]
					at1 := eq[k1*K+min(ca, cb)]
					mid := lt[k2*K+cb] - lt[k1*K+cb] - eq[k1*K+cb]
					at2 := eq[k2*K+min(cb, cc)]
					above := total[cc] - lt[k2*K+cc] - eq[k2*K+cc]
					scores[r] = below + at1 + mid + at2 + above
					r++
				}
			}
		}
	}
	return scores, nil
}

// MultiMember is a member of the multiclass class: a one-threshold stump
// (Multi) or an interval. Exactly one of Multi and Interval is set.
type MultiMember struct {
	Multi    *Multi
	Interval *Interval
}

// Predict returns the member's class for the mapped row z.
func (m MultiMember) Predict(z []float64, T int) int {
	if m.Interval != nil {
		return m.Interval.Predict(z, T)
	}
	return m.Multi.Predict(z, T)
}

// Weights returns the member's K outputs on [z, 1].
func (m MultiMember) Weights(p, T, K int) []float64 {
	if m.Interval != nil {
		return m.Interval.Weights(p, T, K)
	}
	return m.Multi.Weights(p, T, K)
}

// MultiMemberFromIndex returns the candidate at position r of the
// multiclass class for p columns, T thresholds and K classes, with or
// without the intervals: the one-threshold stumps first (MultiScores'
// order), then the intervals (IntervalScores'). Errors wrap ErrInput.
func MultiMemberFromIndex(r, p, T, K int, intervals bool) (MultiMember, error) {
	if err := checkClasses(K, T); err != nil {
		return MultiMember{}, err
	}
	N := int64(MultiCandidates(p, T, K))
	if intervals {
		N += IntervalCandidates(p, T, K)
	}
	if r < 0 || int64(r) >= N {
		return MultiMember{}, fmt.Errorf("%w: candidate %d of %d", ErrInput, r, N)
	}
	if m := MultiCandidates(p, T, K); r >= m {
		v := intervalCandidate(r-m, T, K)
		return MultiMember{Interval: &v}, nil
	}
	m := multiCandidate(r, T, K)
	return MultiMember{Multi: &m}, nil
}

// MultiMemberFromWeights returns the member whose weights are w
// (MultiFromWeights, or IntervalFromWeights when intervals is true), or an
// error wrapping ErrInput that gives the reason of the member w is shaped
// as: an interval's when intervals is true and an output is zero (its
// middle class), a one-threshold stump's otherwise.
func MultiMemberFromWeights(w []float64, K, T int, intervals bool) (MultiMember, error) {
	m, err := MultiFromWeights(w, K, T)
	if err == nil {
		return MultiMember{Multi: &m}, nil
	}
	if !intervals {
		return MultiMember{}, err
	}
	v, ierr := IntervalFromWeights(w, K, T)
	switch {
	case ierr == nil:
		return MultiMember{Interval: &v}, nil
	case zeroOutput(w, K):
		return MultiMember{}, ierr
	}
	return MultiMember{}, err
}

// zeroOutput reports whether one of the K outputs of w is all zero (+0 or
// -0), as an interval's middle class is and no one-threshold stump's is.
func zeroOutput(w []float64, K int) bool {
	if K < 1 || len(w)%K != 0 {
		return false
	}
	d := len(w) / K
	for c := range K {
		if firstNonzero(w[c*d:(c+1)*d]) < 0 {
			return true
		}
	}
	return false
}

// MultiClassScores returns the utility of every candidate of the
// multiclass class (MultiScores', then IntervalScores' when intervals is
// true), in the order of MultiMemberFromIndex.
func MultiClassScores(Z mat.Matrix, y []float64, null []bool, K, T int, intervals bool) ([]int64, error) {
	s, err := MultiScores(Z, y, null, K, T)
	if err != nil || !intervals {
		return s, err
	}
	v, err := IntervalScores(Z, y, null, K, T)
	if err != nil {
		return nil, err
	}
	return append(s, v...), nil
}

// FitMultiClass chooses a member of the multiclass class for the rows of
// FitMulti, with the intervals where IntervalsUseful(cfg.Epsilon, n, p,
// T, K) says so (n the rows, null ones included: the published count), by
// permute-and-flip at cfg.Epsilon with the utility MultiClassScores,
// drawing from src (nil means perturb.Secure()).
//
// # Privacy
//
// FitMulti's argument over the larger class: whether it holds the
// intervals is a function of public values (eps, n, p, T, K), and for
// replace-one neighbours an interval's count, like a stump's, is a sum of
// per-row terms in {0, 1} (the replaced row is classified correctly or
// not), so every score moves by at most Sensitivity = 1 and the choice is
// cfg.Epsilon-DP; the weights are a fixed function of the index.
//
// Errors wrap ErrInput (before any draw) or perturb.ErrSource.
func FitMultiClass(Z mat.Matrix, y []float64, null []bool, K int, cfg Config, src perturb.Source) (MultiMember, error) {
	T := cfg.Grid
	if T == 0 {
		T = MultiGrid
	}
	n, p := Z.Dims()
	iv := IntervalsUseful(cfg.Epsilon, n, p, T, K)
	r, T, err := chooseOn(cfg, T, src, func(T int) ([]int64, error) { return MultiClassScores(Z, y, null, K, T, iv) })
	if err != nil {
		return MultiMember{}, err
	}
	return MultiMemberFromIndex(r, p, T, K, iv)
}
