package dpsgd

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// The accountants of a DP-SGD release. A certificate names its accountant
// in its run record's dp_sgd.accountant (a file without it is RDP's), so
// that certify recomputes its noise multiplier and eps by the same one.
const (
	conversion = accountant.Improved
	// RDPAccountant names the RDP accountant, which calibrated every
	// release before the PLD one and still calibrates a release where it
	// is the tighter.
	RDPAccountant = "RDP of the Poisson-subsampled Gaussian (package accountant) at the orders of accountant.DefaultOrders (1.1 to 10.9 by 0.1, 11 to 63, 128, 256, 512, 1024)"
	// PLDAccountant names the PLD accountant of a release (the parameters
	// of accountant.PLD's zero value), the tighter of the two in the usual
	// settings.
	PLDAccountant = "PLD of the Poisson-subsampled Gaussian (package accountant): connect-the-dots (pessimistic) grid of interval 0.0001 nats, both directions of add/remove-one neighbours, truncated masses of at most 1e-15 each and a rounding allowance counted in delta, composed by FFT; calibrated to eps (1 - 1e-7)"
	// RDPCitation is the reference of a DP-SGD certificate by the RDP
	// accountant.
	RDPCitation = "Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang 2016, \"Deep Learning with Differential Privacy\", Algorithm 1; Mironov, Talwar & Zhang 2019, \"Renyi Differential Privacy of the Sampled Gaussian Mechanism\"; Balle, Barthe, Gaboardi, Hsu & Sato 2020, \"Hypothesis Testing Interpretations and Renyi Differential Privacy\", Theorem 21; group privacy for two rows (Vadhan 2017, Lemma 2.2)"
	// PLDCitation is the reference of a DP-SGD certificate by the PLD
	// accountant.
	PLDCitation = "Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang 2016, \"Deep Learning with Differential Privacy\", Algorithm 1; Koskela, Jalko & Honkela 2020, \"Computing Tight Differential Privacy Guarantees Using FFT\"; Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, \"Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions\", Algorithm 1; Zhu, Dong & Wang 2022, \"Optimal Accounting of Differential Privacy via Characteristic Function\" (dominating pairs of Poisson subsampling); group privacy for two rows (Vadhan 2017, Lemma 2.2)"
)

// buildTol bounds how far (relative) another build puts the accountant's
// add/remove eps at the same noise multiplier: fused multiply-adds under
// GOAMD64=v3, math.Exp's pure-Go path under GOARCH=386 moved the PLD's by
// at most 4.9e-8 of it (3.8e-8 and 4.9e-8 at the MNIST tutorial's 14,062
// steps, 3e-9 or less at the 75 and 100 steps of the pinned releases);
// RDP's far less.
const buildTol = 1e-7

// pldMargin is the relative margin below the add/remove eps at which the
// PLD accountant calibrates, so that another build's eps of the same noise
// multiplier stays within the target (buildTol).
const pldMargin = buildTol

// rebuildTol is how far (relative) a file's noise multiplier may be from
// the one certify recomputes and still be taken as another build's
// calibration: the search stops within 1e-7 of sigma, and the PLD's eps,
// not monotone in sigma at that scale (its rounding allowance moves with
// sigma, about 5e-7 of eps), lets another build's search stop elsewhere
// (6e-8 of sigma away in the builds above); an edit moves it by far more.
// Within it, certify recomputes the accountant at the file's noise
// multiplier and requires it within the budget.
const rebuildTol = 1e-6

// calibration is the noise of a DP-SGD run at a budget, and the
// accountant's guarantee at it.
type calibration struct {
	q      float64
	steps  int
	sigma  float64
	target dp.Budget // the add/remove target
	acct   string    // RDPAccountant or PLDAccountant
	eps    float64   // the accountant's add/remove eps at sigma, at target.Delta
	order  float64   // RDP: the order of eps
}

// replaceOne is the replace-one budget of the calibration's add/remove
// guarantee (group privacy of two).
func (c calibration) replaceOne() dp.Budget {
	return accountant.Guarantee{Epsilon: c.eps, Delta: c.target.Delta}.ReplaceOne()
}

// calibrate returns the noise multiplier of the run of n rows in expected
// batches of b over passes passes at the replace-one budget bud, by the
// accountant acct: RDPAccountant (or "", a file from before the field)
// gives RDP's; PLDAccountant the smaller of RDP's and the PLD accountant's
// (at eps/2 (1 - pldMargin)), with the accountant that gave it.
func calibrate(bud dp.Budget, n, b, passes int, acct string) (calibration, error) {
	if n >= 1 && b > n {
		return calibration{}, fmt.Errorf("%w: dp-sgd's expected batch %d is above the %d training rows; give a batch of at most %d", release.ErrConfig, b, n, n)
	}
	if n < 1 || b < 1 {
		// The rate has no value there; calibrateAt refuses the settings.
		return calibrateAt(bud, n, b, passes, acct, 0)
	}
	return calibrateAt(bud, n, b, passes, acct, trainer.PoissonRate(n, b))
}

