// Package experiments runs the experiments of Watson, Rozemberczki & Sarkar,
// "Stability Enhanced Privacy and Applications in Private SGD", on the data
// sets of the datasets package: one function per figure, each writing CSV,
// JSON and PNG outputs.
//
// # Protocol
//
// Every experiment prepares its data by the paper's protocol (package
// experiments/protocol: a data set by name, a CSV file or a matrix and its
// labels; seeded stratified splits, a truncated SVD, standardization and
// the unit-ball map fitted on each training split, not privatized).
// Binary data sets are fitted with the logistic loss; LastFM's 18 classes
// with the softmax loss as one K x d model, released once.
//
// # Sweeps
//
// Sweep (Figures 1 and 2) trains once per (split, lambda) by permutation SGD
// with the step min(1/beta, 1/(mu t)) (trainer.BoundedInverseT), for which
// the strongly convex SGD route of the stability package gives the
// sensitivity Delta <= 2L/(mu n) with no convergence condition. It then
// releases the weights once per eps with noise calibrated to Delta
// (release.Trained.Simulate: seeded noise on a copy of the trained weights
// per eps; each release stands alone with its own certificate; the rows
// compare alternative releases, they are not a composition), and once at a
// fixed noise scale, reporting
// the eps the scale buys at each lambda (perturb.EpsilonForScale; the
// paper's Corollary 13). Summarize picks the best lambda per eps on the
// test accuracy, as the paper's tables do; that choice is optimistic and
// not itself private.
//
// The training-time mechanisms objective and amp (package objpert) put
// their noise in the objective, so the job of a (split, lambda) trains them
// once per eps with seeded noise (the method of release.Lookup prepares the
// rows, Method.Prepare, and Prepared.Release draws perturb.Seeded noise: not
// private), on the ridge objective minimized exactly; a lambda below a
// mechanism's floor runs once at the floor (objpert.RaiseToFloor). Their
// rows sit in the same results, summary and figures as the
// output-perturbation ones.
//
// With SweepConfig.Select, each split and eps also gets one privately
// selected row (mode Selected): selection.Select chooses a setting and a
// pure mechanism among candidates trained on the training part of a
// selection.ValidationSplit of the split's training rows
// (selection.FromTrained for output perturbation, selection.FromRows for
// objective perturbation), scored on its validation part, inside the whole
// eps (docs/DESIGN.md, section 12).
//
// FeatSel (Figures 3 and 5) thresholds the released weights with featsel's
// dynamic threshold (set from the noise scale) and with static thresholds,
// and compares the private selection with the non-private one.
//
// All noise is drawn from perturb.Seeded sources derived from the sweep's
// seed: the results are reproducible, and the certificates say "seeded: not
// for release". Training runs on runtime.GOMAXPROCS(0) workers; results come
// in a fixed order. Progress is logged through a logrus.FieldLogger.
//
// Errors wrap ErrConfig (bad settings), protocol.ErrConfig (bad settings
// of the data) or protocol.ErrNoData (missing data directory or files), or
// come from the loaders, the trainer, the stability analysis and the
// releases; nothing panics on user data (gonum/plot panics
// are recovered into errors).
package experiments
