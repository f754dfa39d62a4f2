package perturb

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"
)

// TestBernoulliExp draws exact Bernoulli(exp(-gamma)) coins for rational
// gammas below, at and above 1 and compares the frequency of heads with
// exp(-gamma) by Hoeffding's inequality: |freq - p| > t has probability at
// most 2 exp(-2 N t^2) = exactAlpha for the t below, whatever the law, so
// the test wrongly rejects an exact sampler with probability at most
// exactAlpha per gamma (the seeded streams make it deterministic). The
// negative control requires the frequencies to reject exp(-1.15 gamma).
func TestBernoulliExp(t *testing.T) {
	const N = 200000
	tol := math.Sqrt(math.Log(2/exactAlpha) / (2 * N))
	for i, g := range [][2]int64{{0, 1}, {1, 3}, {1, 1}, {5, 2}, {7, 2}, {3, 40}} {
		num, den := big.NewInt(g[0]), big.NewInt(g[1])
		ws := newWordSource(seededBits(uint64(100 + i)))
		heads := 0
		for range N {
			ok, err := ws.bernoulliExp(num, den)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				heads++
			}
		}
		gamma := float64(g[0]) / float64(g[1])
		freq, p := float64(heads)/N, math.Exp(-gamma)
		t.Logf("gamma = %d/%d: freq %.4f, exp(-gamma) %.4f, tolerance %.4f", g[0], g[1], freq, p, tol)
		if math.Abs(freq-p) > tol {
			t.Errorf("gamma = %d/%d: heads %.4f of the time, want exp(-gamma) = %.4f +- %.4f", g[0], g[1], freq, p, tol)
		}
		if wrong := math.Exp(-1.15 * gamma); gamma > 0 && math.Abs(freq-wrong) <= tol {
			t.Errorf("gamma = %d/%d: the frequency %.4f does not reject exp(-1.15 gamma) = %.4f: no power", g[0], g[1], freq, wrong)
		}
	}
}

// TestUniformBig checks the big-integer uniform draw on a modulus above
// 2^64 by the frequency of its top half: Hoeffding at level exactAlpha, as
// in TestBernoulliExp.
func TestUniformBig(t *testing.T) {
	const N = 100000
	tol := math.Sqrt(math.Log(2/exactAlpha) / (2 * N))
	m := new(big.Int).Lsh(big.NewInt(3), 70) // 3 * 2^70
	third := new(big.Int).Lsh(big.NewInt(1), 70)
	ws := newWordSource(seededBits(7))
	low := 0
	for range N {
		v := ws.uniformBig(m)
		if v.Sign() < 0 || v.Cmp(m) >= 0 {
			t.Fatalf("draw %v outside [0, %v)", v, m)
		}
		if v.Cmp(third) < 0 {
			low++
		}
	}
	if f := float64(low) / N; math.Abs(f-1.0/3) > tol {
		t.Errorf("P(v < m/3) = %.4f, want 1/3 +- %.4f", f, tol)
	}
}

// TestPermuteAndFlipLaw compares the frequencies of PermuteAndFlip's
// outputs with PermuteAndFlipLaw by a chi-square test whose
// false-rejection probability is about exactAlpha = 1e-6 (chiSquare); the
// negative control requires them to reject the exponential mechanism's law
// on the same scores, which differs from permute-and-flip's.
func TestPermuteAndFlipLaw(t *testing.T) {
	scores := []int64{0, 3, 5, 5, 1, 4, 2}
	for _, eps := range []float64{1, 0.3} {
		law, err := PermuteAndFlipLaw(scores, eps, 1)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		expo := make([]float64, len(scores))
		for i, q := range scores {
			expo[i] = math.Exp(eps * float64(q) / 2)
			sum += expo[i]
		}
		for i := range expo {
			expo[i] /= sum
		}
		src := Seeded(uint64(eps * 1000))
		counts := make([]int, len(scores))
		for range 60000 {
			i, err := PermuteAndFlip(src, scores, eps, 1)
			if err != nil {
				t.Fatal(err)
			}
			counts[i]++
		}
		checkChiSquare(t, "permute-and-flip", counts, law, expo)
	}
}

