package private

import (
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/objpert"
)

// TestPipelineLedgerWithinClaim is a property test of the ledger a
// private fit writes: for random budgets and shares (the bounds' estimate,
// the private principal directions, the release by AMP or objective
// perturbation, whose parts split the rest again), the charges the plan
// and the mechanism compute add up to at most the budget in exact
// arithmetic (dp.Budget.Covers), which float64 subtraction does not give.
func TestPipelineLedgerWithinClaim(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 3))
	pr := objpert.Problem{Loss: losses.Logistic{}, N: 1000, D: 5, K: 1, Kappa: 1, Lambda: 1}
	for i := range 2000 {
		budget, opts := randomShares(rng, i)
		pl, err := NewPlan(randomSharesSchema, budget, opts)
		if err != nil {
			t.Fatalf("%+v, %+v: %v", budget, opts, err)
		}
		cal, err := objpert.Calibrate(opts.Mechanism, pl.Release.Epsilon, pl.Release.Delta, pr)
		if err != nil {
			t.Fatalf("%+v at the release's %+v: %v", budget, pl.Release, err)
		}
		ledger := []dp.Charge{modelfile.BoundsCharge(pl.BoundsEpsilon)}
		if opts.PCA > 0 {
			ledger = append(ledger, modelfile.ComponentsCharge(pl.PCABudget))
		}
		ledger = append(ledger, cal.Ledger()...)
		if err := budget.Covers(ledger); err != nil {
			t.Fatalf("budget %+v, shares %v and %v: %v (ledger %+v)", budget, opts.BoundsShare, opts.PCAShare, err, ledger)
		}
	}
}
