// Package clip scales a per-example gradient to L2 norm at most C with the
// rounding of its float64 products accounted for: the exact norm of the
// values a DP-SGD step adds to its sum is at most C, never an ulp or two
// above it, which the sensitivity of the step (C per example) requires.
//
// A gradient is the matrix of products a_k x_j (an outer product: a GLM's
// margin gradient and the row, or a scale factor of 1 and a gradient
// already computed). Bound.Fast accepts a gradient from an estimate of its
// norm far enough below C; Bound.Scale, for the others, scales a (so that
// each product is computed as the caller computes it) until a rigorous
// bound on the exact norm of the rounded products is at most C.
package clip
