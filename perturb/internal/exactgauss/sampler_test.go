package exactgauss

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// alpha is the level of every goodness-of-fit test here: each rejects a
// correct sampler with probability about 1e-4 (the chi-square
// approximation, with at least 20 expected draws a bin). The generators are
// keyed by constants, so the tests are deterministic; each has a negative
// control that a law off by a little fails.
const alpha = 1e-4

// newTest returns a Sampler keyed by seed.
func newTest(seed byte) *Sampler { return New([32]byte{seed, 's', 'e', 'e', 'd'}) }

// wordsUsed returns how many words of its generator s has used.
func (s *Sampler) wordsUsed() uint64 { return s.drawn - uint64(bufWords-s.pos) }

// draw returns the float64 nearest (to 2^-64 of a piece) to an exact
// standard normal deviate of s.
func (s *Sampler) draw() float64 {
	b, width := s.magnitude()
	neg := s.bit()
	s.words()
	x := (float64(b) + float64(width)*float64(s.tw[0])/0x1p64) / (1 << pieceBits)
	if neg {
		return -x
	}
	return x
}

// chiSquare returns the statistic of the counts against the bin
// probabilities p (adding up to 1) and whether it lies below the 1 - alpha
// quantile of the chi-square law with len(p) - 1 degrees of freedom.
func chiSquare(counts []int, p []float64) (float64, bool) {
	n := 0
	for _, c := range counts {
		n += c
	}
	var x2 float64
	for i, c := range counts {
		e := float64(n) * p[i]
		x2 += (float64(c) - e) * (float64(c) - e) / e
	}
	crit := distuv.ChiSquared{K: float64(len(p) - 1)}.Quantile(1 - alpha)
	return x2, x2 <= crit
}

