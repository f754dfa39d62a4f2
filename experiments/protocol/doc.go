// Package protocol prepares the data of the paper's experiments (Watson,
// Rozemberczki & Sarkar, "Stability Enhanced Privacy and Applications in
// Private SGD") as the paper does, for package experiments.
//
// New loads a data set by name (adult, lastfm, gene_all, a CSV file, or a
// matrix and its labels: Matrix) and Protocol.Split prepares each split of
// an experiment (split s of a sweep with the seed Seed+s) as the paper does
// (docs/DESIGN.md, section 9):
//
//  1. a stratified 80/20 split of the rows, seeded;
//  2. a truncated SVD to 32 components fitted on the training rows (LastFM
//     is reduced by its loader, on all nodes; gene_all's 12,625 probes are
//     reduced like Adult's one-hot columns);
//  3. column standardization fitted on the training rows;
//  4. every row clipped to the unit ball and a constant feature appended,
//     x' = [x, 1]/sqrt(2) (preprocess.UnitBallWithBias), so kappa = 1 holds
//     with the bias counted.
//
// The SVD and standardization statistics are not privatized: the notes of
// every output say so. Before step 4, RowScale may divide the standardized
// rows by sqrt(d), a fixed map; by default (ScaleClipOnly) it does not, which
// measured slightly better on Adult (see RowScale).
//
// The task follows the classes: two, the logistic loss (Protocol.Loss);
// more, as LastFM's 18, the softmax loss, one K x d model released once.
//
// Errors wrap ErrConfig (bad settings) or ErrNoData (a missing data
// directory or files), or come from the loaders and the preprocessing.
package protocol
