package accountant

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// mnist is the setting of TF Privacy's MNIST DP-SGD tutorial
// (mnist_dpsgd_tutorial.py): 60,000 rows, expected batch 256, noise
// multiplier 1.1, 60 epochs of 60000 // 256 steps each.
var mnist = SampledGaussian{SampleRate: 256.0 / 60000, NoiseMultiplier: 1.1, Steps: 60 * 60000 / 256}

// relErr returns |got - want| / |want|.
func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// TestPublishedMNIST checks the eps of the MNIST tutorial setting at
// delta = 1e-5: about 3.01 by RDP with the classical conversion (the value
// TF Privacy publishes for it), and to 1e-9 the values of the reference
// code on the default orders: TF Privacy's rdp_accountant (compute_rdp,
// whose fractional series keeps the signs) gives 3.0082720825246 at order
// 8.8 by the classical conversion and 2.59655586896075 at order 8.1 by
// dp_accounting's compute_epsilon (the improved one). dp_accounting's own
// RDP, which sums the series' terms in absolute value, gives the upper
// bounds 3.00827208910508 and 2.59655586979418, which eps must not exceed.
func TestPublishedMNIST(t *testing.T) {
	if mnist.Steps != 14062 {
		t.Fatalf("%d steps", mnist.Steps)
	}
	for _, tc := range []struct {
		c          Conversion
		eps, order float64
	}{
		{Classical, 3.0082720825246, 8.8},
		{Improved, 2.59655586896075, 8.1},
	} {
		g, err := mnist.Epsilon(1e-5, tc.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(g.Epsilon, tc.eps) > 1e-9 || g.Order != tc.order || g.Delta != 1e-5 || g.Conversion != tc.c || g.Excluded != nil {
			t.Errorf("%v: %+v, want eps %.15g at order %v", tc.c, g, tc.eps, tc.order)
		}
	}
	for c, bound := range map[Conversion]float64{Classical: 3.00827208910508, Improved: 2.59655586979418} {
		if g, _ := mnist.Epsilon(1e-5, c, nil); !(g.Epsilon < bound) {
			t.Errorf("%v: eps %.15g above dp_accounting's upper bound %.15g", c, g.Epsilon, bound)
		}
	}
	if g, _ := mnist.Epsilon(1e-5, Classical, nil); math.Round(g.Epsilon*100)/100 != 3.01 {
		t.Errorf("classical eps %v is not the published 3.01", g.Epsilon)
	}
}

// TestReferenceRDP checks the RDP against the values of TF Privacy's
// rdp_accountant_test.py (test_compute_rdp_scalar: q = 0.1, sigma = 2, 10
// steps, order 5 gives 0.07737; test_compute_rdp_sequence: q = 0.01,
// sigma = 2.5, 50 steps at orders 1.5, 2.5, 5, 50, 100, to their 1e-5)
// and against the values of the reference code (TF Privacy's
// rdp_accountant, _compute_rdp) at integer orders to 1e-9 and at
// fractional orders to 2e-8 (where the series stops, within exp(-18) above
// its limit).
func TestReferenceRDP(t *testing.T) {
	for _, tc := range []struct {
		g     SampledGaussian
		alpha float64
		want  float64
		tol   float64 // absolute, or relative when negative
	}{
		{SampledGaussian{0.1, 2, 10}, 5, 0.07737, 5e-6},
		{SampledGaussian{0.01, 2.5, 50}, 1.5, 0.00065, 1e-5},
		{SampledGaussian{0.01, 2.5, 50}, 2.5, 0.001085, 1e-5},
		{SampledGaussian{0.01, 2.5, 50}, 5, 0.00218075, 1e-5},
		{SampledGaussian{0.01, 2.5, 50}, 50, 0.023846, 1e-5},
		{SampledGaussian{0.01, 2.5, 50}, 100, 167.416307, 1e-5},
		{SampledGaussian{0.01, 2.5, 50}, 1.5, 0.000650070897447, -2e-8},
		{SampledGaussian{0.01, 1.1, 1}, 2, 0.000128510081605155, -1e-9},
		{SampledGaussian{0.01, 1.1, 1}, 8.5, 0.000629840101906263, -2e-8},
		{SampledGaussian{0.1, 0.8, 1}, 3.7, 0.222330624372603, -2e-8},
		{SampledGaussian{0.2, 1, 1}, 2.5, 0.0963279878789509, -2e-8},
		{SampledGaussian{0.5, 2, 1}, 20, 1.77965888383405, -1e-9},
		{SampledGaussian{256.0 / 60000, 1.1, 1}, 1.5, 1.74797845429687e-05, -2e-8},
		{SampledGaussian{0.05, 0.7, 1}, 12.3, 9.29017908584855, -2e-8},
	} {
		got, err := tc.g.RDP(tc.alpha)
		if err != nil {
			t.Fatal(err)
		}
		if tc.tol < 0 && relErr(got, tc.want) > -tc.tol || tc.tol > 0 && math.Abs(got-tc.want) > tc.tol {
			t.Errorf("%+v at order %v: RDP %.15g, want %.15g", tc.g, tc.alpha, got, tc.want)
		}
	}
}

// TestFullSampling checks that q = 1 is the Gaussian mechanism's RDP
// T alpha / (2 sigma^2) exactly, and that the closed form and the series
// tend to it as q -> 1.
func TestFullSampling(t *testing.T) {
	for _, sigma := range []float64{0.5, 1.1, 4} {
		for _, alpha := range []float64{1.5, 2, 7.3, 32, 256} {
			want := 3 * alpha / (2 * sigma * sigma)
			got, err := SampledGaussian{1, sigma, 3}.RDP(alpha)
			if err != nil || got != want {
				t.Errorf("q = 1, sigma %v, order %v: %v, %v, want %v", sigma, alpha, got, err, want)
			}
			near, err := SampledGaussian{1 - 1e-12, sigma, 3}.RDP(alpha)
			if err != nil || relErr(near, want) > 1e-6 {
				t.Errorf("q = 1 - 1e-12, sigma %v, order %v: %v, %v, want about %v", sigma, alpha, near, err, want)
			}
		}
	}
	if got, err := (SampledGaussian{0, 1, 100}).RDP(3); got != 0 || err != nil {
		t.Errorf("q = 0: %v, %v", got, err)
	}
}

// integratedRDP is the RDP of one step at order alpha computed
// independently of the closed form: log(A_alpha) / (alpha-1) with A_alpha
// the integral over N(0, sigma^2) of the likelihood ratio's alpha-th power,
// ((1-q) + q exp((2x-1)/(2 sigma^2)))^alpha, by Gauss-Legendre quadrature
// (32 nodes) on panels of sigma/4 over [-14 sigma, alpha + 14 sigma], where
// every component N(i, sigma^2), 0 <= i <= alpha, of the integrand lies.
// The integrand is written as A_alpha - 1 so that a small RDP keeps its
// relative precision.
func integratedRDP(q, sigma, alpha float64) float64 {
	f := func(x float64) float64 {
		phi := math.Exp(-x*x/(2*sigma*sigma)) / (sigma * math.Sqrt(2*math.Pi))
		return phi * math.Expm1(alpha*math.Log1p(q*math.Expm1((2*x-1)/(2*sigma*sigma))))
	}
	lo, hi := -14*sigma, alpha+14*sigma
	panels := int(math.Ceil((hi - lo) / (sigma / 4)))
	w := (hi - lo) / float64(panels)
	var am1 float64
	for p := range panels {
		am1 += quad.Fixed(f, lo+float64(p)*w, lo+float64(p+1)*w, 32, quad.Legendre{}, 0)
	}
	return math.Log1p(am1) / (alpha - 1)
}

// TestAgainstIntegration compares the closed form (integer orders) and the
// series (fractional orders) with the numerical integration of the Renyi
// divergence of the mixture (1-q) N(0, sigma^2) + q N(1, sigma^2) from
// N(0, sigma^2), to a relative 1e-6, and that the series is an upper
// bound.
func TestAgainstIntegration(t *testing.T) {
	for _, tc := range []struct{ q, sigma, alpha float64 }{
		{256.0 / 60000, 1.1, 1.5},
		{256.0 / 60000, 1.1, 8.8},
		{0.01, 1.1, 2},
		{0.01, 1.1, 8.5},
		{0.01, 0.6, 5},
		{0.1, 0.8, 3.7},
		{0.2, 1, 2.5},
		{0.05, 0.7, 12.3},
		{0.5, 2, 20},
		{0.9, 1.5, 6.25},
		{1e-5, 0.7, 10.5}, // stopped before the terms alternate, the sum was 2e-9 below
	} {
		got := stepRDP(tc.q, tc.sigma, tc.alpha)
		want := integratedRDP(tc.q, tc.sigma, tc.alpha)
		if relErr(got, want) > 1e-6 || tc.alpha != math.Trunc(tc.alpha) && got < want*(1-1e-9) {
			t.Errorf("q %v, sigma %v, order %v: RDP %.12g, integral %.12g (relative error %.2g)", tc.q, tc.sigma, tc.alpha, got, want, relErr(got, want))
		}
	}
}

// TestMonotone checks that the RDP at every default order and the eps of
// both conversions grow with the steps and the sample rate and fall with
// the noise multiplier.
func TestMonotone(t *testing.T) {
	base := SampledGaussian{SampleRate: 0.01, NoiseMultiplier: 1, Steps: 1000}
	type vary struct {
		name string
		g    func(i int) SampledGaussian
		up   bool // eps grows with i
	}
	for _, v := range []vary{
		{"steps", func(i int) SampledGaussian { g := base; g.Steps = 1 + 700*i; return g }, true},
		{"sample rate", func(i int) SampledGaussian { g := base; g.SampleRate = 0.001 * math.Pow(2, float64(i)); return g }, true},
		{"noise multiplier", func(i int) SampledGaussian { g := base; g.NoiseMultiplier = 0.5 + 0.4*float64(i); return g }, false},
	} {
		var prevRDP []float64
		prevEps := map[Conversion]float64{}
		for i := range 10 {
			g := v.g(i)
			rdp, err := g.Curve(nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, r := range rdp {
				if prevRDP != nil && (math.IsInf(r, 1) || math.IsInf(prevRDP[k], 1)) {
					continue // a series that did not converge: an Excluded order
				}
				if prevRDP != nil && (v.up && !(r > prevRDP[k]) || !v.up && !(r < prevRDP[k])) {
					t.Errorf("%s: RDP at order %v goes from %v to %v at %+v", v.name, DefaultOrders()[k], prevRDP[k], r, g)
				}
			}
			prevRDP = rdp
			for _, c := range []Conversion{Classical, Improved} {
				e, err := g.Epsilon(1e-5, c, nil)
				if err != nil {
					t.Fatal(err)
				}
				if p, ok := prevEps[c]; ok && (v.up && !(e.Epsilon > p) || !v.up && !(e.Epsilon < p)) {
					t.Errorf("%s, %v: eps goes from %v to %v at %+v", v.name, c, p, e.Epsilon, g)
				}
				prevEps[c] = e.Epsilon
			}
		}
	}
}

// TestImprovedBelowClassical checks that the improved conversion is below
// the classical one, at every order and at the best order, over a grid of
// settings and deltas.
func TestImprovedBelowClassical(t *testing.T) {
	orders := DefaultOrders()
	for _, q := range []float64{0.001, 0.01, 0.1, 1} {
		for _, sigma := range []float64{0.5, 1, 3} {
			for _, steps := range []int{1, 100, 10000} {
				g := SampledGaussian{q, sigma, steps}
				rdp, err := g.Curve(orders)
				if err != nil {
					t.Fatal(err)
				}
				for _, delta := range []float64{1e-9, 1e-5, 0.1} {
					for k, a := range orders {
						if math.IsInf(rdp[k], 1) {
							continue
						}
						if imp, cl := Improved.epsilonAt(a, rdp[k], delta), Classical.epsilonAt(a, rdp[k], delta); !(imp < cl) {
							t.Errorf("%+v, delta %v, order %v: improved %v, classical %v", g, delta, a, imp, cl)
						}
					}
					imp, err1 := Convert(orders, rdp, delta, Improved)
					cl, err2 := Convert(orders, rdp, delta, Classical)
					if err1 != nil || err2 != nil || !(imp.Epsilon < cl.Epsilon) {
						t.Errorf("%+v, delta %v: improved %+v (%v), classical %+v (%v)", g, delta, imp, err1, cl, err2)
					}
				}
			}
		}
	}
}

// TestConvert checks the conversions on curves known by hand: a constant
// RDP (pure DP) picks the largest order, as in TF Privacy's
// test_get_privacy_spent_check_target_delta (eps 1.32783806176 at order 32
// for RDP 1.1 at orders 2..32, delta 1e-5); a tiny RDP gives eps 0 by the
// KL bound; an order whose RDP is +Inf is listed, not dropped. (TF
// Privacy's test states the improved conversion's value; the classical one
// is 1.1 + log(1e5)/31.)
func TestConvert(t *testing.T) {
	var orders, rdp []float64
	for a := 2; a <= 32; a++ {
		orders, rdp = append(orders, float64(a)), append(rdp, 1.1)
	}
	g, err := Convert(orders, rdp, 1e-5, Improved)
	if err != nil || math.Abs(g.Epsilon-1.32783806176) > 1e-10 || g.Order != 32 {
		t.Errorf("constant RDP, improved: %+v, %v", g, err)
	}
	g, err = Convert(orders, rdp, 1e-5, Classical)
	if err != nil || math.Abs(g.Epsilon-(1.1+math.Log(1e5)/31)) > 1e-14 || g.Order != 32 {
		t.Errorf("constant RDP, classical: %+v, %v", g, err)
	}
	g, err = Convert([]float64{2, 3}, []float64{1e-12, 2e-12}, 1e-5, Improved)
	if err != nil || g.Epsilon != 0 || g.Order != 2 {
		t.Errorf("tiny RDP: %+v, %v", g, err)
	}
	inf := math.Inf(1)
	g, err = Convert([]float64{1.5, 2, 3}, []float64{inf, 0.5, inf}, 1e-5, Improved)
	if err != nil || g.Order != 2 || len(g.Excluded) != 2 || g.Excluded[0] != 1.5 || g.Excluded[1] != 3 {
		t.Errorf("+Inf orders: %+v, %v", g, err)
	}
	if _, err := Convert([]float64{2}, []float64{inf}, 1e-5, Classical); !errors.Is(err, ErrNoBound) {
		t.Errorf("all +Inf: %v", err)
	}
}

// TestInvalid checks that every out-of-range argument is an error wrapping
// ErrInvalid that names it, and that nothing panics.
func TestInvalid(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := SampledGaussian{0.01, 1, 10}
	for _, tc := range []struct {
		name string
		err  error
		msg  string
	}{
		{"q above 1", ok.with(func(g *SampledGaussian) { g.SampleRate = 1.5 }), "sample rate"},
		{"q negative", ok.with(func(g *SampledGaussian) { g.SampleRate = -0.1 }), "sample rate"},
		{"q NaN", ok.with(func(g *SampledGaussian) { g.SampleRate = nan }), "sample rate"},
		{"sigma 0", ok.with(func(g *SampledGaussian) { g.NoiseMultiplier = 0 }), "noise multiplier"},
		{"sigma Inf", ok.with(func(g *SampledGaussian) { g.NoiseMultiplier = inf }), "noise multiplier"},
		{"sigma NaN", ok.with(func(g *SampledGaussian) { g.NoiseMultiplier = nan }), "noise multiplier"},
		{"steps 0", ok.with(func(g *SampledGaussian) { g.Steps = 0 }), "steps"},
		{"order 1", second(ok.RDP(1)), "order"},
		{"order Inf", second(ok.RDP(inf)), "order"},
		{"order NaN in a grid", second(ok.Curve([]float64{2, nan})), "order"},
		{"delta 0", second(ok.Epsilon(0, Improved, nil)), "delta"},
		{"delta 1", second(ok.Epsilon(1, Classical, nil)), "delta"},
		{"delta NaN", second(ok.Epsilon(nan, Classical, nil)), "delta"},
		{"unknown conversion", second(ok.Epsilon(1e-5, Conversion(7), nil)), "Conversion(7)"},
		{"no order", second(Convert(nil, nil, 1e-5, Improved)), "no order"},
		{"lengths", second(Convert([]float64{2}, nil, 1e-5, Improved)), "1 orders for 0"},
		{"negative RDP", second(Convert([]float64{2}, []float64{-1}, 1e-5, Improved)), "RDP -1"},
		{"conversion name", second(ParseConversion("tight")), "want improved or classical"},
	} {
		if !errors.Is(tc.err, ErrInvalid) || !strings.Contains(tc.err.Error(), tc.msg) {
			t.Errorf("%s: %v, want ErrInvalid naming %q", tc.name, tc.err, tc.msg)
		}
	}
	for _, s := range []string{"improved", "classical"} {
		if c, err := ParseConversion(s); err != nil || c.String() != s {
			t.Errorf("ParseConversion(%q) = %v, %v", s, c, err)
		}
	}
}

// with returns g.Validate's error after edit.
func (g SampledGaussian) with(edit func(*SampledGaussian)) error {
	edit(&g)
	_, err := g.Epsilon(1e-5, Improved, nil)
	return err
}

// second returns the error of a call.
func second[T any](_ T, err error) error { return err }

// TestLogErfc checks log(erfc(x)) on both sides of the switch to the
// asymptotic series, where the two must agree.
func TestLogErfc(t *testing.T) {
	for _, x := range []float64{-3, 0, 1, 5, 19.999} {
		if got, want := logErfc(x), math.Log(math.Erfc(x)); relErr(got, want) > 1e-14 {
			t.Errorf("logErfc(%v) = %v, want %v", x, got, want)
		}
	}
	below, above := logErfc(math.Nextafter(20, 0)), logErfc(20)
	if relErr(above, below) > 1e-13 {
		t.Errorf("logErfc jumps at 20: %v, %v", below, above)
	}
	if got := logErfc(40); !(got > -1605 && got < -1600) { // erfc(40) = 1.5e-697
		t.Errorf("logErfc(40) = %v", got)
	}
}

// benchmarkEpsilon times the eps of 100,000 steps at the sample rate q
// and noise multiplier 1 over the default orders, and reports the time per
// order.
func benchmarkEpsilon(b *testing.B, q float64) {
	g := SampledGaussian{SampleRate: q, NoiseMultiplier: 1, Steps: 100000}
	n := len(DefaultOrders())
	for b.Loop() {
		if _, err := g.Epsilon(1e-5, Improved, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/order")
}

// BenchmarkEpsilon100kStepsQ001 is a DP-SGD setting (batch 0.1% of the
// rows); BenchmarkEpsilon100kStepsQ1e1 one whose low fractional orders run
// to the 1000-term cap.
func BenchmarkEpsilon100kStepsQ001(b *testing.B) { benchmarkEpsilon(b, 0.001) }

// BenchmarkEpsilon100kStepsQ1e1 is benchmarkEpsilon at q = 0.1.
func BenchmarkEpsilon100kStepsQ1e1(b *testing.B) { benchmarkEpsilon(b, 0.1) }

// TestTinyNoise checks that a noise multiplier so small that the sums
// overflow gives +Inf at every order (no guarantee: ErrNoBound), never NaN.
func TestTinyNoise(t *testing.T) {
	for _, sigma := range []float64{1e-300, 1e-160, 1e-100} {
		g := SampledGaussian{0.1, sigma, 10}
		rdp, err := g.Curve(nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, r := range rdp {
			if math.IsNaN(r) || r < 1e10 {
				t.Errorf("sigma %v, order %v: RDP %v", sigma, DefaultOrders()[k], r)
			}
		}
		if _, err := g.Epsilon(1e-5, Improved, nil); sigma < 1e-150 && !errors.Is(err, ErrNoBound) {
			t.Errorf("sigma %v: %v, want ErrNoBound", sigma, err)
		}
	}
}
