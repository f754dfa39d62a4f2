package stump

import (
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/release"
)

// family is a binary class as a certificate names it: the grid of T
// thresholds, and whether the class holds the pairs (Pair) beside the
// one-feature stumps.
type family struct {
	T     int
	pairs bool
}

// currentFamily is the binary class a release draws from for p mapped
// features: DefaultGrid, with the pairs when Pairs(p).
func currentFamily(p int) family { return family{T: DefaultGrid, pairs: Pairs(p)} }

// class returns the certificate's sentence on the family's class for p
// mapped features. Without the pairs it is the sentence of the files
// written before the pairs (binaryClass), so that those files and a
// release of the same class certify alike.
func (f family) class(p int) string {
	if !f.pairs {
		return binaryClass(p, f.T)
	}
	return pairClass(p, f.T)
}

// pairClass is the certificate's sentence on the public binary class with
// the pairs for p mapped features on a grid of T thresholds.
func pairClass(p, T int) string {
	return fmt.Sprintf("the class is public (version 2: one-feature stumps and pairs): the %d mapped features (from the header and the schema) x the %d thresholds t_k = -1 + 2k/%d, k = 1..%d, of the grid (interior points of every column's mapped range [-1, 1], that is of its declared or privately estimated bounds) x 2 signs = %d candidates h(z) = +1 if s (z_j - t) >= 0, else -1, and the %d x %d / 2 = %d pairs (a, b), a < b, of mapped features (pairs for 2 to %d features) x the same thresholds x 2 signs = %d candidates h(z) = +1 if s (fl(z_a - z_b) - t) >= 0, else -1, %d in all; the released weights are the chosen candidate's on [z, 1] (s on feature j, or s on a and -s on b; -s t on the bias; zeros elsewhere), a member of that class",
		p, T, T+1, T, Candidates(p, T), p, p-1, p*(p-1)/2, MaxPairFeatures, PairCandidates(p, T), BinaryCandidates(p, T))
}

// binaryFamily returns the binary class of the stump whose certificate c
// has p mapped features: the one-feature stumps on LegacyGrid or on
// DefaultGrid when c names that class (a model file written before
// DefaultGrid or the pairs), else the current class (currentFamily). The
// class is a public constant either way; reading it from the certificate
// changes no claim, and the weights must be a member of the class named
// (CheckWeights).
func binaryFamily(c *release.Certificate, p int) family {
	if c != nil {
		for _, T := range []int{LegacyGrid, DefaultGrid} {
			if slices.Contains(c.Assumptions, binaryClass(p, T)) {
				return family{T: T}
			}
		}
	}
	return currentFamily(p)
}
