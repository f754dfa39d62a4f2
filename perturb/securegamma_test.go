package perturb

import (
	crand "crypto/rand"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// secureGammaDraws releases w n times with the exact gamma-norm sampler
// (bits from r, first pass at p0 bits, lattice step 2^-latticeBits theta
// roughly) and returns the noise vectors, output minus w.
func secureGammaDraws(t *testing.T, r io.Reader, w []float64, l2, eps float64, n, p0, latticeBits int) [][]float64 {
	t.Helper()
	out := make([][]float64, n)
	for i := range out {
		x := append([]float64(nil), w...)
		if err := addGammaNormExact(x, l2, eps, r, p0, latticeBits); err != nil {
			t.Fatal(err)
		}
		for j := range x {
			x[j] -= w[j]
		}
		out[i] = x
	}
	return out
}

// checkFitSlack is checkFit for samples that may each be moved by the
// lattice: it fails t if the KS statistic exceeds the DKW critical value at
// level alpha plus slack, a bound on how much the lattice can move the
// empirical CDF (see the callers). The false-rejection probability is at
// most alpha. With a non-nil wrong it also fails t if the samples pass
// against it.
func checkFitSlack(t *testing.T, what string, x []float64, cdf, wrong func(float64) float64, alpha, slack float64) {
	t.Helper()
	crit := ksCritical(len(x), alpha) + slack
	d := ksStatistic(x, cdf)
	t.Logf("%s: KS D = %.4f, critical %.4f (slack %.2g)", what, d, crit, slack)
	if d > crit {
		t.Errorf("%s: KS D = %v > critical %v", what, d, crit)
	}
	if wrong != nil {
		if dw := ksStatistic(x, wrong); dw <= crit {
			t.Errorf("%s: KS D = %v <= critical %v against a wrong law: no power", what, dw, crit)
		}
	}
}

// TestSecureGammaNormFit checks the exact sampler against the gamma-norm
// law: the norm of the noise is Gamma(d, theta) and the direction uniform,
// up to the lattice. Each coordinate moves by at most lambda/2 <= 2^-21
// theta, the noise vector by at most s = sqrt(d) lambda/2, so:
//   - the norm moves by at most s, and the KS statistic by at most
//     s * max density of Gamma(d, theta) <= s/theta;
//   - a direction coordinate u_1 = nu_1/||nu|| moves by at most 2s/||N||,
//     which is at most 2s/r unless ||N|| < r; with r = theta/32 the KS
//     statistic moves by at most (max density of u_1) 2s/r + P(||N|| < r).
//
// For d >= 3, u_1 = 2B - 1 with B ~ Beta((d-1)/2, (d-1)/2), whose density
// is bounded; the projection onto a fixed unit vector has the same law. The
// weights w are arbitrary floats, so the rounding of w + N is exercised
// away from the lattice. Runs with seeded bits are deterministic and
// include negative controls (a scale off by 10%, the direction law of
// dimension 3d/2 + 1); the run with crypto/rand bits is smaller and fresh:
// each of its three KS tests is at level ksAlpha/3 (DKW), so it rejects a
// correct sampler with probability at most ksAlpha = 1e-4.
func TestSecureGammaNormFit(t *testing.T) {
	const l2, eps = 0.8, 0.5
	theta := l2 / eps
	for _, tc := range []struct {
		name     string
		r        io.Reader
		d, n     int
		controls bool
		alpha    float64
	}{
		{"d=1/seeded", seededBits(11), 1, 20000, true, ksAlpha},
		{"d=4/seeded", seededBits(12), 4, 20000, true, ksAlpha},
		{"d=33/seeded", seededBits(13), 33, 4000, true, ksAlpha},
		{"d=5/crypto", crand.Reader, 5, 5000, false, ksAlpha / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]float64, tc.d)
			for i := range w {
				w[i] = 0.37*float64(i) - 1.1 + 1e-9*float64(i*i)
			}
			le, err := gammaLattice(l2, eps)
			if err != nil {
				t.Fatal(err)
			}
			lambda := math.Ldexp(1, le)
			s := math.Sqrt(float64(tc.d)) * lambda / 2
			v := make([]float64, tc.d)
			var vn float64
			for i := range v {
				v[i] = float64(i%3) - 0.5
				vn += v[i] * v[i]
			}
			vn = math.Sqrt(vn)
			draws := secureGammaDraws(t, tc.r, w, l2, eps, tc.n, 64, gammaLatticeBits)
			norms := make([]float64, tc.n)
			first := make([]float64, tc.n)
			proj := make([]float64, tc.n)
			for i, x := range draws {
				var sq, dot float64
				for j, c := range x {
					sq += c * c
					dot += c * v[j]
				}
				norms[i] = math.Sqrt(sq)
				first[i] = x[0] / norms[i]
				proj[i] = dot / (norms[i] * vn)
			}
			gamma := distuv.Gamma{Alpha: float64(tc.d), Beta: 1 / theta}
			var wrong func(float64) float64
			if tc.controls {
				wrong = distuv.Gamma{Alpha: float64(tc.d), Beta: 1 / (1.1 * theta)}.CDF
			}
			checkFitSlack(t, "norm", norms, gamma.CDF, wrong, tc.alpha, s/theta)
			if tc.d < 3 {
				return
			}
			r := theta / 32
			dir := func(d int) func(float64) float64 {
				b := distuv.Beta{Alpha: float64(d-1) / 2, Beta: float64(d-1) / 2}
				return func(u float64) float64 { return b.CDF((u + 1) / 2) }
			}
			b := distuv.Beta{Alpha: float64(tc.d-1) / 2, Beta: float64(tc.d-1) / 2}
			slack := b.Prob(0.5)/2*2*s/r + gamma.CDF(r)
			var wrongDir func(float64) float64
			if tc.controls {
				wrongDir = dir(tc.d + tc.d/2 + 1)
			}
			checkFitSlack(t, "direction, first coordinate", first, dir(tc.d), wrongDir, tc.alpha, slack)
			checkFitSlack(t, "direction, projection", proj, dir(tc.d), nil, tc.alpha, slack)
		})
	}
}

