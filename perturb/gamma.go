package perturb

import (
	"github.com/stabpriv/stabpriv/dp"

	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/perturb/marginal"
)

// Gamma adds a vector b with density proportional to exp(-eps ||b||_2 / D2),
// D2 the L2 sensitivity: ||b|| ~ Gamma(d, D2/eps) and b/||b|| uniform on the
// sphere. Pure eps-DP (Chaudhuri, Monteleoni & Sarwate 2011, Theorem 6).
const Gamma = dp.Gamma

// gammaNormNoise is the Noise of Gamma. Its secure sampler is the exact one of
// securegamma.go and exact.go (Source.AddGammaNorm).
type gammaNormNoise struct{}

func (gammaNormNoise) Name() dp.Mechanism { return Gamma }
func (gammaNormNoise) Pure() bool         { return true }
func (gammaNormNoise) ScaleName() string  { return "theta" }
func (gammaNormNoise) Citation() string {
	return "Chaudhuri, Monteleoni & Sarwate (2011), Differentially private empirical risk minimization, JMLR 12, Theorem 6 (output perturbation, noise density proportional to exp(-eps ||b|| / D2))"
}

func (n gammaNormNoise) CheckBudget(eps, delta float64) error { return checkBudget(n, eps, delta) }

// Calibrate returns theta = D2/eps (the norm of the noise is
// Gamma(dim, theta)).
func (n gammaNormNoise) Calibrate(eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	c, err := newCalibration(n, eps, delta, sens, dim)
	if err != nil {
		return Calibration{}, err
	}
	return withScale(n, c, c.L2/eps, nil)
}

// EpsilonForScale returns eps = D2/theta.
func (n gammaNormNoise) EpsilonForScale(scale, sensitivity, delta float64) (float64, error) {
	if err := checkInverse(n, scale, sensitivity, delta); err != nil {
		return 0, err
	}
	return sensitivity / scale, nil
}

func (gammaNormNoise) ScaleSensitivity(cal Calibration) float64 { return cal.L2 }

// Add draws through src.AddGammaNorm. Calibrate sets Scale = L2/Epsilon; a
// calibration with another theta gets the eps that theta buys.
func (gammaNormNoise) Add(w []float64, cal Calibration, src Source) error {
	eps := cal.Epsilon
	if cal.Scale != cal.L2/cal.Epsilon {
		eps = cal.L2 / cal.Scale
	}
	return src.AddGammaNorm(w, cal.L2, eps)
}

func (gammaNormNoise) Describe(scale float64, dim int) string {
	return fmt.Sprintf("A noise vector with density proportional to exp(-||v|| / %g) was added: its norm is Gamma(%d, %g) and its direction uniform.", scale, dim, scale)
}

func (gammaNormNoise) SamplerNote(cal Calibration) string {
	return secureGammaNote(cal.Dim, cal.L2, cal.Epsilon)
}

func (gammaNormNoise) Notes(Calibration) []string { return nil }

// Marginal returns the exact law of the coordinates: a vector with density
// proportional to exp(-||z||/theta) in R^dim is a Gaussian scale mixture
// sqrt(V) N(0, I) with V ~ Gamma((dim+1)/2, scale 2 theta^2) (integrate the
// mixture: the density is proportional to r^{1/2} K_{1/2}(r/theta), i.e. to
// exp(-r/theta)). Each coordinate is therefore a symmetric variance-gamma
// (Bessel K) variable with density proportional to |x|^{dim/2}
// K_{dim/2}(|x|/theta); for dim = 1 it is Laplace(theta), for dim = 3 its
// tail is (1 + x/(2 theta)) exp(-x/theta). The coordinates are NOT
// independent; they are independent given V, which the law keeps shared.
func (gammaNormNoise) Marginal(cal Calibration) (marginal.Law, error) {
	theta := cal.Scale
	l := marginal.NormalGammaVariance((float64(cal.Dim)+1)/2, 2*theta*theta, cal.Dim)
	l.Desc = fmt.Sprintf("gamma-norm(theta = %g, dim = %d)", theta, cal.Dim)
	return l, nil
}

// ExpectedNorm returns E||b|| = dim theta (the norm is Gamma(dim, theta)).
func (gammaNormNoise) ExpectedNorm(cal Calibration) float64 { return float64(cal.Dim) * cal.Scale }

// RMSNorm returns theta sqrt(dim (dim+1)).
func (gammaNormNoise) RMSNorm(cal Calibration) float64 {
	p := float64(cal.Dim)
	return cal.Scale * math.Sqrt(p*(p+1))
}
