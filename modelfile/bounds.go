package modelfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/release"
)

// BoundsCharge is the ledger entry of the private estimate of the feature
// bounds (privbounds.Estimate) at epsBounds.
func BoundsCharge(epsBounds float64) dp.Charge {
	return dp.Charge{Step: privbounds.Step, Mechanism: perturb.Laplace, Epsilon: epsBounds}
}

// CentresCharge is the ledger entry of the private estimate of the
// feature centres on the log scale (privbounds.EstimateCentres) at
// epsBounds.
func CentresCharge(epsBounds float64) dp.Charge {
	return dp.Charge{Step: privbounds.CentreStep, Mechanism: perturb.PermuteAndFlipName, Epsilon: epsBounds}
}

// CentresChargePCA is CentresCharge for a fit with private principal
// components, which reads every column as numbers: its step is
// privbounds.CentreStepPCA.
func CentresChargePCA(epsBounds float64) dp.Charge {
	c := CentresCharge(epsBounds)
	c.Step = privbounds.CentreStepPCA
	return c
}

// estimateCharge is the ledger entry of the estimate that gave p's
// bounds: the centres for a map on the log scale (CentresChargePCA when p
// has principal components; in the words of step when not empty: an
// earlier version's, preSteps), the ranges otherwise.
func estimateCharge(p *preprocess.RowMap, epsBounds float64, step string) dp.Charge {
	if p.Log > 0 {
		c := CentresCharge(epsBounds)
		if p.PCA != nil {
			c = CentresChargePCA(epsBounds)
		}
		if step != "" {
			c.Step = step
		}
		return c
	}
	return BoundsCharge(epsBounds)
}

// ComposeEstimate turns the certificate c of a release calibrated to
// (eps - epsBounds, delta), made with the feature map p whose bounds were
// estimated privately at epsBounds (privbounds.Estimate on the training
// rows), into the certificate of the pair (bounds, weights): the claim
// (eps, delta), the bounds' charge first in the ledger, the bounds listed
// (EstimatedBounds) and the composition stated in the not-covered notes.
// private.Fit writes it and Verify rebuilds it the same way. The bounds'
// charge and the release's are taken from a ledger of (eps, delta); an
// error means they do not fit in it, and c is then unchanged.
//
// The pair is (eps, delta)-DP for replace-one neighbours by basic
// composition with an adaptively chosen second step (docs/DESIGN.md,
// section 6): the bounds are epsBounds-DP (the Laplace mechanism on the
// histogram, Dwork, McSherry, Nissim & Smith 2006, and post-processing),
// and for every value of the bounds the release that uses them as public
// constants is (eps - epsBounds, delta)-DP, the release of declared
// bounds.
func ComposeEstimate(c *release.Certificate, p *preprocess.RowMap, eps, epsBounds float64) error {
	return composeEstimate(c, p, eps, epsBounds, "")
}

// composeEstimate is ComposeEstimate with the centres' step in the words
// of step (estimateCharge).
func composeEstimate(c *release.Certificate, p *preprocess.RowMap, eps, epsBounds float64, step string) error {
	l, err := dp.NewLedger(dp.Budget{Epsilon: eps, Delta: c.Delta}, append([]dp.Charge{estimateCharge(p, epsBounds, step)}, c.Ledger...)...)
	if err != nil {
		return err
	}
	rel := c.Epsilon
	c.Account(l)
	numeric := p.NumericFeatures()
	c.EstimatedBounds = make([]dp.FeatureBound, len(numeric))
	for j, f := range numeric {
		c.EstimatedBounds[j] = dp.FeatureBound{Column: f, Lo: p.Lo[j], Hi: p.Hi[j]}
	}
	coarse := "The bounds are coarse (powers of two) and clamp the few values outside them"
	if p.Log > 0 {
		coarse = "The bounds are a centre m and a spread s per column (lo = m - s, hi = m + s) on a coarse grid (powers of two), read on the signed log scale g((x - m)/s), which squashes the tails"
	}
	c.Assumptions = append(c.Assumptions, fmt.Sprintf("the feature bounds were estimated privately from the training rows at eps_bounds = %g (ledger), "+
		"and the release, calibrated to eps_release = %g, used them as public constants; the bounds and the weights together are (%g, %g)-DP by basic composition "+
		"(eps_bounds + eps_release; the bounds are eps_bounds-DP, and for every value of them the release is (eps_release, delta)-DP; docs/DESIGN.md, section 6). "+
		"%s", epsBounds, rel, eps, c.Delta, coarse))
	if p.Log > 0 {
		return nil // the spreads are powers of two by construction
	}
	if w := ImplausibleBounds(numeric, p.Lo, p.Hi); w != "" {
		c.Assumptions = append(c.Assumptions, w)
	}
	return nil
}

// ImplausibleBounds returns a warning naming the columns whose privately
// estimated range looks like the noise's doing (privbounds.Implausible:
// it reaches the estimate's grid end, or it is far wider than the other
// columns'), with their ranges and what to do, or "" when there is none.
// features are the columns of lo and hi. It reads the published bounds
// alone (post-processing, at no cost), so private.Fit logs it and the
// certificate's notes carry it (ComposeEstimate), where Verify rebuilds it.
func ImplausibleBounds(features []string, lo, hi []float64) string {
	bad := privbounds.Implausible(lo, hi)
	if len(bad) == 0 {
		return ""
	}
	cols := make([]string, len(bad))
	for i, j := range bad {
		cols[i] = fmt.Sprintf("%s [%g, %g]", features[j], lo[j], hi[j])
	}
	return fmt.Sprintf("the privately estimated range of %s reaches the end of the estimate's grid (+-2^%d) or is more than %d times as wide as the median of the other columns': "+
		"most likely the noise lifted an empty bin far from the data (probability up to %g per estimate), and the feature map then shrinks the column's values by the range's excess, so the model can hardly use it; "+
		"declare the bounds (--bounds FILE, --bounds-all lo,hi) and train again",
		strings.Join(cols, ", "), privbounds.MaxExp, privbounds.WideFactor, privbounds.Failure)
}

