package main

import (
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
)

// TestReleaseEpsilon: the release's eps is its own ledger entry's, after
// the feature scales' charge, or the claim's without a ledger.
func TestReleaseEpsilon(t *testing.T) {
	cert := &release.Certificate{Claim: dp.Claim{Mechanism: perturb.DPSGD, Epsilon: 1, Ledger: []dp.Charge{
		{Mechanism: "permute-and-flip", Epsilon: 0.184}, {Mechanism: dp.Mechanism(perturb.DPSGD), Epsilon: 0.816}}}}
	if got := releaseEpsilon(&modelfile.Released{Certificate: cert}); got != "0.816" {
		t.Errorf("with a ledger: %q, want 0.816", got)
	}
	// AMP's three entries (objective part, output part, iteration budget)
	// are one release: their sum, not the last entry's 0.
	amp := &release.Certificate{Claim: dp.Claim{Mechanism: perturb.AMP, Epsilon: 1, Ledger: []dp.Charge{
		{Mechanism: "permute-and-flip", Epsilon: 0.25}, {Mechanism: dp.AMP, Epsilon: 0.5}, {Mechanism: dp.AMP, Epsilon: 0.25}, {Mechanism: dp.AMP}}}}
	if got := releaseEpsilon(&modelfile.Released{Certificate: amp}); got != "0.75" {
		t.Errorf("AMP's entries: %q, want 0.75", got)
	}
	cert.Ledger = nil
	if got := releaseEpsilon(&modelfile.Released{Certificate: cert}); got != "1" {
		t.Errorf("without a ledger: %q, want 1", got)
	}
	if got := releaseEpsilon(&modelfile.Released{}); got != "" {
		t.Errorf("without a certificate: %q, want empty", got)
	}
}
