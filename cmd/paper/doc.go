// Package paper holds the commands of stabpriv that run the paper's
// experiments, sweep (Figures 1 and 2, the knob sweep and private
// selection) and featsel (Figures 3 and 5): their flags, the checks of
// those flags and the calls into package experiments. It is command
// code, not part of the library: a Go program runs experiments.Sweep and
// experiments.FeatSel instead.
//
// Every error of the command line is a *runflags.UsageError (exit 2); an
// input that is missing or does not read wraps protocol.ErrNoData or
// the datasets error (exit 4), as the table "Exit statuses" in
// docs/GUIDE.md says.
package paper

import "github.com/stabpriv/stabpriv/experiments/protocol"

// ErrNoData is protocol.ErrNoData: a named data set that is not in its
// directory (exit 4).
var ErrNoData = protocol.ErrNoData
