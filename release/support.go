package release

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// SupportTail is t of the tail bounds of CheckWeights: a release of the
// method is refused with probability at most 2 exp(-t) = 2^-63.
var SupportTail = 64 * math.Ln2

// checkSupport refuses weights w off the lattice step (0: none), to which
// the secure sampler rounds every released coordinate, or of norm above
// bound, the bound on the trained weights plus a norm the noise exceeds
// with probability below 2^-63: such weights are not a release of the run.
func checkSupport(w []float64, step, bound float64) error {
	if !perturb.OnLattice(w, step) {
		return fmt.Errorf("the weights are not on the secure sampler's lattice of step %g: they were not released by it", step)
	}
	if nrm := floats.Norm(w, 2); nrm > bound {
		return fmt.Errorf("||w|| = %.6g exceeds %.6g, the trained weights' bound plus the noise's 2^-63 tail: not a release of this run", nrm, bound)
	}
	return nil
}

// CheckWeights checks that the weights w could be the release the
// certificate c states (after Rebuild gave c): on the lattice of the secure
// sampler for a secure release, and within the norm of the trained weights
// (trainedBound) plus a norm of the noise exceeded with probability at most
// exp(-SupportTail) (perturb.TailNorm). A certificate without a run record
// (or nil) is an error wrapping ErrConfig.
func (m outputMethod) CheckWeights(c *Certificate, _ Public, w []float64) error {
	run, err := certRun(c)
	if err != nil {
		return err
	}
	cal := perturb.Calibration{Mechanism: c.Mechanism, Epsilon: c.Epsilon, Delta: c.Delta, Dim: c.Dim, L2: c.L2Sensitivity, L1: c.L1Sensitivity, Scale: c.NoiseScale}
	step := 0.0
	if c.Source == perturb.SourceSecure {
		step = perturb.Lattice(cal)
	}
	return checkSupport(w, step, trainedBound(run)+perturb.TailNorm(cal, SupportTail))
}

// trainedBound bounds the norm of the weights an SGD run with the record
// run returns. The trainer starts at w = 0; a step moves w to
// prox((1 - eta mu) w - eta g), g an average of clipped, masked gradients of
// norm at most L, and the prox (soft thresholding), the projection onto
// ||w|| <= R and the average of iterates do not increase the norm. So
// ||w_{t+1}|| <= |1 - eta_t mu| ||w_t|| + eta_t L: with every step at most
// 1/mu (mu > 0) the ball ||w|| <= L/mu is invariant, and with every step at
// most 2/mu (or mu = 0) ||w_T|| <= L sum_t eta_t. Otherwise there is no
// bound (+Inf), but for R.
func trainedBound(run *trainer.Run) float64 {
	b := math.Inf(1)
	maxStep, sum := 0.0, 0.0
	for _, e := range run.PassMaxStep {
		maxStep = math.Max(maxStep, e)
		sum += e * float64(run.StepsPerPass)
	}
	switch {
	case run.Mu > 0 && maxStep*run.Mu <= 1:
		b = run.L / run.Mu
	case run.Mu == 0 || maxStep*run.Mu <= 2:
		b = run.L * sum
	}
	if run.Radius > 0 {
		b = math.Min(b, run.Radius)
	}
	return b
}

// CheckWeights checks that w could be the release the certificate states:
// on the lattice of the secure sampler of the output part, and within the
// norm of the minimizer of the perturbed objective, at most (L + ||b||/n)/
// lambda (the gradient of the loss has norm at most L, and lambda w = -
// grad loss - b/n at the minimizer), plus the solver's threshold's
// GradTol/lambda, with ||b|| and the output noise bounded by norms they
// exceed with probability at most exp(-SupportTail) each.
func (m objectiveMethod) CheckWeights(c *Certificate, pub Public, w []float64) error {
	cal, err := m.calibration(c, pub)
	if err != nil {
		return err
	}
	t := SupportTail
	var bNorm float64
	out := perturb.Calibration{Dim: cal.P}
	if m.name.Pure() {
		bNorm = perturb.GammaTail(float64(cal.P), cal.Theta, t) + math.Sqrt(float64(cal.P))*cal.BStep/2
		out.Mechanism, out.L2, out.Epsilon, out.Scale = perturb.Gamma, cal.OutSensitivity, cal.EpsOutput, cal.Theta2
	} else {
		bNorm = cal.Sigma1 * (math.Sqrt(float64(cal.P)) + math.Sqrt(2*t))
		out.Mechanism, out.Scale = perturb.AnalyticGaussian, cal.Sigma2
	}
	step := 0.0
	if c.Source == perturb.SourceSecure {
		step = perturb.Lattice(out)
	}
	bound := (cal.L+bNorm/float64(cal.N))/cal.Lambda + cal.GradTol/cal.Lambda + perturb.TailNorm(out, t)
	return checkSupport(w, step, bound)
}

// TrainedBound returns the bound on the norm of the weights that an SGD
// run with the record run can return (the ball the noise of an output
// perturbation is compared with): public constants only, +Inf when the
// run's steps give none.
func TrainedBound(run *trainer.Run) float64 { return trainedBound(run) }
