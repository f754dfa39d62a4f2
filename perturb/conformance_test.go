package perturb

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// The conformance kit: every registered mechanism (registry.go) must pass
// every check below, so that a new mechanism is one file, one registry line
// and this kit. TestConformanceCatchesBrokenMechanisms runs the kit on fake
// mechanisms, added to a test-only copy of the registry, to show that each
// check can fail.
//
// False rejections. The checks without randomness (registry, refusal, round
// trip, certificate) are exact. The statistical checks use fixed seeds, so
// they are deterministic; with a random seed a correct mechanism would fail
//   - the law check (one-sample KS of one coordinate per draw against the
//     mechanism's marginal law, with the DKW-Massart critical value) with
//     probability at most kitAlpha = 1e-6, and its moment check (|z| > 6 on
//     the mean of ||b||^2, normal approximation) with about 2e-9;
//   - the neighbour audit with probability at most auditAlpha = 1e-6 (see
//     epsLowerBound).

// kitAlpha is the false-rejection probability of the kit's KS test.
const kitAlpha = 1e-6

// kitT is the part of *testing.T the kit reports through, so that the kit
// can run on a broken mechanism and have its failures counted.
type kitT interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// kitBudget returns the budget at which the kit releases with n: eps = 1,
// or the largest of 0.9 and 0.5 the mechanism accepts (the classical
// Gaussian needs eps < 1), with delta = 0 for a pure mechanism and 1e-3
// otherwise.
func kitBudget(n mechanism) (eps, delta float64) {
	if !n.Pure() {
		delta = 1e-3
	}
	for _, eps := range []float64{1, 0.9, 0.5} {
		if n.CheckBudget(eps, delta) == nil {
			return eps, delta
		}
	}
	return 0.5, delta
}

// kitRegistry checks the registry itself: unique non-empty names that
// Lookup and ParseMechanism find, in the order of Mechanisms.
func kitRegistry(t kitT, reg []mechanism) {
	t.Helper()
	seen := map[dp.Mechanism]bool{}
	for _, n := range reg {
		name := n.Name()
		if name == "" || strings.TrimSpace(string(name)) != string(name) || seen[name] {
			t.Errorf("registry: empty, padded or repeated name %q", name)
		}
		seen[name] = true
		got, err := lookupIn(reg, name)
		if err != nil || got.Name() != name {
			t.Errorf("registry: lookup of %q gives %v, %v", name, got, err)
		}
		if n.Citation() == "" || n.ScaleName() == "" {
			t.Errorf("%s: empty citation or scale name", name)
		}
	}
	if _, err := lookupIn(reg, "no-such-mechanism"); !errors.Is(err, ErrMechanism) {
		t.Errorf("registry: unknown mechanism gives %v, want ErrMechanism", err)
	}
	if _, err := lookupIn(reg, ""); !errors.Is(err, ErrMechanism) {
		t.Errorf("registry: empty mechanism gives %v, want ErrMechanism", err)
	}
}

