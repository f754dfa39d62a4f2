package privbounds

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/perturb"
)

// adversarialValues are replacement values for a neighbour: both ends of
// float64, zero of either sign, the boundaries of the candidate bins on
// the log scale and their float64 neighbours, and values beyond the
// candidates.
func adversarialValues() []float64 {
	vals := []float64{0, math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, -1e300}
	for _, c := range []int{CentreMin - 1, CentreMin, -3, -1, 0, 1, 2, 7, CentreMax, CentreMax + 1} {
		// g(x) = c at x = sign(c) (2^|c| - 1).
		x := math.Copysign(math.Ldexp(1, abs(c))-1, float64(c))
		vals = append(vals, x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)))
	}
	return vals
}

func abs(c int) int {
	if c < 0 {
		return -c
	}
	return c
}

// columns are test columns: continuous, discrete, all equal, heavy-tailed,
// negative, and one with values beyond the candidates.
func columns() map[string][]float64 {
	r := rand.New(rand.NewPCG(3, 4))
	cols := map[string][]float64{}
	for name, gen := range map[string]func(i int) float64{
		"ages":       func(i int) float64 { return float64(18 + r.IntN(70)) },
		"binary":     func(i int) float64 { return float64(r.IntN(2)) },
		"constant":   func(i int) float64 { return 5 },
		"heavy tail": func(i int) float64 { return math.Floor(math.Exp(r.ExpFloat64() * 3)) },
		"negative":   func(i int) float64 { return -1000 * r.Float64() },
		"huge":       func(i int) float64 { return math.Ldexp(1+r.Float64(), 60+r.IntN(20)) },
	} {
		col := make([]float64, 41)
		for i := range col {
			col[i] = gen(i)
		}
		cols[name] = col
	}
	return cols
}

// TestCentreScoresNeighbours replaces each value of each test column by
// every adversarial value: no score moves by more than CentreSensitivity,
// and the exact law of permute-and-flip on the two columns has a
// likelihood ratio of at most e^eps on every candidate. The ratio is
// computed from the exact law (perturb.PermuteAndFlipLaw), so the test has
// no false rejections; TestCentreScoresNeighboursHaveTeeth checks that it
// can fail.
func TestCentreScoresNeighbours(t *testing.T) {
	const eps = 0.7
	worst := 0.0
	for name, col := range columns() {
		base := CentreScores(col)
		lawBase, err := perturb.PermuteAndFlipLaw(base, eps, CentreSensitivity)
		if err != nil {
			t.Fatal(err)
		}
		for i := range col {
			if i%8 != 0 && i != len(col)-1 {
				continue // a sample of positions keeps the test fast
			}
			for _, v := range adversarialValues() {
				nb := append([]float64(nil), col...)
				nb[i] = v
				s := CentreScores(nb)
				for k := range s {
					if d := s[k] - base[k]; d > CentreSensitivity || d < -CentreSensitivity {
						t.Fatalf("%s, row %d replaced by %v: candidate %d moved %d > %d", name, i, v, k, d, CentreSensitivity)
					}
				}
				law, err := perturb.PermuteAndFlipLaw(s, eps, CentreSensitivity)
				if err != nil {
					t.Fatal(err)
				}
				for k := range law {
					if law[k] == 0 && lawBase[k] == 0 {
						continue
					}
					r := math.Abs(math.Log(law[k] / lawBase[k]))
					worst = max(worst, r)
					if r > eps*(1+1e-9) {
						t.Fatalf("%s, row %d replaced by %v: candidate %d has log-ratio %v > eps = %v", name, i, v, k, r, eps)
					}
				}
			}
		}
	}
	t.Logf("largest |log likelihood ratio| %.4f of eps = %v", worst, eps)
}

// TestCentreScoresNeighboursHaveTeeth is the control of
// TestCentreScoresNeighbours: calibrated as if the scores moved by at most
// 1 (half their sensitivity), permute-and-flip exceeds e^eps on some
// neighbour of the test columns, so the ratio check above can fail.
func TestCentreScoresNeighboursHaveTeeth(t *testing.T) {
	const eps = 0.7
	for _, col := range columns() {
		lawBase, _ := perturb.PermuteAndFlipLaw(CentreScores(col), eps, 1)
		for i := range col {
			for _, v := range adversarialValues() {
				nb := append([]float64(nil), col...)
				nb[i] = v
				law, _ := perturb.PermuteAndFlipLaw(CentreScores(nb), eps, 1)
				for k := range law {
					if math.Abs(math.Log(law[k]/lawBase[k])) > eps*(1+1e-6) {
						return
					}
				}
			}
		}
	}
	t.Error("no neighbour exceeded e^eps at half the sensitivity: the ratio check cannot fail")
}

