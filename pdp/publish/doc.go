// Package publish releases a differentially private summary of the
// per-instance epsilons of an output-perturbation release (package pdp):
// bounds on their quantiles (50, 90, 99 percent and the maximum) and the
// share of training rows whose epsilon is at most given levels, with a
// certificate of its own budget. Per-instance epsilons are statistics of
// the data (they single out outliers), so they may be published only
// through such a release (Redberg & Wang, "Privately Publishable
// Per-instance Privacy", NeurIPS 2021, whose premise this is).
//
// What is summarized. Redberg & Wang publish the per-instance losses of
// objective perturbation by making them a function of public quantities
// (the private output) and of DP estimates of the few data-dependent
// quantities left (the Hessian). For output perturbation of the exact
// ridge minimizer w_hat(Z), the analogous decomposition used here is
// Row: every row's remove-one sensitivity is bounded by
// U_i = ||grad l(w_hat, z_i)|| / (n lambda) (strong convexity), a function of
// the row and of w_hat only, and its epsilon eps_i by phi(U_i), phi the
// release's epsilon at a sensitivity (nondecreasing). The summary is of
// the phi(U_i), so every published bound also bounds the exact eps_i.
//
// Why not the exact eps_i, or counts. Replacing one row moves w_hat by up
// to 2B (B = L/(n lambda)), and so moves every other row's U_j by up to
// rho B with rho = 2 beta_s/(n lambda) (Shift): n values move at once. A
// count of rows below a threshold then has no bounded sensitivity, but
// order statistics move by at most rho B plus one rank. The mechanism is
// the exponential mechanism with the inverse-sensitivity utility (Asi &
// Duchi 2020) for exactly that neighbourhood (Length, CountLength), whose
// sensitivity is 1 by construction (Length's doc comment has the proof),
// sampled over a data-independent grid; its accuracy in units of B is
// about rho (2/eps) ln(grid size), so the summary is useful when n lambda
// is large against beta_s/eps (UsefulNLambda gives the figure; Summarize
// warns from public constants only when it is not). A quantile whose rank
// ceil(q n) + K exceeds n (the maximum always) is not drawn and is
// reported not bounded; quantiles of equal rank share one draw; bounds
// and shares are published as running maxima, so they are monotone.
//
// What it does not cover. The neighbourhood holds every other row fixed:
// rows standardized with statistics of the training rows all move when
// one is replaced, so such a summary (standardized_on_rows) is not
// private for the table and Verify says so. A summary of a model file's
// release binds its weights' SHA-256 and claim (CheckModel checks them
// against the file); the certificate lists what no check can show.
//
// Format. Summary is the summary.dp.json file of stabpriv pdp
// --publish-epsilon: versioned (Format), with its certificate
// (Certificate: budget, ledger, composition, neighbouring relation, what
// it does not cover), written by Write and read by Read, which refuses
// unknown fields. Verify rebuilds everything but the mechanism's raw
// outputs from the published inputs and requires the file to equal it.
//
// The command's verb. NewJob checks the settings of stabpriv pdp (Options,
// in the words of its flags: a *SettingsError for settings or inputs that
// cannot make a run), Job.Run analyses the release (package report) and
// draws the summary without writing anything, Output.WriteDir writes the
// confidential files and the summary, and Output.Print says what they
// hold. Certify is stabpriv certify for a summary file.
package publish
