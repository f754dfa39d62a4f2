package dp

import (
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrBudget is wrapped by every error about an invalid budget.
var ErrBudget = errors.New("dp: invalid budget")

// Budget is the total privacy budget of one fit: every private step draws
// from it, and the certificate's ledger lists the draws.
type Budget struct {
	// Epsilon > 0 and Delta in [0, 1): delta is 0 for the pure mechanisms.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Validate returns an error wrapping ErrBudget unless eps is finite and
// positive and delta lies in [0, 1). Whether a mechanism can spend the
// budget (delta = 0 exactly for a pure one) is the mechanism's check.
func (b Budget) Validate() error {
	if !check.Positive(b.Epsilon) {
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrBudget, b.Epsilon)
	}
	if !check.HalfOpenUnit(b.Delta) {
		return fmt.Errorf("%w: delta = %v, want in [0, 1)", ErrBudget, b.Delta)
	}
	return nil
}

// Pure reports whether the budget is pure eps-DP (delta = 0).
func (b Budget) Pure() bool { return b.Delta == 0 }