// preRelease is what the private steps before the release spent: the
// bounds' estimate (eps only) and the principal components.
type preRelease struct {
	bounds float64
	pca    dp.Budget
	// steps is the number of their ledger entries, first in the ledger.
	steps int
	// centreStep is an earlier version's words for the centres' step when
	// the file has them: privbounds.CentreStepV1 without text columns
	// (which that version could not make), or privbounds.CentreStep with
	// principal components (written before CentreStepPCA); empty
	// otherwise.
	centreStep string
}

// preSteps returns the budget the private steps before the release spent:
// the private estimate of r's feature bounds (the ledger's first entry,
// when the preprocessing says they were estimated) and the private
// principal components (the next entry, when the preprocessing has
// them); an error when the file is inconsistent (a missing charge, or one
// that leaves nothing for the release): the charge of the principal
// directions must be positive in eps and delta, and leave some of the
// claim's (eps, delta), after the bounds' eps, for the release.
func preSteps(r *Released) (preRelease, error) {
	c := r.Certificate
	var pre preRelease
	p := r.Preprocessing
	if p.Estimated {
		if len(c.Ledger) < 2 {
			return pre, errors.New("the preprocessing's bounds were estimated, but the ledger has no charge for them before the release")
		}
		e := c.Ledger[0].Epsilon
		if !(e > 0 && e < c.Epsilon) {
			return pre, fmt.Errorf("the bounds' charge is eps = %v of the claim's %v: it must leave some for the release", e, c.Epsilon)
		}
		pre.bounds, pre.steps = e, 1
		switch step := c.Ledger[0].Step; {
		case step == privbounds.CentreStepV1 && !p.Text,
			step == privbounds.CentreStep && p.PCA != nil:
			pre.centreStep = step
		}
	}
	if p.PCA != nil {
		if len(c.Ledger) < pre.steps+2 || c.Ledger[pre.steps].Step != dppca.Step || c.Ledger[pre.steps].Mechanism != perturb.AnalyticGaussian {
			return pre, errors.New("the preprocessing has private principal directions, but no charge for them (Analyze Gauss) before the release")
		}
		ch := c.Ledger[pre.steps]
		if !(ch.Epsilon > 0 && ch.Epsilon < c.Epsilon-pre.bounds && ch.Delta > 0 && ch.Delta < c.Delta) {
			return pre, fmt.Errorf("the principal directions' charge (%v, %v) must be positive and leave some of (%v, %v) after the bounds' eps %v", ch.Epsilon, ch.Delta, c.Epsilon, c.Delta, pre.bounds)
		}
		pre.pca = dp.Budget{Epsilon: ch.Epsilon, Delta: ch.Delta}
		pre.steps++
	}
	return pre, nil
}

// releasePart returns the certificate of the release alone: c calibrated to
// the claim less what the steps before it spent, rounded down as
// private.Plan does (dp.Rest), with the release's part of the ledger (c
// itself when there were none).
func releasePart(c *release.Certificate, pre preRelease) *release.Certificate {
	if pre.steps == 0 {
		return c
	}
	s := *c
	// Rounded as composePre composes: the components' part, then the
	// bounds' from that rest (one rounding can leave an ulp more).
	s.Epsilon = dp.Rest(dp.Rest(c.Epsilon, pre.pca.Epsilon), pre.bounds)
	s.Delta = dp.Rest(c.Delta, pre.pca.Delta)
	s.Ledger = c.Ledger[pre.steps:]
	s.EstimatedBounds, s.ComponentsSHA256 = nil, ""
	return &s
}

// ReleaseBudget returns the budget the release's noise was calibrated to:
// the certificate's claim less the private steps before it (the estimate
// of the bounds, the principal components), if any. The zero Budget for a
// file without a certificate.
func (r *Released) ReleaseBudget() dp.Budget {
	c := r.Certificate
	if c == nil {
		return dp.Budget{}
	}
	pre, err := preSteps(r)
	if err != nil {
		pre = preRelease{}
	}
	p := releasePart(c, pre)
	return dp.Budget{Epsilon: p.Epsilon, Delta: p.Delta}
}

// composePre composes the certificate c of a release with the private
// steps before it (pre), for the feature map p and the claim total: what
// private.Fit (through ComposePipeline) and Verify do.
func composePre(c *release.Certificate, p *preprocess.RowMap, total dp.Budget, pre preRelease) error {
	if pre.bounds > 0 {
		if err := composeEstimate(c, p, dp.Rest(total.Epsilon, pre.pca.Epsilon), pre.bounds, pre.centreStep); err != nil {
			return err
		}
	}
	if p.PCA != nil {
		return ComposeComponents(c, p, total, pre.pca)
	}
	return nil
}

// ComposePipeline turns the certificate c of a release, made with the
// feature map p, into the certificate of the pipeline whose claim is
// total: with the private estimate of the bounds at epsBounds (when p's
// bounds are estimated; ComposeEstimate) and the private principal
// components at pca (when p has them; ComposeComponents), in that order.
// private.Fit writes it and Verify rebuilds it the same way. An error means
// the charges do not fit in total (dp.Ledger).
func ComposePipeline(c *release.Certificate, p *preprocess.RowMap, total dp.Budget, epsBounds float64, pca dp.Budget) error {
	pre := preRelease{pca: pca}
	if p.Estimated {
		pre.bounds = epsBounds
	}
	return composePre(c, p, total, pre)
}
