package poisson

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestRate checks the sample rate: b/n rounded down to a float64
// that is a multiple of 2^-64, within a relative 2^-52 of b/n, 1 for b =
// n, exact for a dyadic b/n, and a panic outside 1 <= b <= n (of the
// sampler too).
func TestRate(t *testing.T) {
	for _, c := range [][2]int{{200, 20}, {36000, 1}, {36000, 190}, {100000, 256}, {3, 1}, {3, 2}, {7, 6}, {1 << 40, 3}, {8, 2}, {5, 5}} {
		n, b := c[0], c[1]
		q := Rate(n, b)
		exact := big.NewRat(int64(b), int64(n))
		got := new(big.Rat).SetFloat64(q)
		scaled := new(big.Rat).Mul(got, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 64)))
		gap, _ := new(big.Rat).Quo(new(big.Rat).Sub(exact, got), exact).Float64()
		switch {
		case got.Cmp(exact) > 0:
			t.Errorf("n = %d, b = %d: q = %v above b/n", n, b, q)
		case !scaled.IsInt():
			t.Errorf("n = %d, b = %d: q = %v is not a multiple of 2^-64", n, b, q)
		case gap >= 0x1p-52:
			t.Errorf("n = %d, b = %d: q = %v is %g below b/n", n, b, q, gap)
		}
	}
	if q := Rate(8, 2); q != 0.25 {
		t.Errorf("q(8, 2) = %v, want 0.25", q)
	}
	if q := Rate(5, 5); q != 1 {
		t.Errorf("q(5, 5) = %v, want 1", q)
	}
	for _, bad := range [][2]int{{5, 0}, {5, 6}} {
		for name, f := range map[string]func(){
			"Rate": func() { Rate(bad[0], bad[1]) },
			"New":  func() { New(rand.NewPCG(1, 1), bad[0], bad[1]) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: n = %d, b = %d: no panic", name, bad[0], bad[1])
					}
				}()
				f()
			}()
		}
	}
}

// TestSampler checks b = n (every row, no coins), that a sampler
// reports its rate, and that the batches are increasing indices in [0, n).
func TestSampler(t *testing.T) {
	all := New(rand.NewPCG(1, 1), 5, 5).Sample(nil)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4}) {
		t.Errorf("b = n: batch %v, want every row", all)
	}
	s := New(rand.NewPCG(2, 3), 150, 30)
	if s.Rate() != Rate(150, 30) {
		t.Errorf("rate %v, want %v", s.Rate(), Rate(150, 30))
	}
	var batch []int
	for range 200 {
		batch = s.Sample(batch)
		if !slices.IsSorted(batch) || len(batch) > 0 && (batch[0] < 0 || batch[len(batch)-1] >= 150) || len(slices.Compact(slices.Clone(batch))) != len(batch) {
			t.Fatalf("batch %v: not increasing indices of the 150 rows", batch)
		}
	}
}

// countingSource counts the words drawn from a source.
type countingSource struct {
	rand.Source
	words int
}

func (c *countingSource) Uint64() uint64 { c.words++; return c.Source.Uint64() }

// TestSamplerCost checks that a step costs O(qn + 1) coins, not
// O(n): at n = 10^6 and b = 1, 2,000 steps draw about one word per row
// drawn (one gap each, a second word about once in 2^45), far from the
// n/64 words of a coin per row.
func TestSamplerCost(t *testing.T) {
	src := &countingSource{Source: rand.NewPCG(5, 6)}
	s := New(src, 1_000_000, 1)
	rows := 0
	var batch []int
	for range 2000 {
		batch = s.Sample(batch)
		rows += len(batch)
	}
	if src.words != rows+1 {
		t.Errorf("%d words for %d rows drawn in 2,000 steps, want one a row and the first gap", src.words, rows)
	}
}

// TestPowTableBounds checks that the float64 table bounds p^k, for k of
// every level and at the edges, against bounds at 512 bits (exact for
// k <= 8), and that it is tight (hi/lo - 1 < 2^-44 where lo > 2^-100), so
// that U's first word settles a comparison but about once in 2^44.
func TestPowTableBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range [][2]int{{36000, 1}, {36000, 256}, {100000, 32}, {10, 3}, {7, 6}, {1 << 30, 1}} {
		s := New(rand.NewPCG(1, 1), c[0], c[1])
		ks := []int64{1, 2, 7, 8, 255, 256, 257, 65535, 65536, 1 << 24, maxGap}
		for range 300 {
			ks = append(ks, r.Int64N(maxGap+1), r.Int64N(1<<10), r.Int64N(1<<20))
		}
		for _, k := range ks {
			lo, hi := s.pow.bounds(k)
			if k == 0 {
				continue
			}
			blo, elo := s.power(k, 512, big.ToZero)
			bhi, ehi := s.power(k, 512, big.AwayFromZero)
			flo := new(big.Float).SetMantExp(blo, int(max(elo, -100000)))
			fhi := new(big.Float).SetMantExp(bhi, int(max(ehi, -100000)))
			if new(big.Float).SetFloat64(lo).Cmp(flo) > 0 || new(big.Float).SetFloat64(hi).Cmp(fhi) < 0 {
				t.Fatalf("n = %d, b = %d, k = %d: the table's [%v, %v] does not hold p^k in [%v, %v]", c[0], c[1], k, lo, hi, flo, fhi)
			}
			if lo > 0x1p-100 && hi/lo-1 >= 0x1p-44 {
				t.Errorf("n = %d, b = %d, k = %d: the table's [%v, %v] is loose", c[0], c[1], k, lo, hi)
			}
		}
	}
}

