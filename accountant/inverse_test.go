package accountant

import (
	"errors"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// TestNoiseMultiplierRoundTrip checks that NoiseMultiplier returns a sigma
// that meets the target while sigma (1 - 1e-6) does not, that the eps of a
// sigma gives that sigma back, and that its Guarantee is that of the sigma
// returned.
func TestNoiseMultiplierRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		q     float64
		steps int
		eps   float64
		delta float64
		c     Conversion
	}{
		{mnist.SampleRate, mnist.Steps, 3, 1e-5, Classical},
		{mnist.SampleRate, mnist.Steps, 1, 1e-5, Improved},
		{0.01, 1000, 0.5, 1e-6, Improved},
		{0.1, 100, 8, 1e-5, Classical},
		{1, 10, 2, 1e-5, Improved},
	} {
		target := dp.Budget{Epsilon: tc.eps, Delta: tc.delta}
		sigma, g, err := NoiseMultiplier(tc.q, tc.steps, target, tc.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		at := func(s float64) Guarantee {
			r, err := SampledGaussian{tc.q, s, tc.steps}.Epsilon(tc.delta, tc.c, nil)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if got := at(sigma); got.Epsilon > tc.eps || got.Epsilon != g.Epsilon || got.Order != g.Order {
			t.Errorf("%+v: sigma %v gives %+v, NoiseMultiplier said %+v", tc, sigma, got, g)
		}
		if below := at(sigma * (1 - 1e-6)); !(below.Epsilon > tc.eps) {
			t.Errorf("%+v: sigma %v is not the smallest: %v gives eps %v", tc, sigma, sigma*(1-1e-6), below.Epsilon)
		}
		// The other way round: the eps of sigma gives sigma back.
		back, _, err := NoiseMultiplier(tc.q, tc.steps, dp.Budget{Epsilon: g.Epsilon, Delta: tc.delta}, tc.c, nil)
		if err != nil || relErr(back, sigma) > 1e-6 {
			t.Errorf("%+v: eps %v of sigma %v gives sigma %v, %v", tc, g.Epsilon, sigma, back, err)
		}
	}
}

// TestNoiseMultiplierRefusals checks the errors of NoiseMultiplier: an
// invalid argument, and a target no sigma in range reaches (the classical
// conversion cannot go below log(1/delta)/1023 at the default orders).
func TestNoiseMultiplierRefusals(t *testing.T) {
	ok := dp.Budget{Epsilon: 1, Delta: 1e-5}
	for _, tc := range []struct {
		name   string
		q      float64
		steps  int
		target dp.Budget
		want   error
	}{
		{"q 0", 0, 10, ok, ErrInvalid},
		{"q NaN", math.NaN(), 10, ok, ErrInvalid},
		{"steps 0", 0.1, 0, ok, ErrInvalid},
		{"pure target", 0.1, 10, dp.Budget{Epsilon: 1}, ErrInvalid},
		{"eps 0", 0.1, 10, dp.Budget{Delta: 1e-5}, ErrInvalid},
		{"delta 1", 0.1, 10, dp.Budget{Epsilon: 1, Delta: 1}, ErrInvalid},
		{"below the classical floor", 0.1, 10, dp.Budget{Epsilon: 0.01, Delta: 1e-5}, ErrUnreachable},
	} {
		c := Classical
		_, _, err := NoiseMultiplier(tc.q, tc.steps, tc.target, c, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// The improved conversion reaches eps = 0.01 (by the KL bound, with
	// enough noise).
	if sigma, g, err := NoiseMultiplier(0.1, 10, dp.Budget{Epsilon: 0.01, Delta: 1e-5}, Improved, nil); err != nil || g.Epsilon > 0.01 {
		t.Errorf("improved, eps 0.01: sigma %v, %+v, %v", sigma, g, err)
	}
}

// TestReplaceOne checks the group-privacy budget of a guarantee.
func TestReplaceOne(t *testing.T) {
	b := Guarantee{Epsilon: 1, Delta: 1e-6}.ReplaceOne()
	if b.Epsilon != 2 || math.Abs(b.Delta-(1+math.E)*1e-6) > 1e-20 {
		t.Errorf("ReplaceOne = %+v", b)
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
}
