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
	cert.Ledger = nil
	if got := releaseEpsilon(&modelfile.Released{Certificate: cert}); got != "1" {
		t.Errorf("without a ledger: %q, want 1", got)
	}
	if got := releaseEpsilon(&modelfile.Released{}); got != "" {
		t.Errorf("without a certificate: %q, want empty", got)
	}
}
