// Package ridge is ridge regression in closed form, the setting of
// Section 4 of Yu-Xiang Wang, "Per-instance Differential Privacy", and its
// posterior-sampling releases:
//
//   - Ridge, FitRidge and FitReg: the solution, the leverage scores and
//     the leave-one-out residuals (Wang's eq. 4), hence every row's exact
//     remove-one sensitivity; Target does the same for a row outside the
//     data set.
//   - One posterior sample (OPS: SampleOPS) with its Theorem 14 pDP bound
//     (OPSEpsilon, OPSEpsilonTarget), and its on-average KL-privacy in
//     closed form (OPSOnAverageKL; Wang, Lei & Fienberg, Definition 2).
//   - AdaOPS (Algorithm 1), with its (eps, delta)-DP guarantee and the
//     largest gamma_n its argument allows.
//
// The paper's misprints are corrected and documented where they matter:
// Algorithm 1's lambda = min{0, ...} (max), the tail and the sign of eq. 8
// in Theorem 14 (TestOPSLossExact, TestOPSBoundHolds), and Lemma 18's
// constant sqrt(2/h) where 1/sqrt(h) holds.
//
// Neighbours are package pdp's (pdp.Neighbours): Z and Z without one row,
// the ridge weight N lambda kept. Errors wrap pdp.ErrInput or
// pdp.ErrSingular. The per-row values are confidential, as every pDP value
// is (package pdp); a sample of SampleOPS or AdaOPS is the release.
//
// Why a package of its own: ridge regression needs none of the Hessian
// identity's machinery of package pdp (its Hessian does not depend on the
// weights, so the one-step update is exact), and its releases are drawn
// from a posterior rather than an output perturbation.
package ridge
