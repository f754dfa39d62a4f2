// Package dpsgd releases the weights of a DP-SGD run, Poisson-subsampled
// SGD with every example's gradient clipped and Gaussian noise in every
// step (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang 2016,
// "Deep Learning with Differential Privacy", Algorithm 1), calibrated by
// the accountants of package accountant to a replace-one (eps, delta).
//
// # The release method
//
// Importing the package registers DP-SGD's release method with package
// release under the name perturb.DPSGD (release.Register), as package
// stump registers the decision stump, so that the certified pipeline
// (package private), the public rule and private model selection (package
// selection) and the verification of model files (package modelfile)
// reach it as they reach every method; those packages import it. Prepare
// checks the budget, the settings and the rows and finds the noise
// multiplier; Release trains (trainer.Trainer.TrainDPSGD) with the noise
// and the sampling coins of its source and returns the weights with their
// certificate; Rebuild and CheckWeights verify what a model file
// publishes. The method takes the SGD knobs of release.KnobTaker (expected
// batch, passes, step, schedule, clipping norm, averaging), and its Auto
// sets them from n alone.
//
// # Calibration
//
// A run of n rows in expected batches of b for a number of passes samples
// every row in each of T = passes ceil(n/b) steps with probability q =
// trainer.PoissonRate(n, b). Calibrate finds the smallest noise multiplier
// sigma for which the tighter of two accountants, the PLD accountant
// (PLDAccountant, at eps/2 (1 - 1e-7): a margin for another build's
// rounding) and RDP with the improved conversion (RDPAccountant), gives
// (eps/2, delta/(1 + exp(eps/2))) under add/remove-one neighbours: (eps,
// delta) under replace-one neighbours, the relation of every certificate
// of the module, by group privacy of two (Neighbours). Certificate writes
// the certificate of such a run, Coins gives the sampling coins of a
// source; a DP-SGD run outside this package (package graph) calibrates,
// draws and certifies through them as the method does.
//
// # A program's own graph
//
// The DP-SGD of a program's own Gorgonia graph (graph.TrainDPSGD) carries
// the certificate of the method with a run record of its own (GraphRun,
// loss GraphLoss) and notes of its own (GraphNotes); RebuildGraph rebuilds
// it from the published inputs for the verification of its release file
// (modelfile.GraphRelease).
//
// # Verification
//
// certify recalibrates the noise multiplier by the file's accountant from
// the budget, n, the batch and the passes. Another build (GOAMD64=v3,
// GOARCH=386) may find a noise multiplier about 1e-7 of it away and an eps
// 5e-8 of it away: a file's noise multiplier within 1e-6 of the rebuilt
// one is taken when the accountant at it, on the verifying machine, meets
// the add/remove target, and a file's add/remove eps only within 1e-7 of
// the accountant's eps at that noise multiplier (so a file cannot
// understate it by more). An edited noise multiplier, step count, sample
// rate, batch, passes or clipping norm gives another certificate.
package dpsgd
