// Package privbounds estimates the range of every feature column of a
// table privately, for a release whose user has no public bounds to
// declare.
//
// The estimate (Estimate) is the approximate-bounds algorithm of Google's
// differential-privacy library (ApproxBounds, cc/algorithms/approx-bounds.h,
// used there to bound the inputs of its bounded aggregations): a histogram
// of each column over a fixed, public logarithmic grid of bins (powers of
// two of either sign and a bin around zero), Laplace noise added to every
// count (Dwork, McSherry, Nissim & Smith 2006), and, as post-processing of
// the noisy counts, the outer boundaries of the lowest and highest bins
// whose noisy count passes a threshold. The bounds are powers of two (or
// their negatives): a coarse range, which is all a clamp-and-scale feature
// map needs, at a cost that does not grow with the precision asked.
//
// Neighbouring relation: replace-one on the rows (same number of rows, one
// row's features changed). Replacing a row moves, in each column, at most
// one count down by 1 and one count up by 1, so the histogram of all d
// columns has L1 sensitivity 2d, and Laplace noise of scale 2d/eps makes
// the noisy histogram, hence the bounds, eps-DP (Dwork & Roth 2014,
// Theorem 3.6 and Proposition 2.1 on post-processing). Google's version
// counts add/remove neighbours (sensitivity 1 per column); replace-one
// doubles it.
//
// How a release then uses the bounds as if they were public, and why the
// pair (bounds, release) is (eps_bounds + eps_release, delta_release)-DP, is
// in docs/DESIGN.md, section 6 (basic composition of an adaptively chosen
// second mechanism).
package privbounds
