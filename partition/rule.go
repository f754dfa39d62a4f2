package partition

import (
	"fmt"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
)

// RuleMechanism returns the mechanism of the public rule of a partitioned
// fit for the budget b: the output family of the rule of a single fit
// (selection.OutputFamily), output perturbation of the averaged SGD weights
// with the gamma-norm noise for a pure budget and with the analytic
// Gaussian mechanism with delta > 0, each at its automatic knobs
// (release.Tuner.Auto at the n training rows of the layout).
//
// Why not selection.RuleSetting. The rule of a single fit may pick
// objective perturbation or AMP, which perturb the objective of one
// minimization over all the rows, or DP-SGD (selection.DPSGDFirst), whose
// noise is added inside one run: a partitioned fit releases the average
// of the partitions' SGD runs (Fit), which only an output perturbation
// (release.Method.SGD) can release. The rule's choice between the two
// families is then made: what is left of it is the output family, which
// depends on the budget alone. The choice reads no row and costs nothing;
// the release is the one that naming the mechanism gives (Fit's guarantee
// with that mechanism).
//
// Per privacy ID (c rows per ID) it is selection.RuleSetting's mechanism
// for a group of c rows, and its automatic lambda is
// autoknobs.GroupScale(c) = sqrt(c) times the one for rows at the same n
// (private.Plan.Config): the rule's trade-off at the group's sensitivity,
// c times a row's (docs/DESIGN.md, section 12.1).
func RuleMechanism(b dp.Budget) dp.Mechanism { return selection.OutputFamily(b) }

// UseRule returns the options a partitioned fit runs with: when opts asks
// for the public rule (Options.Select the rule or the zero
// selection.Config, and no Mechanism), the options that name RuleMechanism
// of the budget with the automatic knobs (Options.Auto), after the checks
// private.NewPlan makes of a fit by the rule (no lambda, clipping or other
// knob the rule chooses, a budget it can spend); otherwise opts unchanged.
// The result is what NewPlan and the Beam pipeline's configuration use, so
// a fit by the rule and a fit that names the rule's mechanism release the
// same model file.
//
// A private selection (selection.Holdout or selection.RandomStopping) is
// refused with an error wrapping private.ErrOptions: both are proven for a
// single fit. A holdout selection tunes on a part of the training rows and
// releases on the rest (parallel composition), with candidates that
// include objective perturbation and AMP; random stopping releases the
// best of several runs on the same rows. Neither is the average of the
// partitions' SGD runs, released once, that Fit's guarantee covers.
func UseRule(schema datasets.Schema, budget dp.Budget, opts private.Options) (private.Options, error) {
	if opts.Select == nil {
		return opts, nil
	}
	if m := opts.Select.Method; !m.IsRule() {
		return opts, fmt.Errorf("%w: a partitioned fit cannot run the private selection %q, proven for a single fit; use one of %s or the rule %s",
			private.ErrOptions, m, release.SGDList(), selection.Rule)
	}
	// The checks of a fit by the rule: the selection's configuration, no
	// knob the rule chooses, a valid budget.
	if _, err := private.NewPlan(schema, budget, opts); err != nil {
		return opts, err
	}
	opts.Mechanism, opts.Auto, opts.Select = RuleMechanism(budget), true, nil
	return opts, nil
}
