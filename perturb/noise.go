package perturb

import (
	"fmt"
	"strings"

	"github.com/stabpriv/stabpriv/dp"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb/marginal"
)

// An output-perturbation mechanism is a value with three roles, each a
// small interface, as gonum's optimize splits a Method from its Settings
// and Recorder: Noise draws (the budget check, the calibration, the
// sampler and the law of the released coordinates), Statement says what a
// certificate states of it, and Tuning sizes it for the automatic knobs and
// the inverse calibration. Each mechanism is one file (laplace.go,
// gamma.go, gaussian.go, analytic_gaussian.go) implementing the three, and
// one line of the registry (registry.go); nothing else names a mechanism.
// Lookup, LookupStatement and LookupTuning return the roles of a
// dp.Mechanism name and refuse an unknown one.
//
// Every method is for replace-one neighbours. Methods taking a Calibration
// expect one made by the same mechanism's Calibrate (or a copy of it with
// another Scale: Add then adds the noise of that scale).

// Noise draws the noise of one mechanism.
type Noise interface {
	// Name is the mechanism's name, used on the command line, in
	// certificates and in model files.
	Name() dp.Mechanism
	// Pure reports whether the mechanism is pure eps-DP (delta must be 0);
	// otherwise it is (eps, delta)-DP with delta in (0, 1).
	Pure() bool
	// CheckBudget returns an error wrapping ErrEpsilon, ErrDelta or a
	// mechanism-specific sentinel (ErrClassicalRange) if (eps, delta) is not
	// a budget the mechanism can certify.
	CheckBudget(eps, delta float64) error
	// Calibrate returns the noise for (eps, delta)-DP at the sensitivity
	// sens in dimension dim >= 1 (see the package function Calibrate).
	Calibrate(eps, delta float64, sens Sensitivity, dim int) (Calibration, error)
	// Add adds the noise of cal to w in place, drawn from src.
	Add(w []float64, cal Calibration, src Source) error
	// Marginal returns the law of the noise on the released coordinates,
	// for private feature selection (package featsel), or an error if the
	// mechanism has none in closed form.
	Marginal(cal Calibration) (marginal.Law, error)
}

// Statement is what a certificate states of one mechanism.
type Statement interface {
	// ScaleName names Calibration.Scale: "b", "theta", "sigma", ...
	ScaleName() string
	// Citation is the reference for the mechanism's guarantee, written into
	// certificates.
	Citation() string
	// Describe says in words what noise of this scale in dimension dim is
	// (one sentence of the certificate's String).
	Describe(scale float64, dim int) string
	// SamplerNote is the certificate's statement about the secure sampler
	// of this mechanism (rounding, floating-point attacks).
	SamplerNote(cal Calibration) string
	// Notes are further assumptions of the calibration cal that the
	// certificate must list (nil if none).
	Notes(cal Calibration) []string
}

// Tuning sizes the noise of one mechanism: its norms, which the automatic
// knobs read, and the eps a noise scale buys.
type Tuning interface {
	// EpsilonForScale inverts Calibrate: the eps that the noise scale buys
	// at the sensitivity returned by ScaleSensitivity, and delta.
	EpsilonForScale(scale, sensitivity, delta float64) (float64, error)
	// ScaleSensitivity returns the sensitivity the scale of cal is
	// calibrated to: cal.L1 for Laplace, cal.L2 otherwise.
	ScaleSensitivity(cal Calibration) float64
	// ExpectedNorm returns E||b||_2 of the noise b of cal where it has a
	// closed form, and otherwise its upper bound sqrt(E||b||_2^2)
	// (Jensen), as stated by each mechanism.
	ExpectedNorm(cal Calibration) float64
	// RMSNorm returns sqrt(E||b||_2^2) of the noise b of cal.
	RMSNorm(cal Calibration) float64
}

// mechanism is what the registry holds: a mechanism in its three roles.
type mechanism interface {
	Noise
	Statement
	Tuning
}

// Lookup returns the Noise of the registered mechanism named m, or an error
// wrapping ErrMechanism: an unknown name is always an error.
func Lookup(m dp.Mechanism) (Noise, error) { return lookup(m) }

// LookupStatement returns the Statement of the registered mechanism named
// m, or Lookup's error.
func LookupStatement(m dp.Mechanism) (Statement, error) { return lookup(m) }

// LookupTuning returns the Tuning of the registered mechanism named m, or
// Lookup's error.
func LookupTuning(m dp.Mechanism) (Tuning, error) { return lookup(m) }

func lookup(m dp.Mechanism) (mechanism, error) {
	if _, ok := LookupTraining(m); ok {
		return nil, trainingLookupError(m)
	}
	return lookupIn(registry, m)
}

