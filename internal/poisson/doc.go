// Package poisson draws the batches of DP-SGD by Poisson sampling,
// exactly and in expected O(qn + 1) time a step: every row of n in every
// step independently with probability q = Rate(n, b), b/n rounded down to
// a multiple of 2^-64, the law the privacy analysis of the subsampled
// Gaussian mechanism assumes (package accountant takes that q).
//
// A Sampler does not flip a coin per row: it draws the gaps between the
// rows drawn, i.i.d. Geometric(q) over the coins of all the steps, each
// from one uniform U by inversion, G = max{k : U < p^k} with p = 1 - q.
// Every comparison U < p^k is exact: a float64 table of p^k rounded
// outward settles it from U's first 53 bits but about once in 2^44, and
// math/big settles the rest, at a precision doubled up to p^k's exact
// value. Floating point (a table of log2) only guesses G, which decides
// which comparisons are made, never the result. The proof that the law is
// that of independent Bernoulli(q) coins is on Sampler.
//
// trainer.TrainDPSGD draws its batches with a Sampler (trainer.PoissonSampler),
// and so does the DP-SGD of a program's own Gorgonia graph (package
// graph): the same coins give the same batches.
package poisson
