package perturb

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// exactAlpha is the level of the exactness tests below. The chi-square
// tests are asymptotic: with at least 10 expected draws in every cell their
// false-rejection probability is about exactAlpha = 1e-6 per test; the
// Clopper-Pearson tests are exact: at most exactAlpha. The draws come from
// seeded ChaCha8 streams, so the tests are deterministic; the negative
// controls show that a law off by a little is rejected.
const exactAlpha = 1e-6

// seededBits returns a deterministic stream of random bytes.
func seededBits(seed uint64) io.Reader {
	var s [32]byte
	for i := range s {
		s[i] = byte(seed >> (8 * (i % 8)))
	}
	s[31] ^= 0x5a
	return rand.NewChaCha8(s)
}

// chiSquare returns Pearson's statistic of the counts against the
// probabilities p (summing to 1) and the critical value at level
// exactAlpha. It fails t if a cell expects fewer than 10 draws.
func chiSquare(t *testing.T, counts []int, p []float64) (stat, crit float64) {
	t.Helper()
	var n, sum float64
	for _, c := range counts {
		n += float64(c)
	}
	for i, c := range counts {
		e := n * p[i]
		if e < 10 {
			t.Fatalf("cell %d expects %.1f draws, want >= 10", i, e)
		}
		stat += (float64(c) - e) * (float64(c) - e) / e
		sum += p[i]
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("cell probabilities sum to %v", sum)
	}
	return stat, distuv.ChiSquared{K: float64(len(p) - 1)}.Quantile(1 - exactAlpha)
}

// checkChiSquare fails t unless counts fit p; with a non-nil wrong, it also
// fails t if the counts fit wrong (the test has no power).
func checkChiSquare(t *testing.T, what string, counts []int, p, wrong []float64) {
	t.Helper()
	stat, crit := chiSquare(t, counts, p)
	t.Logf("%s: chi-square %.1f, critical %.1f (df %d)", what, stat, crit, len(p)-1)
	if stat > crit {
		t.Errorf("%s: chi-square %.1f > critical %.1f", what, stat, crit)
	}
	if wrong != nil {
		if s, _ := chiSquare(t, counts, wrong); s <= crit {
			t.Errorf("%s: chi-square %.1f <= critical %.1f against a wrong law: no power", what, s, crit)
		}
	}
}

// checkRate fails t unless p lies in the Clopper-Pearson interval of k
// successes in n at level exactAlpha; with wrong > 0, it also fails t if
// wrong lies in it.
func checkRate(t *testing.T, what string, k, n int, p, wrong float64) {
	t.Helper()
	lo, hi := bisectCP(k, n, exactAlpha)
	if p < lo || p > hi {
		t.Errorf("%s: %d of %d, interval [%v, %v] excludes %v", what, k, n, lo, hi, p)
	}
	if wrong > 0 && wrong >= lo && wrong <= hi {
		t.Errorf("%s: interval [%v, %v] contains the wrong rate %v: no power", what, lo, hi, wrong)
	}
}

func TestUniformIntExact(t *testing.T) {
	src := newWordSource(seededBits(1))
	for _, m := range []uint64{1, 3, 6, 7, 10} {
		const n = 100000
		counts := make([]int, m)
		for i := 0; i < n; i++ {
			counts[src.uniformInt(m)]++
		}
		if m == 1 {
			if counts[0] != n {
				t.Errorf("m = 1: counts %v", counts)
			}
			continue
		}
		p := make([]float64, m)
		for i := range p {
			p[i] = 1 / float64(m)
		}
		checkChiSquare(t, "uniformInt", counts, p, nil)
	}
}

// TestExpHalfExact checks P(expHalf) = exp(-1/2) by an exact binomial test;
// a rate 1% off must be rejected.
func TestExpHalfExact(t *testing.T) {
	ex := newExactSampler(newWordSource(seededBits(2)))
	const n = 400000
	k := 0
	for i := 0; i < n; i++ {
		if ex.expHalf() {
			k++
		}
	}
	p := math.Exp(-0.5)
	checkRate(t, "expHalf", k, n, p, 0.99*p)
}

// fixedFraction returns a deviate whose first word is w: its value is
// within 2^-64 of w 2^-64.
func fixedFraction(w uint64) *urand {
	u := new(urand)
	u.head[0], u.n = w, 1
	return u
}

// TestExpNegExact checks P(expNeg(x)) = exp(-x) at fixed x (exact binomial
// tests; the value of x is known to 2^-64), and the joint law of (first
// three bits of a uniform x, outcome) by a chi-square test: the cell
// (j, true) has probability int_{j/8}^{(j+1)/8} exp(-x) dx.
func TestExpNegExact(t *testing.T) {
	ex := newExactSampler(newWordSource(seededBits(3)))
	for _, x := range []float64{0.125, 0.5, 0.9375} {
		const n = 200000
		k := 0
		for i := 0; i < n; i++ {
			if ex.expNeg(fixedFraction(uint64(x * (1 << 63) * 2))) {
				k++
			}
		}
		p := math.Exp(-x)
		checkRate(t, "expNeg", k, n, p, p*0.985)
	}
	const n = 200000
	counts := make([]int, 16)
	var x urand
	for i := 0; i < n; i++ {
		x.reset()
		ok := ex.expNeg(&x)
		j := int(x.word(0, ex.s) >> 61)
		if ok {
			counts[j]++
		} else {
			counts[8+j]++
		}
	}
	p := make([]float64, 16)
	for j := 0; j < 8; j++ {
		a, b := float64(j)/8, float64(j+1)/8
		p[j] = math.Exp(-a) - math.Exp(-b)
		p[8+j] = 0.125 - p[j]
	}
	checkChiSquare(t, "expNeg joint", counts, p, nil)
}

