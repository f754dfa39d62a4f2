package accountant

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// pldReference are the eps of google/differential-privacy's dp_accounting
// (v0.6, privacy_loss_distribution.from_gaussian_mechanism with
// sampling_prob q, value_discretization_interval 1e-4, self_compose(T),
// get_epsilon_for_delta): connect-the-dots (pessimistic_estimate=True,
// use_connect_dots=True) and rounded down (pessimistic_estimate=False).
// Its truncations differ from ours (its tails are cut at 1e-15 of mass,
// without a rounding allowance), so the values agree to about 1e-5.
var pldReference = []struct {
	g         SampledGaussian
	delta     float64
	pess, opt float64
}{
	{mnist, 1e-5, 2.381685997564954, 1.6785369992228703},
	{SampledGaussian{0.01, 1, 1000}, 1e-5, 1.8282436456227338, 1.7782397276410902},
	{SampledGaussian{0.1, 2, 100}, 1e-6, 2.6750357398104088, 2.670035370829981},
	{SampledGaussian{1, 5, 10}, 1e-5, 2.5943834404659083, 2.593883405832114},
	{SampledGaussian{0.001, 0.8, 10000}, 1e-5, 0.7825248325367357, 0.28317892922667526},
	{SampledGaussian{0.05, 1.5, 500}, 1e-7, 4.738045154388354, 4.713043736049198},
	{SampledGaussian{190.0 / 36000, 1, 950}, 1e-5, 0.8942373981272175, 0.846731437137466},
	{SampledGaussian{0.2, 1, 1}, 1e-5, 2.447218808541292, 2.4471688075828317},
	{SampledGaussian{0.5, 0.7, 3}, 1e-3, 6.78862892115449, 6.788478916704135},
}

// TestPLDReference checks both discretizations against dp_accounting's
// values to a relative 2e-5, the pessimistic one never more than 1e-8
// below them (ours adds a rounding allowance to delta).
func TestPLDReference(t *testing.T) {
	for _, tc := range pldReference {
		for _, p := range []PLD{{}, {Discretization: Optimistic}} {
			want := tc.pess
			if p.Discretization == Optimistic {
				want = tc.opt
			}
			g, err := p.Epsilon(tc.g, tc.delta)
			if err != nil {
				t.Fatalf("%+v %v: %v", tc.g, p, err)
			}
			if relErr(g.Epsilon, want) > 2e-5 || p.Discretization == Pessimistic && g.Epsilon < want*(1-1e-8) {
				t.Errorf("%+v, %v: eps %.12g, dp_accounting %.12g (relative %.2g)", tc.g, p, g.Epsilon, want, relErr(g.Epsilon, want))
			}
			if g.Epsilon != max(g.Remove, g.Add) || g.Delta != tc.delta || g.PLD.Interval != DefaultPLDInterval || g.PLD.Tail != DefaultPLDTail ||
				g.TailDelta > 3*DefaultPLDTail || g.RoundingDelta <= 0 || g.Size < 2 {
				t.Errorf("%+v, %v: %+v", tc.g, p, g)
			}
		}
	}
}