// kitRefusal checks that invalid budgets, sensitivities and dimensions are
// refused with the right sentinel and a zero Calibration.
func kitRefusal(t kitT, n mechanism) {
	t.Helper()
	eps, delta := kitBudget(n)
	sens := Sensitivity{L2: 0.5}
	wrongDelta := 1e-5
	if !n.Pure() {
		wrongDelta = 0
	}
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name       string
		eps, delta float64
		sens       Sensitivity
		dim        int
		want       error
	}{
		{"eps 0", 0, delta, sens, 3, ErrEpsilon},
		{"eps < 0", -1, delta, sens, 3, ErrEpsilon},
		{"eps NaN", nan, delta, sens, 3, ErrEpsilon},
		{"eps Inf", inf, delta, sens, 3, ErrEpsilon},
		{"delta < 0", eps, -0.1, sens, 3, ErrDelta},
		{"delta 1", eps, 1, sens, 3, ErrDelta},
		{"delta NaN", eps, nan, sens, 3, ErrDelta},
		{"delta of the other kind", eps, wrongDelta, sens, 3, ErrDelta},
		{"L2 0", eps, delta, Sensitivity{}, 3, ErrSensitivity},
		{"L2 NaN", eps, delta, Sensitivity{L2: nan}, 3, ErrSensitivity},
		{"L1 below L2", eps, delta, Sensitivity{L2: 1, L1: 0.5}, 3, ErrSensitivity},
		{"dim 0", eps, delta, sens, 0, ErrModel},
	}
	for _, tc := range cases {
		cal, err := n.Calibrate(tc.eps, tc.delta, tc.sens, tc.dim)
		if !errors.Is(err, tc.want) || cal != (Calibration{}) {
			t.Errorf("%s: Calibrate with %s gives %+v, %v; want a zero calibration and %v", n.Name(), tc.name, cal, err, tc.want)
		}
		if tc.want == ErrEpsilon || tc.want == ErrDelta {
			if err := n.CheckBudget(tc.eps, tc.delta); !errors.Is(err, tc.want) {
				t.Errorf("%s: CheckBudget with %s gives %v, want %v", n.Name(), tc.name, err, tc.want)
			}
		}
	}
	for _, tc := range []struct {
		name                      string
		scale, sensitivity, delta float64
		want                      error
	}{
		{"scale 0", 0, 1, delta, ErrScale},
		{"scale NaN", nan, 1, delta, ErrScale},
		{"sensitivity < 0", 1, -1, delta, ErrSensitivity},
		{"delta of the other kind", 1, 1, wrongDelta, ErrDelta},
	} {
		if _, err := n.EpsilonForScale(tc.scale, tc.sensitivity, tc.delta); !errors.Is(err, tc.want) {
			t.Errorf("%s: EpsilonForScale with %s gives %v, want %v", n.Name(), tc.name, err, tc.want)
		}
	}
}

// kitRoundTrip checks that Calibrate fills the calibration, that
// EpsilonForScale inverts it (to 1e-9 relative), and that more privacy
// costs more noise.
func kitRoundTrip(t kitT, n mechanism) {
	t.Helper()
	_, delta := kitBudget(n)
	accepted := 0
	for _, sens := range []Sensitivity{{L2: 0.2}, {L2: 0.2, L1: 0.35}} {
		for _, dim := range []int{1, 3, 50} {
			prev := math.Inf(1)
			for _, eps := range []float64{0.01, 0.3, 0.9, 1, 4} {
				if n.CheckBudget(eps, delta) != nil {
					if _, err := n.Calibrate(eps, delta, sens, dim); err == nil {
						t.Errorf("%s: Calibrate accepts eps = %v, delta = %v that CheckBudget refuses", n.Name(), eps, delta)
					}
					continue
				}
				accepted++
				cal, err := n.Calibrate(eps, delta, sens, dim)
				if err != nil {
					t.Errorf("%s: Calibrate(%v, %v, %+v, %d): %v", n.Name(), eps, delta, sens, dim, err)
					continue
				}
				if cal.Mechanism != n.Name() || cal.Epsilon != eps || cal.Delta != delta || cal.Dim != dim || cal.L2 != sens.L2 ||
					!(cal.L1 >= cal.L2 && cal.L1 <= sqrtInt(dim)*cal.L2*(1+1e-15)) || !(cal.Scale > 0) || math.IsInf(cal.Scale, 0) {
					t.Errorf("%s: calibration %+v for eps = %v, delta = %v, %+v, dim %d", n.Name(), cal, eps, delta, sens, dim)
				}
				if s := n.ScaleSensitivity(cal); s != cal.L1 && s != cal.L2 {
					t.Errorf("%s: ScaleSensitivity %v is neither L1 %v nor L2 %v", n.Name(), s, cal.L1, cal.L2)
				}
				back, err := n.EpsilonForScale(cal.Scale, n.ScaleSensitivity(cal), delta)
				if err != nil || math.Abs(back-eps) > 1e-9*eps {
					t.Errorf("%s: EpsilonForScale(Calibrate(eps = %v).Scale = %v) = %v, %v", n.Name(), eps, cal.Scale, back, err)
				}
				if !(cal.Scale < prev) {
					t.Errorf("%s: scale %v at eps = %v not below %v at a smaller eps", n.Name(), cal.Scale, eps, prev)
				}
				prev = cal.Scale
			}
		}
	}
	if accepted < 6 {
		t.Errorf("%s: only %d calibrations accepted", n.Name(), accepted)
	}
}

