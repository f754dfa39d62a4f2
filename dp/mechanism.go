package dp

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMechanism is wrapped by every error about a mechanism name that is
// not one of the names below.
var ErrMechanism = errors.New("dp: invalid mechanism")

// Mechanism names the noise law of a release: the name a claim, a ledger
// entry, a model file and the command line carry. The names form a closed
// list (the constants below), so a misspelt name is refused where it is
// read (UnmarshalText). The laws themselves are implemented above this
// package: the output-perturbation noise in package perturb (its Noise
// values, found by perturb.Lookup), objective perturbation and AMP in
// package objpert, the decision stump in package stump, DP-SGD in
// packages trainer and release. Those packages'
// tests check that their registries and this list agree.
type Mechanism string

// The mechanism names, in the order shown to users.
const (
	// Laplace is Laplace noise of scale b = D1/eps per coordinate, D1 the
	// L1 sensitivity: pure eps-DP (package perturb).
	Laplace Mechanism = "laplace"
	// Gamma is gamma-norm noise, density ~ exp(-eps ||b|| / D2): pure
	// eps-DP (package perturb).
	Gamma Mechanism = "gamma"
	// Gaussian is the classical Gaussian mechanism, (eps, delta)-DP for
	// eps < 1 (package perturb).
	Gaussian Mechanism = "gaussian"
	// AnalyticGaussian is the analytic Gaussian mechanism of Balle & Wang
	// (2018), (eps, delta)-DP for every eps > 0 (package perturb).
	AnalyticGaussian Mechanism = "gaussian-analytic"
	// Objective is objective perturbation: pure eps-DP (package objpert).
	Objective Mechanism = "objective"
	// AMP is Approximate Minima Perturbation: (eps, delta)-DP (package
	// objpert).
	AMP Mechanism = "amp"
	// Stump is the private decision stump chosen by permute-and-flip:
	// pure eps-DP (package stump).
	Stump Mechanism = "stump"
	// DPSGD is DP-SGD (Abadi et al. 2016): per-example clipping, Gaussian
	// noise on every step's sum, Poisson sampling, accounted by the PLD or
	// RDP: (eps, delta)-DP (packages release/dpsgd, accountant).
	DPSGD Mechanism = "dp-sgd"
	// PermuteAndFlip is the private selection step of a ledger entry
	// (McKenna & Sheldon 2020): pure eps-DP. It selects a candidate, it
	// releases no model, so it is no value of a --mechanism flag.
	PermuteAndFlip Mechanism = "permute-and-flip"
	// InverseSensitivity is the exponential mechanism with the inverse
	// sensitivity utility (Asi & Duchi 2020): pure eps-DP per draw, the
	// draws of a private summary of per-instance epsilons (package
	// pdp/publish). It releases no model.
	InverseSensitivity Mechanism = "exponential (inverse sensitivity)"
)

// law is what this package knows of a mechanism by its name.
type law struct {
	name Mechanism
	// pure: the claim is pure eps-DP (delta = 0).
	pure bool
	// scale names the noise scale of an output-perturbation law ("" for
	// the others).
	scale string
	// release: a value of --mechanism (every name but a selection step's).
	release bool
}

// laws lists the names in the order shown to users.
var laws = []law{
	{Laplace, true, "b", true},
	{Gamma, true, "theta", true},
	{Gaussian, false, "sigma", true},
	{AnalyticGaussian, false, "sigma", true},
	{Objective, true, "", true},
	{AMP, false, "", true},
	{Stump, true, "", true},
	{DPSGD, false, "", true},
	{PermuteAndFlip, true, "", false},
	{InverseSensitivity, true, "", false},
}

func lookup(m Mechanism) (law, bool) {
	for _, l := range laws {
		if l.name == m {
			return l, true
		}
	}
	return law{}, false
}

// ReleaseMechanisms returns the names a release may be made with (every
// name but PermuteAndFlip), in the order shown to users.
func ReleaseMechanisms() []Mechanism {
	var out []Mechanism
	for _, l := range laws {
		if l.release {
			out = append(out, l.name)
		}
	}
	return out
}

// ParseMechanism returns the release mechanism named name, or an error
// wrapping ErrMechanism that lists the names.
func ParseMechanism(name string) (Mechanism, error) {
	if l, ok := lookup(Mechanism(name)); ok && l.release {
		return l.name, nil
	}
	names := make([]string, 0, len(laws))
	for _, m := range ReleaseMechanisms() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("%w: %q, want one of %s", ErrMechanism, name, strings.Join(names, ", "))
}

// Pure reports whether the mechanism's claim is pure eps-DP (delta must be
// 0); false for an unknown name.
func (m Mechanism) Pure() bool {
	l, _ := lookup(m)
	return l.pure
}

// ScaleName names the noise scale of an output-perturbation mechanism:
// "b" (Laplace scale per coordinate), "theta" (Gamma scale of the noise
// norm) or "sigma" (Gaussian standard deviation per coordinate); "" for
// the other names.
func (m Mechanism) ScaleName() string {
	l, _ := lookup(m)
	return l.scale
}

// MarshalText returns the mechanism's name.
func (m Mechanism) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText sets the mechanism named by text: a release mechanism
// (ParseMechanism), or a step a ledger entry may name that releases no
// model (PermuteAndFlip, InverseSensitivity). An unknown name is an error wrapping ErrMechanism that lists
// the names, so a flag or a file with a misspelt mechanism is refused
// where it is read.
func (m *Mechanism) UnmarshalText(text []byte) error {
	if l, ok := lookup(Mechanism(text)); ok && !l.release {
		*m = l.name
		return nil
	}
	v, err := ParseMechanism(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
