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
// release is (eps, delta)-DP for that relation, because every step is a
// per-row map or depends only on public values:
//
//   - Split: datasets.SplitIndex, a function of (n, TestFrac, Seed) alone,
//     so a replaced row of the table is at most one replaced training row.
//     A stratified split depends on the labels and is refused for a
//     release.
//   - Classes: declared in the Schema, never read from the rows, so K, the
//     release's dimension and the class names in the model file are
//     public. A row whose label is not declared becomes a null row: the
//     zero vector, bias included, whose loss gradient is zero at every w.
//     It keeps n public and is as valid a neighbour as any other row.
//   - Preprocessing: Bounds (clamp to declared bounds, scale to [-1, 1])
//     and None are per-row maps with public constants, followed by the
//     unit-ball map x' = [clip_1(z), 1]/sqrt(2), so kappa = 1 holds for
//     every row. Standardize fits means and scales on the training split:
//     it is outside the guarantee, and the certificate says so with a
//     WARNING.
//   - Settings: fixed before the data is read. The automatic knobs
//     (AutoKnobs) depend only on (n, dim, K, mechanism, budget); the
//     number of passes and every step size are constants of the run; a
//     tolerance stop is data-dependent and no route certifies it.
//   - Training and sensitivity: the stability package's routes, with their
//     neighbour tests; the release: perturb's mechanisms, with the secure
//     source (the gamma-norm noise sampled exactly on a lattice, Laplace and
//     Gaussian by google/differential-privacy's samplers).
//   - Outputs: the model file holds the released weights, the certificate
//     (which binds the weights by their SHA-256), the schema, the
//     preprocessing, the public stability analysis and the split settings.
//     Statistics of the data (metrics, objective, passes done, clipped or
//     null rows) exist only in Diagnostics, which is never written.
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
