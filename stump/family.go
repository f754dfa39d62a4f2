package stump

import (
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/release"
)

// family is a class as a certificate names it: the grid of T thresholds,
// for two classes whether the class holds the pairs (Pair) beside the
// one-feature stumps, for more whether it holds the intervals (Interval)
// beside the one-threshold stumps.
type family struct {
	T         int
	pairs     bool
	intervals bool
}

// currentFamily is the class a release at b from n rows (the published
// count) of p mapped features draws from, for K classes (0: a binary
// stump): DefaultGrid, with the pairs where PairsUseful; for K > 0
// MultiGrid, with the intervals where IntervalsUseful. Public values
// only.
func currentFamily(b dp.Budget, n, p, K int) family {
	if K > 0 {
		return family{T: MultiGrid, intervals: IntervalsUseful(b.Epsilon, n, p, MultiGrid, K)}
	}
	return family{T: DefaultGrid, pairs: PairsUseful(b.Epsilon, n, p, DefaultGrid)}
}

// class returns the certificate's sentence on the family's class for p
// mapped features and K classes (0: binary). Without the pairs or the
// intervals it is the sentence of the files written before them
// (binaryClass, multiClass), so that those files and a release of the
// same class certify alike.
func (f family) class(p, K int) string {
	switch {
	case K > 0 && f.intervals:
		return intervalClass(p, f.T, K)
	case K > 0:
		return multiClass(p, f.T, K)
	case f.pairs:
		return pairClass(p, f.T)
	}
	return binaryClass(p, f.T)
}

// multiClass is the certificate's sentence on the public class of the
// one-threshold multiclass stumps for p mapped features, T thresholds and
// K classes.
func multiClass(p, T, K int) string {
	return fmt.Sprintf("the class is public: the %d mapped features (from the header and the schema) x the %d thresholds t_k = -1 + 2k/%d, k = 1..%d, of the grid (interior points of every column's mapped range [-1, 1], that is of its declared or privately estimated bounds) x the %d ordered pairs (a, b) of distinct classes among the %d = %d candidates h(z) = b if z_j > t, a if z_j < t, the first of a and b (in the schema's order) if z_j = t; the released weights are the chosen candidate's %d outputs on [z, 1] (class b: 1 on feature j and -t on the bias; class a: their negation; every other class: -1 on the bias; zeros elsewhere), whose argmax (the first of equal margins) is h, a member of that class", p, T, T+1, T, K*(K-1), K, MultiCandidates(p, T, K), K)
}

// intervalClass is the certificate's sentence on the public multiclass
// class with the intervals.
func intervalClass(p, T, K int) string {
	return multiClass(p, T, K) + fmt.Sprintf("; and (version 2: intervals) the %d features x the %d x %d / 2 pairs t1 < t2 of the same thresholds x the %d ordered triples (a, b, c) of distinct classes = %d candidates h(z) = a if z_j < t1, b if t1 < z_j < t2, c if z_j > t2, the first of the two classes at a threshold (outputs: class a -1 on feature j and t1 on the bias, class b zero, class c 1 on feature j and -t2 on the bias, every other class -1 on the bias), %d in all; the intervals are in the class because (2/eps)(ln %d + 1) <= n/K, a function of public values",
		p, T, T-1, K*(K-1)*(K-2), IntervalCandidates(p, T, K), int64(MultiCandidates(p, T, K))+IntervalCandidates(p, T, K), int64(MultiCandidates(p, T, K))+IntervalCandidates(p, T, K))
}

// pairClass is the certificate's sentence on the public binary class with
// the pairs for p mapped features on a grid of T thresholds.
func pairClass(p, T int) string {
	return fmt.Sprintf("the class is public (version 2: one-feature stumps and pairs): the %d mapped features (from the header and the schema) x the %d thresholds t_k = -1 + 2k/%d, k = 1..%d, of the grid (interior points of every column's mapped range [-1, 1], that is of its declared or privately estimated bounds) x 2 signs = %d candidates h(z) = +1 if s (z_j - t) >= 0, else -1, and the %d x %d / 2 = %d pairs (a, b), a < b, of mapped features (pairs for 2 to %d features) x the same thresholds x 2 signs = %d candidates h(z) = +1 if s (fl(z_a - z_b) - t) >= 0, else -1, %d in all; the released weights are the chosen candidate's on [z, 1] (s on feature j, or s on a and -s on b; -s t on the bias; zeros elsewhere), a member of that class",
		p, T, T+1, T, Candidates(p, T), p, p-1, p*(p-1)/2, MaxPairFeatures, PairCandidates(p, T), BinaryCandidates(p, T))
}

// certifiedFamily returns the class of the stump whose certificate c
// has n rows, p mapped features and K classes (0: binary): the
// one-feature stumps on LegacyGrid or DefaultGrid, or the one-threshold
// multiclass stumps, when c names that class (a model file written before
// DefaultGrid, the pairs or the intervals, or a release where they did
// not pay), else the current class (currentFamily). The class is a public
// constant either way; reading it from the certificate changes no claim,
// and the weights must be a member of the class named (CheckWeights).
func certifiedFamily(c *release.Certificate, n, p, K int) family {
	if c == nil {
		return currentFamily(dp.Budget{}, n, p, K)
	}
	if K > 0 {
		if slices.Contains(c.Assumptions, multiClass(p, MultiGrid, K)) {
			return family{T: MultiGrid}
		}
	} else {
		for _, T := range []int{LegacyGrid, DefaultGrid} {
			if slices.Contains(c.Assumptions, binaryClass(p, T)) {
				return family{T: T}
			}
		}
	}
	return currentFamily(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, n, p, K)
}
