package dp

import (
	"fmt"
	"math"
	"slices"
)

// Ledger is the account of one claim: the budget it may spend and the
// charges taken from it, in order. A charge is taken with Spend, which
// refuses one that would take the charges past the budget in exact
// arithmetic (the rule of Covers: the entries of one part of the rows add
// up, disjoint parts count once), so the charges of a Ledger never add up
// to more than its budget. A claim's ledger is written only from a Ledger
// (Claim.Account). The zero Ledger has the budget (0, 0): it takes only
// charges of zero.
type Ledger struct {
	budget  Budget
	charges []Charge
}

// NewLedger returns the ledger of the budget b with the charges taken in
// order, or the first refusal of Spend. It does not validate b (see
// Budget.Validate): a ledger is an account, the budget's bounds are the
// release's check.
func NewLedger(b Budget, charges ...Charge) (*Ledger, error) {
	l := &Ledger{budget: b}
	for _, c := range charges {
		if _, err := l.Spend(c); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Spend takes the charge c from the ledger and returns what is left of the
// budget (Left). It returns an error wrapping ErrBudget, and takes
// nothing, when c's eps or delta is not finite and >= 0, or when the
// charges with c would add up to more than the budget (in exact
// arithmetic, Covers). The latter names what is left: a budget split in
// decimal steps is often refused by a rounding error (0.3 refuses 0.1
// then 0.2, by 2.8e-17), and the last step should charge Left() (or
// Rest of the budget and the steps before), which always fits.
func (l *Ledger) Spend(c Charge) (Budget, error) {
	if !(c.Epsilon >= 0) || !(c.Delta >= 0) || math.IsInf(c.Epsilon, 1) || math.IsInf(c.Delta, 1) {
		return l.Left(), fmt.Errorf("%w: the charge of %s is eps = %v, delta = %v: want finite >= 0", ErrBudget, c.Step, c.Epsilon, c.Delta)
	}
	with := append(slices.Clone(l.charges), c)
	if err := l.budget.Covers(with); err != nil {
		left := l.Left()
		return left, fmt.Errorf("%w: the charge of %s (eps %v, delta %v) exceeds the rest (eps %v, delta %v); charge Left() (dp.Rest) last", ErrBudget, c.Step, c.Epsilon, c.Delta, left.Epsilon, left.Delta)
	}
	l.charges = with
	return l.Left(), nil
}

// Left returns what is left of the budget: the largest float64 eps and
// delta that one more charge on all the rows could take (Rest, over the
// largest part of the rows).
func (l *Ledger) Left() Budget {
	eps, delta, _ := ExactTotal(l.charges)
	be, _ := exact(l.budget.Epsilon)
	bd, _ := exact(l.budget.Delta)
	return Budget{Epsilon: max(floorFloat(be.Sub(be, eps)), 0), Delta: max(floorFloat(bd.Sub(bd, delta)), 0)}
}

// Budget returns the budget of the ledger.
func (l *Ledger) Budget() Budget { return l.budget }

// Charges returns a copy of the charges taken, in order.
func (l *Ledger) Charges() []Charge { return slices.Clone(l.charges) }

// Account sets the claim's budget and ledger from l: (Epsilon, Delta) is
// l's budget and Ledger its charges, which add up to at most the budget.
func (c *Claim) Account(l *Ledger) {
	c.Epsilon, c.Delta = l.budget.Epsilon, l.budget.Delta
	c.Ledger = l.Charges()
}
