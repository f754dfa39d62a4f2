// Package report runs the per-instance differential privacy (pDP)
// analysis of package pdp over a whole data set or a trained release and
// reports it: the numbers a data curator reads, the files pdp writes and
// the figure.
//
// What it does:
//
//   - Simulate analyses an output-perturbation release of the exact
//     ridge-regularized minimizer on a data set (a split into training rows
//     and held-out targets, the preprocessing, the noise calibrated to a
//     worst-case DP epsilon or of a fixed scale); SimulateRidge does the
//     same for posterior sampling (OPS, AdaOPS) and the general-covariance
//     Gaussian of ridge regression (package pdp/ridge).
//   - A report (Report, NewReport): mean, median, p90, p99 and max of eps
//     over the rows, the moments of Wang's Definition 7, the most exposed
//     rows, the replace-one epsilons, the held-out targets (refined and
//     bounded like the rows), against the worst-case DP epsilon of the same
//     release, and a figure in the style of Wang's Figures 1 and 2
//     (WriteFigure: the rows, the targets and the replace-one bounds
//     against the DP epsilon and both pDP-for-all lines).
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
//     certificate is replace-one (NeighboursVersusCertificate, with each
//     row's replace-one epsilon beside), and the values are confidential
//     (Confidential).
//   - The public constants of the analysed release for a DP summary of its
//     per-instance epsilons (Result.Publishable, ModelConstants), for
//     package pdp/publish.
//   - The files of the pdp command (Result.WriteDir: pdp.csv, targets.csv,
//     summary.json and pdp.png).
//
// Confidentiality: every number of a Result or a Report but the worst-case
// DP epsilon is a function of the data set and must not be published
// (Confidential); only pdp/publish's summary is.
//
// Why a package of its own: package pdp computes sensitivities and the
// per-instance epsilons of a noise law; this package assembles them into
// a run (data, split, preprocessing, model file), a report and a picture,
// which pdp's numerical core neither needs nor should import (gonum/plot,
// the data sets, the model file).
package report