// normalBins returns the counts of x in the m bins of equal probability of
// N(0, scale^2) (scale 1: the law under test), and those probabilities.
func normalBins(x []float64, m int, scale float64) ([]int, []float64) {
	edges := make([]float64, m-1)
	for i := range edges {
		edges[i] = scale * distuv.UnitNormal.Quantile(float64(i+1)/float64(m))
	}
	counts := make([]int, m)
	for _, v := range x {
		lo, hi := 0, len(edges)
		for lo < hi {
			mid := (lo + hi) / 2
			if v < edges[mid] {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		counts[lo]++
	}
	p := make([]float64, m)
	for i := range p {
		p[i] = 1 / float64(m)
	}
	return counts, p
}

// checkNormal fails t unless x passes the chi-square test against N(0, 1)
// in m equiprobable bins, and unless it fails against N(0, wrong^2).
func checkNormal(t *testing.T, what string, x []float64, m int, wrong float64) {
	t.Helper()
	if x2, ok := chiSquare(normalBins(x, m, 1)); !ok {
		t.Errorf("%s: chi-square %.1f over %d bins: not N(0, 1)", what, x2, m)
	}
	if x2, ok := chiSquare(normalBins(x, m, wrong)); ok {
		t.Errorf("%s: chi-square %.1f against N(0, %v^2) passes: the test has no power", what, x2, wrong)
	}
}

// TestLaw checks the deviates against N(0, 1): 400000 by the usual paths
// (squeezes, then the exact test for the few they leave), and 20000 with
// every acceptance decided by the exact test alone. N(0, 1.02^2) and
// N(0, 1.1^2) must fail them.
func TestLaw(t *testing.T) {
	s := newTest(1)
	x := make([]float64, 400000)
	for i := range x {
		x[i] = s.draw()
	}
	checkNormal(t, "usual paths", x, 100, 1.02)

	s = newTest(2)
	s.exact = true
	x = x[:20000]
	for i := range x {
		x[i] = s.draw()
	}
	checkNormal(t, "exact test only", x, 20, 1.1)
}

// TestTail checks tailPiece: its accepted deviates follow the law of |Z|
// given |Z| > tailStart, P(|Z| > tailStart + s | ...) =
// erfc((tailStart + s)/sqrt 2) / erfc(tailStart/sqrt 2), in 10 bins of equal
// probability; the law shifted by 1% of its scale (about 1/tailStart) must
// fail.
func TestTail(t *testing.T) {
	const n, m = 2000, 10
	start := float64(nCore) / (1 << pieceBits)
	s := newTest(3)
	x := make([]float64, 0, n)
	for len(x) < n {
		b, ok := s.tailPiece()
		if !ok {
			continue
		}
		x = append(x, (float64(b)+(1<<pieceBits)*float64(s.tw[0])/0x1p64)/(1<<pieceBits))
	}
	survival := func(v float64) float64 { return math.Erfc(v/math.Sqrt2) / math.Erfc(start/math.Sqrt2) }
	for _, shift := range []float64{0, 0.3 / start} {
		counts := make([]int, m)
		for _, v := range x {
			u := 1 - survival(v-shift) // the conditional CDF, shifted
			counts[min(m-1, max(0, int(u*m)))]++
		}
		p := make([]float64, m)
		for i := range p {
			p[i] = 1.0 / m
		}
		x2, ok := chiSquare(counts, p)
		if shift == 0 && !ok {
			t.Errorf("tail: chi-square %.1f: not the normal tail beyond %v", x2, start)
		}
		if shift != 0 && ok {
			t.Errorf("tail: chi-square %.1f against the shifted tail passes: no power", x2)
		}
	}
}

// TestRoundFast checks that the int64 rounding, when it answers, gives the
// integer the exact rounding gives, over weights from 0 and subnormal to
// 2^40 sigma, and that it answers in almost every case with |w| < 2^20
// sigma.
func TestRoundFast(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	s := newTest(4)
	answered, near := 0, 0
	for i := range 20000 {
		sigma := math.Ldexp(0.5+r.Float64()/2, r.IntN(80)-40)
		fr, e := math.Frexp(sigma)
		ms := uint64(math.Ldexp(fr, 53))
		le := e - LatticeBits - 1
		var w float64
		switch i % 5 {
		case 0:
		case 1:
			w = math.Ldexp(r.Float64()-0.5, -1070)
		default:
			w = sigma * r.NormFloat64() * math.Ldexp(1, r.IntN(42))
		}
		b, t0, neg := uint64(r.IntN(nCore)), r.Uint64(), r.IntN(2) == 0
		k, ok := roundFast(w, ms, le, b, t0, neg)
		if math.Abs(w) < sigma*(1<<20) {
			near++
			if ok {
				answered++
			}
		}
		if !ok {
			continue
		}
		s.t0, s.tw = t0, s.tw[:0]
		want := s.roundExact(w, ms, e-53, le, b, 1, neg)
		if !want.IsInt64() || want.Int64() != k {
			t.Fatalf("w %v, sigma %v, b %d, t0 %d, neg %v: fast %d, exact %v", w, sigma, b, t0, neg, k, want)
		}
	}
	if answered < near*999/1000 {
		t.Errorf("the fast rounding answered %d of %d cases with |w| < 2^20 sigma", answered, near)
	}
}

// roundedNormal returns P(round((w + sigma Z)/lambda) = k) for k in
// [lo, hi], the first and last bins taking the tails.
func roundedNormal(w, sigma, lambda float64, lo, hi int) []float64 {
	cdf := func(k float64) float64 { return distuv.UnitNormal.CDF(((k+0.5)*lambda - w) / sigma) }
	p := make([]float64, hi-lo+1)
	for k := lo; k <= hi; k++ {
		up, down := 1.0, 0.0
		if k < hi {
			up = cdf(float64(k))
		}
		if k > lo {
			down = cdf(float64(k - 1))
		}
		p[k-lo] = up - down
	}
	return p
}

// TestSnappedLaw checks the law of AddSnapped's output against the exact
// law of the rounded Gaussian, P(k) = Phi(((k + 1/2) lambda - w)/sigma) -
// Phi(((k - 1/2) lambda - w)/sigma), on a coarse lattice (lambda = sigma/2)
// where the rounding shows, with every decision by the exact paths; the
// same counts against the law of w + lambda/4, and against that of
// sigma 1.1, must fail (noncentralities about 300 and 400, against a
// critical value near 42).
func TestSnappedLaw(t *testing.T) {
	const n, sigma, w = 20000, 1.0, 0.3
	s := newTest(5)
	s.exact, s.latticeBits = true, 1
	lambda := math.Ldexp(1, Lattice(sigma)+LatticeBits-1)
	if lambda != 0.5 {
		t.Fatalf("lambda %v, want 0.5", lambda)
	}
	const lo, hi = -7, 8 // |k lambda - w| up to 4 sigma; the tails pooled
	counts := make([]int, hi-lo+1)
	x := make([]float64, 1)
	for range n {
		x[0] = w
		s.AddSnapped(x, sigma)
		k := x[0] / lambda
		if k != math.Trunc(k) {
			t.Fatalf("%v is not a multiple of %v", x[0], lambda)
		}
		counts[min(hi, max(lo, int(k)))-lo]++
	}
	if x2, ok := chiSquare(counts, roundedNormal(w, sigma, lambda, lo, hi)); !ok {
		t.Errorf("chi-square %.1f: not the rounded N(%v, %v^2) on multiples of %v", x2, w, sigma, lambda)
	}
	for _, wrong := range [][2]float64{{w + lambda/4, sigma}, {w, 1.1 * sigma}} {
		if x2, ok := chiSquare(counts, roundedNormal(wrong[0], wrong[1], lambda, lo, hi)); ok {
			t.Errorf("chi-square %.1f against the law of w %v, sigma %v passes: no power", x2, wrong[0], wrong[1])
		}
	}
}

// TestSnappedLattice checks AddSnapped at the real lattice by the usual
// paths: every output is a multiple of lambda = 2^Lattice(sigma), and
// (out - w)/sigma follows N(0, 1) (the rounding moves it by at most 2^-21,
// far below the bins); its sample variance is at least sigma^2 up to the
// one-sided 1e-4 quantile of (n - 1) s^2 / sigma^2 ~ chi-square(n - 1),
// which a sampler at 0.99 sigma fails (its s^2 near 0.98 sigma^2, below
// the bound 0.992 sigma^2).
func TestSnappedLattice(t *testing.T) {
	const n, sigma = 400000, 3.7
	s := newTest(6)
	lambda := math.Ldexp(1, Lattice(sigma))
	ws := []float64{0, 0.123, -4e3, 1e9}
	z := make([]float64, 0, n)
	var sum2 float64
	for i := range n {
		x := []float64{ws[i%len(ws)]}
		s.AddSnapped(x, sigma)
		if q := x[0] / lambda; q != math.Trunc(q) {
			t.Fatalf("%v is not a multiple of %v", x[0], lambda)
		}
		d := x[0] - ws[i%len(ws)]
		z = append(z, d/sigma)
		sum2 += d * d
	}
	checkNormal(t, "snapped", z, 100, 1.02)
	v := sum2 / n // the mean is 0: n degrees of freedom
	bound := sigma * sigma * distuv.ChiSquared{K: n}.Quantile(alpha) / n
	if v < bound {
		t.Errorf("variance %v below %v (sigma^2 = %v)", v, bound, sigma*sigma)
	}
	if 0.98*sigma*sigma >= bound {
		t.Errorf("the variance bound %v would not catch 0.99 sigma", bound)
	}
}

// TestLatticeFloat checks that the float64 of a lattice point is one
// function of (k, le): the int64 and big paths agree, a zero is +0.
func TestLatticeFloat(t *testing.T) {
	for _, le := range []int{-1100, -1074, -1060, -30, 0, 900, 1000} {
		for _, k := range []int64{0, 1, -1, 3, -5, 1 << 40, -(1 << 53), 1<<53 - 1} {
			a := latticeInt(k, le)
			b := latticeFloat(new(big.Int).SetInt64(k), le)
			c, _ := new(big.Float).SetMantExp(new(big.Float).SetInt64(k), le).Float64()
			if c == 0 {
				c = 0
			}
			if math.Float64bits(a) != math.Float64bits(b) || math.Float64bits(a) != math.Float64bits(c) {
				t.Errorf("k %d, le %d: %v, %v, nearest %v", k, le, a, b, c)
			}
		}
	}
}

// TestAddSnappedOverflowIndex checks AddSnapped's result: the index of the
// first infinity it wrote, -1 for none, at sigma = 3.7 (never) and at
// sigma = 2^990 (the largest lattice that the float64(k) scale path
// takes) and MaxFloat64/2, with values at the ends of the float64 range.
// At sigma = 2^990 the value MaxFloat64 overflows when Z > 2^-21 (its
// lattice point is the largest float64 of the lattice), probability about
// 1/2: none of the 32 draws at it does so with probability 2^-32, the
// false-failure probability of the last check.
func TestAddSnappedOverflowIndex(t *testing.T) {
	s := newTest(10)
	overflows := 0
	for _, sigma := range []float64{3.7, 0x1p990, math.MaxFloat64 / 2} {
		for range 16 {
			w := []float64{0, 1, -3, math.MaxFloat64, -math.MaxFloat64, 2, math.MaxFloat64}
			got := s.AddSnapped(w, sigma)
			want := -1
			for i, v := range w {
				if math.IsNaN(v) {
					t.Fatalf("sigma %v: NaN at %d", sigma, i)
				}
				if math.IsInf(v, 0) && want < 0 {
					want = i
				}
			}
			if got != want {
				t.Fatalf("sigma %v: AddSnapped says %d, the first infinity is at %d (%v)", sigma, got, want, w)
			}
			if sigma == 3.7 && got >= 0 {
				t.Fatalf("an overflow at sigma 3.7: %v", w)
			}
			if got >= 0 {
				overflows++
			}
		}
	}
	if overflows == 0 {
		t.Error("no overflow in 32 draws near the float64 range")
	}
}

// TestAddSnappedSameWords checks that AddSnapped's inline usual draw is the
// same function of the generator's words as the reference composition:
// magnitude, bit, then roundExact and latticeFloat, on a Sampler with the
// same key, bit for bit over 20000 values at each sigma (the usual scale,
// tiny and huge ones where the lattice leaves the float64 k scale path),
// and that both used the same number of words.
func TestAddSnappedSameWords(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for _, sigma := range []float64{3.7, 1e-310, 1e-300, 0.25, 1e300} {
		a, ref := newTest(11), newTest(11)
		w := make([]float64, 20000)
		for i := range w {
			w[i] = sigma * r.NormFloat64() * math.Ldexp(1, r.IntN(30)-10)
		}
		want := make([]float64, len(w))
		fr, e := math.Frexp(sigma)
		ms, le := uint64(math.Ldexp(fr, 53)), e-LatticeBits-1
		for i, x := range w {
			b, width := ref.magnitude()
			neg := ref.bit()
			want[i] = latticeFloat(ref.roundExact(x, ms, e-53, le, b, width, neg), le)
		}
		a.AddSnapped(w, sigma)
		for i := range w {
			if math.Float64bits(w[i]) != math.Float64bits(want[i]) {
				t.Fatalf("sigma %v, value %d: AddSnapped %v, reference %v", sigma, i, w[i], want[i])
			}
		}
		if a.wordsUsed() != ref.wordsUsed() {
			t.Errorf("sigma %v: AddSnapped used %d words, the reference %d", sigma, a.wordsUsed(), ref.wordsUsed())
		}
	}
}