// TestPLDGaussianExact checks q = 1 (the Gaussian mechanism at
// sensitivity 1; T steps are one at sigma/sqrt(T)) against its exact eps
// (Balle & Wang 2018, Theorem 8, as perturb.AnalyticGaussianEpsilon
// computes it, to 1e-12): never below it, and above the exact eps at delta
// less the truncated masses and the rounding allowance by at most the
// grid interval for one step, and by T times it for T steps.
func TestPLDGaussianExact(t *testing.T) {
	for _, steps := range []int{1, 30} {
		for _, sigma := range []float64{0.5, 1, 2, 5, 20} {
			for _, delta := range []float64{1e-3, 1e-5, 1e-9} {
				if steps > 1 && sigma < 2 {
					continue // eps in the tens: a wide grid
				}
				s := sigma / math.Sqrt(float64(steps))
				exact, err := perturb.AnalyticGaussianEpsilon(s, delta, 1)
				if err != nil {
					t.Fatal(err)
				}
				g, err := PLD{}.Epsilon(SampledGaussian{SampleRate: 1, NoiseMultiplier: sigma, Steps: steps}, delta)
				if err != nil {
					t.Fatal(err)
				}
				paid, err := perturb.AnalyticGaussianEpsilon(s, delta-g.TailDelta-g.RoundingDelta, 1)
				if err != nil {
					t.Fatal(err)
				}
				if g.Epsilon < exact*(1-1e-11) || g.Epsilon > paid+float64(steps)*DefaultPLDInterval || g.Remove != g.Add {
					t.Errorf("%d steps, sigma %v, delta %v: PLD eps %.12g (remove %v, add %v), exact %.12g (%.12g at the delta left)",
						steps, sigma, delta, g.Epsilon, g.Remove, g.Add, exact, paid)
				}
			}
		}
	}
}

// hockeyStick integrates max(p - e^eps q, 0) for one step of g in direction
// d, independently of the closed forms: p and q are the densities of the
// mixture (1-q) N(0, s^2) + q N(1, s^2) and of N(0, s^2) (remove: p the
// mixture; add: q the mixture), the point where p = e^eps q found by
// bisection on their ratio (monotone in x), and the integral over the side
// where p > e^eps q taken by 32-node Gauss-Legendre quadrature on panels of
// s/8 out to 40 s.
func hockeyStick(g SampledGaussian, d direction, eps float64) float64 {
	s, qr := g.NoiseMultiplier, g.SampleRate
	norm := func(x, mu float64) float64 {
		return math.Exp(-(x-mu)*(x-mu)/(2*s*s)) / (s * math.Sqrt(2*math.Pi))
	}
	mix := func(x float64) float64 { return (1-qr)*norm(x, 0) + qr*norm(x, 1) }
	p, q := mix, func(x float64) float64 { return norm(x, 0) }
	if d == add {
		p, q = q, mix
	}
	alpha := math.Exp(eps)
	f := func(x float64) float64 { return max(p(x)-alpha*q(x), 0) }
	// The ratio p/q is increasing (remove) or decreasing (add) in x.
	up := d == remove
	ratioAbove := func(x float64) bool { // p(x) > alpha q(x) in log form
		lr := math.Log1p(qr * math.Expm1((2*x-1)/(2*s*s)))
		if !up {
			lr = -lr
		}
		return lr > eps
	}
	lo, hi := -60*s-10, 60*s+10
	if ratioAbove(lo) == ratioAbove(hi) {
		if ratioAbove(lo) {
			return 1 - alpha // p > alpha q everywhere
		}
		return 0
	}
	for range 200 {
		mid := (lo + hi) / 2
		if ratioAbove(mid) == up {
			hi = mid
		} else {
			lo = mid
		}
	}
	x0 := (lo + hi) / 2
	a, b := x0, x0+40*s+1
	if !up {
		a, b = x0-40*s-1, x0
	}
	panels := int(math.Ceil((b - a) / (s / 8)))
	w := (b - a) / float64(panels)
	var sum float64
	for k := range panels {
		sum += quad.Fixed(f, a+float64(k)*w, a+float64(k+1)*w, 32, quad.Legendre{}, 0)
	}
	return sum
}

