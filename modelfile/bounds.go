package modelfile

import (
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
)

// BoundsCharge is the ledger entry of the private estimate of the feature
// bounds (privbounds.Estimate) at epsBounds.
func BoundsCharge(epsBounds float64) dp.Charge {
	return dp.Charge{Step: privbounds.Step, Mechanism: perturb.Laplace, Epsilon: epsBounds}
}

// ComposeEstimate turns the certificate c of a release calibrated to
// (eps - epsBounds, delta), made with the feature map p whose bounds were
// estimated privately at epsBounds (privbounds.Estimate on the training
// rows), into the certificate of the pair (bounds, weights): the claim
// (eps, delta), the bounds' charge first in the ledger, the bounds listed
// (EstimatedBounds) and the composition stated in the not-covered notes.
// private.Fit writes it and Verify rebuilds it the same way.
//
// The pair is (eps, delta)-DP for replace-one neighbours by basic
// composition with an adaptively chosen second step (docs/DESIGN.md,
// section 6): the bounds are epsBounds-DP (the Laplace mechanism on the
// histogram, Dwork, McSherry, Nissim & Smith 2006, and post-processing),
// and for every value of the bounds the release that uses them as public
// constants is (eps - epsBounds, delta)-DP, the release of declared
// bounds.
func ComposeEstimate(c *dp.Certificate, p *preprocess.RowMap, eps, epsBounds float64) {
	rel := c.Epsilon
	c.Epsilon = eps
	c.Ledger = append([]dp.Charge{BoundsCharge(epsBounds)}, c.Ledger...)
	numeric := p.NumericFeatures()
	c.EstimatedBounds = make([]dp.FeatureBound, len(numeric))
	for j, f := range numeric {
		c.EstimatedBounds[j] = dp.FeatureBound{Column: f, Lo: p.Lo[j], Hi: p.Hi[j]}
	}
	c.Assumptions = append(c.Assumptions, fmt.Sprintf("the feature bounds were estimated privately from the training rows at eps_bounds = %g (ledger), "+
		"and the release, calibrated to eps_release = %g, used them as public constants; the bounds and the weights together are (%g, %g)-DP by basic composition "+
		"(eps_bounds + eps_release; the bounds are eps_bounds-DP, and for every value of them the release is (eps_release, delta)-DP; docs/DESIGN.md, section 6). "+
		"The bounds are coarse (powers of two) and clamp the few values outside them", epsBounds, rel, eps, c.Delta))
}

// boundsEpsilon returns the epsilon the private estimate of r's feature
// bounds spent (the ledger's first entry), or 0 when the bounds were not
// estimated; an error when the file is inconsistent.
func boundsEpsilon(r *Released) (float64, error) {
	c := r.Certificate
	if !r.Preprocessing.Estimated {
		return 0, nil
	}
	if len(c.Ledger) < 2 {
		return 0, errors.New("the preprocessing's bounds were estimated, but the ledger has no charge for them before the release")
	}
	e := c.Ledger[0].Epsilon
	if !(e > 0 && e < c.Epsilon) {
		return 0, fmt.Errorf("the bounds' charge is eps = %v of the claim's %v: it must leave some for the release", e, c.Epsilon)
	}
	return e, nil
}

// releasePart returns the certificate of the release alone: c calibrated to
// eps - epsBounds, with the release's part of the ledger (c itself when
// epsBounds is 0).
func releasePart(c *dp.Certificate, epsBounds float64) *dp.Certificate {
	if epsBounds == 0 {
		return c
	}
	s := *c
	s.Epsilon = c.Epsilon - epsBounds
	s.Ledger = c.Ledger[1:]
	s.EstimatedBounds = nil
	return &s
}

// ReleaseBudget returns the budget the release's noise was calibrated to:
// the certificate's claim less the private estimate of the bounds, if any.
// The zero Budget for a file without a certificate.
func (r *Released) ReleaseBudget() dp.Budget {
	c := r.Certificate
	if c == nil {
		return dp.Budget{}
	}
	e, err := boundsEpsilon(r)
	if err != nil {
		e = 0
	}
	p := releasePart(c, e)
	return dp.Budget{Epsilon: p.Epsilon, Delta: p.Delta}
}
