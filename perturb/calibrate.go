package perturb

import (
	"fmt"
	"math"
)

// Mechanism names an output-perturbation mechanism. The names are those used
// on the command line.
type Mechanism string

const (
	// Laplace adds independent Laplace noise of scale b = D1/eps to every
	// coordinate, D1 the L1 sensitivity: pure eps-DP (Dwork, McSherry, Nissim
	// & Smith 2006).
	Laplace Mechanism = "laplace"
	// Gamma adds a vector b with density proportional to
	// exp(-eps ||b||_2 / D2), D2 the L2 sensitivity: ||b|| ~ Gamma(d, D2/eps)
	// and b/||b|| uniform on the sphere. Pure eps-DP (Chaudhuri, Monteleoni &
	// Sarwate 2011, Theorem 6).
	Gamma Mechanism = "gamma"
	// Gaussian adds N(0, sigma^2) to every coordinate with the classical
	// sigma = D2 sqrt(2 ln(1.25/delta))/eps: (eps, delta)-DP for eps < 1 only
	// (Dwork & Roth 2014, Theorem A.1).
	Gaussian Mechanism = "gaussian"
	// AnalyticGaussian adds N(0, sigma^2) to every coordinate with the
	// smallest sigma that satisfies the exact condition of Balle & Wang
	// (2018), Theorem 8: (eps, delta)-DP for every eps > 0.
	AnalyticGaussian Mechanism = "gaussian-analytic"
)

// Mechanisms lists the mechanisms in the order shown to users.
var Mechanisms = []Mechanism{Laplace, Gamma, Gaussian, AnalyticGaussian}

// ParseMechanism returns the mechanism with the given name, or an error
// wrapping ErrMechanism.
func ParseMechanism(name string) (Mechanism, error) {
	m := Mechanism(name)
	if err := m.validate(); err != nil {
		return "", err
	}
	return m, nil
}

func (m Mechanism) validate() error {
	switch m {
	case Laplace, Gamma, Gaussian, AnalyticGaussian:
		return nil
	}
	return fmt.Errorf("%w: %q, want one of laplace, gamma, gaussian, gaussian-analytic", ErrMechanism, string(m))
}

// Pure reports whether the mechanism is pure eps-DP (delta must be 0).
func (m Mechanism) Pure() bool { return m == Laplace || m == Gamma }

// Citation returns the reference for the mechanism's guarantee.
func (m Mechanism) Citation() string {
	switch m {
	case Laplace:
		return "Dwork, McSherry, Nissim & Smith (2006), Calibrating noise to sensitivity in private data analysis, TCC; Laplace mechanism with the L1 sensitivity"
	case Gamma:
		return "Chaudhuri, Monteleoni & Sarwate (2011), Differentially private empirical risk minimization, JMLR 12, Theorem 6 (output perturbation, noise density proportional to exp(-eps ||b|| / D2))"
	case Gaussian:
		return "Dwork & Roth (2014), The Algorithmic Foundations of Differential Privacy, Theorem A.1 (eps < 1)"
	case AnalyticGaussian:
		return "Balle & Wang (2018), Improving the Gaussian mechanism for differential privacy: analytical calibration and optimal denoising, ICML, Theorem 8 and Algorithm 1"
	}
	return ""
}

// ScaleName names the noise scale of the mechanism: "b" (Laplace scale per
// coordinate), "theta" (Gamma scale of the noise norm) or "sigma" (Gaussian
// standard deviation per coordinate).
func (m Mechanism) ScaleName() string {
	switch m {
	case Laplace:
		return "b"
	case Gamma:
		return "theta"
	case Gaussian, AnalyticGaussian:
		return "sigma"
	}
	return ""
}

func checkEpsilon(eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps <= 0 {
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrEpsilon, eps)
	}
	return nil
}

func checkDelta(delta float64) error {
	if !(delta >= 0 && delta < 1) {
		return fmt.Errorf("%w: delta = %v, want in [0, 1)", ErrDelta, delta)
	}
	return nil
}

func checkPositive(err error, name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fmt.Errorf("%w: %s = %v, want finite > 0", err, name, v)
	}
	return nil
}