// TestSecureGammaNormRefinement checks the interval refinement. Started at
// p0 = 1 bit, the sampler refines through 2, 4, ..., 64 bits using the
// words already drawn, so it must give exactly the lattice points of the
// run started at 64 bits on the same bits: intervals at every precision
// contain the exact value, so whenever two of them settle the rounding they
// agree. On a lattice 2^-60 times finer, 64 bits rarely settle a coordinate
// and the sampler draws further words of the deviates; the runs from 1 and
// 64 bits must still agree, and the norm must still fit Gamma(d, theta) (KS
// at level ksAlpha = 1e-4).
func TestSecureGammaNormRefinement(t *testing.T) {
	const l2, eps = 1.0, 2.0
	for _, tc := range []struct {
		d, latticeBits, n int
	}{
		{3, gammaLatticeBits, 3000},
		{8, gammaLatticeBits + 60, 3000},
	} {
		w := make([]float64, tc.d)
		for i := range w {
			w[i] = math.Ldexp(float64(i+1), -3*i) - 0.25
		}
		a := secureGammaDraws(t, seededBits(21), w, l2, eps, tc.n, 1, tc.latticeBits)
		b := secureGammaDraws(t, seededBits(21), w, l2, eps, tc.n, 64, tc.latticeBits)
		for i := range a {
			for j := range a[i] {
				if a[i][j] != b[i][j] {
					t.Fatalf("d = %d, lattice bits %d, draw %d coordinate %d: %v from 1 bit, %v from 64 bits", tc.d, tc.latticeBits, i, j, a[i][j], b[i][j])
				}
			}
		}
		norms := make([]float64, tc.n)
		for i, x := range a {
			var sq float64
			for _, c := range x {
				sq += c * c
			}
			norms[i] = math.Sqrt(sq)
		}
		checkFitSlack(t, "norm", norms, distuv.Gamma{Alpha: float64(tc.d), Beta: eps / l2}.CDF, nil, ksAlpha, 1e-6)
	}
}

// TestSecureGammaNormErrors checks the validation of AddGammaNorm.
func TestSecureGammaNormErrors(t *testing.T) {
	src := Secure()
	for _, tc := range []struct {
		w       []float64
		l2, eps float64
		want    error
	}{
		{[]float64{1}, 0, 1, ErrSensitivity},
		{[]float64{1}, math.NaN(), 1, ErrSensitivity},
		{[]float64{1}, 1, -1, ErrEpsilon},
		{[]float64{1}, 1, math.Inf(1), ErrEpsilon},
		{[]float64{1}, 1e300, 1e-300, ErrScale},
		{[]float64{1, math.NaN()}, 1, 1, ErrModel},
	} {
		if err := src.AddGammaNorm(tc.w, tc.l2, tc.eps); !errors.Is(err, tc.want) {
			t.Errorf("AddGammaNorm(%v, %v, %v): err = %v, want %v", tc.w, tc.l2, tc.eps, err, tc.want)
		}
	}
	if err := src.AddGammaNorm(nil, 1, 1); err != nil {
		t.Errorf("empty w: %v", err)
	}
}

func TestSecureGammaNote(t *testing.T) {
	note := secureGammaNote(33, 1, 1)
	t.Log(note)
	for _, want := range []string{"floating-point", "exactly", "lambda = 2^-20", "33", "eps = 1 "} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %s", want, note)
		}
	}
}

