package perturb

import (
	"github.com/stabpriv/stabpriv/dp"

	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/perturb/marginal"
)

// AnalyticGaussian adds N(0, sigma^2) to every coordinate with the
// smallest sigma that satisfies the exact condition of Balle & Wang
// (2018), Theorem 8: (eps, delta)-DP for every eps > 0.
const AnalyticGaussian = dp.AnalyticGaussian

// analyticGaussianNoise is the Noise of AnalyticGaussian.
type analyticGaussianNoise struct{}

func (analyticGaussianNoise) Name() dp.Mechanism { return AnalyticGaussian }
func (analyticGaussianNoise) Pure() bool         { return false }
func (analyticGaussianNoise) ScaleName() string  { return "sigma" }
func (analyticGaussianNoise) Citation() string {
	return "Balle & Wang (2018), Improving the Gaussian mechanism for differential privacy: analytical calibration and optimal denoising, ICML, Theorem 8 and Algorithm 1"
}

func (n analyticGaussianNoise) CheckBudget(eps, delta float64) error {
	return checkBudget(n, eps, delta)
}

// Calibrate returns sigma = AnalyticGaussianSigma(eps, delta, D2).
func (n analyticGaussianNoise) Calibrate(eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	c, err := newCalibration(n, eps, delta, sens, dim)
	if err != nil {
		return Calibration{}, err
	}
	s, err := AnalyticGaussianSigma(eps, delta, c.L2)
	return withScale(n, c, s, err)
}

// EpsilonForScale returns AnalyticGaussianEpsilon(sigma, delta, D2).
func (n analyticGaussianNoise) EpsilonForScale(scale, sensitivity, delta float64) (float64, error) {
	if err := checkInverse(n, scale, sensitivity, delta); err != nil {
		return 0, err
	}
	return AnalyticGaussianEpsilon(scale, delta, sensitivity)
}

func (analyticGaussianNoise) ScaleSensitivity(cal Calibration) float64 { return cal.L2 }

func (analyticGaussianNoise) Add(w []float64, cal Calibration, src Source) error {
	return src.AddGaussian(w, cal.Scale)
}

func (analyticGaussianNoise) Describe(scale float64, dim int) string {
	return fmt.Sprintf("Independent Gaussian noise with standard deviation sigma = %g (analytic calibration) was added to each of the %d weights.", scale, dim)
}

func (analyticGaussianNoise) SamplerNote(Calibration) string { return SecureGaussianNote }
func (analyticGaussianNoise) Notes(Calibration) []string     { return nil }

// Marginal: independent N(0, sigma^2) coordinates.
func (analyticGaussianNoise) Marginal(cal Calibration) (marginal.Law, error) {
	return normalLaw(cal), nil
}

// ExpectedNorm returns the upper bound sigma sqrt(dim) = sqrt(E||b||^2).
func (analyticGaussianNoise) ExpectedNorm(cal Calibration) float64 { return normalRMS(cal) }
func (analyticGaussianNoise) RMSNorm(cal Calibration) float64      { return normalRMS(cal) }

