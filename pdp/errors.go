package pdp

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them
// (with %w), so callers can test with errors.Is.
var (
	// ErrInput reports unusable input: mismatched shapes, a NaN or infinite
	// entry, an invalid label, lambda < 0, an unknown mechanism or a bad
	// privacy parameter.
	ErrInput = errors.New("pdp: invalid input")
	// ErrNotSmooth reports an objective outside the hypotheses of Wang's
	// Lemma 13 (Assumptions A.1 and A.2: the loss and the regularizer are
	// differentiable with absolutely continuous derivatives): an L1 term, or
	// a loss this package cannot verify to be smooth.
	ErrNotSmooth = errors.New("pdp: objective is not smooth; the Hessian identity (Wang, Lemma 13) does not apply")
	// ErrSingular reports a Hessian that is not positive definite, so that
	// the minimizer is not unique (lambda = 0 with rank-deficient rows) or
	// does not exist (lambda = 0 with separable classes).
	ErrSingular = errors.New("pdp: singular Hessian")
	// ErrNoBound reports a release to be calibrated to the worst-case
	// sensitivity of a minimizer that has none (lambda = 0, a loss that is
	// not Lipschitz on the domain, rows outside the assumed bound).
	ErrNoBound = errors.New("pdp: no data-independent sensitivity bound")
	// ErrNoConvergence reports a Newton solve that did not reach its
	// gradient tolerance.
	ErrNoConvergence = errors.New("pdp: solver did not converge")
)