// kitLaw draws the released noise and tests it against the calibration: a
// KS test of |b_j| (one coordinate per draw, so that the draws are
// independent) against the mechanism's marginal law, the mean of ||b||^2
// against RMSNorm^2, and the mean of ||b|| against ExpectedNorm, which must
// be an upper bound on E||b|| no larger than RMSNorm.
func kitLaw(t kitT, n mechanism, seed uint64) {
	t.Helper()
	const dim, draws = 5, 40000
	eps, delta := kitBudget(n)
	cal, err := n.Calibrate(eps, delta, Sensitivity{L2: 0.5}, dim)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	law, err := n.Marginal(cal)
	if err != nil {
		t.Errorf("%s: Marginal: %v", n.Name(), err)
		return
	}
	if err := law.Validate(); err != nil {
		t.Errorf("%s: Marginal: %v", n.Name(), err)
		return
	}
	src := Seeded(seed)
	x := make([]float64, draws)
	sq := make([]float64, draws)
	var sumNorm float64
	w := make([]float64, dim)
	for i := range x {
		clear(w)
		if err := n.Add(w, cal, src); err != nil {
			t.Errorf("%s: Add: %v", n.Name(), err)
			return
		}
		x[i] = math.Abs(w[i%dim])
		for _, v := range w {
			sq[i] += v * v
		}
		sumNorm += math.Sqrt(sq[i])
	}
	d := ksStatistic(x, func(v float64) float64 { return 1 - law.Tail(v) })
	if c := ksCritical(draws, kitAlpha); d > c {
		t.Errorf("%s: KS distance %v of the released noise from its marginal law (%s) exceeds %v", n.Name(), d, law, c)
	}
	var mean, m2 float64
	for _, v := range sq {
		mean += v
	}
	mean /= draws
	for _, v := range sq {
		m2 += (v - mean) * (v - mean)
	}
	se := math.Sqrt(m2/(draws-1)) / math.Sqrt(draws)
	rms := n.RMSNorm(cal)
	if z := (mean - rms*rms) / se; math.Abs(z) > 6 {
		t.Errorf("%s: mean ||b||^2 = %v, RMSNorm^2 = %v (z = %.1f)", n.Name(), mean, rms*rms, z)
	}
	if en := n.ExpectedNorm(cal); sumNorm/draws > en+6*math.Sqrt(mean/draws) || en > rms*(1+1e-12) {
		t.Errorf("%s: mean ||b|| = %v, ExpectedNorm %v, RMSNorm %v", n.Name(), sumNorm/draws, en, rms)
	}
}

// kitAudit runs the neighbour audit of audit_test.go on the 1-d release at
// the kit budget (neighbouring weights 0 and 1 = the L2 sensitivity) and on
// a negative control with a quarter of the calibrated scale, which the
// audit must catch.
func kitAudit(t kitT, n mechanism, seed uint64) {
	t.Helper()
	const shift, draws = 1.0, 200000
	eps, delta := kitBudget(n)
	cal, err := n.Calibrate(eps, delta, Sensitivity{L2: shift}, 1)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	src := Seeded(seed)
	var addErr error
	draw := func(c Calibration) func(float64) float64 {
		return func(w float64) float64 {
			x := []float64{w}
			if err := n.Add(x, c, src); err != nil {
				addErr = err
			}
			return x[0]
		}
	}
	lb := epsLowerBound(draw(cal), shift, delta, draws)
	t.Logf("%s: claimed eps %v, empirical lower bound %.3f", n.Name(), eps, lb)
	if lb > eps {
		t.Errorf("%s: empirical eps lower bound %v exceeds the claimed eps %v", n.Name(), lb, eps)
	}
	low := cal
	low.Scale /= 4
	lbLow := epsLowerBound(draw(low), shift, delta, draws)
	t.Logf("%s with a quarter of the noise: empirical lower bound %.3f", n.Name(), lbLow)
	if lbLow <= eps {
		t.Errorf("%s with a quarter of the noise: lower bound %v does not exceed the claim %v: the audit has no power", n.Name(), lbLow, eps)
	}
	if addErr != nil {
		t.Errorf("%s: Add: %v", n.Name(), addErr)
	}
}

// testSens is the sensitivity of the kit's calibrations.
var testSens = Sensitivity{L2: 0.004, Beta: 0.004, Route: "permutation SGD, convex (Wu et al. 2017)"}

