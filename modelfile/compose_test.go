package modelfile

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/release"
)

// TestComposeTakesFromTheClaim checks that the pipeline's charges are taken
// from a ledger of its claim: the bounds' estimate and a release that fit
// are composed (the release's part rounded down by dp.Rest: 0.1 + 0.9 is
// over 1 in exact arithmetic), and a pair that would overspend the claim is refused and
// leaves the certificate as it was.
func TestComposeTakesFromTheClaim(t *testing.T) {
	epsRel := dp.Rest(1, 0.1) // as private.Plan splits the claim
	rel := func() *release.Certificate {
		return &release.Certificate{Claim: dp.Claim{Epsilon: epsRel, Ledger: []dp.Charge{{Step: release.OutputStep, Mechanism: dp.Gamma, Epsilon: epsRel}}}}
	}
	p := &preprocess.RowMap{Estimated: true}
	c := rel()
	if err := ComposePipeline(c, p, dp.Budget{Epsilon: 1}, 0.1, dp.Budget{}); err != nil || c.Epsilon != 1 || len(c.Ledger) != 2 {
		t.Errorf("bounds 0.1 + release Rest(1, 0.1) in a claim of 1: %v, claim %v, ledger %v", err, c.Epsilon, c.Ledger)
	}
	c, want := rel(), rel()
	err := ComposePipeline(c, p, dp.Budget{Epsilon: 0.95}, 0.1, dp.Budget{})
	if !errors.Is(err, dp.ErrBudget) || !reflect.DeepEqual(c, want) {
		t.Errorf("bounds 0.1 + release Rest(1, 0.1) in a claim of 0.95: %v, certificate %+v", err, c.Claim)
	}
}
