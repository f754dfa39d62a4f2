// Package exactgauss adds exact Gaussian noise to float64 values and rounds
// the result to a power-of-two lattice: the sampler behind perturb.Secure's
// AddGaussian.
//
// Mechanism. For sigma > 0 with sigma in [2^(e-1), 2^e), let lambda =
// 2^(e - LatticeBits - 1) (2^-21 sigma < lambda <= 2^-20 sigma, Lattice).
// AddSnapped releases, for each value w,
//
//	M(w) = lambda round((w + sigma Z) / lambda),  Z ~ N(0, 1) exactly,
//
// written as the float64 nearest to that lattice point (exact while the
// integer is below 2^53; +0 for zero). Nothing else of the draw leaves the
// package.
//
// Claim. Z is drawn with exactly the standard normal law, and the integer
// round((w + sigma Z)/lambda) is computed exactly, so M(w) is a fixed
// function (the rounding, fixed by sigma alone) of w + sigma Z, which has
// exactly the law of the Gaussian mechanism. A rounding fixed in advance
// is post-processing: whatever (eps, delta) the Gaussian mechanism with
// this sigma has for a sensitivity (Balle & Wang 2018, Theorem 8; or the
// accountant of a composition of such steps), M has it too, with no
// allowance for floating-point rounding, and the floating-point attacks of
// Mironov (2012, "On significance of the least significant bits for
// differential privacy") do not apply: they exploit a float64 result
// w + sigma Z' whose set of possible values depends on w through the
// rounding of the arithmetic, which never happens here. The added noise
// M(w) - w is sigma Z plus a rounding error of at most lambda/2 = 2^-21
// sigma; its variance is sigma^2 plus about lambda^2/12. The running time
// varies with the draw (rejection loops, rare exact refinements): a timing
// side channel is outside the claim.
//
// Exact sampling. |Z| is drawn by rejection from a proposal of 2047 pieces
// of width 2^-8 covering [0, 2047/256) and a tail of unit pieces, each of
// constant height at least f(x) = exp(-x^2/2) on it (Walker's alias table
// picks a piece with probability exactly proportional to its integer
// weight, from 43 bits of a 64-bit word whose other 21 bits start the
// uniform y below); x is uniform on the piece and accepted when a uniform
// y satisfies y H < F(x), F a fixed dyadic multiple of f, which gives the
// accepted x the density proportional to f. The test is decided by a flat
// squeeze on the first 21 bits of y, then by two lines bounding F on the
// piece (integer comparisons with the first 64 bits of x and y; together
// they settle all but about 1e-5 of the draws), and otherwise by brackets
// of exp computed in integer
// arithmetic (alternating Taylor series with outward rounding) at growing
// precision, drawing further words of x and y until they decide. No test
// decides on a rounded value: every bound in the tables is built with those
// brackets and checked by the tests. The sign is a fair bit. The rounding
// of w + sigma Z to the lattice is an integer computation on an interval
// of the value (x known to 64 bits, more if the interval straddles a
// rounding point). This is the interval refining of Haney et al. (2022),
// "Precision-based attacks and interval refining"; Canonne, Kamath &
// Steinke (2020) and Karney (2016) sample Gaussian laws exactly in the
// same spirit with von Neumann's method, which costs about 30 random words
// a deviate where the proposal here takes about two.
//
// Randomness. Every bit comes from a ChaCha8 generator (math/rand/v2, a
// cryptographically strong generator) keyed by the caller; perturb keys
// each with 32 bytes of crypto/rand. The words are drawn ahead, 64 at a
// time, into a buffer and used in the generator's order, each once: the
// output is the same function of the generator's stream as with a word
// drawn at each use (a Sampler holds up to 63 words not used yet, as
// ChaCha8 holds its own block). A deviate takes about 2.02 words: the
// proposal's word, the first word of the fraction, a sign bit; about
// 0.3% of them take more (the lines' squeeze, a rejection), 3e-6 the
// exact brackets. A Sampler is not safe for concurrent use.
//
// Cost. The usual deviate (a core piece accepted by the flat squeeze and
// rounded in int64 arithmetic) runs inline in AddSnapped with no branch on
// the draw but the squeeze and the rounding's check; the generator's
// words are about half of its time (BenchmarkChaCha8Word,
// BenchmarkAddSnapped_D1000's words/coord).
package exactgauss
