package featsel

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestNoiseOf checks that the law read from a certificate is the
// mechanism's at the certificate's scale (its dynamic threshold is b
// ln(1/q) for Laplace noise of scale b), and that a certificate without
// output noise is refused with the reason.
func TestNoiseOf(t *testing.T) {
	c := &dp.Claim{Mechanism: perturb.Laplace, Epsilon: 1, Dim: 4, L2Sensitivity: 0.1, L1Sensitivity: 0.2, NoiseScale: 0.2}
	law, err := NoiseOf(c)
	if err != nil {
		t.Fatal(err)
	}
	T, err := DynamicThreshold(0.01).Resolve(law, 1)
	if want := 0.2 * math.Log(100); err != nil || math.Abs(T-want) > 1e-12*want {
		t.Errorf("threshold %v (%v), want b ln(1/q) = %v", T, err, want)
	}
	for _, tc := range []struct {
		c    *dp.Claim
		want string
	}{
		{nil, "no certificate"},
		{&dp.Claim{Mechanism: perturb.Objective, Epsilon: 1, Dim: 4, NoiseScale: 1}, "adds no noise to the weights"},
	} {
		if _, err := NoiseOf(tc.c); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want ErrInvalid saying %q", tc.c, err, tc.want)
		}
	}
}

// TestWithoutBias checks that the last column of each row goes, and that
// a shape that does not fit is an error.
func TestWithoutBias(t *testing.T) {
	got, err := WithoutBias([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil || !reflect.DeepEqual(got, []float64{1, 2, 4, 5}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := WithoutBias([]float64{1, 2, 3}, 2, 2); !errors.Is(err, ErrShape) {
		t.Errorf("3 weights for 2 x 2: %v", err)
	}
}

// TestSelectReleased checks the whole step on a release of 2 x 3 weights
// (bias last) with Laplace noise of scale 0.1: T = 0.1 ln(1/0.01), feature
// 0 clears it in row 1, feature 1 in neither row, the bias is no candidate.
func TestSelectReleased(t *testing.T) {
	c := &dp.Claim{Mechanism: perturb.Laplace, Epsilon: 1, Dim: 6, L2Sensitivity: 0.1, L1Sensitivity: 0.1, NoiseScale: 0.1}
	w := []float64{0.1, -0.2, 5, -0.9, 0.3, 5}
	idx, T, err := SelectReleased(w, 2, 3, c, DynamicThreshold(0.01))
	if err != nil || !reflect.DeepEqual(idx, []int{0}) || math.Abs(T-0.1*math.Log(100)) > 1e-12 {
		t.Errorf("selected %v at T = %v (%v), want [0] at %v", idx, T, err, 0.1*math.Log(100))
	}
	if _, _, err := SelectReleased(w, 2, 3, &dp.Claim{Mechanism: perturb.Objective}, DynamicThreshold(0.01)); !errors.Is(err, ErrInvalid) {
		t.Errorf("objective perturbation: %v", err)
	}
}