// TestCentreScores checks the utility on columns whose median bin is
// known: 0 on the median's bin and -2 per row away from it.
func TestCentreScores(t *testing.T) {
	// Seven values with g in [3, 4): 8..14, and one with g = 4 (15).
	col := []float64{8, 9, 10, 11, 12, 13, 14, 15}
	s := CentreScores(col)
	at := func(c int) int64 { return s[c-CentreMin] }
	if at(3) != 0 || at(4) != -6 || at(2) != -8 || at(CentreMin) != -8 || at(CentreMax) != -8 {
		t.Errorf("scores around the median bin 3: %d %d %d, ends %d %d", at(2), at(3), at(4), at(CentreMin), at(CentreMax))
	}
	// Values beyond the candidates fall outside every bin.
	s = CentreScores([]float64{math.MaxFloat64, -math.MaxFloat64})
	for k, v := range s {
		if v != 0 && k != 0 && k != Centres-1 {
			// Half the rows below every candidate, half above: the
			// median lies between them, in every bin's score 0.
			t.Errorf("candidate %d: %d", k, v)
		}
	}
}

// TestEstimateCentres checks, with seeded draws, that the centres land on
// the median's bin when the rows pay for them (CentreRows), that the
// ranges are on the grid, and the errors.
func TestEstimateCentres(t *testing.T) {
	const d = 3
	n := CentreRows(d, 1) * 2
	X := mat.NewDense(n, d, nil)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range n {
		X.SetRow(i, []float64{float64(18 + r.IntN(70)), 1000 * (1 + r.Float64()), -0.25 - 0.5*r.Float64()})
	}
	want := []float64{5.5, 10.5, -0.5} // g(18..87) in [4.2, 6.5], median g(52) = 5.7; g(1000..2000) ~ 10; g(-0.25..-0.75) in [-0.81, -0.32]
	hits := make([]int, d)
	const runs = 40
	for s := range runs {
		lo, hi, err := EstimateCentres(X, 1, perturb.Seeded(uint64(s)))
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			if !OnCentreGrid(lo[j], hi[j]) {
				t.Fatalf("column %d: [%v, %v] not on the grid", j, lo[j], hi[j])
			}
			if (lo[j]+hi[j])/2 == want[j] {
				hits[j]++
			}
		}
	}
	// At twice CentreRows the candidates away from the median weigh about
	// e^-2 of the median's: most runs find it. A bound of half the runs
	// fails with probability below 1e-6 for a hit rate of 0.85 or more.
	for j, h := range hits {
		if h < runs/2 {
			t.Errorf("column %d: the median's bin in %d of %d runs", j, h, runs)
		}
	}
	for _, c := range []struct {
		X   mat.Matrix
		eps float64
	}{{nil, 1}, {X, 0}, {X, math.Inf(1)}, {mat.NewDense(1, 1, []float64{math.NaN()}), 1}} {
		if _, _, err := EstimateCentres(c.X, c.eps, perturb.Seeded(1)); !errors.Is(err, ErrEstimate) {
			t.Errorf("eps %v: %v, want ErrEstimate", c.eps, err)
		}
	}
	if _, _, err := EstimateCentres(X, 1, otherSource{perturb.Seeded(1)}); !errors.Is(err, perturb.ErrSource) {
		t.Errorf("a source other than Secure and Seeded: %v, want perturb.ErrSource", err)
	}
}

// TestOnCentreGrid checks the grid of the ranges and CentreRows' limits.
func TestOnCentreGrid(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		ok     bool
	}{
		{CentreMin + 0.5 - HalfWidth, CentreMin + 0.5 + HalfWidth, true},
		{CentreMax + 0.5 - HalfWidth, CentreMax + 0.5 + HalfWidth, true},
		{2.5, 8.5, true},
		{2, 8, false},
		{2.5, 9.5, false},
		{CentreMax + 1.5 - HalfWidth, CentreMax + 1.5 + HalfWidth, false},
		{math.NaN(), 1, false},
		{math.Inf(-1), math.Inf(1), false},
	} {
		if got := OnCentreGrid(c.lo, c.hi); got != c.ok {
			t.Errorf("OnCentreGrid(%v, %v) = %v", c.lo, c.hi, got)
		}
	}
	if n := CentreRows(5, 1e-300); n != math.MaxInt {
		t.Errorf("CentreRows at eps = 1e-300: %d", n)
	}
	if s := CentreShare(CentreRows(4, 0.5), 4, 1); s > 0.5 || s < 0.49 {
		t.Errorf("CentreShare at CentreRows(4, 0.5): %v, want 0.5", s)
	}
	if g := preprocess.SignedLog2(PublicHalfWidth); g > PublicHalfWidth {
		t.Errorf("g(%d) = %v", PublicHalfWidth, g)
	}
}

// otherSource is a Source that is neither Secure nor Seeded.
type otherSource struct{ perturb.Source }
