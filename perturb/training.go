package perturb

import (
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
)

// Training-time mechanisms: the objective-perturbation family.
//
// Objective perturbation and Approximate Minima Perturbation do not add noise
// to trained weights: they add a random linear term to the objective before
// it is minimized (and AMP then perturbs the minimizer's residual), so the
// noise is drawn before training and its law is tied to the training problem
// (loss constants, n, lambda). Noise.Add, which adds noise of a calibrated
// scale to a vector of weights, has no meaning for them, and every Noise
// method that reads a Calibration (the budget check against a sensitivity,
// the marginal law of the released coordinates, the expected noise norm in
// the weights) would be false for them. They are therefore kept out of the
// Noise registry, so that Lookup, Calibrate, private feature selection,
// the conformance kit and the automatic knobs of output perturbation never
// see them, and listed here instead: names, purity and words only. Their
// calibration, solver and certificates live in package objpert, and the
// certified pipeline (package private) routes them there.
//
// ParseMechanism accepts both kinds of names, so that the command line reads
// one --mechanism flag; Lookup refuses a training-time name with a message
// saying where it is implemented.
const (
	// Objective is objective perturbation with noise of density
	// proportional to exp(-eps' ||b|| / (2L)) (pure eps-DP; Chaudhuri,
	// Monteleoni & Sarwate 2011, Section 3.2, Algorithm 2).
	Objective = dp.Objective
	// AMP is Approximate Minima Perturbation ((eps, delta)-DP; Iyengar et
	// al. 2019, Algorithm 1): objective perturbation with Gaussian noise,
	// an approximate minimizer, and Gaussian noise on the result.
	AMP = dp.AMP
	// Stump is the private decision stump (package stump): a one-feature
	// threshold classifier chosen by permute-and-flip (McKenna & Sheldon
	// 2020) over a public finite class, utility the number of training
	// rows classified correctly; pure eps-DP. It releases a choice, not
	// noisy weights, so it is listed here with the mechanisms that have no
	// output-perturbation noise.
	Stump = dp.Stump
	// DPSGD is DP-SGD ((eps, delta)-DP; Abadi et al. 2016, Algorithm 1):
	// Gaussian noise on every step's sum of clipped per-example gradients
	// of Poisson-sampled rows, accounted by package accountant. The noise
	// is in the training steps, not on the weights.
	DPSGD = dp.DPSGD
)

// TrainingMechanism describes a mechanism that perturbs the training
// objective instead of the trained weights (package objpert implements it).
type TrainingMechanism struct {
	Name dp.Mechanism
	// Pure reports whether the mechanism is pure eps-DP (delta = 0).
	Pure bool
	// Words describe the mechanism in a certificate.
	Words string
}

// trainingRegistry lists the training-time mechanisms in the order shown to
// users.
var trainingRegistry = []TrainingMechanism{
	{Name: Objective, Pure: true, Words: "Objective perturbation: the released weights minimize the regularized objective plus a random linear term <b, w>/n, b with density proportional to exp(-||b||/theta) (norm Gamma(dim, theta), uniform direction)."},
	{Name: AMP, Pure: false, Words: "Approximate Minima Perturbation: an approximate minimizer (gradient norm at most gamma) of the regularized objective plus a random linear term <b_1, w>/n with b_1 ~ N(0, sigma_1^2 I), plus Gaussian noise b_2 on the result."},
	{Name: Stump, Pure: true, Words: "Private decision stump: one classifier of a public finite class (every mapped feature j, thresholds t on a public grid; s * sign(z_j - t) for both signs s, or for K classes one class below t and another above; where the class holds them, s * sign(z_a - z_b - t) on two features, or three classes below, between and above two thresholds) chosen by permute-and-flip with utility the number of training rows it classifies correctly; no noise is added to weights."},
	{Name: DPSGD, Pure: false, Words: "DP-SGD: SGD on Poisson-sampled rows (each row in each step with probability q), every example's gradient clipped to L2 norm C, Gaussian noise N(0, (sigma C)^2 I) added to each step's sum, divided by the expected batch qn; the noise scale is sigma C."},
}

// LookupTraining returns the training-time mechanism named m.
func LookupTraining(m dp.Mechanism) (TrainingMechanism, bool) {
	for _, t := range trainingRegistry {
		if t.Name == m {
			return t, true
		}
	}
	return TrainingMechanism{}, false
}

// TrainingMechanisms returns the names of the training-time mechanisms.
func TrainingMechanisms() []dp.Mechanism {
	out := make([]dp.Mechanism, len(trainingRegistry))
	for i, t := range trainingRegistry {
		out[i] = t.Name
	}
	return out
}

// ReleaseMechanismList returns every name a certified fit accepts, the
// output-perturbation mechanisms and then the training-time ones, joined by
// ", " (for help texts).
func ReleaseMechanismList() string {
	s := MechanismList()
	for _, t := range trainingRegistry {
		s += ", " + string(t.Name)
	}
	return s
}

// trainingLookupError is Lookup's error for a training-time name: such a
// mechanism has no output-perturbation noise (objective perturbation is
// implemented by package objpert, and private.Fit routes it there).
func trainingLookupError(m dp.Mechanism) error {
	if m == DPSGD {
		return fmt.Errorf("%w: %q adds its noise in every training step (package release/dpsgd), not to trained weights", ErrMechanism, string(m))
	}
	if m == Stump {
		return fmt.Errorf("%w: %q selects a classifier privately (package stump, permute-and-flip): it has no output-perturbation noise", ErrMechanism, string(m))
	}
	return fmt.Errorf("%w: %q perturbs the training objective, not trained weights: it has no output-perturbation noise (package objpert)", ErrMechanism, string(m))
}

// Describe says in words what the noise of mechanism m of the given
// scale in dimension dim is: the Noise's Describe for an
// output-perturbation mechanism, the registered words of a training-time
// one, and a sentence saying so for an unknown name.
func Describe(m dp.Mechanism, scale float64, dim int) string {
	if t, ok := LookupTraining(m); ok {
		return t.Words
	}
	n, err := LookupStatement(m)
	if err != nil {
		return "It is not a registered mechanism: " + err.Error() + "."
	}
	return n.Describe(scale, dim)
}