// checkPrivacy validates (eps, delta) for the mechanism m.
func checkPrivacy(m Mechanism, eps, delta float64) error {
	if err := m.validate(); err != nil {
		return err
	}
	if err := checkEpsilon(eps); err != nil {
		return err
	}
	if err := checkDelta(delta); err != nil {
		return err
	}
	if m.Pure() && delta != 0 {
		return fmt.Errorf("%w: delta = %v with the pure mechanism %s, want 0", ErrDelta, delta, m)
	}
	if !m.Pure() && delta == 0 {
		return fmt.Errorf("%w: delta = 0 with the Gaussian mechanism %s, want in (0, 1)", ErrDelta, m)
	}
	if m == Gaussian && eps >= 1 {
		return fmt.Errorf("%w: eps = %v", ErrClassicalRange, eps)
	}
	return nil
}

// Calibration is the noise a mechanism adds for a privacy target and a
// sensitivity, in a space of dimension Dim.
type Calibration struct {
	Mechanism Mechanism
	Epsilon   float64
	Delta     float64
	Dim       int
	// L2 is the L2 sensitivity; L1 the L1 sensitivity used by Laplace
	// (the smaller of the given L1 bound and sqrt(Dim)*L2).
	L2, L1 float64
	// Scale is b, theta or sigma (Mechanism.ScaleName).
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
// with D2 = sens.L2. Pure mechanisms need delta = 0, Gaussian ones
// delta in (0, 1). The sensitivities are for replace-one neighbours.
func Calibrate(m Mechanism, eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	if err := checkPrivacy(m, eps, delta); err != nil {
		return Calibration{}, err
	}
	if err := sens.Validate(); err != nil {
		return Calibration{}, err
	}
	if dim < 1 {
		return Calibration{}, fmt.Errorf("%w: dimension %d, want >= 1", ErrModel, dim)
	}
	c := Calibration{Mechanism: m, Epsilon: eps, Delta: delta, Dim: dim, L2: sens.L2, L1: sens.l1(dim)}
	var err error
	switch m {
	case Laplace:
		c.Scale = c.L1 / eps
	case Gamma:
		c.Scale = c.L2 / eps
	case Gaussian:
		c.Scale, err = ClassicalGaussianSigma(eps, delta, c.L2)
	case AnalyticGaussian:
		c.Scale, err = AnalyticGaussianSigma(eps, delta, c.L2)
	}
	if err != nil {
		return Calibration{}, err
	}
	if math.IsInf(c.Scale, 0) || math.IsNaN(c.Scale) || c.Scale <= 0 {
		return Calibration{}, fmt.Errorf("%w: %s = %v for eps = %v, delta = %v", ErrScale, m.ScaleName(), c.Scale, eps, delta)
	}
	return c, nil
}

// ClassicalGaussianSigma returns sigma = l2 sqrt(2 ln(1.25/delta))/eps, the
// classical Gaussian calibration (Dwork & Roth 2014, Theorem A.1), which is
// (eps, delta)-DP for an L2 sensitivity l2 only when eps < 1; for eps >= 1
// it returns an error wrapping ErrClassicalRange.
func ClassicalGaussianSigma(eps, delta, l2 float64) (float64, error) {
	if err := checkPrivacy(Gaussian, eps, delta); err != nil {
		return 0, err
	}
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return 0, err
	}
	return l2 * math.Sqrt(2*math.Log(1.25/delta)) / eps, nil
}

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
	if err := checkPrivacy(AnalyticGaussian, eps, delta); err != nil {
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
// All for replace-one neighbours.
func EpsilonForScale(m Mechanism, scale, sensitivity, delta float64) (float64, error) {
	if err := m.validate(); err != nil {
		return 0, err
	}
	if err := checkPositive(ErrScale, m.ScaleName(), scale); err != nil {
		return 0, err
	}
	if err := checkPositive(ErrSensitivity, "sensitivity", sensitivity); err != nil {
		return 0, err
	}
	if err := checkDelta(delta); err != nil {
		return 0, err
	}
	if m.Pure() != (delta == 0) {
		return 0, fmt.Errorf("%w: delta = %v with mechanism %s", ErrDelta, delta, m)
	}
	switch m {
	case Laplace, Gamma:
		return sensitivity / scale, nil
	case Gaussian:
		eps := sensitivity * math.Sqrt(2*math.Log(1.25/delta)) / scale
		if eps >= 1 {
			return 0, fmt.Errorf("%w: sigma = %v buys eps = %v", ErrClassicalRange, scale, eps)
		}
		return eps, nil
	default:
		return AnalyticGaussianEpsilon(scale, delta, sensitivity)
	}
}

func sqrtInt(n int) float64 { return math.Sqrt(float64(n)) }