// kitWords checks what a certificate of n's releases says about the noise
// (package release writes it): a scale name, a citation, a description of
// noise of the calibrated scale that Describe gives by name, and the note
// on the secure sampler.
func kitWords(t kitT, n mechanism) {
	t.Helper()
	eps, delta := kitBudget(n)
	cal, err := n.Calibrate(eps, delta, testSens, 6)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	words := n.Describe(cal.Scale, cal.Dim)
	if n.ScaleName() == "" || n.Citation() == "" || words == "" || Describe(n.Name(), cal.Scale, cal.Dim) != words {
		t.Errorf("%s: scale name %q, citation %q, words %q (by name %q)", n.Name(), n.ScaleName(), n.Citation(), words, Describe(n.Name(), cal.Scale, cal.Dim))
	}
	if note := n.SamplerNote(cal); note == "" {
		t.Errorf("%s: no note on the secure sampler", n.Name())
	}
}

// runKit runs every check of the kit on n, with the package registry set
// to reg.
func runKit(t kitT, reg []mechanism, n mechanism, seed uint64) {
	t.Helper()
	saved := registry
	registry = reg
	defer func() { registry = saved }()
	kitRefusal(t, n)
	kitRoundTrip(t, n)
	kitLaw(t, n, seed)
	kitAudit(t, n, seed+1)
	kitWords(t, n)
}

func TestConformance(t *testing.T) {
	kitRegistry(t, registry)
	if got := Mechanisms(); len(got) != len(registry) {
		t.Errorf("Mechanisms() = %v", got)
	}
	for i, n := range registry {
		t.Run(string(n.Name()), func(t *testing.T) {
			if m, err := ParseMechanism(string(n.Name())); err != nil || m != n.Name() || m.Pure() != n.Pure() || m.ScaleName() != n.ScaleName() {
				t.Errorf("ParseMechanism(%q) = %q, %v", n.Name(), m, err)
			}
			runKit(t, registry, n, uint64(1000+10*i))
		})
	}
}

// fakeNoise is an honest mechanism broken in one way, under its own name.
type fakeNoise struct {
	mechanism
	name       dp.Mechanism
	half       bool // Add draws half the calibrated scale
	inverse2   bool // EpsilonForScale returns twice the eps
	acceptAll  bool // CheckBudget accepts every budget
	noCitation bool // no citation in the certificate
}

func (f fakeNoise) Name() dp.Mechanism { return f.name }

func (f fakeNoise) Calibrate(eps, delta float64, sens Sensitivity, dim int) (Calibration, error) {
	c, err := f.mechanism.Calibrate(eps, delta, sens, dim)
	if err != nil {
		return Calibration{}, err
	}
	c.Mechanism = f.name
	return c, nil
}

func (f fakeNoise) Add(w []float64, cal Calibration, src Source) error {
	if f.half {
		cal.Scale /= 2
	}
	cal.Mechanism = f.mechanism.Name()
	return f.mechanism.Add(w, cal, src)
}

func (f fakeNoise) EpsilonForScale(scale, sensitivity, delta float64) (float64, error) {
	e, err := f.mechanism.EpsilonForScale(scale, sensitivity, delta)
	if f.inverse2 {
		e *= 2
	}
	return e, err
}

func (f fakeNoise) CheckBudget(eps, delta float64) error {
	if f.acceptAll {
		return nil
	}
	return f.mechanism.CheckBudget(eps, delta)
}

func (f fakeNoise) Citation() string {
	if f.noCitation {
		return ""
	}
	return f.mechanism.Citation()
}

// kitRecorder collects the failures of a kit run that must fail.
type kitRecorder struct {
	t        *testing.T
	failures []string
}