// TestPLDOneStep checks one step at q < 1, both directions, against the
// numerical integration of the hockey-stick divergence (hockeyStick): the
// closed forms to 1e-9 of delta, the pessimistic grid's delta never below
// the integral and above it by at most 1e-6 of it, the optimistic one
// never above it; and the eps the integral gives (by bisection) below the
// PLD's by at most the interval.
func TestPLDOneStep(t *testing.T) {
	for _, g := range []SampledGaussian{{0.01, 1, 1}, {0.2, 0.8, 1}, {0.5, 2, 1}, {0.05, 0.5, 1}} {
		for _, d := range []direction{remove, add} {
			for _, eps := range []float64{0.05, 0.5, 2} {
				want := hockeyStick(g, d, eps)
				if want < 1e-12 {
					continue
				}
				got, _ := stepDelta(g, d, eps)
				if relErr(got, want) > 1e-9 {
					t.Errorf("%+v %v eps %v: closed form %.12g, integral %.12g", g, d, eps, got, want)
				}
				for _, p := range []PLD{{}, {Discretization: Optimistic}} {
					p, _ = p.withDefaults()
					c, err := composeDirection(g, d, p)
					if err != nil {
						t.Fatal(err)
					}
					pld := c.delta(eps)
					if p.Discretization == Pessimistic && (pld < want || pld > want*(1+1e-6)+1e-11) ||
						p.Discretization == Optimistic && pld > want {
						t.Errorf("%+v %v %v eps %v: PLD delta %.12g, integral %.12g", g, d, p.Discretization, eps, pld, want)
					}
				}
			}
		}
		// eps at delta 1e-6 from the integral: the larger direction's.
		var exact float64
		for _, d := range []direction{remove, add} {
			lo, hi := 0.0, 20.0
			for range 60 {
				mid := (lo + hi) / 2
				if hockeyStick(g, d, mid) > 1e-6 {
					lo = mid
				} else {
					hi = mid
				}
			}
			exact = max(exact, hi)
		}
		r, err := PLD{}.Epsilon(g, 1e-6)
		if err != nil || r.Epsilon < exact-1e-9 || r.Epsilon > exact+DefaultPLDInterval {
			t.Errorf("%+v: PLD eps %v (%v), integral's %v", g, r.Epsilon, err, exact)
		}
	}
}

// TestPLDBelowRDP checks on a grid of settings that the pessimistic PLD's
// eps is below the RDP accountant's (improved conversion) and the
// optimistic one below the pessimistic one, at delta = 1e-5 by at most T
// times the interval plus 1e-3 (the optimistic grid rounds each step's
// loss down by less than an interval; the pessimistic one is
// second-order), and at most 0.01 where T is 10 or less. (At delta = 1e-8
// the rounding allowance, added to delta by one and taken off by the
// other, widens the gap where the curve is flat: 0.55 at q = 1, sigma =
// 0.8, 1000 steps, eps about 1000.) It logs the ratio PLD/RDP: the issue's
// [0.7, 1] holds on its settings (TestPLDMNIST) but not at a small q and
// sigma over many steps (0.57 at q = 0.001, sigma = 0.8, 10,000 steps;
// dp_accounting agrees, pldReference).
func TestPLDBelowRDP(t *testing.T) {
	for _, q := range []float64{0.001, 0.01, 0.1, 1} {
		for _, sigma := range []float64{0.8, 1.5, 4} {
			for _, steps := range []int{1, 10, 500} {
				g := SampledGaussian{q, sigma, steps}
				if q == 1 && steps == 500 && sigma < 4 {
					continue // eps in the hundreds: a grid of millions of points
				}
				deltas := []float64{1e-5, 1e-8}
				pess := pldEpsilons(t, PLD{}, g, deltas)
				opt := pldEpsilons(t, PLD{Discretization: Optimistic}, g, deltas)
				for i, delta := range deltas {
					rdp, err := g.Epsilon(delta, Improved, nil)
					if err != nil {
						t.Fatal(err)
					}
					gap := pess[i] - opt[i]
					switch {
					case pess[i] > rdp.Epsilon:
						t.Errorf("%+v, delta %v: PLD %v above RDP %v", g, delta, pess[i], rdp.Epsilon)
					case gap < 0 || delta == 1e-5 && (gap > float64(steps)*DefaultPLDInterval+1e-3 || steps <= 10 && gap > 0.01):
						t.Errorf("%+v, delta %v: optimistic %v, pessimistic %v", g, delta, opt[i], pess[i])
					}
					t.Logf("%+v, delta %v: PLD %.4f, RDP %.4f (ratio %.3f), optimistic %.4f", g, delta, pess[i], rdp.Epsilon, pess[i]/rdp.Epsilon, opt[i])
				}
			}
		}
	}
}