// bisectCP returns the Clopper-Pearson interval for k successes in n
// trials, each side at level alpha/2: lo solves P(Bin(n, lo) >= k) =
// alpha/2, that is Beta(k, n-k+1).CDF(lo) = alpha/2, and hi solves
// Beta(k+1, n-k).CDF(hi) = 1 - alpha/2. It bisects on gonum's Beta CDF
// (the regularized incomplete beta function) and returns the outer end of
// each final bracket, so the interval is never too narrow. Unlike
// clopperPearson, which calls gonum's Beta quantile, it stays accurate for
// k near 0 or n with large n (there that quantile can return nearly 1 for
// the upper bound of k = 0 at n = 1e5, which costs the tests their power).
func bisectCP(k, n int, alpha float64) (lo, hi float64) {
	solve := func(b distuv.Beta, target float64, upper bool) float64 {
		a, c := 0.0, 1.0 // CDF(a) <= target <= CDF(c)
		for i := 0; i < 200 && c-a > 1e-15*c; i++ {
			m := a + (c-a)/2
			if b.CDF(m) < target {
				a = m
			} else {
				c = m
			}
		}
		if upper {
			return c
		}
		return a
	}
	if k > 0 {
		lo = solve(distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}, alpha/2, false)
	}
	hi = 1
	if k < n {
		hi = solve(distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}, 1-alpha/2, true)
	}
	return lo, hi
}

// fpEvent is a distinguishing event on one released coordinate o.
type fpEvent struct {
	name string
	in   func(o float64) bool
}

// fpEvents returns the events of the floating-point distinguisher: a window
// of values (a binade of either sign, or |o| < 2^k) intersected with a
// property of the low-order bits (none; o is not a multiple of 2^-j; the
// last bit of the significand is 1). Mironov (2012), Section 4, tells
// neighbouring inputs apart by such properties: near 0, x + N computed in
// float64 from a large x lies on the coarse grid of x's binade, while N
// alone does not.
func fpEvents() []fpEvent {
	type pred struct {
		name string
		f    func(float64) bool
	}
	preds := []pred{{"", func(float64) bool { return true }}}
	for _, j := range []int{21, 30, 40, 50, 53, 56} {
		preds = append(preds, pred{" and not a multiple of 2^-" + itoa(j), func(o float64) bool {
			x := math.Ldexp(o, j)
			return x != math.Trunc(x)
		}})
	}
	preds = append(preds, pred{" and odd significand", func(o float64) bool { return math.Float64bits(o)&1 == 1 }})
	var ev []fpEvent
	for k := -8; k <= 3; k++ {
		lo, hi := math.Ldexp(1, k), math.Ldexp(1, k+1)
		windows := []fpEvent{
			{"o in [2^" + itoa(k) + ", 2^" + itoa(k+1) + ")", func(o float64) bool { return o >= lo && o < hi }},
			{"o in (-2^" + itoa(k+1) + ", -2^" + itoa(k) + "]", func(o float64) bool { return o <= -lo && o > -hi }},
			{"|o| < 2^" + itoa(k), func(o float64) bool { return math.Abs(o) < lo }},
		}
		for _, win := range windows {
			for _, p := range preds {
				ev = append(ev, fpEvent{win.name + p.name, func(o float64) bool { return win.in(o) && p.f(o) }})
			}
		}
	}
	return ev
}

func itoa(k int) string { return strconv.Itoa(k) }

// fpAttack runs the floating-point distinguisher on the first released
// coordinate of the neighbouring inputs w = (0, 0, ...) and w' = (shift, 0,
// ...), ||w - w'|| = shift. On n draws of each it picks the event E of
// fpEvents and the order (a, b) of the inputs that maximise the bound
// ln(lo_a / hi_b), lo_a the lower Clopper-Pearson bound of P(M(a) in E) and
// hi_b the upper bound of P(M(b) in E); it then evaluates that bound on n
// fresh draws of each. eps-DP implies P(M(a) in E) <= e^eps P(M(b) in E), so
// for an eps-DP mechanism the returned bound exceeds eps with probability at
// most auditAlpha = 1e-6 (each Clopper-Pearson bound fails with probability
// at most auditAlpha/2; the choice made on the first draws does not bias the
// second). It also returns the counts of the chosen event.
func fpAttack(draw func(w0 float64) float64, shift float64, n int) (lb float64, name string, ca, cb int) {
	events := fpEvents()
	sample := func(w0 float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = draw(w0)
		}
		return x
	}
	count := func(x []float64, e fpEvent) int {
		c := 0
		for _, o := range x {
			if e.in(o) {
				c++
			}
		}
		return c
	}
	bound := func(ka, kb int) float64 {
		lo, _ := bisectCP(ka, n, auditAlpha)
		_, hi := bisectCP(kb, n, auditAlpha)
		if lo == 0 {
			return math.Inf(-1)
		}
		return math.Log(lo / hi)
	}
	train := [2][]float64{sample(0), sample(shift)}
	best, bi, ba := math.Inf(-1), 0, 0
	for i, e := range events {
		c := [2]int{count(train[0], e), count(train[1], e)}
		for a := 0; a < 2; a++ {
			if v := bound(c[a], c[1-a]); v > best {
				best, bi, ba = v, i, a
			}
		}
	}
	test := [2][]float64{sample(0), sample(shift)}
	e := events[bi]
	ca, cb = count(test[ba], e), count(test[1-ba], e)
	name = e.name
	if ba == 1 {
		name += " (favouring w')"
	} else {
		name += " (favouring w)"
	}
	return bound(ca, cb), name, ca, cb
}