func (r *kitRecorder) Helper()                         {}
func (r *kitRecorder) Logf(format string, args ...any) { r.t.Logf("(broken) "+format, args...) }
func (r *kitRecorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// TestConformanceCatchesBrokenMechanisms adds broken mechanisms to a
// test-only copy of the registry and checks that the kit fails each of
// them in the check that covers its defect: a kit that cannot fail would
// be a defect of the kit.
func TestConformanceCatchesBrokenMechanisms(t *testing.T) {
	fakes := []struct {
		fake  fakeNoise
		check string // the kit check that must fail
		run   func(kitT, mechanism)
	}{
		{fakeNoise{mechanism: laplaceNoise{}, name: "laplace-half-noise", half: true}, "law",
			func(t kitT, n mechanism) { kitLaw(t, n, 77) }},
		{fakeNoise{mechanism: laplaceNoise{}, name: "laplace-half-noise", half: true}, "audit",
			func(t kitT, n mechanism) { kitAudit(t, n, 78) }},
		{fakeNoise{mechanism: analyticGaussianNoise{}, name: "gaussian-half-noise", half: true}, "law",
			func(t kitT, n mechanism) { kitLaw(t, n, 79) }},
		{fakeNoise{mechanism: gammaNormNoise{}, name: "gamma-half-noise", half: true}, "law",
			func(t kitT, n mechanism) { kitLaw(t, n, 80) }},
		{fakeNoise{mechanism: gammaNormNoise{}, name: "gamma-half-noise", half: true}, "audit",
			func(t kitT, n mechanism) { kitAudit(t, n, 81) }},
		{fakeNoise{mechanism: analyticGaussianNoise{}, name: "gaussian-wrong-inverse", inverse2: true}, "round trip",
			func(t kitT, n mechanism) { kitRoundTrip(t, n) }},
		{fakeNoise{mechanism: gammaNormNoise{}, name: "gamma-accepts-anything", acceptAll: true}, "refusal",
			func(t kitT, n mechanism) { kitRefusal(t, n) }},
		{fakeNoise{mechanism: laplaceNoise{}, name: "laplace-uncited", noCitation: true}, "words",
			func(t kitT, n mechanism) { kitWords(t, n) }},
	}
	for _, tc := range fakes {
		t.Run(string(tc.fake.name)+"/"+tc.check, func(t *testing.T) {
			reg := append(slices.Clone(registry), tc.fake)
			n, err := lookupIn(reg, tc.fake.name)
			if err != nil {
				t.Fatal(err)
			}
			saved := registry
			registry = reg
			defer func() { registry = saved }()
			rec := &kitRecorder{t: t}
			tc.run(rec, n)
			if len(rec.failures) == 0 {
				t.Errorf("the %s check passes %s", tc.check, tc.fake.name)
			}
			for _, f := range rec.failures[:min(3, len(rec.failures))] {
				t.Logf("caught: %s", f)
			}
		})
	}
}

// TestNamesAgreeWithDP checks that dp's list of mechanism names, which a
// claim carries, is the registry of the noise followed by the training-time
// mechanisms, with the same purity and scale names, and that every
// registered mechanism has its three roles (and nothing else has one).
func TestNamesAgreeWithDP(t *testing.T) {
	want := append(Mechanisms(), TrainingMechanisms()...)
	if got := dp.ReleaseMechanisms(); !slices.Equal(got, want) {
		t.Errorf("dp.ReleaseMechanisms() = %v, the registries list %v", got, want)
	}
	for _, n := range registry {
		if n.Name().Pure() != n.Pure() || n.Name().ScaleName() != n.ScaleName() {
			t.Errorf("%s: dp says pure %v, scale %q; the noise says %v, %q", n.Name(), n.Name().Pure(), n.Name().ScaleName(), n.Pure(), n.ScaleName())
		}
	}
	for _, n := range registry {
		st, errS := LookupStatement(n.Name())
		tu, errT := LookupTuning(n.Name())
		if errS != nil || errT != nil || st == nil || tu == nil {
			t.Errorf("%s: statement %v (%v), tuning %v (%v)", n.Name(), st, errS, tu, errT)
		}
	}
	for _, m := range append(TrainingMechanisms(), "nope") {
		if _, err := LookupStatement(m); !errors.Is(err, ErrMechanism) {
			t.Errorf("LookupStatement(%s): %v, want ErrMechanism", m, err)
		}
		if _, err := LookupTuning(m); !errors.Is(err, ErrMechanism) {
			t.Errorf("LookupTuning(%s): %v, want ErrMechanism", m, err)
		}
	}
	for _, m := range TrainingMechanisms() {
		if tm, _ := LookupTraining(m); tm.Pure != m.Pure() {
			t.Errorf("%s: dp says pure %v, the training registry %v", m, m.Pure(), tm.Pure)
		}
	}
}