// TestGeometricExactPath checks the fast comparisons against the exact
// ones, and that the guess does not decide the gap: on the same words, a
// sampler that always takes the exact path (math/big up to p^k's exact
// value), and one whose guess is wrong (1/log p off by a factor 1.7, or 0.4),
// draw the same gap as one that first tries U's first word against the
// table, over 3,000 gaps at each rate.
func TestGeometricExactPath(t *testing.T) {
	for _, c := range [][2]int{{36000, 1}, {36000, 256}, {10, 3}, {7, 6}, {1 << 30, 1}} {
		fast := New(rand.NewPCG(1, 1), c[0], c[1])
		exact := New(rand.NewPCG(1, 1), c[0], c[1])
		exact.exact = true
		far := New(rand.NewPCG(1, 1), c[0], c[1])
		near := New(rand.NewPCG(1, 1), c[0], c[1])
		far.inv *= 1.7
		near.inv *= 0.4
		for seed := range uint64(3000) {
			for name, other := range map[string]*Sampler{"exactly": exact, "with a guess too low": far, "with a guess too high": near} {
				fast.coins, other.coins = rand.NewPCG(seed, 9), rand.NewPCG(seed, 9)
				g, f := fast.geometric()
				if g2, f2 := other.geometric(); g != g2 || f != f2 {
					t.Fatalf("n = %d, b = %d, seed %d: gap %d (full %v) by the table, %d (%v) %s", c[0], c[1], seed, g, f, g2, f2, name)
				}
			}
		}
	}
}

// scripted is a source that returns its words, then zeros.
type scripted struct{ w []uint64 }

func (s *scripted) Uint64() uint64 {
	if len(s.w) == 0 {
		return 0
	}
	v := s.w[0]
	s.w = s.w[1:]
	return v
}

// TestBelowExactDeep checks the exact comparison where U agrees with p^k
// on every bit but the last words: U equal to p^k (its 64k bits, then
// zeros) is not below it, U one unit of its last word lower is, and one
// unit of the last word higher is not; the comparison must reach p^k's
// exact value (64k bits: beyond 128 for k >= 3), past words of zeros when
// p^k is below 2^-64 (q = 6/7, k = 40).
func TestBelowExactDeep(t *testing.T) {
	for _, c := range [][2]int{{10, 3}, {36000, 190}, {7, 6}} {
		s := New(rand.NewPCG(1, 1), c[0], c[1])
		for _, k := range []int64{1, 2, 3, 5, 9, 40} {
			// p^k = a^k 2^(-64k): its k words are a^k's, most significant first.
			A := new(big.Int).Exp(new(big.Int).SetUint64(s.a), big.NewInt(k), nil)
			words := make([]uint64, k)
			for j := range words {
				words[k-1-int64(j)] = new(big.Int).Rsh(A, uint(64*j)).Uint64()
			}
			for _, tc := range []struct {
				delta int64
				want  bool
			}{{0, false}, {-1, true}, {1, false}} {
				w := slices.Clone(words)
				if tc.delta == -1 && w[k-1] == 0 || tc.delta == 1 && w[k-1] == math.MaxUint64 {
					continue // the unit would carry into the word before
				}
				w[k-1] += uint64(tc.delta)
				s.coins = &scripted{w: w}
				s.u = append(s.u[:0], s.coins.Uint64())
				if got := s.below(k); got != tc.want {
					t.Errorf("n = %d, b = %d, k = %d: U = p^k %+d ulp: below %v, want %v", c[0], c[1], k, tc.delta, got, tc.want)
				}
			}
		}
	}
}

// chiSquareLimit returns the chi-square statistic on dof degrees of
// freedom exceeded with probability alpha under the null hypothesis.
func chiSquareLimit(dof int, alpha float64) float64 {
	return distuv.ChiSquared{K: float64(dof)}.Quantile(1 - alpha)
}

