package perturb

import (
	"github.com/stabpriv/stabpriv/dp"

	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/perturb/marginal"
)

// Gaussian adds N(0, sigma^2) to every coordinate with the classical
// sigma = D2 sqrt(2 ln(1.25/delta))/eps: (eps, delta)-DP for eps < 1 only
// (Dwork & Roth 2014, Theorem A.1).
const Gaussian = dp.Gaussian

// gaussianNoise is the Noise of Gaussian.
type gaussianNoise struct{}

func (gaussianNoise) Name() dp.Mechanism { return Gaussian }
func (gaussianNoise) Pure() bool         { return false }
func (gaussianNoise) ScaleName() string  { return "sigma" }
func (gaussianNoise) Citation() string {
	return "Dwork & Roth (2014), The Algorithmic Foundations of Differential Privacy, Theorem A.1 (eps < 1)"
}

// CheckBudget refuses eps >= 1 with ErrClassicalRange.
func (n gaussianNoise) CheckBudget(eps, delta float64) error {
	if err := checkBudget(n, eps, delta); err != nil {
		return err
	}
	if eps >= 1 {
		return fmt.Errorf("%w: eps = %v", ErrClassicalRange, eps)
	}
	return nil
}

// Calibrate returns sigma = D2 sqrt(2 ln(1.25/delta))/eps, eps < 1.
func (n gaussianNoise) Calibrate(eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	c, err := newCalibration(n, eps, delta, sens, dim)
	if err != nil {
		return Calibration{}, err
	}
	s, err := ClassicalGaussianSigma(eps, delta, c.L2)
	return withScale(n, c, s, err)
}

// EpsilonForScale returns eps = D2 sqrt(2 ln(1.25/delta))/sigma, an error
// wrapping ErrClassicalRange if it is >= 1.
func (n gaussianNoise) EpsilonForScale(scale, sensitivity, delta float64) (float64, error) {
	if err := checkInverse(n, scale, sensitivity, delta); err != nil {
		return 0, err
	}
	eps := sensitivity * math.Sqrt(2*math.Log(1.25/delta)) / scale
	if eps >= 1 {
		return 0, fmt.Errorf("%w: sigma = %v buys eps = %v", ErrClassicalRange, scale, eps)
	}
	return eps, nil
}

func (gaussianNoise) ScaleSensitivity(cal Calibration) float64 { return cal.L2 }

func (gaussianNoise) Add(w []float64, cal Calibration, src Source) error {
	return src.AddGaussian(w, cal.Scale)
}

func (gaussianNoise) Describe(scale float64, dim int) string {
	return fmt.Sprintf("Independent Gaussian noise with standard deviation sigma = %g (classical calibration, eps < 1) was added to each of the %d weights.", scale, dim)
}

func (gaussianNoise) SamplerNote(Calibration) string { return SecureGaussianNote }
func (gaussianNoise) Notes(Calibration) []string     { return nil }

// Marginal: independent N(0, sigma^2) coordinates.
func (gaussianNoise) Marginal(cal Calibration) (marginal.Law, error) { return normalLaw(cal), nil }

// ExpectedNorm returns the upper bound sigma sqrt(dim) = sqrt(E||b||^2).
func (gaussianNoise) ExpectedNorm(cal Calibration) float64 { return normalRMS(cal) }
func (gaussianNoise) RMSNorm(cal Calibration) float64      { return normalRMS(cal) }

// normalLaw is the law of independent N(0, cal.Scale^2) coordinates.
func normalLaw(cal Calibration) marginal.Law {
	l := marginal.Independent(marginal.Normal, cal.Scale)
	l.Dim, l.Desc = cal.Dim, fmt.Sprintf("normal(sigma = %g) per coordinate", cal.Scale)
	return l
}

// normalRMS is sigma sqrt(dim).
func normalRMS(cal Calibration) float64 { return math.Sqrt(float64(cal.Dim)) * cal.Scale }