// TestFloatingPointDistinguisher runs a Mironov-style attack on the
// gamma-norm mechanism in dimension 3 with D2 = 1, eps = 1, on the
// neighbouring inputs 0 and (1, 0, 0), looking at the first released
// coordinate only.
//
// (a) Negative control: the float64 sampler of the seeded source. For
// |o| < 1/2, o = 1 + N_1 is computed from N_1 in (-3/2, -1/2), a multiple of
// 2^-53, so o is a multiple of 2^-53, while o = N_1 from the input 0 mostly
// is not: the event has probability 0 under one input and about 0.16 under
// the other, a support difference. The attack must find an empirical eps
// far above the claim (> 4, against 1; it finds about 7 with 100000 draws).
//
// (b) The secure sampler: every output is a multiple of the lattice step for
// both inputs (checked on every draw), so no low-order-bit event separates
// them, and the attack's held-out bound must not exceed the claimed eps.
// For an eps-DP mechanism it does with probability at most auditAlpha =
// 1e-6 (see fpAttack).
func TestFloatingPointDistinguisher(t *testing.T) {
	const d, l2, eps = 3, 1.0, 1.0
	cal := Calibration{Mechanism: Gamma, Epsilon: eps, Dim: d, L2: l2, L1: math.Sqrt(d) * l2, Scale: l2 / eps}
	le, err := gammaLattice(l2, eps)
	if err != nil {
		t.Fatal(err)
	}
	lambda := math.Ldexp(1, le)
	drawFrom := func(src Source, lattice bool) func(float64) float64 {
		return func(w0 float64) float64 {
			w := []float64{w0, 0, 0}
			if err := addNoise(w, cal, src); err != nil {
				t.Fatal(err)
			}
			if lattice {
				for j, o := range w {
					if m := o / lambda; m != math.Trunc(m) {
						t.Fatalf("secure output %d = %v is not a multiple of the lattice step %v", j, o, lambda)
					}
				}
			}
			return w[0]
		}
	}

	lb, name, ca, cb := fpAttack(drawFrom(Seeded(31), false), l2, 100000)
	t.Logf("float64 sampler: empirical eps lower bound %.2f (claim %v), event %q: %d vs %d of 100000", lb, eps, name, ca, cb)
	if lb <= 4 {
		t.Errorf("float64 sampler: the distinguisher found eps >= %.2f only, want > 4: the attack has no power", lb)
	}

	lb, name, ca, cb = fpAttack(drawFrom(Secure(), true), l2, 40000)
	t.Logf("secure sampler: empirical eps lower bound %.2f (claim %v), event %q: %d vs %d of 40000", lb, eps, name, ca, cb)
	if lb > eps {
		t.Errorf("secure sampler: the distinguisher found eps >= %.3f > %v with event %q", lb, eps, name)
	}
}

// benchmarkSecureGammaNorm adds secure gamma-norm noise to d weights per
// iteration.
func benchmarkSecureGammaNorm(b *testing.B, d int) {
	src := Secure()
	w := make([]float64, d)
	b.ReportAllocs()
	for b.Loop() {
		if err := src.AddGammaNorm(w, 0.01, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSecureGammaNorm_D33(b *testing.B)   { benchmarkSecureGammaNorm(b, 33) }
func BenchmarkSecureGammaNorm_D330(b *testing.B)  { benchmarkSecureGammaNorm(b, 330) }
func BenchmarkSecureGammaNorm_D3300(b *testing.B) { benchmarkSecureGammaNorm(b, 3300) }

func BenchmarkSeededGammaNorm_D330(b *testing.B) {
	src := Seeded(1)
	w := make([]float64, 330)
	for b.Loop() {
		if err := src.AddGammaNorm(w, 0.01, 1); err != nil {
			b.Fatal(err)
		}
	}
}