// TestBatchSizeLaw checks the law of the batch size against
// Binomial(n, q), q the sampler's rate, by a chi-square test on cells of
// expected count at least 20 (the tails pooled), at a false-rejection
// probability of 1e-6 per setting (5e-6 for the test), over 60,000 steps:
// b = 1 of 36,000 (gaps that run over many steps), and small n where the
// gaps cross the step's end about as often as they stay in it.
func TestBatchSizeLaw(t *testing.T) {
	for _, c := range [][2]int{{36000, 1}, {36000, 32}, {40, 1}, {40, 13}, {12, 11}} {
		n, b := c[0], c[1]
		const steps = 60000
		s := New(rand.NewChaCha8([32]byte{byte(n), byte(b)}), n, b)
		q := s.Rate()
		counts := make([]float64, n+1)
		var batch []int
		for range steps {
			batch = s.Sample(batch)
			counts[len(batch)]++
		}
		law := distuv.Binomial{N: float64(n), P: q}
		var obs, exp []float64
		var o, e float64
		for k := 0; k <= n; k++ {
			o += counts[k]
			e += steps * law.Prob(float64(k))
			if e >= 20 && steps*law.Survival(float64(k)) >= 20 {
				obs, exp = append(obs, o), append(exp, e)
				o, e = 0, 0
			}
		}
		obs[len(obs)-1] += o
		exp[len(exp)-1] += e
		stat := 0.0
		for i := range obs {
			stat += (obs[i] - exp[i]) * (obs[i] - exp[i]) / exp[i]
		}
		if lim := chiSquareLimit(len(obs)-1, 1e-6); stat > lim {
			t.Errorf("n = %d, b = %d: chi-square %.1f on %d cells, above %.1f", n, b, stat, len(obs), lim)
		}
	}
}

// TestJointLaw checks the joint law of the coins of two
// consecutive steps of n = 3 rows (six coins, 64 patterns, each of
// probability q^r (1-q)^(6-r)) by a chi-square test on 63 degrees of
// freedom, at a false-rejection probability of 1e-6 per rate, over
// 100,000 pairs of steps: independence within a step and across the
// step's end, where a gap carries over.
func TestJointLaw(t *testing.T) {
	for _, b := range []int{1, 2} {
		const n, pairs = 3, 100000
		s := New(rand.NewChaCha8([32]byte{7, byte(b)}), n, b)
		q := s.Rate()
		counts := make([]float64, 64)
		var batch []int
		for range pairs {
			pattern := 0
			for step := range 2 {
				batch = s.Sample(batch)
				for _, i := range batch {
					pattern |= 1 << (3*step + i)
				}
			}
			counts[pattern]++
		}
		stat := 0.0
		for pattern, o := range counts {
			r := 0
			for v := pattern; v != 0; v &= v - 1 {
				r++
			}
			e := pairs * math.Pow(q, float64(r)) * math.Pow(1-q, float64(6-r))
			stat += (o - e) * (o - e) / e
		}
		if lim := chiSquareLimit(63, 1e-6); stat > lim {
			t.Errorf("b = %d of %d: chi-square %.1f on 64 patterns, above %.1f", b, n, stat, lim)
		}
	}
}

// TestPairwiseIndependence checks every pair of the 2n coins of
// two consecutive steps of n = 12 rows at b = 2 (q about 1/6): the 2 x 2
// table of their outcomes against the product law (q^2, q(1-q), (1-q)q,
// (1-q)^2) by a chi-square test on 3 degrees of freedom, over 100,000
// pairs of steps, at a false-rejection probability of 1e-6 for all 276
// pairs together (Bonferroni).
func TestPairwiseIndependence(t *testing.T) {
	const n, b, pairs = 12, 2, 100000
	s := New(rand.NewChaCha8([32]byte{9}), n, b)
	q := s.Rate()
	var both [2 * n][2 * n]float64
	var one [2 * n]float64
	var batch []int
	for range pairs {
		var in []int
		for step := range 2 {
			batch = s.Sample(batch)
			for _, i := range batch {
				in = append(in, step*n+i)
			}
		}
		for x, i := range in {
			one[i]++
			for _, j := range in[x+1:] {
				both[i][j]++
			}
		}
	}
	tests := 2 * n * (2*n - 1) / 2
	lim := chiSquareLimit(3, 1e-6/float64(tests))
	for i := range 2 * n {
		for j := i + 1; j < 2*n; j++ {
			o11 := both[i][j]
			o10, o01 := one[i]-o11, one[j]-o11
			o00 := pairs - o11 - o10 - o01
			stat := 0.0
			for _, c := range []struct{ o, p float64 }{{o11, q * q}, {o10, q * (1 - q)}, {o01, (1 - q) * q}, {o00, (1 - q) * (1 - q)}} {
				e := pairs * c.p
				stat += (c.o - e) * (c.o - e) / e
			}
			if stat > lim {
				t.Errorf("coins %d and %d: chi-square %.1f, above %.1f (%s)", i, j, stat, lim, fmt.Sprint(o11, o10, o01, o00))
			}
		}
	}
}
