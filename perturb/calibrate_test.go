package perturb

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/differential-privacy/go/v3/noise"

	"github.com/stabpriv/stabpriv/dp"
)

var (
	epsGrid   = []float64{0.01, 0.1, 0.5, 0.99, 1, 2, 5, 10}
	deltaGrid = []float64{1e-12, 1e-8, 1e-5, 1e-3, 0.1}
)

func TestAnalyticGaussianSigmaSolvesCondition(t *testing.T) {
	for _, l2 := range []float64{0.01, 1, 7} {
		for _, eps := range epsGrid {
			for _, delta := range deltaGrid {
				s, err := AnalyticGaussianSigma(eps, delta, l2)
				if err != nil {
					t.Fatalf("eps %v delta %v: %v", eps, delta, err)
				}
				// The condition holds at sigma (never less noise than needed) ...
				if got := gaussianDelta(s, eps, l2); got > delta {
					t.Errorf("l2 %v eps %v delta %v: delta(sigma) = %v > delta", l2, eps, delta, got)
				}
				// ... and the bisection criterion (the computed delta plus its
				// rounding allowance) fails 1e-12 below it: sigma is the
				// smallest to 1e-12 relative.
				if got := gaussianDeltaUpper(s*(1-1e-12), eps, l2); got <= delta {
					t.Errorf("l2 %v eps %v delta %v: criterion holds at sigma(1-1e-12) with delta %v", l2, eps, delta, got)
				}
				// The rounding allowance is small: it moves delta by < 1e-8 relative.
				if up, ex := gaussianDeltaUpper(s, eps, l2), gaussianDelta(s, eps, l2); up-ex > 1e-8*delta {
					t.Errorf("l2 %v eps %v delta %v: rounding allowance %v", l2, eps, delta, up-ex)
				}
				if got := gaussianDelta(s, eps, l2); math.Abs(got-delta) > 1e-9*delta {
					t.Errorf("l2 %v eps %v delta %v: |delta(sigma) - delta| = %v", l2, eps, delta, math.Abs(got-delta))
				}
			}
		}
	}
}

