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
//     a one-step value for every row (RemoveAll, or RemoveNorms without
//     the vectors; AddAll for targets, ReplaceAll and FlipAll for
//     replace-one neighbours), the Hessian at
//     w_hat updated by Sherman-Morrison or Woodbury, O(K^2 d^2) per row after
//     one factorization, with a proven error bound when the loss's curvature
//     is Lipschitz (losses.Constants.LipHess) and lambda > 0
//     (Diff.ErrBound, oneStepBound: the gradient's Taylor remainder over the
//     strong convexity n lambda), so that every value is exact, an upper
//     bound or a labelled estimate (Diff.Kind, Diff.Upper); and the exact
//     value (RemoveExact, AddExact, RefineTop, RefineTopTargets), the
//     neighbour's minimizer refined by simplified Newton steps from the
//     one-step value (RefineTop: 8 neighbours in lockstep, their
//     gradients from one pass over the rows, glm.Grads) and checked
//     against the lemma's integral form by conjugate gradients with
//     products of the mean segment Hessian (glm.Objective.SegmentHessVec;
//     RefineTop checks its most exposed row).
//   - Replace-one per row (the DP certificates' relation): a bound over
//     every replacement in the domain, the removal's bound plus the largest
//     move an added row can cause (ReplaceBound), and the move of the
//     row's label-flipped copy (FlipAll), which shows that replace-one is
//     not within a multiple of remove-one (ReplaceRelation).
//   - The data-dependent "pDP for all" of Wang's Figure 1: a bound, given
//     the data set, on the sensitivity of every possible target
//     (Analysis.AddBoundAll), beside the data-independent worst case
//     (WorstCaseSensitivity).
//   - The per-instance epsilon of output perturbation at those
//     sensitivities (PrivacyLoss): Laplace and gamma-norm noise exactly,
//     Gaussian noise on the exact (Balle & Wang) curve (the bits of
//     perturb.AnalyticGaussianEpsilon, found in a sixth of its steps), and Gaussian noise
//     with a general covariance A^{-1}/gamma (GaussianCov, Wang's eq. 2-3).
//   - Ridge regression in closed form, one posterior sample (OPS) and
//     AdaOPS are package pdp/ridge's. The paper's misprints are corrected
//     and documented where they matter: here the sign of Lemma 13's second
//     form and Lemma 4's gamma for sqrt(gamma) and missing sqrt 2
//     (TestGaussianCovLemma4); those of Theorem 14, Algorithm 1 and
//     Lemma 18 there.
//   - On-average KL-privacy (Wang, Lei & Fienberg, "On-Average KL-Privacy
//     and its equivalence to Generalization", Definition 2: replace-one by
//     a fresh draw): of a Gaussian release by one-step replace-one
//     differences with held-out rows as the fresh draws (OnAverageKLFresh,
//     OnAverageKL), and of posterior sampling in closed form
//     (ridge.Ridge.OPSOnAverageKL), tested against the closed form of the
//     posterior of a mean and, by simulation, against the generalization
//     gap (their Theorem 4).
//   - Wang's bound on the generalization gap from the moments of pDP
//     (GeneralizationBound; Proposition 9 and Corollary 12), in every report.
//   - The public constants a DP summary of the per-instance epsilons rests
//     on (PublicConstants, Publishable), for package pdp/publish, whose
//     summary is the one publishable output.
//   - The statistics of the per-instance epsilons over the rows (Summarize,
//     Moments).
//
// The analysis of a whole data set or of a model file, its report, files
// and figure are package pdp/report's (Simulate, AnalyzeRelease).
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
// epsilon is a public guarantee (the report.Confidential constant, carried
// by every report of package pdp/report).
//
// Why a package of its own: pDP is an analysis of a release, not a way to
// make one. It needs the exact minimizer and second-order information (the
// Hessian and its updates), which the trainer (SGD) and the stability
// routes (data-independent bounds) neither compute nor should depend on,
// and its outputs have a different status: confidential diagnostics rather
// than certificates. Keeping it apart keeps perturb's certificates free of
// data-dependent numbers.
package pdp