// TestBernoulliBExact checks P(bernoulliB(k, x)) = exp(-x(2k+x)/(2k+2)) at
// fixed x and k by exact binomial tests.
func TestBernoulliBExact(t *testing.T) {
	ex := newExactSampler(newWordSource(seededBits(4)))
	for _, k := range []uint64{0, 1, 4} {
		for _, x := range []float64{0.25, 0.875} {
			const n = 100000
			c := 0
			for i := 0; i < n; i++ {
				if ex.bernoulliB(k, fixedFraction(uint64(x*(1<<63))*2)) {
					c++
				}
			}
			kf := float64(k)
			p := math.Exp(-x * (2*kf + x) / (2*kf + 2))
			checkRate(t, "bernoulliB", c, n, p, 0.98*p)
		}
	}
}

// fracBits returns the bits [from, from+n) (0-based, n <= 8) of the
// fraction of x, drawing words as needed.
func fracBits(x *exactReal, from, n int, s *wordSource) int {
	v := 0
	for b := from; b < from+n; b++ {
		w := x.f.word(b/64, s)
		v = v<<1 | int(w>>(63-uint(b%64))&1)
	}
	return v
}

// TestExponentialExact checks the joint law of the integer part k and the
// first three fraction bits j of the exact exponential deviate: the cell
// (k, j), k < 6, has probability exp(-k)(exp(-j/8) - exp(-(j+1)/8)), the
// cell k >= 6 probability exp(-6). A rate of 1.03 must be rejected. The bits
// 62 to 65 of the fraction, which straddle the first two words (the second
// drawn only on demand), must be uniform.
func TestExponentialExact(t *testing.T) {
	s := newWordSource(seededBits(5))
	ex := newExactSampler(s)
	const n, K = 200000, 6
	counts := make([]int, 8*K+1)
	straddle := make([]int, 16)
	var x exactReal
	for i := 0; i < n; i++ {
		ex.exponential(&x)
		if x.neg {
			t.Fatal("negative exponential deviate")
		}
		if x.k >= K {
			counts[8*K]++
		} else {
			counts[8*int(x.k)+fracBits(&x, 0, 3, s)]++
		}
		straddle[fracBits(&x, 62, 4, s)]++
	}
	law := func(rate float64) []float64 {
		p := make([]float64, 8*K+1)
		for k := 0; k < K; k++ {
			for j := 0; j < 8; j++ {
				a := float64(k) + float64(j)/8
				p[8*k+j] = math.Exp(-rate*a) - math.Exp(-rate*(a+0.125))
			}
		}
		p[8*K] = math.Exp(-rate * K)
		return p
	}
	checkChiSquare(t, "exponential (k, 3 bits)", counts, law(1), law(1.03))
	uni := make([]float64, 16)
	for i := range uni {
		uni[i] = 1.0 / 16
	}
	checkChiSquare(t, "exponential bits 62-65", straddle, uni, nil)
}

// TestNormalExact checks the joint law of the sign, the integer part k and
// the first three fraction bits j of Karney's exact normal deviate: the cell
// (sign, k, j), k < 4, has probability (Phi(b) - Phi(a)) with
// [a, b) = k + [j, j+1)/8, the cell |x| >= 4 probability 2(1 - Phi(4)). A
// standard deviation of 1.02 must be rejected; the fraction bits 62 to 65
// must be uniform.
func TestNormalExact(t *testing.T) {
	s := newWordSource(seededBits(6))
	ex := newExactSampler(s)
	const n, K = 1000000, 4
	counts := make([]int, 2*8*K+1)
	straddle := make([]int, 16)
	var x exactReal
	for i := 0; i < n; i++ {
		ex.normal(&x)
		c := 8 * K * 2
		if x.k < K {
			c = 8*int(x.k) + fracBits(&x, 0, 3, s)
			if x.neg {
				c += 8 * K
			}
		}
		counts[c]++
		straddle[fracBits(&x, 62, 4, s)]++
	}
	law := func(sigma float64) []float64 {
		phi := distuv.Normal{Mu: 0, Sigma: sigma}
		p := make([]float64, 2*8*K+1)
		for k := 0; k < K; k++ {
			for j := 0; j < 8; j++ {
				a := float64(k) + float64(j)/8
				v := phi.CDF(a+0.125) - phi.CDF(a)
				p[8*k+j], p[8*K+8*k+j] = v, v
			}
		}
		p[2*8*K] = 2 * phi.Survival(K)
		return p
	}
	checkChiSquare(t, "normal (sign, k, 3 bits)", counts, law(1), law(1.02))
	uni := make([]float64, 16)
	for i := range uni {
		uni[i] = 1.0 / 16
	}
	checkChiSquare(t, "normal bits 62-65", straddle, uni, nil)
}

// failingReader returns an error after giving some bytes.
type failingReader struct{ left int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, errors.New("no more bits")
	}
	n := min(len(p), f.left)
	clear(p[:n])
	f.left -= n
	return n, nil
}

// TestExactSourceFailure checks that a failing reader gives an error
// wrapping ErrSource and leaves w unchanged, instead of a panic or a stall.
func TestExactSourceFailure(t *testing.T) {
	w := []float64{1, 2, 3}
	err := addGammaNormExact(w, 1, 1, &failingReader{left: 1024}, 64, gammaLatticeBits)
	if !errors.Is(err, ErrSource) {
		t.Fatalf("err = %v, want ErrSource", err)
	}
	if w[0] != 1 || w[1] != 2 || w[2] != 3 {
		t.Errorf("w changed to %v on failure", w)
	}
}
