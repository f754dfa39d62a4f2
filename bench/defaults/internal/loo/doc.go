// Package loo judges two constants of the public rule (package selection)
// leave-one-data-set-out, on the results of the benchmark's tasks loo and
// dpsgd: selection.OutputFirstFactor, which chooses between objective
// perturbation and gamma output perturbation for a binary model at a pure
// budget (OutputFirst, from loo.csv), and selection.DPSGDFirstRows, the
// threshold on n eps above which the rule releases DP-SGD for a multiclass
// model with a delta (DPSGDFirst, from dpsgd.csv). Each writes a Markdown
// table: for every data set held out, the constant fitted on the others
// and the held-out accuracy under it against the current constant's.
package loo

import "github.com/stabpriv/stabpriv/perturb"

// Rule names the run of loo.csv and dpsgd.csv without --mechanism: the
// rule's own release.
const Rule = "rule"

// DPSGDRuns are the runs of dpsgd.csv at each (eps, delta) budget: the
// rule's release (Rule), DP-SGD at its automatic knobs, and, for more than
// two classes, AMP at its automatic lambda: the linear family the rule
// releases for a multiclass model with a delta (selection.ObjectiveSetting),
// which stands for the rule's release where the rule itself released
// DP-SGD (selection.DPSGDFirst).
var DPSGDRuns = []string{Rule, string(perturb.DPSGD), string(perturb.AMP)}
