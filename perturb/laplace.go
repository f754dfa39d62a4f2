package perturb

import (
	"github.com/stabpriv/stabpriv/dp"

	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/perturb/marginal"
)

// Laplace adds independent Laplace noise of scale b = D1/eps to every
// coordinate, D1 the L1 sensitivity: pure eps-DP (Dwork, McSherry, Nissim &
// Smith 2006).
const Laplace = dp.Laplace

// laplaceNoise is the Noise of Laplace.
type laplaceNoise struct{}

func (laplaceNoise) Name() dp.Mechanism { return Laplace }
func (laplaceNoise) Pure() bool         { return true }
func (laplaceNoise) ScaleName() string  { return "b" }
func (laplaceNoise) Citation() string {
	return "Dwork, McSherry, Nissim & Smith (2006), Calibrating noise to sensitivity in private data analysis, TCC; Laplace mechanism with the L1 sensitivity"
}

// Laplace epsilons outside [MinLaplaceEpsilon, MaxLaplaceEpsilon] are
// refused: the secure source's sampler (Google's) draws on a power-of-two
// grid of step 2^ceil(log2(b/2^40)) for the scale b = D1/eps, so below
// eps = 2^-39 that step exceeds the sensitivity D1 and the noise can be
// far larger than the certified scale (a release whose norm its own check
// refuses); above 2^50 its grid for usual sensitivities leaves the range
// of float64.
const (
	MinLaplaceEpsilon = 0x1p-39
	MaxLaplaceEpsilon = 0x1p50
)

// CheckBudget accepts delta = 0 and eps in [MinLaplaceEpsilon,
// MaxLaplaceEpsilon], for every source, so that a seeded run checks the
// budget a secure one would.
func (n laplaceNoise) CheckBudget(eps, delta float64) error {
	if err := checkBudget(n, eps, delta); err != nil {
		return err
	}
	if eps < MinLaplaceEpsilon || eps > MaxLaplaceEpsilon {
		return fmt.Errorf("%w: eps = %v, the Laplace sampler takes eps in [2^-39, 2^50] (below 2^-39 its grid is coarser than the sensitivity)", ErrEpsilon, eps)
	}
	return nil
}

// Calibrate returns b = D1/eps, D1 = min(sens.L1, sqrt(dim) sens.L2).
func (n laplaceNoise) Calibrate(eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	c, err := newCalibration(n, eps, delta, sens, dim)
	if err != nil {
		return Calibration{}, err
	}
	return withScale(n, c, c.L1/eps, nil)
}

// EpsilonForScale returns eps = D1/b (sensitivity is the L1 sensitivity).
func (n laplaceNoise) EpsilonForScale(scale, sensitivity, delta float64) (float64, error) {
	if err := checkInverse(n, scale, sensitivity, delta); err != nil {
		return 0, err
	}
	return sensitivity / scale, nil
}

func (laplaceNoise) ScaleSensitivity(cal Calibration) float64 { return cal.L1 }

// Add adds Lap(cal.Scale) to each coordinate through src.AddLaplace, which
// takes the L1 sensitivity and eps: those of cal when cal.Scale is its
// calibrated D1/eps, else the eps that cal.Scale buys at D1.
func (laplaceNoise) Add(w []float64, cal Calibration, src Source) error {
	eps := cal.Epsilon
	if cal.Scale != cal.L1/cal.Epsilon {
		eps = cal.L1 / cal.Scale
	}
	return src.AddLaplace(w, cal.L1, eps)
}

func (laplaceNoise) Describe(scale float64, dim int) string {
	return fmt.Sprintf("Independent Laplace noise of scale b = %g (= L1 sensitivity / eps) was added to each of the %d weights.", scale, dim)
}

func (laplaceNoise) SamplerNote(Calibration) string { return secureSamplerNote }

func (laplaceNoise) Notes(cal Calibration) []string {
	if cal.L1 < cal.L2*sqrtInt(cal.Dim) {
		return []string{"the L1 sensitivity is a bound supplied with the sensitivity statement, tighter than sqrt(dim) times the L2 sensitivity"}
	}
	return nil
}

// Marginal: independent Laplace(b) coordinates.
func (laplaceNoise) Marginal(cal Calibration) (marginal.Law, error) {
	l := marginal.Independent(marginal.Laplace, cal.Scale)
	l.Dim, l.Desc = cal.Dim, fmt.Sprintf("laplace(b = %g) per coordinate", cal.Scale)
	return l, nil
}

// ExpectedNorm returns the upper bound b sqrt(2 dim) = sqrt(E||b||^2) (each
// coordinate has variance 2 b^2).
func (n laplaceNoise) ExpectedNorm(cal Calibration) float64 { return n.RMSNorm(cal) }

func (laplaceNoise) RMSNorm(cal Calibration) float64 {
	return math.Sqrt(2*float64(cal.Dim)) * cal.Scale
}
