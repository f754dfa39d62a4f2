package dpsgd

import (
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// Noise is the calibrated noise of a DP-SGD run, as the release method
// finds it (Calibrate): the sample rate, the number of steps, the noise
// multiplier, the accountant and its guarantee. A DP-SGD run outside this
// package (the DP-SGD of a program's own Gorgonia graph, package graph) is
// calibrated and certified by the same code through it.
type Noise struct {
	// SampleRate is q = trainer.PoissonRate(n, b), b/n rounded down to a
	// multiple of 2^-64 (the rate the batches are drawn at), Steps is
	// T = passes ceil(n/b), and NoiseMultiplier is sigma: each step adds
	// N(0, (sigma C)^2) to every coordinate of its sum of clipped
	// gradients.
	SampleRate      float64
	Steps           int
	NoiseMultiplier float64
	// Accountant names the accountant that calibrated NoiseMultiplier:
	// PLDAccountant, or RDPAccountant where RDP was the tighter.
	Accountant string
	// AddRemove is the accountant's add/remove-one guarantee at
	// NoiseMultiplier; its replace-one budget by group privacy of two,
	// (2 eps, (1 + e^eps) delta), is within the budget.
	AddRemove dp.Budget

	cal calibration
}

// Calibrate returns the noise of a DP-SGD run of n rows in expected
// batches of b over passes passes at the replace-one budget bud, as the
// release method calibrates it: the smallest noise multiplier for which
// the tighter accountant (PLDAccountant at eps/2 (1 - 1e-7), or
// RDPAccountant, RDP with the improved conversion) gives (eps/2,
// delta/(1 + exp(eps/2))) under add/remove-one neighbours, hence (eps,
// delta) under replace-one by group privacy of two (Neighbours). Errors
// wrap release.ErrConfig (the shape of the run) or dp.ErrBudget.
func Calibrate(bud dp.Budget, n, b, passes int) (Noise, error) {
	if err := (method{}).CheckBudget(bud); err != nil {
		return Noise{}, err
	}
	c, err := calibrate(bud, n, b, passes, PLDAccountant)
	if err != nil {
		return Noise{}, err
	}
	return Noise{SampleRate: c.q, Steps: c.steps, NoiseMultiplier: c.sigma, Accountant: c.acct,
		AddRemove: dp.Budget{Epsilon: c.eps, Delta: c.target.Delta}, cal: c}, nil
}

// Certificate returns the certificate of a DP-SGD release at the budget b
// with the noise of Calibrate and the run record run (with its DPSGD
// constants; its statistics are withheld), the kind of the noise source
// (perturb.Source.Kind) and notes added to what the claim does not cover:
// the release method's certificate. The weights' hash and the noise seed
// are the caller's to set.
func Certificate(b dp.Budget, noise Noise, run *trainer.Run, source string, notes []string) (*release.Certificate, error) {
	return certificate(b, noise.cal, run, source, notes)
}

// Coins returns the source of the Poisson sampling coins of a DP-SGD
// release drawing its noise from src, as the release method draws them:
// ChaCha8 keyed by 256 bits of crypto/rand for the secure source, by the
// seed for a seeded one (perturb.Seeded); other sources are refused with
// an error wrapping release.ErrConfig.
func Coins(src perturb.Source) (rand.Source, error) { return coins(src) }