// logPhi returns log Phi(x), Phi the standard normal CDF, without underflow.
func logPhi(x float64) float64 {
	if x > -35 {
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	// Asymptotic expansion of the Mills ratio.
	x2 := x * x
	return -x2/2 - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log(1-1/x2+3/(x2*x2)-15/(x2*x2*x2))
}

// gaussianTerms returns the two terms of the exact delta of the Gaussian
// mechanism with standard deviation sigma at eps for L2 sensitivity l2
// (Balle & Wang 2018, Theorem 8),
//
//	delta = Phi(l2/(2 sigma) - eps sigma/l2) - e^eps Phi(-l2/(2 sigma) - eps sigma/l2) = t1 - t2,
//
// and an allowance for the rounding error of t1 - t2.
func gaussianTerms(sigma, eps, l2 float64) (t1, t2, tol float64) {
	a := l2 / (2 * sigma)
	b := eps * sigma / l2
	t1 = 0.5 * math.Erfc((b-a)/math.Sqrt2)
	if e2 := 0.5 * math.Erfc((a+b)/math.Sqrt2); eps < 700 && e2 > 1e-300 {
		t2 = math.Exp(eps) * e2
	} else {
		t2 = math.Exp(eps + logPhi(-a-b))
	}
	// Each term has a relative error of a few ulp from Erfc, Exp and the
	// products, plus about ulp * x * (a+b) in a tail Phi(-x), x <= a+b, from
	// the rounding of its argument (d log Phi(-x)/dx ~ -x). The allowance is
	// 4 ulp * (4 + (a+b)^2) of each term, 4 times that estimate; it matters
	// only where t1 and t2 nearly cancel.
	const ulp = 0x1p-52
	tol = 4 * ulp * (4 + (a+b)*(a+b)) * (t1 + t2)
	if math.IsNaN(tol) {
		tol = 0
	}
	return t1, t2, tol
}

// gaussianDelta returns the computed delta of the Gaussian mechanism (see
// gaussianTerms), clamped at 0.
func gaussianDelta(sigma, eps, l2 float64) float64 {
	t1, t2, _ := gaussianTerms(sigma, eps, l2)
	return math.Max(t1-t2, 0)
}

// gaussianDeltaUpper returns an upper bound on the exact delta: the computed
// value plus its rounding allowance. Calibration uses it, so that rounding
// can never make the noise too small; where t1 and t2 cancel beyond what
// float64 resolves (delta far below 1e-16 times t1), no sigma passes and
// calibration fails instead of returning too little noise.
func gaussianDeltaUpper(sigma, eps, l2 float64) float64 {
	t1, t2, tol := gaussianTerms(sigma, eps, l2)
	d := math.Max(t1-t2, 0) + tol
	if !(d <= 1) {
		return 1
	}
	return d
}

// relTol is the relative width of the final bisection bracket.
const relTol = 1e-13

// AnalyticGaussianSigma returns the smallest sigma (to 1e-12 relative, and
// never below it) for which the Gaussian mechanism with L2 sensitivity l2 is
// (eps, delta)-DP for replace-one neighbours, by bisection on the exact
// condition of Balle & Wang (2018), Theorem 8:
//
//	Phi(l2/(2 sigma) - eps sigma/l2) - e^eps Phi(-l2/(2 sigma) - eps sigma/l2) <= delta,
//
// with Phi evaluated through math.Erfc for stable tails, and the left side
// raised by an allowance for its rounding error (4 ulp times 4 + (a+b)^2
// of each term, a and b the two arguments above) so that rounding never lowers sigma. The returned sigma is the
// upper end of the final bracket, so the condition holds at it. Where the
// two terms cancel beyond float64 resolution (delta below about 1e-15 times
// the terms, e.g. eps < 1e-10 with delta < 1e-20) it returns an error
// wrapping ErrScale rather than an unverified sigma.
// It needs eps > 0 finite, delta in (0, 1) and l2 > 0 finite.
func AnalyticGaussianSigma(eps, delta, l2 float64) (float64, error) {
	if err := (analyticGaussianNoise{}).CheckBudget(eps, delta); err != nil {
		return 0, err
	}
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return 0, err
	}
	hi := l2
	for gaussianDeltaUpper(hi, eps, l2) > delta {
		hi *= 2
		if math.IsInf(hi, 0) {
			return 0, fmt.Errorf("%w: no finite sigma found for eps = %v, delta = %v (beyond float64 resolution)", ErrScale, eps, delta)
		}
	}
	lo := hi / 2
	for gaussianDeltaUpper(lo, eps, l2) <= delta {
		if lo == 0 {
			return 0, fmt.Errorf("%w: no sigma found for eps = %v, delta = %v", ErrScale, eps, delta)
		}
		hi = lo
		lo /= 2
	}
	for i := 0; i < 200 && hi-lo > relTol*hi; i++ {
		mid := lo + (hi-lo)/2
		if gaussianDeltaUpper(mid, eps, l2) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// AnalyticGaussianDelta returns the smallest delta for which the Gaussian
// mechanism with standard deviation sigma and L2 sensitivity l2 is
// (eps, delta)-DP for replace-one neighbours (Balle & Wang 2018, Theorem 8),
// raised by the rounding allowance of AnalyticGaussianSigma (so it is an
// upper bound; at most 1 when the terms cancel beyond float64 resolution).
func AnalyticGaussianDelta(sigma, eps, l2 float64) (float64, error) {
	if err := checkPositive(ErrScale, "sigma", sigma); err != nil {
		return 0, err
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return 0, err
	}
	return gaussianDeltaUpper(sigma, eps, l2), nil
}

// AnalyticGaussianEpsilon returns the smallest eps (to 1e-12 relative, and
// never below it) for which the Gaussian mechanism with standard deviation
// sigma and L2 sensitivity l2 is (eps, delta)-DP for replace-one neighbours
// (Balle & Wang 2018, Theorem 8), by bisection on the condition with the
// rounding allowance of AnalyticGaussianSigma. It returns 0 when the
// mechanism is (0, delta)-DP already. It needs delta in (0, 1).
func AnalyticGaussianEpsilon(sigma, delta, l2 float64) (float64, error) {
	if err := checkPositive(ErrScale, "sigma", sigma); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, fmt.Errorf("%w: delta = 0 with the Gaussian mechanism, want in (0, 1)", ErrDelta)
	}
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return 0, err
	}
	if gaussianDeltaUpper(sigma, 0, l2) <= delta {
		return 0, nil
	}
	lo, hi := 0.0, 1.0
	for i := 0; gaussianDeltaUpper(sigma, hi, l2) > delta; i++ {
		if i > 64 {
			return 0, fmt.Errorf("%w: no eps found for sigma = %v, delta = %v", ErrScale, sigma, delta)
		}
		lo = hi
		hi *= 2
	}
	for i := 0; i < 200 && hi-lo > relTol*hi; i++ {
		mid := lo + (hi-lo)/2
		if gaussianDeltaUpper(sigma, mid, l2) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}