// pldEpsilons returns p's eps of g at each delta as PLD.Epsilon gives
// them, from one composition per direction (the composition does not
// depend on delta; half the work of a call per delta); where g has one
// step (a cheap composition) each is checked against PLD.Epsilon itself.
func pldEpsilons(t *testing.T, p PLD, g SampledGaussian, deltas []float64) []float64 {
	t.Helper()
	pd, err := p.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	eps := make([]float64, len(deltas))
	for _, d := range []direction{remove, add} {
		if d == add && g.SampleRate == 1 {
			break // both directions compare the same two Gaussians
		}
		c, err := composeDirection(g, d, pd)
		if err != nil {
			t.Fatalf("%+v, %v: %v", g, p, err)
		}
		for i, delta := range deltas {
			e, err := c.epsilon(delta)
			if err != nil {
				t.Fatalf("%+v, %v, delta %v: %v", g, p, delta, err)
			}
			eps[i] = max(eps[i], e)
		}
	}
	if g.Steps == 1 {
		for i, delta := range deltas {
			if r, err := p.Epsilon(g, delta); err != nil || r.Epsilon != eps[i] {
				t.Errorf("%+v, %v, delta %v: PLD.Epsilon %v (%v), one composition's %v", g, p, delta, r.Epsilon, err, eps[i])
			}
		}
	}
	return eps
}

