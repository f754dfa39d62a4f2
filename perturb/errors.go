package perturb

import (
	"errors"
)

// Sentinel errors. Every error returned by this package wraps one of them
// (with %w), so callers can test with errors.Is.
var (
	// ErrEpsilon reports an epsilon that is not finite and > 0.
	ErrEpsilon = errors.New("perturb: invalid epsilon")
	// ErrDelta reports a delta outside [0, 1), a positive delta for a pure
	// mechanism, or delta = 0 for a Gaussian mechanism.
	ErrDelta = errors.New("perturb: invalid delta")
	// ErrSensitivity reports a sensitivity that is not finite and > 0, an L1
	// bound below the L2 bound, or an unsupported neighbouring relation.
	ErrSensitivity = errors.New("perturb: invalid sensitivity")
	// ErrMechanism reports a name that is not a registered
	// output-perturbation mechanism (Lookup). An unknown name read from
	// text is refused by dp (dp.ErrMechanism).
	ErrMechanism = errors.New("perturb: invalid mechanism")
	// ErrClassicalRange reports eps >= 1 for the classical Gaussian
	// mechanism, whose guarantee (Dwork & Roth 2014, Theorem A.1) needs
	// eps < 1. The analytic Gaussian mechanism ("gaussian-analytic", Balle
	// & Wang 2018) is valid for every eps > 0.
	ErrClassicalRange = errors.New("perturb: classical Gaussian mechanism needs eps < 1 (Dwork & Roth 2014, Thm A.1); use gaussian-analytic")
	// ErrModel reports a missing, malformed or non-finite model or run.
	ErrModel = errors.New("perturb: invalid model")
	// ErrNotCertified reports a run outside the class whose sensitivity this
	// library certifies (a user-supplied graph model or a non-convex loss).
	ErrNotCertified = errors.New("perturb: run outside the certified class")
	// ErrSource reports a failure of the noise source.
	ErrSource = errors.New("perturb: noise source failed")
	// ErrScale reports a noise scale that is not finite and > 0.
	ErrScale = errors.New("perturb: invalid noise scale")
)
