package private

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/release"
)

// The budget of a fit has one owner: the plan's ledger (dp.Ledger), opened
// by NewPlan from the budget the caller gives. Each private step takes its
// charge from it when it runs (the bounds' estimate, the principal
// components, then the release or the selection, whose charges are the
// release certificate's), the release is handed what the ledger leaves
// (Left), and the certificate's claim and ledger are written from it
// (dp.Claim.Account). A step the budget cannot pay for is refused by the
// ledger before anything is released. The release (or the selection)
// writes its charges into its certificate's own ledger, on the budget it
// is handed, so that it stands alone and a verifier rebuilds it from the
// published constants (package release's doc, "Ledgers"); account takes
// those charges from the plan's ledger, which refuses any that do not fit,
// and the published ledger is the plan's.

// ErrAccount is the error of a fit whose steps' charges do not add up to
// the claim the certificate states: a bug, never the data's doing.
var ErrAccount = errors.New("private: the ledger and the certificate disagree")

// lookupMethod returns the release method of the options: Options.Method,
// whose name Options.Mechanism must be when given, or release.Lookup of
// Options.Mechanism. Errors wrap ErrOptions.
func lookupMethod(opts Options) (release.Method, error) {
	if m := opts.Method; m != nil {
		if opts.Mechanism != m.Name() {
			return nil, fmt.Errorf("%w: Mechanism %q but Method %q: give one, or both the same", ErrOptions, opts.Mechanism, m.Name())
		}
		return m, nil
	}
	m, err := release.Lookup(opts.Mechanism)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return m, nil
}

// spend takes the charge c of a private step from the plan's ledger.
// Errors wrap dp.ErrBudget.
func (pl *Plan) spend(c dp.Charge) error {
	if pl.ledger == nil {
		return fmt.Errorf("%w: a Plan without a ledger spends (use NewPlan)", ErrOptions)
	}
	_, err := pl.ledger.Spend(c)
	return err
}

// spendBounds takes the charge of the bounds' estimate, when the fit made
// one (EstimateBounds): the centres and spreads read on the log scale
// (logScale > 0; in the words of a fit with principal components when it
// has them) or the ranges, at BoundsEpsilon.
func (pl *Plan) spendBounds(logScale float64) error {
	if !pl.EstimateBounds {
		return nil
	}
	c := modelfile.BoundsCharge(pl.BoundsEpsilon)
	if logScale > 0 {
		c = modelfile.CentresCharge(pl.BoundsEpsilon)
		if pl.Options.PCA > 0 {
			c = modelfile.CentresChargePCA(pl.BoundsEpsilon)
		}
	}
	return pl.spend(c)
}

// spendComponents takes the charge of the private principal components,
// at PCABudget.
func (pl *Plan) spendComponents() error {
	return pl.spend(modelfile.ComponentsCharge(pl.PCABudget))
}

// left returns the budget the release is handed once the steps before it
// took their charges: the plan's Release, which NewPlan and the bounds'
// step forecast from public values. The ledger may leave a little more
// (it rounds the rest once, setRelease twice, in the certificate's order);
// leaving less, or more than those roundings, is an ErrAccount.
func (pl *Plan) left() (dp.Budget, error) {
	if pl.ledger == nil {
		return dp.Budget{}, fmt.Errorf("%w: a Plan without a ledger (use NewPlan)", ErrOptions)
	}
	left, r := pl.ledger.Left(), pl.Release
	// Two roundings down each lose less than an ulp of the budget.
	ulp := math.Nextafter(pl.Budget.Epsilon, math.Inf(1)) - pl.Budget.Epsilon
	if left.Delta != r.Delta || left.Epsilon < r.Epsilon || left.Epsilon-r.Epsilon > 2*ulp {
		return left, fmt.Errorf("%w: the ledger leaves (%v, %v) for the release, the plan (%v, %v)", ErrAccount, left.Epsilon, left.Delta, r.Epsilon, r.Delta)
	}
	return r, nil
}

// account takes the release's charges (the ledger of its certificate c,
// made at the budget left) from the plan's ledger and writes the claim of
// the pipeline into c: every charge taken, in order, as its ledger, with
// the words of the steps before the release (modelfile.ComposePipeline,
// which Verify rebuilds the same way and whose ledger must be the plan's).
// The claim is the plan's budget, or less where the steps spent less (a
// pure selection within an (eps, delta) budget claims delta 0).
func (pl *Plan) account(c *release.Certificate, prep *preprocess.RowMap) error {
	for _, ch := range c.Ledger {
		if err := pl.spend(ch); err != nil {
			return err
		}
	}
	if err := modelfile.ComposePipeline(c, prep, pl.Budget, pl.BoundsEpsilon, pl.PCABudget); err != nil {
		return err
	}
	spent := pl.ledger.Charges()
	if !slices.Equal(c.Ledger, spent) || c.Epsilon > pl.Budget.Epsilon || c.Delta > pl.Budget.Delta {
		return fmt.Errorf("%w: the certificate's ledger is not the one the fit spent", ErrAccount)
	}
	c.Ledger = spent
	return nil
}