func TestAnalyticBelowClassical(t *testing.T) {
	for _, eps := range []float64{0.01, 0.1, 0.5, 0.9, 0.999} {
		for _, delta := range deltaGrid {
			a, err := AnalyticGaussianSigma(eps, delta, 1)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ClassicalGaussianSigma(eps, delta, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !(a < c) {
				t.Errorf("eps %v delta %v: analytic sigma %v >= classical %v", eps, delta, a, c)
			}
		}
	}
	// Known value: eps = 1, delta = 1e-5 (Balle & Wang 2018, Figure 1 region).
	a, _ := AnalyticGaussianSigma(1, 1e-5, 1)
	if a < 3.5 || a > 3.9 {
		t.Errorf("analytic sigma(1, 1e-5) = %v, want about 3.73", a)
	}
}

func TestAnalyticGaussianMonotone(t *testing.T) {
	for _, delta := range deltaGrid {
		prev := math.Inf(1)
		for _, eps := range epsGrid {
			s, _ := AnalyticGaussianSigma(eps, delta, 1)
			if !(s < prev) {
				t.Errorf("delta %v: sigma(eps=%v) = %v not below sigma at the previous eps %v", delta, eps, s, prev)
			}
			prev = s
		}
	}
	for _, eps := range epsGrid {
		prev := math.Inf(1)
		for _, delta := range deltaGrid {
			s, _ := AnalyticGaussianSigma(eps, delta, 1)
			if !(s < prev) {
				t.Errorf("eps %v: sigma(delta=%v) = %v not below the previous %v", eps, delta, s, prev)
			}
			prev = s
		}
	}
}

func TestAnalyticGaussianInverseRoundTrip(t *testing.T) {
	for _, eps := range epsGrid {
		for _, delta := range deltaGrid {
			s, _ := AnalyticGaussianSigma(eps, delta, 2)
			e, err := AnalyticGaussianEpsilon(s, delta, 2)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(e-eps) > 1e-9*eps {
				t.Errorf("eps %v delta %v: sigma %v maps back to eps %v", eps, delta, s, e)
			}
			d, err := AnalyticGaussianDelta(s, eps, 2)
			if err != nil {
				t.Fatal(err)
			}
			if d > delta || math.Abs(d-delta) > 1e-9*delta {
				t.Errorf("eps %v delta %v: sigma %v maps back to delta %v", eps, delta, s, d)
			}
			e2, err := EpsilonForScale(AnalyticGaussian, s, 2, delta)
			if err != nil || e2 != e {
				t.Errorf("EpsilonForScale = %v, %v; want %v", e2, err, e)
			}
		}
	}
	// A huge sigma buys eps = 0.
	if e, err := AnalyticGaussianEpsilon(1e9, 0.5, 1); err != nil || e != 0 {
		t.Errorf("AnalyticGaussianEpsilon(huge sigma) = %v, %v; want 0", e, err)
	}
}

// TestAgreesWithGoogleSigma compares with the exported
// noise.SigmaForGaussian of github.com/google/differential-privacy/go/v3,
// which returns the upper end of a bisection bracket of relative width
// 1e-3 around the same tight sigma: it must lie in [sigma, sigma(1+1e-3)].
func TestAgreesWithGoogleSigma(t *testing.T) {
	for _, l2 := range []float64{0.5, 1, 3} {
		for _, eps := range epsGrid {
			for _, delta := range deltaGrid {
				s, _ := AnalyticGaussianSigma(eps, delta, l2)
				g := noise.SigmaForGaussian(1, l2, eps, delta)
				if g < s*(1-1e-9) || g > s*(1+1.001e-3) {
					t.Errorf("l2 %v eps %v delta %v: google sigma %v, ours %v (ratio %v)", l2, eps, delta, g, s, g/s)
				}
			}
		}
	}
}

func TestCalibrateScales(t *testing.T) {
	const d2, d = 0.3, 16
	sens := Sensitivity{L2: d2}
	cases := []struct {
		m     dp.Mechanism
		eps   float64
		delta float64
		want  float64
	}{
		{Laplace, 0.5, 0, math.Sqrt(d) * d2 / 0.5},
		{Gamma, 0.5, 0, d2 / 0.5},
		{Gaussian, 0.5, 1e-5, d2 * math.Sqrt(2*math.Log(1.25e5)) / 0.5},
	}
	for _, tc := range cases {
		c, err := Calibrate(tc.m, tc.eps, tc.delta, sens, d)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.Scale-tc.want) > 1e-12*tc.want {
			t.Errorf("%s: scale %v, want %v", tc.m, c.Scale, tc.want)
		}
		e, err := EpsilonForScale(tc.m, c.Scale, map[bool]float64{true: c.L1, false: c.L2}[tc.m == Laplace], tc.delta)
		if err != nil || math.Abs(e-tc.eps) > 1e-12 {
			t.Errorf("%s: EpsilonForScale = %v, %v; want %v", tc.m, e, err, tc.eps)
		}
	}
	// A tighter L1 bound is used when given; a looser one is ignored.
	c, _ := Calibrate(Laplace, 1, 0, Sensitivity{L2: d2, L1: 2 * d2}, d)
	if c.L1 != 2*d2 {
		t.Errorf("tighter L1: used %v, want %v", c.L1, 2*d2)
	}
	c, _ = Calibrate(Laplace, 1, 0, Sensitivity{L2: d2, L1: 100 * d2}, d)
	if c.L1 != 4*d2 {
		t.Errorf("looser L1: used %v, want sqrt(d) L2 = %v", c.L1, 4*d2)
	}
}

// TestPaperLaplaceNotCertified shows why Lap(D2/eps) per coordinate is not
// eps-DP for d > 1 and that Calibrate does not use it: with the shift
// v = (D2/sqrt(d), ..., D2/sqrt(d)) of L2 norm D2, the privacy loss of
// Laplace noise of scale b at the worst output is ||v||_1/b = sqrt(d) eps
// for b = D2/eps, while the L1 calibration gives exactly eps.
func TestPaperLaplaceNotCertified(t *testing.T) {
	const d2, eps, d = 1.0, 0.5, 9
	paperB := d2 / eps
	var l1 float64
	for i := 0; i < d; i++ {
		l1 += d2 / math.Sqrt(d)
	}
	if loss := l1 / paperB; loss <= eps*1.01 {
		t.Fatalf("paper calibration loss %v, expected it above eps %v", loss, eps)
	}
	c, err := Calibrate(Laplace, eps, 0, Sensitivity{L2: d2}, d)
	if err != nil {
		t.Fatal(err)
	}
	if c.Scale <= paperB {
		t.Errorf("Laplace scale %v is not above the paper's D2/eps = %v", c.Scale, paperB)
	}
	if loss := l1 / c.Scale; loss > eps*(1+1e-12) {
		t.Errorf("worst privacy loss %v > eps %v", loss, eps)
	}
}

func TestCalibrationErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := Sensitivity{L2: 1}
	cases := []struct {
		name  string
		m     dp.Mechanism
		eps   float64
		delta float64
		sens  Sensitivity
		want  error
	}{
		{"unknown mechanism", "paper-laplace", 1, 0, ok, ErrMechanism},
		{"empty mechanism", "", 1, 0, ok, ErrMechanism},
		{"eps zero", Laplace, 0, 0, ok, ErrEpsilon},
		{"eps negative", Gamma, -1, 0, ok, ErrEpsilon},
		{"laplace eps below the sampler's", Laplace, 1e-16, 0, ok, ErrEpsilon},
		{"laplace eps above the sampler's", Laplace, 1e300, 0, ok, ErrEpsilon},
		{"eps NaN", AnalyticGaussian, nan, 1e-5, ok, ErrEpsilon},
		{"eps Inf", AnalyticGaussian, inf, 1e-5, ok, ErrEpsilon},
		{"delta negative", AnalyticGaussian, 1, -1e-5, ok, ErrDelta},
		{"delta one", AnalyticGaussian, 1, 1, ok, ErrDelta},
		{"delta NaN", AnalyticGaussian, 1, nan, ok, ErrDelta},
		{"delta with pure laplace", Laplace, 1, 1e-5, ok, ErrDelta},
		{"delta with pure gamma", Gamma, 1, 1e-5, ok, ErrDelta},
		{"gaussian delta zero", Gaussian, 0.5, 0, ok, ErrDelta},
		{"analytic delta zero", AnalyticGaussian, 1, 0, ok, ErrDelta},
		{"classical eps one", Gaussian, 1, 1e-5, ok, ErrClassicalRange},
		{"classical eps large", Gaussian, 3, 1e-5, ok, ErrClassicalRange},
		{"sensitivity zero", Laplace, 1, 0, Sensitivity{}, ErrSensitivity},
		{"sensitivity negative", Gamma, 1, 0, Sensitivity{L2: -1}, ErrSensitivity},
		{"sensitivity NaN", AnalyticGaussian, 1, 1e-5, Sensitivity{L2: nan}, ErrSensitivity},
		{"sensitivity Inf", AnalyticGaussian, 1, 1e-5, Sensitivity{L2: inf}, ErrSensitivity},
		{"L1 below L2", Laplace, 1, 0, Sensitivity{L2: 1, L1: 0.5}, ErrSensitivity},
		{"L1 NaN", Laplace, 1, 0, Sensitivity{L2: 1, L1: nan}, ErrSensitivity},
		{"beta NaN", Laplace, 1, 0, Sensitivity{L2: 1, Beta: nan}, ErrSensitivity},
		{"add-remove neighbours", Laplace, 1, 0, Sensitivity{L2: 1, Neighbouring: "add-remove"}, ErrSensitivity},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Calibrate(tc.m, tc.eps, tc.delta, tc.sens, 3)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "perturb:") {
				t.Errorf("error %q lacks the perturb: prefix", err)
			}
		})
	}
	if _, err := Calibrate(Gaussian, 2, 1e-5, ok, 3); err == nil || !strings.Contains(err.Error(), "gaussian-analytic") {
		t.Errorf("classical eps >= 1 error %v does not name the analytic Gaussian", err)
	}
}

func TestEpsilonForScaleErrors(t *testing.T) {
	cases := []struct {
		name  string
		m     dp.Mechanism
		scale float64
		sens  float64
		delta float64
		want  error
	}{
		{"unknown", "x", 1, 1, 0, ErrMechanism},
		{"scale zero", Laplace, 0, 1, 0, ErrScale},
		{"scale NaN", Gamma, math.NaN(), 1, 0, ErrScale},
		{"sensitivity zero", Gamma, 1, 0, 0, ErrSensitivity},
		{"pure with delta", Laplace, 1, 1, 1e-5, ErrDelta},
		{"gaussian without delta", AnalyticGaussian, 1, 1, 0, ErrDelta},
		{"delta one", AnalyticGaussian, 1, 1, 1, ErrDelta},
		{"classical out of range", Gaussian, 1, 1, 1e-5, ErrClassicalRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EpsilonForScale(tc.m, tc.scale, tc.sens, tc.delta); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := ParseMechanism("gaussian-analytic"); err != nil {
		t.Error(err)
	}
	if _, err := ParseMechanism("lap"); !errors.Is(err, dp.ErrMechanism) {
		t.Errorf("ParseMechanism(lap) err = %v", err)
	}
}

// TestAnalyticGaussianCancellation checks the regime where the two terms of
// the condition cancel beyond float64 resolution. For eps = 1e-300 and
// a = l2/(2 sigma) <= 0.1, delta(sigma) >= (2 Phi(a) - 1) - (e^eps - 1)/2
// >= 0.79 a - 5e-301, so (eps, delta)-DP needs sigma >= 0.395 l2/(delta + 5e-301)
// (2.6e299 for delta = 1e-300); the naive evaluation of the condition gives
// about 7e15. An error is also acceptable.
func TestAnalyticGaussianCancellation(t *testing.T) {
	for _, delta := range []float64{1e-300, 1e-100, 1e-20} {
		s, err := AnalyticGaussianSigma(1e-300, delta, 1)
		if need := 0.395 / (delta + 5e-301); err == nil && s < need {
			t.Errorf("delta %v: sigma %v is below the necessary %v", delta, s, need)
		}
	}
}
