package stability

import "github.com/stabpriv/stabpriv/internal/check"

// EnhancedEpsilon returns eps * delta/baseDelta: Corollary 13 of Watson,
// Rozemberczki & Sarkar (privacy enhancement by stability). A pure
// mechanism whose noise scale was fixed for the baseline sensitivity
// baseDelta to give eps-DP (Laplace with scale Delta_1/eps, or the gamma-norm
// mechanism with density ~ exp(-eps ||b||/Delta_2)) is (eps*delta/baseDelta)-DP
// for a release whose sensitivity is delta, because the privacy loss of these
// mechanisms is linear in the sensitivity: |log p(o - w) - log p(o - w')| <=
// (eps/baseDelta)||w - w'||. With Delta = beta/L the ratio is also the ratio
// of the uniform stabilities. Both sensitivities must be measured in the same
// norm and neighbouring relation. For (eps, delta) Gaussian mechanisms eps is
// not linear in Delta; the perturb package inverts the analytic Gaussian
// mechanism instead. Errors wrap ErrInvalid (eps or baseDelta not finite and
// positive, delta negative).
func EnhancedEpsilon(eps, baseDelta, delta float64) (float64, error) {
	if !check.Positive(eps) {
		return 0, invalid("eps = %v, want finite > 0", eps)
	}
	if !check.Positive(baseDelta) {
		return 0, invalid("baseline sensitivity = %v, want finite > 0", baseDelta)
	}
	if err := checkNonNeg([]string{"sensitivity"}, delta); err != nil {
		return 0, err
	}
	return eps * delta / baseDelta, nil
}