// calibrateAt is calibrate at the sample rate q: the rate the batches are
// drawn at (trainer.PoissonRate), or, for a file written before that rate
// (legacyRate), q = b/n.
func calibrateAt(bud dp.Budget, n, b, passes int, acct string, q float64) (calibration, error) {
	if n < 1 || b < 1 || b > n || passes < 1 || uint64(passes)*uint64((n+b-1)/b) > trainer.MaxSteps {
		return calibration{}, fmt.Errorf("%w: dp-sgd of %d rows in expected batches of %d for %d passes (at most %d steps)", release.ErrConfig, n, b, passes, uint64(trainer.MaxSteps))
	}
	if acct != "" && acct != RDPAccountant && acct != PLDAccountant {
		return calibration{}, fmt.Errorf("%w: unknown dp-sgd accountant %q: this version knows RDP and PLD", release.ErrConfig, acct)
	}
	t, err := addRemoveTarget(bud)
	if err != nil {
		return calibration{}, err
	}
	c := calibration{q: q, steps: passes * ((n + b - 1) / b), target: t, acct: RDPAccountant}
	sigma, g, err := accountant.NoiseMultiplier(c.q, c.steps, t, conversion, nil)
	if err != nil {
		return calibration{}, fmt.Errorf("%w: dp-sgd at q = %v for %d steps: %w", dp.ErrBudget, c.q, c.steps, err)
	}
	c.sigma, c.eps, c.order = sigma, g.Epsilon, g.Order
	if acct == PLDAccountant {
		pt := dp.Budget{Epsilon: t.Epsilon * (1 - pldMargin), Delta: t.Delta}
		sigma, g, err := accountant.NoiseMultiplierPLD(c.q, c.steps, pt, accountant.PLD{})
		switch {
		case err == nil && sigma < c.sigma:
			c.sigma, c.eps, c.order, c.acct = sigma, g.Epsilon, 0, PLDAccountant
		case err != nil && !errors.Is(err, accountant.ErrUnreachable):
			return calibration{}, fmt.Errorf("%w: dp-sgd's PLD accountant at q = %v for %d steps: %w", dp.ErrBudget, c.q, c.steps, err)
		}
	}
	if r := c.replaceOne(); r.Epsilon > bud.Epsilon || r.Delta > bud.Delta {
		return calibration{}, fmt.Errorf("%w: the accountant's replace-one (%v, %v) exceeds (%v, %v)", dp.ErrBudget, r.Epsilon, r.Delta, bud.Epsilon, bud.Delta)
	}
	return c, nil
}

// epsilonAt returns c with sigma and eps recomputed by c's accountant at
// the noise multiplier sigma (the file's, in certify).
func (c calibration) epsilonAt(sigma float64) (calibration, error) {
	g := accountant.SampledGaussian{SampleRate: c.q, NoiseMultiplier: sigma, Steps: c.steps}
	c.sigma = sigma
	if c.acct == PLDAccountant {
		r, err := accountant.PLD{}.Epsilon(g, c.target.Delta)
		if err != nil {
			return c, err
		}
		c.eps = r.Epsilon
		return c, nil
	}
	r, err := g.Epsilon(c.target.Delta, conversion, nil)
	if err != nil {
		return c, err
	}
	c.eps, c.order = r.Epsilon, r.Order
	return c, nil
}

// near reports whether a and b agree to tol (relative).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// matchFile returns the rebuilt calibration cal with the file's noise
// multiplier fileSigma where it is within rebuildTol of the rebuilt one
// (another build's calibration): the accountant, recomputed at the file's
// noise multiplier on this machine, must then meet the add/remove target.
// A noise multiplier farther off is left as rebuilt, so that the
// certificate differs from the file's. The file's add/remove eps fileEps
// is kept where it is within the target and within buildTol of the
// accountant's eps at the noise multiplier taken (another build's rounding
// of the same computation); farther off it is an error, so that a file
// cannot understate it by more.
func (cal calibration) matchFile(fileSigma, fileEps float64) (calibration, error) {
	if fileSigma != cal.sigma && near(fileSigma, cal.sigma, rebuildTol) {
		at, err := cal.epsilonAt(fileSigma)
		if err != nil {
			return cal, err
		}
		if at.eps > cal.target.Epsilon {
			return cal, fmt.Errorf("the accountant gives eps = %v for add/remove at the file's noise multiplier %v, above %v", at.eps, fileSigma, cal.target.Epsilon)
		}
		cal = at
	}
	if fileEps != cal.eps {
		if !near(fileEps, cal.eps, buildTol) || fileEps > cal.target.Epsilon {
			return cal, fmt.Errorf("add/remove eps %v; its accountant gives %v at sigma %v (the file's %v): want within %g, at most %v",
				fileEps, cal.eps, cal.sigma, fileSigma, buildTol, cal.target.Epsilon)
		}
		cal.eps = fileEps
	}
	return cal, nil
}

// samplingPoissonV1 is the run record's sampling note of the dp-sgd files
// written before the sample rate was trainer.PoissonRate: their batches
// were drawn with probability floor(q 2^64)/2^64 at most q = b/n, and the
// accountant took q = b/n. The claim holds at the smaller drawn rate: the
// Poisson subsample at rate q' <= q is the subsample at q followed by a
// subsample at q'/q, and subsampling a mechanism never weakens its
// guarantee at any (eps, delta) (Dong, Roth & Su 2022, Gaussian
// Differential Privacy, section 4: the subsampled trade-off function is at
// least the mechanism's), so the sampled Gaussian at q bounds the one at
// q'. certify rebuilds such files as they were written.
const samplingPoissonV1 = "Poisson: each row in each step independently with probability q = b/n (exact coins, probability floor(q 2^64)/2^64 <= q); sums divided by the expected batch b"

// legacyRate reports whether a dp-sgd run record is a file's from before
// trainer.PoissonRate (samplingPoissonV1).
func legacyRate(run *trainer.Run) bool {
	return run.Sampling == samplingPoissonV1 && run.DPSGD != nil && run.Batch > 0 && run.N > 0 &&
		run.DPSGD.SampleRate == float64(run.Batch)/float64(run.N)
}