// TestPermuteAndFlipLawSums checks the law against two cases in closed
// form: equal scores give the uniform law, and a candidate is never
// returned more often than its coin's probability exp(-eps gap / 2).
func TestPermuteAndFlipLawSums(t *testing.T) {
	law, err := PermuteAndFlipLaw([]int64{4, 4, 4}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range law {
		if math.Abs(p-1.0/3) > 1e-12 {
			t.Errorf("equal scores: P(%d) = %v, want 1/3", i, p)
		}
	}
	law, err = PermuteAndFlipLaw([]int64{10, 0, 9}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, p := range law {
		sum += p
	}
	if math.Abs(sum-1) > 1e-12 || law[1] > math.Exp(-5) || law[0] <= law[2] {
		t.Errorf("law %v: want a sum of 1, P(1) <= exp(-5) and P(0) > P(2)", law)
	}
}

// TestPermuteAndFlipSeeded checks that a seeded source gives the same
// choice bit for bit, and that the choice varies with the seed.
func TestPermuteAndFlipSeeded(t *testing.T) {
	scores := make([]int64, 200)
	for i := range scores {
		scores[i] = int64(i % 7)
	}
	seen := map[int]bool{}
	for seed := range uint64(20) {
		a, err := PermuteAndFlip(Seeded(seed), scores, 0.5, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := PermuteAndFlip(Seeded(seed), scores, 0.5, 1)
		if a != b {
			t.Fatalf("seed %d: %d then %d", seed, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 5 {
		t.Errorf("20 seeds chose %d distinct candidates", len(seen))
	}
	if _, err := PermuteAndFlip(Secure(), scores, 0.5, 1); err != nil {
		t.Errorf("secure source: %v", err)
	}
}

// customSource is a Source of this package's interface that is neither
// Secure nor Seeded.
type customSource struct{ Source }

func (customSource) Kind() string { return "custom" }

// TestPermuteAndFlipBadInput checks the refusals.
func TestPermuteAndFlipBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		scores []int64
		eps    float64
		sens   int64
		src    Source
		want   error
	}{
		{"no candidates", nil, 1, 1, Seeded(1), ErrModel},
		{"eps 0", []int64{1}, 0, 1, Seeded(1), ErrEpsilon},
		{"eps NaN", []int64{1}, math.NaN(), 1, Seeded(1), ErrEpsilon},
		{"eps Inf", []int64{1}, math.Inf(1), 1, Seeded(1), ErrEpsilon},
		{"sensitivity 0", []int64{1}, 1, 0, Seeded(1), ErrSensitivity},
		{"custom source", []int64{1, 2}, 1, 1, customSource{Seeded(1)}, ErrSource},
	} {
		if _, err := PermuteAndFlip(c.src, c.scores, c.eps, c.sens); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if c.want != ErrSource {
			if _, err := PermuteAndFlipLaw(c.scores, c.eps, c.sens); !errors.Is(err, c.want) {
				t.Errorf("%s (law): %v, want %v", c.name, err, c.want)
			}
		}
	}
}

// drawWithin runs f in a goroutine and fails t if it has not returned
// within the limit: a sampler that loops for ever fails the test rather than
// hanging the suite (the goroutine is abandoned).
func drawWithin(t *testing.T, limit time.Duration, f func() (int, error)) (int, error) {
	t.Helper()
	type result struct {
		i   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		i, err := f()
		done <- result{i, err}
	}()
	select {
	case r := <-done:
		return r.i, r.err
	case <-time.After(limit):
		t.Fatalf("no answer within %v: the sampler loops", limit)
		return 0, nil
	}
}

// TestPermuteAndFlipLargeSensitivity checks a sensitivity whose double
// does not fit an int64 (2 sens = 2^63): the coins of the three candidates
// at gap 2^62 have probability exp(-1/2) at eps = 1, and the draws must
// follow PermuteAndFlipLaw (chi-square at level about exactAlpha, with the
// law at eps = 2 as the negative control) instead of looping.
func TestPermuteAndFlipLargeSensitivity(t *testing.T) {
	scores := []int64{0, 0, 0, 1 << 62}
	const sens = 1 << 62
	law, err := PermuteAndFlipLaw(scores, 1, sens)
	if err != nil {
		t.Fatal(err)
	}
	// P(3) = 1/4 (1 + q + q^2 + q^3) with q = 1 - exp(-1/2) the failure
	// probability of a zero's coin.
	q := 1 - math.Exp(-0.5)
	if want := (1 + q + q*q + q*q*q) / 4; math.Abs(law[3]-want) > 1e-12 {
		t.Errorf("law %v: P(3) = %v, want %v", law, law[3], want)
	}
	wrong, err := PermuteAndFlipLaw(scores, 2, sens)
	if err != nil {
		t.Fatal(err)
	}
	src := Seeded(2)
	counts := make([]int, len(scores))
	_, err = drawWithin(t, 20*time.Second, func() (int, error) {
		for range 20000 {
			i, err := PermuteAndFlip(src, scores, 1, sens)
			if err != nil {
				return 0, err
			}
			counts[i]++
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkChiSquare(t, "sensitivity 2^62", counts, law, wrong)
}

// TestPermuteAndFlipExtremeScores checks scores whose gap does not fit an
// int64 (MaxInt64 - MinInt64 = 2^64 - 1): the worst candidate's coin has
// probability exp(-(2^64 - 1)/2), so over 200 seeds the best one must be
// returned every time (the worst one's total probability is below
// 200 exp(-2^62), nil in float64), and the law must put all its mass on it.
func TestPermuteAndFlipExtremeScores(t *testing.T) {
	scores := []int64{math.MinInt64, math.MaxInt64}
	law, err := PermuteAndFlipLaw(scores, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if law[0] != 0 || law[1] != 1 {
		t.Errorf("law %v, want [0 1]", law)
	}
	for seed := range uint64(200) {
		i, err := drawWithin(t, 10*time.Second, func() (int, error) {
			return PermuteAndFlip(Seeded(seed), scores, 1, 1)
		})
		if err != nil {
			t.Fatal(err)
		}
		if i != 1 {
			t.Fatalf("seed %d: returned candidate %d (score %d), want 1 (score %d)", seed, i, scores[i], scores[1])
		}
	}
}

// TestBernoulliExpRefuses checks that a negative gamma or a denominator
// below 1 is an error wrapping ErrModel, not a coin that always succeeds
// or a loop.
func TestBernoulliExpRefuses(t *testing.T) {
	for _, g := range [][2]int64{{-1, 2}, {math.MinInt64, 1}, {1, 0}, {0, 0}, {1, -3}, {-1, -1}} {
		num, den := big.NewInt(g[0]), big.NewInt(g[1])
		ws := newWordSource(seededBits(3))
		var err error
		_, _ = drawWithin(t, 5*time.Second, func() (int, error) {
			_, err = ws.bernoulliExp(num, den)
			return 0, nil
		})
		if !errors.Is(err, ErrModel) {
			t.Errorf("gamma = %d/%d: %v, want an error wrapping %v", g[0], g[1], err, ErrModel)
		}
	}
}
