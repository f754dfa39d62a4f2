package dp

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrBudget is wrapped by every error about an invalid budget.
var ErrBudget = errors.New("dp: invalid budget")

// MinEpsilon and MaxEpsilon bound the eps of a budget (Validate).
//
// Below MinEpsilon = 2^-50 (about 8.9e-16) every mechanism's noise is more
// than 2^50 times its sensitivity, so no table of fewer than 2^40 rows
// gets any signal through, and the secure Laplace sampler refuses it.
//
// Above MaxEpsilon = 100 the claim bounds the ratio of an output's
// probabilities on neighbouring tables by e^100 > 10^43: it protects
// nothing, and the arithmetic of the mechanisms gives out not far above
// it (AMP's failure charge (1 + e^eps) delta overflows at eps = 709.8, the
// objective's lambda floor a/(n (e^(eps/2r) - 1)) underflows to 0). A
// model without a guarantee is a run without a mechanism.
const (
	MinEpsilon = 0x1p-50
	MaxEpsilon = 100
)

// Budget is the total privacy budget of one fit: every private step draws
// from it, and the certificate's ledger lists the draws.
type Budget struct {
	// Epsilon in [MinEpsilon, MaxEpsilon] and Delta in [0, 1): delta is 0
	// for the pure mechanisms, and below 1/n for n training rows
	// (CheckRows).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Validate returns an error wrapping ErrBudget unless eps is finite and
// in [MinEpsilon, MaxEpsilon] and delta lies in [0, 1). Above MaxEpsilon
// the claim bounds probability ratios by e^eps > 1e43 and protects
// nothing: a model without a guarantee is trained with no mechanism. Whether a
// mechanism can spend the budget (delta = 0 exactly for a pure one) is the
// mechanism's check, and whether delta is small enough for the rows is
// CheckRows'.
func (b Budget) Validate() error {
	switch {
	case !check.Positive(b.Epsilon):
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrBudget, b.Epsilon)
	case b.Epsilon < MinEpsilon:
		return fmt.Errorf("%w: eps = %v is below 2^-50 = %.2g: the noise would be over 2^50 times the sensitivity, the release pure noise", ErrBudget, b.Epsilon, float64(MinEpsilon))
	case b.Epsilon > MaxEpsilon:
		return fmt.Errorf("%w: eps = %v is above %v: the claim would bound probability ratios by e^eps > 1e43, no protection; use no mechanism", ErrBudget, b.Epsilon, float64(MaxEpsilon))
	case !check.HalfOpenUnit(b.Delta):
		return fmt.Errorf("%w: delta = %v, want in [0, 1)", ErrBudget, b.Delta)
	}
	return nil
}

// Pure reports whether the budget is pure eps-DP (delta = 0).
func (b Budget) Pure() bool { return b.Delta == 0 }

// WarnDeltaRows is the share of 1/n above which delta draws a warning
// (DeltaWarning): n delta > 0.1.
const WarnDeltaRows = 0.1

// CheckRows returns an error wrapping ErrBudget when delta >= 1/n, for a
// release that reads n units of privacy (training rows, or privacy IDs for
// a fit per privacy ID, named by unit): the mechanism that publishes each
// unit's data outright with probability delta is (0, delta)-DP, and at
// delta >= 1/n it publishes one in expectation (Dwork & Roth 2014, Section
// 2.3: delta must be much smaller than 1/n). n < 1 is not checked.
//
// The refusal reads n, which is a count of the rows, but it reveals
// nothing: under the replace-one relations of this module neighbouring
// tables have the same number of rows (and of privacy IDs), so n is
// public, and every certificate publishes it.
func (b Budget) CheckRows(n int, unit string) error {
	if n < 1 || !atLeastInverse(b.Delta, n) {
		return nil
	}
	return fmt.Errorf("%w: delta = %v >= 1/n = 1/%d (%ss): a release could publish a %s outright; use delta << 1/n, e.g. 1/n^2 = %.2g or 1e-6",
		ErrBudget, b.Delta, n, unit, unit, 1/(float64(n)*float64(n)))
}

// atLeastInverse reports whether delta >= 1/n in exact arithmetic (n >= 1;
// false for a delta that is not finite).
func atLeastInverse(delta float64, n int) bool {
	d, ok := exact(delta)
	return ok && d.Mul(d, new(big.Rat).SetInt64(int64(n))).Cmp(big.NewRat(1, 1)) >= 0
}

// DeltaWarning returns a warning when delta is below 1/n (CheckRows) but
// n delta > WarnDeltaRows: the mechanism that publishes each of the n
// units with probability delta, which the claim allows, would publish n
// delta of them in expectation. It returns "" otherwise.
func (b Budget) DeltaWarning(n int, unit string) string {
	if n < 1 || b.Delta*float64(n) <= WarnDeltaRows || atLeastInverse(b.Delta, n) {
		return ""
	}
	return fmt.Sprintf("delta = %v is above 1/(10 n) = %.2g for n = %d %ss: the claim allows publishing each %s with probability delta, %.2g of them in expectation; "+
		"delta much smaller than 1/n is the usual standard (Dwork & Roth 2014, Section 2.3), e.g. 1/n^2 = %.2g",
		b.Delta, WarnDeltaRows/float64(n), n, unit, unit, b.Delta*float64(n), 1/(float64(n)*float64(n)))
}
