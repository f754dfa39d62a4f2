package modelfile

import (
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
)

// ComponentsCharge is the ledger entry of the private principal
// components (dppca.Components) at the budget b.
func ComponentsCharge(b dp.Budget) dp.Charge {
	return dp.Charge{Step: dppca.Step, Mechanism: perturb.AnalyticGaussian, Epsilon: b.Epsilon, Delta: b.Delta}
}

// ComposeComponents turns the certificate c of the steps after the private
// principal components (the release, and before it the bounds' estimate if
// ComposeEstimate composed it), made with the feature map p whose
// directions p.PCA were computed privately at the budget pca (Analyze
// Gauss on the training rows), into the certificate of the whole pipeline:
// the claim total, the components' charge in the ledger after the bounds'
// (the order of the steps), the directions bound by their SHA-256, and the
// composition stated in the not-covered notes (with, for secure noise,
// the discretization of the Gaussian sampler, and for Standardize rows
// that the sensitivity holds for the standardized rows only). private.Fit
// writes it and Verify rebuilds it the same way.
//
// The triple (bounds, directions, weights) is (total.Epsilon,
// total.Delta)-DP for replace-one neighbours by basic composition with
// adaptively chosen steps (Dwork & Roth 2014, Theorem 3.16 and Section
// 3.5; docs/DESIGN.md, section 6): the directions are pca-DP for every
// value of the bounds (the analytic Gaussian mechanism, Balle & Wang 2018,
// Theorem 8, on the second moments of rows of norm at most 1, whose L2
// sensitivity is dppca.Sensitivity = sqrt(2), then post-processing), and
// for every value of the directions the release that uses them as public
// constants is (total - pca)-DP.
func ComposeComponents(c *release.Certificate, p *preprocess.RowMap, total, pca dp.Budget) error {
	at := 0
	if p.Estimated {
		at = 1 // after the bounds' charge
	}
	at = min(at, len(c.Ledger))
	l, err := dp.NewLedger(total, slices.Insert(slices.Clone(c.Ledger), at, ComponentsCharge(pca))...)
	if err != nil {
		return err
	}
	rest := dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	c.Account(l)
	c.ComponentsSHA256 = p.PCA.SHA256()
	sigma, err := perturb.AnalyticGaussianSigma(pca.Epsilon, pca.Delta, dppca.Sensitivity)
	if err != nil {
		sigma = 0 // Verify refuses such a charge before it composes
	}
	w := p.ComponentWidth()
	sens := "L2 sensitivity sqrt(2) under replace-one"
	if p.Mode == preprocess.Standardize {
		sens += " of the standardized rows only: the rows were standardized with the means and scales of the training split, which are not private, and one row of the table moves every standardized row, so for the table the bound does not hold"
	}
	sampler := ""
	if c.Private {
		sampler = perturb.SecurePCANote
	}
	c.Assumptions = append(c.Assumptions, fmt.Sprintf("the preprocessing's %d principal directions (of rows of %d entries) were computed privately from the training rows at (eps_pca, delta_pca) = (%g, %g) (ledger): "+
		"Analyze Gauss on the rows clip_1(z) (norm at most 1 by the clip; a null row is zero), the analytic Gaussian mechanism with sigma = %.17g on the %d entries of the upper triangle of Z^T Z "+
		"(%s), then the top %d eigenvectors of the noisy matrix (post-processing; the second moments are not centred)%s; "+
		"the release used them as public constants, and the other steps of the ledger spent (%g, %g); together (%g, %g)-DP by basic composition (docs/DESIGN.md, section 6)",
		len(p.PCA.V), w, pca.Epsilon, pca.Delta, sigma, w*(w+1)/2, sens, len(p.PCA.V), sampler, rest.Epsilon, rest.Delta, total.Epsilon, total.Delta))
	return nil
}
