package release

import (
	"fmt"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
)

// FromReport turns the stability report of a training run into the
// perturb.Sensitivity that Weights calibrates its noise to, and the notes a
// certificate must carry:
//
//	perturb.Sensitivity{L2: rep.Delta, Beta: rep.Beta, Route: rep.Chosen.String(), Neighbouring: rep.Neighbours}
//
// The notes are the report's assumptions, followed by the formula and the
// citation of the chosen route; pass them on as Config.Notes (with
// any notes of the data pipeline appended).
//
// Neighbouring relation: replace-one, as stated by the report (both runs
// share the seed for the SGD routes); the bound is taken from the report as
// given, whose route conditions stability.Analyze checked.
//
// When no route applies (rep.Chosen is 0: a user-supplied graph model, a
// non-convex loss, mu = 0 with a step above the convex limit, ...), FromReport
// returns an error wrapping perturb.ErrSensitivity and the error of rep.Best, which
// wraps stability.ErrNoRoute and joins every route's reason; nothing may be
// released then. A nil report, or a chosen bound that is not finite and
// positive, also gives an error wrapping perturb.ErrSensitivity.
func FromReport(rep *stability.Report) (perturb.Sensitivity, []string, error) {
	if rep == nil {
		return perturb.Sensitivity{}, nil, fmt.Errorf("%w: nil stability report", perturb.ErrSensitivity)
	}
	best, err := rep.Best()
	if err != nil {
		return perturb.Sensitivity{}, nil, fmt.Errorf("%w: no sensitivity route applies to the run, nothing may be released: %w", perturb.ErrSensitivity, err)
	}
	sens := perturb.Sensitivity{
		L2:           rep.Delta,
		Beta:         rep.Beta,
		Route:        rep.Chosen.String(),
		Neighbouring: rep.Neighbours,
	}
	if err := sens.Validate(); err != nil {
		return perturb.Sensitivity{}, nil, fmt.Errorf("route %v: %w", rep.Chosen, err)
	}
	notes := append([]string(nil), rep.Assumptions...)
	notes = append(notes, fmt.Sprintf("sensitivity route %v: Delta = %s (%s)", best.Route, best.Formula, best.Citation))
	return sens, notes, nil
}
