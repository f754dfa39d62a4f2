// Package pdp analyses the per-instance differential privacy (pDP) of
// output perturbation: for a data set Z, a release w~ = w_hat(Z) + noise and
// a target z, how much the release reveals about z in particular, rather
// than about the worst row of the worst data set (Yu-Xiang Wang,
// "Per-instance Differential Privacy", Definition 2).
//
// Neighbours: pDP compares Z with Z without one row z_i (and, for a target
// z outside Z, with Z plus z), the unnormalized objective
// J_Z(w) = sum_j l(w, z_j) + (n lambda/2)||w||^2 losing (or gaining) that
// summand and keeping its regularization weight n lambda, Wang's ridge
// setting (the Neighbours constant states it; every report carries it).
// DP certificates elsewhere in stabpriv use replace-one neighbours; reports
// say which relation each number uses.
//
// What it computes:
//
//   - The exact ERM solution (Solve, New): Newton's method with a line
//     search to ||grad F|| <= 1e-10, F = J/n, the objective, Hessians and
//     solver of package glm (its neighbours, glm.Objective.Neighbour, are
//     this package's). The analysis runs on it: the identity below holds
//     at stationary points only.
//   - Per-instance sensitivities Delta(Z, z) = ||w_hat(Z) - w_hat(neighbour)||
//     from Wang's Lemma 13 (the Hessian identity), for smooth losses:
//     a one-step estimate for every row (RemoveAll; Add for a target), the
//     Hessian at w_hat updated by Sherman-Morrison (rank 1) or Woodbury
//     (rank K, softmax), O(K^2 d^2) per row after one factorization; and
//     the exact value (RemoveExact, AddExact, RefineTop), the neighbour's
//     minimizer refined by Newton steps from the one-step estimate and
//     checked against the lemma's integral form by quadrature
//     (glm.Objective.SegmentHess).
//   - The per-instance epsilon of output perturbation at those
//     sensitivities (Mechanism): Laplace and gamma-norm noise exactly,
//     Gaussian noise on the exact (Balle & Wang) curve, and Gaussian noise
//     with a general covariance A^{-1}/gamma (GaussianCov, Wang's eq. 2-3).
//   - Ridge regression in closed form (Ridge): leverage scores and
//     leave-one-out residuals (Wang's eq. 4), one posterior sample (OPS)
//     with its Theorem 14 pDP bound, and AdaOPS (Algorithm 1) with its
//     (eps, delta)-DP guarantee. Three misprints of the paper are corrected
//     and documented where they matter: the lambda = min{0, ...} of
//     Algorithm 1 (max), the sign of Lemma 13's second form, and the tail of
//     Theorem 14's proof (TestOPSBoundHolds checks the corrected bound
//     against the exact privacy-loss distribution).
//   - On-average KL-privacy of a Gaussian release (OnAverageKL; Wang, Lei &
//     Fienberg, "On-Average KL-Privacy and its equivalence to
//     Generalization"), with a simulation of its equality with the
//     generalization gap of posterior sampling in the tests.
//   - A report (Report, NewReport): mean, median, p90, p99 and max of eps
//     over the rows, the moments of Wang's Definition 7, the most exposed
//     rows, against the worst-case DP epsilon of the same release, and a
//     figure in the style of Wang's Figures 1 and 2 (WritePNG).
//   - Wang's bound on the generalization gap from the moments of pDP
//     (GeneralizationBound; Proposition 9 and Corollary 12), in every report.
//   - The public constants a DP summary of the per-instance epsilons rests
//     on (Result.Publishable), for package pdp/publish, whose summary is
//     the one publishable output.
//   - The pDP of an actual release, a model file written by stabpriv train
//     (the command's --model; ReleaseAnalysis, CompareCertified): the
//     training rows are rebuilt from the same table
//     (modelfile.Released.TrainingRows), the objective (loss, lambda,
//     clipping) and the noise (mechanism, scale, delta) are read from the
//     certificate, and each row's eps is compared with the certified eps:
//     the share of rows below it and the worst row. Three statements go
//     with every such report: the release's weights came from SGD and the
//     analysis is of the exact minimizer of the same objective
//     (AnalysedMinimizer; the distance of the published weights to it is
//     given as context), the pDP neighbour is add/remove-one while the
//     certificate is replace-one (NeighboursVersusCertificate), and the
//     values are confidential (Confidential).
//
// Per-example clipping (Config.Clip) of a scalar GLM is analysed exactly:
// the clipped trainer takes gradient steps of a Huberized loss to which
// Lemma 13 applies, and every row's remove-one sensitivity is at most
// min(G, L_z kappa)/(n lambda), half the replace-one bound of route 1
// (docs/DESIGN.md, sections 4 and 8). Clipping a softmax gradient by its
// norm is not the gradient of any loss and is refused.
//
// Hypotheses: Lemma 13 needs a loss and a regularizer that are
// differentiable with absolutely continuous derivatives (Wang's A.1, A.2):
// logistic, softmax, huber, huber-hinge and squared losses with the ridge
// term. An L1 term, or a loss whose smoothness this package cannot verify,
// is refused with ErrNotSmooth (so is a release with l1_ratio > 0); lambda = 0 with rank-deficient rows or
// separable classes gives ErrSingular.
//
// Confidentiality: pDP values are functions of the data set (they single
// out outliers and high-leverage rows). They are for the data curator, to
// understand a release, and must not be published; only the worst-case DP
// epsilon is a public guarantee (the Confidential constant, carried by every
// report).
//
// Why a package of its own: pDP is an analysis of a release, not a way to
// make one. It needs the exact minimizer and second-order information (the
// Hessian and its updates), which the trainer (SGD) and the stability
// routes (data-independent bounds) neither compute nor should depend on,
// and its outputs have a different status: confidential diagnostics rather
// than certificates. Keeping it apart keeps perturb's certificates free of
// data-dependent numbers.
package pdp
