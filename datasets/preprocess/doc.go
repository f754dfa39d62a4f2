// Package preprocess maps data sets to model inputs: the steps between a
// loaded datasets.Dataset and the trainer, following the data flow of the
// design notes (docs/DESIGN.md, "Data flow").
//
// They form a package of their own because they are where the privacy
// assumptions of the data enter, and the two kinds must not be confused:
//
//   - Fitted statistics are functions of the training rows that are not
//     privatized. FitStandardizer fits column means and scales on the
//     training split only and Standardizer.Transform applies them to the
//     training and test splits; FitTruncatedSVD fits a truncated SVD (no
//     centering; exact from X^T X when d is small, randomized otherwise), SVDProjection.Transform projects rows on it, and
//     ReduceSVD fits on a training split and projects both splits. Each adds
//     a Note, which certificates list among the assumptions not covered.
//   - Per-row maps act on each row alone and cost no privacy: ScaleRows
//     clips rows to norm kappa, AddBias appends a constant feature, and
//     UnitBallWithBias (row by row, UnitBallRow) is the paper's
//     x' = [clip_1(x), 1]/sqrt(2), after which every row has norm at most 1
//     with the bias counted (a bias is a constant feature and counts in
//     kappa). The bounds hold on the computed floating-point values.
//
// PrepareUnitBall chains standardization and the unit-ball map as in the
// paper's experiments; the experiments package adds the SVD and the splits.
// Every step returns a new Dataset except ScaleRows, which works in place on
// a matrix. Errors wrap datasets.ErrInvalid; nothing panics on user data.
package preprocess