// TestPLDMNIST checks the MNIST tutorial's setting: the PLD's eps is
// dp_accounting's 2.3817 (pldReference) and within [0.7, 1] of the RDP
// accountant's (0.917 of the improved conversion's 2.5966, 0.792 of the
// classical 3.0083); at half the interval it moves by less than 1e-3; the
// optimistic grid at a tenth of the interval is below it by less than
// 0.08 (the true eps lies between).
func TestPLDMNIST(t *testing.T) {
	pess, err := PLD{}.Epsilon(mnist, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Conversion{Improved, Classical} {
		r, _ := mnist.Epsilon(1e-5, c, nil)
		if ratio := pess.Epsilon / r.Epsilon; ratio < 0.7 || ratio > 1 {
			t.Errorf("%v: PLD %v, RDP %v: ratio %v", c, pess.Epsilon, r.Epsilon, ratio)
		}
	}
	if math.Round(pess.Epsilon*1e4)/1e4 != 2.3817 {
		t.Errorf("PLD eps %v, want 2.3817", pess.Epsilon)
	}
	if testing.Short() {
		return
	}
	half, err := PLD{Interval: DefaultPLDInterval / 2}.Epsilon(mnist, 1e-5)
	if err != nil || math.Abs(half.Epsilon-pess.Epsilon) > 1e-3 {
		t.Errorf("half the interval: %v (%v), default %v", half.Epsilon, err, pess.Epsilon)
	}
	opt, err := PLD{Interval: DefaultPLDInterval / 10, Discretization: Optimistic}.Epsilon(mnist, 1e-5)
	if err != nil || opt.Epsilon > pess.Epsilon || pess.Epsilon-opt.Epsilon > 0.08 {
		t.Errorf("optimistic at interval 1e-5: %v (%v), pessimistic %v", opt.Epsilon, err, pess.Epsilon)
	}
}

// TestPLDComposition checks the transform against direct convolutions: the
// 3-fold composition of a step's masses by the transform and by two
// direct convolutions agree within a tenth of the rounding allowance (L1),
// and so do transforms of lengths N and 2N at the MNIST setting.
func TestPLDComposition(t *testing.T) {
	p, _ := PLD{}.withDefaults()
	g := SampledGaussian{0.2, 4, 3}
	s, err := discretize(g, remove, p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compose(s, g.Steps, p)
	if err != nil {
		t.Fatal(err)
	}
	direct, lo := s.mass, s.lo
	for range g.Steps - 1 {
		next := make([]float64, len(direct)+len(s.mass)-1)
		for i, a := range direct {
			for j, b := range s.mass {
				next[i+j] += a * b
			}
		}
		direct, lo = next, lo+s.lo
	}
	var l1 float64
	for k, m := range c.mass {
		if i := c.lo + k - lo; i >= 0 && i < len(direct) {
			l1 += math.Abs(m - direct[i])
		} else {
			l1 += math.Abs(m)
		}
	}
	if l1 > c.roundDelta/10 {
		t.Errorf("transform and direct convolution differ by %.3g (L1), allowance %.3g", l1, c.roundDelta)
	}
	// Lengths N and 2N at the MNIST setting.
	s, err = discretize(mnist, remove, p)
	if err != nil {
		t.Fatal(err)
	}
	c, err = compose(s, mnist.Steps, p)
	if err != nil {
		t.Fatal(err)
	}
	n := fftLength(2 * c.size)
	seq := s.cyclicPower(mnist.Steps, n)
	l1 = 0
	for k, m := range c.mass {
		l1 += math.Abs(max(seq[mod(c.lo+k, n)], 0) - m)
	}
	if l1 > c.roundDelta/10 {
		t.Errorf("MNIST: lengths %d and %d differ by %.3g (L1), allowance %.3g", c.size, n, l1, c.roundDelta)
	}
}

// TestPLDMonotone checks that the PLD's eps falls with the noise multiplier
// (NoiseMultiplierPLD's assumption) and grows with the steps and the
// sample rate.
func TestPLDMonotone(t *testing.T) {
	prev := math.Inf(1)
	for sigma := 0.6; sigma < 4; sigma *= 1.1 {
		g, err := PLD{}.Epsilon(SampledGaussian{0.01, sigma, 300}, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if !(g.Epsilon < prev) {
			t.Errorf("sigma %v: eps %v after %v", sigma, g.Epsilon, prev)
		}
		prev = g.Epsilon
	}
	prev = 0
	for _, g := range []SampledGaussian{{0.01, 1, 10}, {0.01, 1, 100}, {0.02, 1, 100}, {0.02, 1, 1000}, {0.1, 1, 1000}} {
		r, err := PLD{}.Epsilon(g, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if !(r.Epsilon > prev) {
			t.Errorf("%+v: eps %v after %v", g, r.Epsilon, prev)
		}
		prev = r.Epsilon
	}
}

// TestNoiseMultiplierPLD checks the calibration: the sigma returned meets
// the target while sigma (1 - 1e-6) does not, its guarantee is that of
// the sigma, and it is below the RDP accountant's sigma.
func TestNoiseMultiplierPLD(t *testing.T) {
	for _, tc := range []struct {
		q      float64
		steps  int
		target dp.Budget
	}{
		{mnist.SampleRate, mnist.Steps, dp.Budget{Epsilon: 2, Delta: 1e-5}},
		{0.1, 40, dp.Budget{Epsilon: 0.5, Delta: 1e-6}},
		{1, 10, dp.Budget{Epsilon: 2, Delta: 1e-5}},
		{190.0 / 36000, 950, dp.Budget{Epsilon: 0.5, Delta: 1e-5 / (1 + math.Exp(0.5))}},
	} {
		sigma, g, err := NoiseMultiplierPLD(tc.q, tc.steps, tc.target, PLD{})
		if err != nil {
			t.Fatal(err)
		}
		at := func(s float64) PLDGuarantee {
			r, err := PLD{}.Epsilon(SampledGaussian{tc.q, s, tc.steps}, tc.target.Delta)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if got := at(sigma); got.Epsilon > tc.target.Epsilon || got != g {
			t.Errorf("%+v: sigma %v gives %+v, NoiseMultiplierPLD said %+v", tc, sigma, got, g)
		}
		if below := at(sigma * (1 - 1e-6)); !(below.Epsilon > tc.target.Epsilon) {
			t.Errorf("%+v: sigma %v is not the smallest: %v gives %v", tc, sigma, sigma*(1-1e-6), below.Epsilon)
		}
		rdp, _, err := NoiseMultiplier(tc.q, tc.steps, tc.target, Improved, nil)
		if err != nil || sigma > rdp {
			t.Errorf("%+v: PLD sigma %v, RDP sigma %v (%v)", tc, sigma, rdp, err)
		}
	}
}

// TestPLDInvalid checks the refusals: bad parameters, an optimistic
// calibration, a grid too wide, truncated masses above delta, an
// unreachable target.
func TestPLDInvalid(t *testing.T) {
	ok := SampledGaussian{0.01, 1, 10}
	target := dp.Budget{Epsilon: 1, Delta: 1e-5}
	for _, tc := range []struct {
		name string
		err  error
		want error
		msg  string
	}{
		{"interval negative", second(PLD{Interval: -1}.Epsilon(ok, 1e-5)), ErrInvalid, "PLD interval -1"},
		{"interval NaN", second(PLD{Interval: math.NaN()}.Epsilon(ok, 1e-5)), ErrInvalid, "PLD interval NaN"},
		{"tail large", second(PLD{Tail: 0.01}.Epsilon(ok, 1e-5)), ErrInvalid, "PLD tail 0.01"},
		{"discretization", second(PLD{Discretization: 5}.Epsilon(ok, 1e-5)), ErrInvalid, "Discretization(5)"},
		{"delta 0", second(PLD{}.Epsilon(ok, 0)), ErrInvalid, "delta = 0"},
		{"eps NaN", second(PLD{}.Delta(ok, math.NaN())), ErrInvalid, "eps = NaN"},
		{"steps 0", second(PLD{}.Epsilon(SampledGaussian{0.01, 1, 0}, 1e-5)), ErrInvalid, "0 steps"},
		{"too wide", second(PLD{}.Epsilon(SampledGaussian{1, 0.01, 1000}, 1e-5)), ErrWindow, "raise the interval, or use RDP"},
		{"delta below the tails", second(PLD{}.Epsilon(ok, 1e-16)), ErrNoBound, "accountant: no finite eps: the PLD's truncated masses and rounding allowance"},
		{"optimistic calibration", third(NoiseMultiplierPLD(0.01, 10, target, PLD{Discretization: Optimistic})), ErrInvalid, "lower bound"},
		{"calibration q 0", third(NoiseMultiplierPLD(0, 10, target, PLD{})), ErrInvalid, "0 < q <= 1"},
		{"calibration pure", third(NoiseMultiplierPLD(0.1, 10, dp.Budget{Epsilon: 1}, PLD{})), ErrInvalid, "target eps"},
		{"unreachable", third(NoiseMultiplierPLD(0.1, 10, dp.Budget{Epsilon: 1, Delta: 1e-16}, PLD{})), ErrUnreachable, "raise eps or delta"},
	} {
		if !errors.Is(tc.err, tc.want) || !strings.Contains(tc.err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v naming %q", tc.name, tc.err, tc.want, tc.msg)
		}
		// The PLD has no orders: none of its messages speaks of them (RDP's
		// wording).
		if strings.Contains(tc.err.Error(), "order") {
			t.Errorf("%s: %v speaks of orders", tc.name, tc.err)
		}
	}
	if d, err := (PLD{}).Delta(SampledGaussian{0, 1, 10}, 0.1); d != 0 || err != nil {
		t.Errorf("q = 0: delta %v, %v", d, err)
	}
	if s := (PLD{}).String(); s != "PLD (pessimistic, interval 0.0001, tail 1e-15)" {
		t.Errorf("String: %q", s)
	}
}

// third returns the error of a call with three results.
func third[T, U any](_ T, _ U, err error) error { return err }
