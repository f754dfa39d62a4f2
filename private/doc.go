// Package private is the certified pipeline of stabpriv: one call, Fit, from
// the rows a user hands over to a released model whose privacy claim is
// about those rows.
//
// Why a package of its own: the lower packages each prove one step
// (trainer trains, stability bounds the sensitivity of a run, perturb adds
// calibrated noise), and each step's claim is about its own input. A
// promise about a user's file needs every step between the file and the
// release inside one proof, and the glue between the steps (split, class
// set, preprocessing, settings, what is printed or written beside the
// weights) is exactly where such promises break. This package owns that
// glue, so the command line, the experiments and the examples call it
// instead of repeating it, and its name says what crossing it means.
//
// # The guarantee
//
// Neighbouring inputs are two Tables with the same header and the same
// number of rows that differ in one row, every row well-formed (every
// feature cell a finite number), fitted with the same Options. Fit's
// release is (eps, delta)-DP for that relation, because every step between
// the table and the noise is a per-row map or depends only on public
// values: the split by position (datasets.SplitIndex; a stratified split is
// refused for a release), the classes declared in the Schema (a row with
// another label is a null row), the public preprocessing (Bounds and None;
// Standardize is outside the guarantee and the certificate says so with a
// WARNING), settings fixed before the data is read (AutoKnobs depends only
// on (n, dim, K, mechanism, budget)), the stability routes and perturb's
// mechanisms with the secure source, and outputs that hold only released or
// public values (statistics of the data exist only in Diagnostics, which
// is never written). docs/DESIGN.md, section 6, gives the argument step by
// step.
//
// The budget: a Fit has one private step, the release, which spends the
// whole Budget; the certificate's ledger lists it. A seeded noise source
// (perturb.Seeded) makes a reproducible release whose certificate says it
// is not private: its seed is published.
//
// # Release once
//
// TrainRows returns a Trained handle to the trained weights. Release
// consumes them: it wipes them from every copy of the handle, and a second
// Release is refused with ErrReleased. Simulate makes seeded, non-private
// releases of the same weights for experiments; Reveal hands out the
// weights in the clear for non-private baselines and then refuses Release.
//
// # Model files
//
// WriteModel and ReadModel read and write the format ModelFormat
// ("stabpriv-model/2"); ReadModel refuses fields it does not know. Verify
// recomputes the claim from what the file publishes: the weights' hash, the
// stability route and Delta from the run constants, the noise scale from
// (mechanism, eps, delta, Delta), the ranges and the ledger. Predict and
// PredictProba apply a released model to raw rows.
package private
