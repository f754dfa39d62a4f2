package private

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
)

// TestLedgerLeavesThePlansRelease checks, for random budgets and shares,
// that the plan's ledger, once the bounds' estimate and the principal
// components took their charges, leaves exactly the Release the plan
// forecast from public values (dp.Rest), so that the release's noise is
// calibrated to what the owner of the budget hands it.
func TestLedgerLeavesThePlansRelease(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	for i := range 2000 {
		budget, opts := randomShares(rng, i)
		pl, err := NewPlan(randomSharesSchema, budget, opts)
		if err != nil {
			t.Fatalf("%+v, %+v: %v", budget, opts, err)
		}
		bs := opts.BoundsShare
		if err := pl.spendBounds(float64(i % 3)); err != nil {
			t.Fatalf("%+v: the bounds' charge: %v", budget, err)
		}
		if opts.PCA > 0 {
			if err := pl.spendComponents(); err != nil {
				t.Fatalf("%+v: the components' charge: %v", budget, err)
			}
		}
		left, err := pl.left()
		if err != nil || left != pl.Release {
			t.Fatalf("budget %+v, shares %v and %v: the ledger leaves %+v (%v), the plan's release %+v", budget, bs, opts.PCAShare, left, err, pl.Release)
		}
	}
}

// TestLedgerRefuses checks that the plan's ledger refuses a charge past
// the budget, and that a release budget other than what it leaves is an
// ErrAccount, before anything is released: the
// release cannot be handed a part the steps before it were given.
func TestLedgerRefuses(t *testing.T) {
	schema := datasets.Schema{Label: "y", Classes: []string{"no", "yes"}}
	pl, err := NewPlan(schema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma})
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.spend(dp.Charge{Step: "too much", Mechanism: perturb.Laplace, Epsilon: 1.5}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("a charge past the budget: %v, want dp.ErrBudget", err)
	}
	// The plan gives a share to the bounds' estimate (no declared bounds):
	// until that charge is taken, the release may not have it.
	if _, err := pl.left(); !errors.Is(err, ErrAccount) {
		t.Errorf("the release's budget before the bounds' charge: %v, want ErrAccount", err)
	}
	if err := pl.spendBounds(0); err != nil {
		t.Fatal(err)
	}
	if left, err := pl.left(); err != nil || left != pl.Release || !(left.Epsilon < 1) {
		t.Errorf("after the bounds' charge the ledger leaves %+v, %v: want the plan's release %+v", left, err, pl.Release)
	}
	if _, err := (&Plan{}).left(); !errors.Is(err, ErrOptions) {
		t.Errorf("a Plan without a ledger: %v, want ErrOptions", err)
	}
}

// TestOptionsMethod checks that a method looked up by the caller is held
// by the plan as it is (no second look-up by name), that a Mechanism
// naming another method is refused, and that a fit with Method releases
// the same file as a fit with its name.
func TestOptionsMethod(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	m, err := release.Lookup(perturb.Gamma)
	if err != nil {
		t.Fatal(err)
	}
	b := dp.Budget{Epsilon: 1}
	pl, err := NewPlan(schema, b, Options{Method: m, Auto: true})
	if err != nil || pl.Method != m || pl.Options.Mechanism != perturb.Gamma {
		t.Fatalf("NewPlan with Method: method %v, mechanism %q, %v", pl.Method, pl.Options.Mechanism, err)
	}
	if _, err := NewPlan(schema, b, Options{Mechanism: perturb.Laplace, Method: m}); !errors.Is(err, ErrOptions) {
		t.Errorf("Mechanism laplace with Method gamma: %v, want ErrOptions", err)
	}
	fit := func(opts Options) *release.Certificate {
		t.Helper()
		opts.TestFrac, opts.Seed, opts.Auto, opts.Noise = 0.2, 1, true, perturb.Seeded(7)
		r, err := Fit(context.Background(), tab, schema, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		return r.Certificate
	}
	if byName, byMethod := fit(Options{Mechanism: perturb.Gamma}), fit(Options{Method: m}); !reflect.DeepEqual(byName, byMethod) {
		t.Errorf("the certificates differ:\nby name   %+v\nby method %+v", byName, byMethod)
	}
}

// randomSharesSchema is the schema of the plans of randomShares.
var randomSharesSchema = datasets.Schema{Label: "y", Classes: []string{"no", "yes"}}

// randomShares returns the i-th random budget and options of the ledger's
// property tests: eps from e^-3 to e^4, the bounds' share and, for even i,
// the principal components' share and AMP; for odd i a pure budget and
// objective perturbation without components.
func randomShares(rng *rand.Rand, i int) (dp.Budget, Options) {
	budget := dp.Budget{Epsilon: math.Exp(7*rng.Float64() - 3), Delta: 1e-4 * rng.Float64()}
	bs := 0.01 + 0.5*rng.Float64()
	opts := Options{Mechanism: perturb.AMP, BoundsShare: bs, PCA: 2, PCAShare: 0.01 + (0.98-bs)*rng.Float64()}
	if i%2 == 1 {
		budget.Delta, opts.Mechanism, opts.PCA, opts.PCAShare = 0, perturb.Objective, 0, 0
	}
	return budget, opts
}

// TestAccountTakesTheReleasesCharges: the charges of a release's
// certificate are taken from the plan's ledger (release's doc, "Ledgers"),
// which refuses a release charged past what it leaves and then takes
// nothing.
func TestAccountTakesTheReleasesCharges(t *testing.T) {
	pl, err := NewPlan(randomSharesSchema, dp.Budget{Epsilon: 1}, Options{Mechanism: perturb.Gamma})
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.spendBounds(0); err != nil {
		t.Fatal(err)
	}
	over := &release.Certificate{Claim: dp.Claim{Ledger: []dp.Charge{
		{Step: release.OutputStep, Mechanism: perturb.Gamma, Epsilon: math.Nextafter(pl.Release.Epsilon, 2)}}}}
	if err := pl.account(over, nil); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("a release charged past what the ledger leaves: %v, want dp.ErrBudget", err)
	}
	if left := pl.ledger.Left(); left != pl.Release {
		t.Errorf("after the refusal the ledger leaves %+v, want the untouched %+v", left, pl.Release)
	}
}
