// Package datasets loads labelled data sets and prepares them for private
// training.
//
// A Dataset holds the feature matrix, the labels encoded for a loss (-1/+1
// for binary tasks, 0..K-1 for multiclass tasks, real values for regression),
// the feature and class names, and Notes: what a loader or a preprocessing
// step did that a reader of the results must know. Certificates list the
// notes among the assumptions not covered by the privacy guarantee.
//
// The generic path is ReadCSV (a header row, numeric features, one label
// column) and Default, the embedded Wisconsin diagnostic breast cancer set.
// Split divides a data set into seeded, optionally stratified, training and
// test sets.
//
// Preprocessing follows the data flow of the design notes:
//
//   - FitStandardizer fits column statistics on the training split only;
//     Transform applies them to the training and test splits. The statistics
//     themselves are not privatized, and the notes say so.
//   - ScaleRows clips rows to norm kappa, a per-row map that costs no
//     privacy; UnitBallWithBias is the paper's x' = [x, 1]/sqrt(2) map, after
//     which every row has norm at most 1, the bias included (a bias is a
//     constant feature and counts in kappa).
//
// Every function returns a new Dataset and leaves its input unchanged,
// except ScaleRows, which works in place on a matrix. Errors wrap ErrFormat
// (bad file content) or ErrInvalid (bad arguments); nothing panics on user
// data.
package datasets
