// Package linalg holds the small dense-algebra helpers that packages pdp,
// pdp/report and pdp/ridge share: vector norms summed in index order (so
// that their results are the same bits in both), a Cholesky factorization
// that refuses an ill-conditioned matrix, and the selection of the first
// k of n items in a stable order without sorting them all (Top).
package linalg

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// MaxCond is the largest condition number of a Hessian treated as
// invertible: beyond it, rounding (about 1e-16 relative) would leave the
// solution with no correct digit.
const MaxCond = 1e13

// Factor returns the Cholesky factorization of h, or an error wrapping
// singular (the caller's sentinel) when h is not numerically positive
// definite; what names h in the message. With lambda = 0 that happens
// when the rows do not span R^d or, for a classification loss, when the
// classes are separable: lambda > 0 makes h positive definite.
func Factor(h *mat.SymDense, what string, singular error) (*mat.Cholesky, error) {
	var c mat.Cholesky
	if !c.Factorize(h) {
		return nil, fmt.Errorf("%w: %s is not positive definite: rows that do not span R^d or separable classes; use lambda > 0", singular, what)
	}
	if cond := c.Cond(); !(cond < MaxCond) {
		return nil, fmt.Errorf("%w: %s has condition number %.3g (> %g): rows near a subspace or separable classes; use lambda > 0", singular, what, cond, MaxCond)
	}
	return &c, nil
}

// Norm2 returns the Euclidean norm of v, its squares summed in order.
func Norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// Norm1 returns the sum of the absolute values of v.
func Norm1(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	return s
}

// Top returns the first k of the indices 0..n-1 in the order before (a
// strict weak order), ties kept in index order, as a stable sort would
// put them: by insertion into a sorted list of k, O(n log k) comparisons
// while few items enter it (items in random order), and by a stable sort
// of them all when k is more than an eighth of n.
func Top(n, k int, before func(i, j int) bool) []int {
	k = max(0, min(k, n))
	if k == 0 {
		return []int{}
	}
	if 8*k > n {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		sort.SliceStable(all, func(a, b int) bool { return before(all[a], all[b]) })
		return all[:k:k]
	}
	top := make([]int, 0, k+1)
	for i := range n {
		if len(top) == k && !before(i, top[k-1]) {
			continue
		}
		// After every index that i does not come before: stable.
		pos := sort.Search(len(top), func(j int) bool { return before(i, top[j]) })
		top = append(top, 0)
		copy(top[pos+1:], top[pos:])
		top[pos] = i
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}
