// Package release makes private releases of linear-model weights: one
// registry of release methods, each in three small interfaces by role
// (Method draws, Tuner chooses the knobs, Verifier rebuilds what was
// published), which the certified pipeline (package private), partitioned
// training, private model selection and the verification of model files
// use without branching on a family of mechanisms.
//
// The methods, in the order Methods lists them:
//
//	laplace, gamma, gaussian, gaussian-analytic
//	        output perturbation: SGD with the stability knobs (package
//	        trainer), its sensitivity by the stability routes (package
//	        stability), noise of package perturb calibrated to it
//	objective, amp
//	        objective perturbation (pure eps) and Approximate Minima
//	        Perturbation ((eps, delta)): the minimizer of the objective plus
//	        a random linear term (package objpert)
//	stump   the private decision stump, chosen by permute-and-flip:
//	        package stump holds it and registers it when imported
//	        (Register)
//	dp-sgd  DP-SGD: Gaussian noise in every step of a Poisson-subsampled
//	        SGD run, accounted by package accountant: package
//	        release/dpsgd holds it and registers it when imported
//
// A release has two steps. Method.Prepare does the work on the rows that
// precedes the noise (training and the stability analysis; or the checks and
// the calibration), and Prepared.Release draws the noise and returns the
// released weights with their Certificate (the claim of package dp with the
// run record). Verifier.Rebuild recomputes that certificate from the
// constants it publishes, which is how a model file is verified.
// Tuner.Auto chooses the knobs from public values alone (for output
// perturbation by package release/autoknobs).
//
// Trained holds the weights of an SGD run behind the privacy boundary:
// they leave it only through a release, at most once (a second release is
// refused with ErrReleased, and the weights are wiped). Weights and
// OneVsRest are the primitives of output perturbation on trained weights,
// with their certificates. Hold is a private selection's hold on several
// prepared releases; Fresh gives a method of another package that makes a
// fresh run for each draw (release/dpsgd) its Release and the hold. Package release/forecast says from the same public
// values, before any row is read, whether a release is expected to be
// useful.
//
// # Ledgers
//
// A prepared release (Prepared.Release) takes no ledger from its caller:
// its certificate carries a ledger of its own, the release's charges (one for output perturbation,
// one per part of objective perturbation's calibration, one for the stump
// and for DP-SGD) taken from a dp.Ledger opened on the budget the release
// was prepared for (Prepared.Budget). That sub-ledger is the right design
// for three reasons. A release stands alone: a program that calls
// Lookup, Prepare and Release (as package experiments does) owns no other
// ledger, and its certificate must still state the account of its claim. A verifier has no caller: Verifier.Rebuild recomputes the
// certificate, its ledger included, from the published constants alone,
// so the ledger must be a function of those constants and of nothing a
// caller held. And the budget keeps one owner: a caller that spends a
// budget in several steps (private.Plan: the bounds' estimate, the
// principal components, then the release or a selection) hands the
// release what its own ledger leaves (dp.Ledger.Left) and then takes the
// certificate's charges from that ledger (dp.Ledger.Spend), which refuses
// any that do not fit; the published ledger is the owner's. A charge is
// thus never written beside the owner's ledger: it is taken from it, in
// the same exact arithmetic (dp.Budget.Covers). Package selection composes
// its steps the same way (the selection's charge with the release's).
//
// Neighbouring relation: replace-one (same n) for every certificate;
// docs/DESIGN.md, sections 5 and 11, hold the proofs.
package release
