package perturb

import (
	"math"

	"github.com/stabpriv/stabpriv/dp"
)

// Calibration is the noise a mechanism adds for a privacy target and a
// sensitivity, in a space of dimension Dim.
type Calibration struct {
	Mechanism dp.Mechanism
	Epsilon   float64
	Delta     float64
	Dim       int
	// L2 is the L2 sensitivity; L1 the L1 sensitivity used by Laplace
	// (the smaller of the given L1 bound and sqrt(Dim)*L2).
	L2, L1 float64
	// Scale is b, theta or sigma (dp.Mechanism.ScaleName).
	Scale float64
}

// Calibrate returns the noise scale of mechanism m for (eps, delta) and the
// sensitivity sens in dimension dim >= 1:
//
//	laplace:           b     = D1/eps, D1 = min(sens.L1, sqrt(dim)*sens.L2)
//	gamma:             theta = D2/eps (the norm of the noise is Gamma(dim, theta))
//	gaussian:          sigma = D2 sqrt(2 ln(1.25/delta))/eps, eps < 1
//	gaussian-analytic: sigma = AnalyticGaussianSigma(eps, delta, D2)
//
// with D2 = sens.L2 (each line is the Calibrate method of the mechanism's
// Noise value). Pure mechanisms need delta = 0, the others delta in (0, 1).
// The sensitivities are for replace-one neighbours. An unknown m gives an
// error wrapping ErrMechanism.
func Calibrate(m dp.Mechanism, eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	n, err := Lookup(m)
	if err != nil {
		return Calibration{}, err
	}
	return n.Calibrate(eps, delta, sens, dim)
}

// ClassicalGaussianSigma returns sigma = l2 sqrt(2 ln(1.25/delta))/eps, the
// classical Gaussian calibration (Dwork & Roth 2014, Theorem A.1), which is
// (eps, delta)-DP for an L2 sensitivity l2 only when eps < 1; for eps >= 1
// it returns an error wrapping ErrClassicalRange.
func ClassicalGaussianSigma(eps, delta, l2 float64) (float64, error) {
	if err := (gaussianNoise{}).CheckBudget(eps, delta); err != nil {
		return 0, err
	}
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return 0, err
	}
	return l2 * math.Sqrt(2*math.Log(1.25/delta)) / eps, nil
}

// EpsilonForScale returns the eps that the noise scale buys for the
// mechanism m (the inverse of Calibrate; compare the paper's Corollary 13:
// at a fixed noise scale, a smaller sensitivity, from a smaller stability
// beta, gives a smaller eps):
//
//	laplace:           eps = D1/b           (sensitivity is the L1 sensitivity D1; delta must be 0)
//	gamma:             eps = D2/theta       (sensitivity is D2; delta must be 0)
//	gaussian:          eps = D2 sqrt(2 ln(1.25/delta))/sigma, an error wrapping ErrClassicalRange if >= 1
//	gaussian-analytic: eps = AnalyticGaussianEpsilon(sigma, delta, D2)
//
// All for replace-one neighbours; each line is the EpsilonForScale method of
// the mechanism's Noise value, whose ScaleSensitivity names the sensitivity
// it takes. An unknown m gives an error wrapping ErrMechanism.
func EpsilonForScale(m dp.Mechanism, scale, sensitivity, delta float64) (float64, error) {
	n, err := LookupTuning(m)
	if err != nil {
		return 0, err
	}
	return n.EpsilonForScale(scale, sensitivity, delta)
}

func sqrtInt(n int) float64 { return math.Sqrt(float64(n)) }
