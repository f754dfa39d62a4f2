package dp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// TestMechanismText checks that a name is read back as written, that a
// ledger entry's selection step reads but is no release mechanism, and
// that an unknown name is refused where it is read, with the names listed.
func TestMechanismText(t *testing.T) {
	for _, m := range append(dp.ReleaseMechanisms(), dp.PermuteAndFlip) {
		b, err := json.Marshal(dp.Charge{Mechanism: m})
		var back dp.Charge
		if err != nil || json.Unmarshal(b, &back) != nil || back.Mechanism != m {
			t.Errorf("%s: round trip %s gives %q (%v)", m, b, back.Mechanism, err)
		}
	}
	if _, err := dp.ParseMechanism(string(dp.PermuteAndFlip)); !errors.Is(err, dp.ErrMechanism) {
		t.Errorf("ParseMechanism(permute-and-flip) = %v, want a refusal: it releases no model", err)
	}
	var c dp.Charge
	err := json.Unmarshal([]byte(`{"mechanism":"lapalce"}`), &c)
	if !errors.Is(err, dp.ErrMechanism) || !strings.Contains(err.Error(), "laplace, gamma") {
		t.Errorf("misspelt name: %v, want ErrMechanism listing the names", err)
	}
	for m, pure := range map[dp.Mechanism]bool{dp.Laplace: true, dp.Gamma: true, dp.Gaussian: false, dp.AnalyticGaussian: false,
		dp.Objective: true, dp.AMP: false, dp.Stump: true, "nope": false} {
		if m.Pure() != pure {
			t.Errorf("%s.Pure() = %v, want %v", m, m.Pure(), pure)
		}
	}
}
