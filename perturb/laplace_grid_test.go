package perturb

import (
	"errors"
	"testing"
)

// TestLaplaceEpsilonRange: the Laplace budget is refused below 2^-39,
// where the secure sampler's power-of-two grid step 2^ceil(log2(b/2^40))
// exceeds the sensitivity (b = D1/eps), and above 2^50; the ends are
// accepted.
func TestLaplaceEpsilonRange(t *testing.T) {
	n, err := Lookup(Laplace)
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{1e-15, 0x1p-40, 0x1p50 * 2} {
		if err := n.CheckBudget(eps, 0); !errors.Is(err, ErrEpsilon) {
			t.Errorf("eps = %v: %v, want ErrEpsilon", eps, err)
		}
	}
	for _, eps := range []float64{MinLaplaceEpsilon, 1, MaxLaplaceEpsilon} {
		if err := n.CheckBudget(eps, 0); err != nil {
			t.Errorf("eps = %v: %v", eps, err)
		}
	}
}
