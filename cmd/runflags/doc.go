// Package runflags holds the command-line flags of a training run that
// stabpriv train and stabpriv-beam share: the schema (label, classes,
// bounds, feature map), the knobs, the seed and split, the mechanism, the
// budget and the noise source, and the log level. Both commands read and
// check them with the same code, so a flag means the same in both. ReadData
// reads --data and Run.Fit runs the fit the flags ask for (partition.Fit
// for a partitioned fit, private.Fit otherwise), so that stabpriv train
// only parses, calls and prints.
//
// The files follow the checks: runflags.go (the flags, Run and Check),
// privacy.go (mechanism, budget, selection, noise, --pca), knobs.go (the
// SGD knobs, the split, the privacy ID), schema.go (classes, bounds,
// feature map, projection) and fit.go (reading the data and fitting).
//
// It is the commands' shared flag code, not part of the library: it sits
// under cmd/ beside them (an ordinary package, not cmd/internal, so that
// beam/cmd/stabpriv-beam and the programs under bench/ can import it), and
// a Go program that trains privately uses private.Fit with a dp.Budget
// instead.
package runflags