func lookupIn(reg []mechanism, m dp.Mechanism) (mechanism, error) {
	for _, n := range reg {
		if n.Name() == m {
			return n, nil
		}
	}
	return nil, fmt.Errorf("%w: %q, want one of %s", ErrMechanism, string(m), listNames(reg))
}

// Mechanisms returns the names of the registered mechanisms in the order
// shown to users.
func Mechanisms() []dp.Mechanism {
	out := make([]dp.Mechanism, len(registry))
	for i, n := range registry {
		out[i] = n.Name()
	}
	return out
}

// MechanismList returns the registered names joined by ", " (for help
// texts and messages).
func MechanismList() string { return listNames(registry) }

func listNames(reg []mechanism) string {
	names := make([]string, len(reg))
	for i, n := range reg {
		names[i] = string(n.Name())
	}
	return strings.Join(names, ", ")
}

// ParseMechanism returns the release mechanism with the given name, an
// output-perturbation mechanism or a training-time one (training.go), or an
// error wrapping dp.ErrMechanism: it is dp.ParseMechanism, whose list of names
// TestConformance checks against the registries.
func ParseMechanism(name string) (dp.Mechanism, error) { return dp.ParseMechanism(name) }

// Helpers shared by the mechanisms.

func checkEpsilon(eps float64) error {
	if !check.Positive(eps) {
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrEpsilon, eps)
	}
	return nil
}

func checkDelta(delta float64) error {
	if !check.HalfOpenUnit(delta) {
		return fmt.Errorf("%w: delta = %v, want in [0, 1)", ErrDelta, delta)
	}
	return nil
}

func checkPositive(err error, name string, v float64) error {
	if !check.Positive(v) {
		return fmt.Errorf("%w: %s = %v, want finite > 0", err, name, v)
	}
	return nil
}

// checkBudget is the part of Noise.CheckBudget that every mechanism
// shares: eps finite > 0, delta in [0, 1), delta = 0 exactly for a pure
// mechanism.
func checkBudget(n Noise, eps, delta float64) error {
	if err := checkEpsilon(eps); err != nil {
		return err
	}
	if err := checkDelta(delta); err != nil {
		return err
	}
	if n.Pure() && delta != 0 {
		return fmt.Errorf("%w: delta = %v with the pure mechanism %s, want 0", ErrDelta, delta, n.Name())
	}
	if !n.Pure() && delta == 0 {
		return fmt.Errorf("%w: delta = 0 with the (eps, delta) mechanism %s, want in (0, 1)", ErrDelta, n.Name())
	}
	return nil
}

// newCalibration checks the inputs of n.Calibrate and returns the
// calibration without its Scale.
func newCalibration(n Noise, eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	if err := n.CheckBudget(eps, delta); err != nil {
		return Calibration{}, err
	}
	if err := sens.Validate(); err != nil {
		return Calibration{}, err
	}
	if dim < 1 {
		return Calibration{}, fmt.Errorf("%w: dimension %d, want >= 1", ErrModel, dim)
	}
	return Calibration{Mechanism: n.Name(), Epsilon: eps, Delta: delta, Dim: dim, L2: sens.L2, L1: sens.l1(dim)}, nil
}

// withScale sets the scale of c, refusing one that is not finite and > 0.
func withScale(n mechanism, c Calibration, scale float64, err error) (Calibration, error) {
	if err != nil {
		return Calibration{}, err
	}
	c.Scale = scale
	if !check.Positive(c.Scale) {
		return Calibration{}, fmt.Errorf("%w: %s = %v for eps = %v, delta = %v", ErrScale, n.ScaleName(), c.Scale, c.Epsilon, c.Delta)
	}
	return c, nil
}

// checkInverse checks the inputs of n.EpsilonForScale.
func checkInverse(n mechanism, scale, sensitivity, delta float64) error {
	if err := checkPositive(ErrScale, n.ScaleName(), scale); err != nil {
		return err
	}
	if err := checkPositive(ErrSensitivity, "sensitivity", sensitivity); err != nil {
		return err
	}
	if err := checkDelta(delta); err != nil {
		return err
	}
	if n.Pure() != (delta == 0) {
		return fmt.Errorf("%w: delta = %v with mechanism %s", ErrDelta, delta, n.Name())
	}
	return nil
}

// secureSamplerNote is the certificate's note on the secure samplers that
// google/differential-privacy provides: Laplace's, and the Gaussian one of
// the releases before SecureGaussianNote (FormerSamplerNotes).
const secureSamplerNote = "the secure Laplace and Gaussian samplers of google/differential-privacy round each coordinate to a grid and account for that rounding once per call; over the released coordinates the claim holds up to that rounding (a relative excess of order dim * 2^-40 in epsilon for Laplace), and the Gaussian noise is their discretized approximation of the calibrated sigma"
