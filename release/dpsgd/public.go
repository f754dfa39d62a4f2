package release

import (
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// DPSGDNoise is the calibrated noise of a DP-SGD run, as the dp-sgd
// release method finds it (CalibrateDPSGD): the sample rate, the number of
// steps, the noise multiplier, the accountant and its guarantee. A DP-SGD run
// outside this package (the DP-SGD of a program's own Gorgonia graph,
// package graph) is calibrated and certified by the same code through it.
type DPSGDNoise struct {
	// SampleRate is q = trainer.PoissonRate(n, b), b/n rounded down to
	// a multiple of 2^-64 (the rate the batches are drawn at), Steps is
	// T = passes ceil(n/b), and
	// NoiseMultiplier is sigma: each step adds N(0, (sigma C)^2) to every
	// coordinate of its sum of clipped gradients.
	SampleRate      float64
	Steps           int
	NoiseMultiplier float64
	// Accountant names the accountant that calibrated NoiseMultiplier:
	// DPSGDPLDAccountant, or DPSGDAccountant where RDP was the tighter.
	Accountant string
	// AddRemove is the accountant's add/remove-one guarantee at
	// NoiseMultiplier; its replace-one budget by group privacy of two,
	// (2 eps, (1 + e^eps) delta), is within the budget.
	AddRemove dp.Budget

	cal dpsgdCalibration
}

// CalibrateDPSGD returns the noise of a DP-SGD run of n rows in expected
// batches of b over passes passes at the replace-one budget bud, as the
// dp-sgd release method calibrates it: the smallest noise multiplier for
// which the tighter accountant (DPSGDPLDAccountant at eps/2 (1 - 1e-7),
// or DPSGDAccountant, RDP with the improved conversion) gives (eps/2,
// delta/(1 + exp(eps/2))) under add/remove-one neighbours, hence (eps,
// delta) under replace-one by group privacy of two (DPSGDNeighbours). Errors wrap ErrConfig (the shape of the run) or
// dp.ErrBudget.
func CalibrateDPSGD(bud dp.Budget, n, b, passes int) (DPSGDNoise, error) {
	if err := (dpsgdMethod{}).CheckBudget(bud); err != nil {
		return DPSGDNoise{}, err
	}
	c, err := calibrateDPSGD(bud, n, b, passes, DPSGDPLDAccountant)
	if err != nil {
		return DPSGDNoise{}, err
	}
	return DPSGDNoise{SampleRate: c.q, Steps: c.steps, NoiseMultiplier: c.sigma, Accountant: c.acct,
		AddRemove: dp.Budget{Epsilon: c.eps, Delta: c.target.Delta}, cal: c}, nil
}

// DPSGDCertificate returns the certificate of a DP-SGD release at the
// budget b with the noise of CalibrateDPSGD and the run record run (with
// its DPSGD constants; its statistics are withheld), the kind of the noise
// source (perturb.Source.Kind) and notes added to what the claim does not
// cover. The weights' hash and the noise seed are the caller's to set. It
// is the certificate of the dp-sgd release method.
func DPSGDCertificate(b dp.Budget, noise DPSGDNoise, run *trainer.Run, source string, notes []string) (*Certificate, error) {
	return dpsgdCertificate(b, noise.cal, run, source, notes)
}

// DPSGDCoins returns the source of the Poisson sampling coins of a DP-SGD
// release drawing its noise from src, as the dp-sgd release method draws
// them: ChaCha8 keyed by 256 bits of crypto/rand for the secure source, by
// the seed for a seeded one (perturb.Seeded); other sources are refused
// with an error wrapping ErrConfig.
func DPSGDCoins(src perturb.Source) (rand.Source, error) { return dpsgdCoins(src) }
