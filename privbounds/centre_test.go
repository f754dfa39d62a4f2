package privbounds

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// adversarialValues are replacement values for a neighbour: both ends of
// float64, zero of either sign, the boundaries of the bins of Bin and their
// float64 neighbours, and values beyond the grid.
func adversarialValues() []float64 {
	vals := []float64{math.NaN(), math.Inf(1), 0, math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, -1e300, 1536, 1536.5, 805306368}
	for _, e := range []int{MinExp - 1, MinExp, -3, 0, 1, 7, MaxExp - 1, MaxExp, MaxExp + 1} {
		x := math.Ldexp(1, e)
		vals = append(vals, x, -x, math.Nextafter(x, math.Inf(1)), math.Nextafter(-x, math.Inf(-1)))
	}
	return vals
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
		"text":       func(i int) float64 { return math.Inf(1) },
		"mixed text": func(i int) float64 { return [...]float64{math.Inf(1), math.NaN(), 3}[r.IntN(3)] },
	} {
		col := make([]float64, 41)
		for i := range col {
			col[i] = gen(i)
		}
		cols[name] = col
	}
	return cols
}

// logRatio returns the largest |log(p_i / q_i)| of two laws.
func logRatio(p, q []float64) float64 {
	worst := 0.0
	for i := range p {
		if p[i] == 0 && q[i] == 0 {
			continue
		}
		worst = max(worst, math.Abs(math.Log(p[i]/q[i])))
	}
	return worst
}

// spreadLaws returns the exact laws of permute-and-flip at eps with
// sensitivity sens for the spread of col around each candidate centre in
// centres. (The centre's own law, over Centres candidates, costs
// O(Centres^3) to compute exactly; its scores' sensitivity is checked
// instead, which is what permute-and-flip's guarantee consumes.)
func spreadLaws(t *testing.T, col []float64, centres []int, eps float64, sens int64) (spread [][]float64) {
	t.Helper()
	for _, c := range centres {
		counts, _ := SpreadCounts(col, CentreValue(c))
		l, err := perturb.PermuteAndFlipLaw(MedianScores(counts), eps, sens)
		if err != nil {
			t.Fatal(err)
		}
		spread = append(spread, l)
	}
	return spread
}

// testCentres are candidate centres whose spread laws the neighbour tests
// compare: the part around zero, parts near it and the grid's ends.
var testCentres = []int{0, half*SubBins - 100, half*SubBins - 1, half * SubBins, half*SubBins + 1, half*SubBins + 80, half*SubBins + 170, Centres - 1}

// TestCentreNeighbours replaces values of each test column by every
// adversarial value and by a missing cell (NaN): no score of the centre or
// of the spread (around every test centre) moves by more than
// CentreSensitivity, and the exact laws of permute-and-flip for the spread
// given each centre on the two columns have a likelihood ratio of at most
// e^eps on every candidate (the centre's law, over Centres candidates, is
// too costly to compute exactly: its scores' sensitivity is what
// permute-and-flip's guarantee, McKenna & Sheldon 2020, Theorem 1,
// consumes). The ratio is computed from the exact laws
// (perturb.PermuteAndFlipLaw), so the test has no false rejections;
// TestCentreNeighboursHaveTeeth checks that it can fail.
func TestCentreNeighbours(t *testing.T) {
	const eps = 0.7
	worst := 0.0
	for name, col := range columns() {
		s0 := spreadLaws(t, col, testCentres, eps, CentreSensitivity)
		base := MedianScores(CentreCounts(col))
		for i := range col {
			if i%8 != 0 && i != len(col)-1 {
				continue // a sample of positions keeps the test fast
			}
			for _, v := range adversarialValues() {
				nb := append([]float64(nil), col...)
				nb[i] = v
				for k, u := range MedianScores(CentreCounts(nb)) {
					if d := u - base[k]; d > CentreSensitivity || d < -CentreSensitivity {
						t.Fatalf("%s, row %d replaced by %v: centre %d moved %d", name, i, v, k, d)
					}
				}
				for _, m := range testCentres {
					c0, _ := SpreadCounts(col, CentreValue(m))
					c1, _ := SpreadCounts(nb, CentreValue(m))
					a, b := MedianScores(c0), MedianScores(c1)
					for k := range a {
						if d := a[k] - b[k]; d > CentreSensitivity || d < -CentreSensitivity {
							t.Fatalf("%s, row %d replaced by %v: spread %d around %v moved %d", name, i, v, k, CentreValue(m), d)
						}
					}
				}
				s1 := spreadLaws(t, nb, testCentres, eps, CentreSensitivity)
				r := 0.0
				for k := range s0 {
					r = max(r, logRatio(s0[k], s1[k]))
				}
				worst = max(worst, r)
				if r > eps*(1+1e-9) {
					t.Fatalf("%s, row %d replaced by %v: log-ratio %v > eps = %v", name, i, v, r, eps)
				}
			}
		}
	}
	t.Logf("largest |log likelihood ratio| %.4f of eps = %v", worst, eps)
}

// TestCentreNeighboursHaveTeeth is the control of TestCentreNeighbours:
// calibrated as if the spread's scores moved by at most 1 (half their
// sensitivity), permute-and-flip exceeds e^eps on some neighbour of the
// test columns, so the ratio check above can fail.
func TestCentreNeighboursHaveTeeth(t *testing.T) {
	const eps = 0.7
	for _, col := range columns() {
		s0 := spreadLaws(t, col, testCentres, eps, 1)
		for i := range col {
			for _, v := range adversarialValues() {
				nb := append([]float64(nil), col...)
				nb[i] = v
				s1 := spreadLaws(t, nb, testCentres, eps, 1)
				r := 0.0
				for k := range s0 {
					r = max(r, logRatio(s0[k], s1[k]))
				}
				if r > eps*(1+1e-6) {
					return
				}
			}
		}
	}
	t.Error("no neighbour exceeded e^eps at half the sensitivity: the ratio check cannot fail")
}

// TestEstimateCentresText checks, with seeded draws on 4,000 rows, that a
// column of mostly text cells (+Inf, datasets.TextMark) is chosen as text
// and gets NaN constants, and that a column of mostly numbers, even with
// 35% text cells, is numeric with its centre among its numbers (text cells
// count nowhere). Each type's margin is at least 0.3 n = 1,200 cells, so a
// wrong type has probability at most exp(-(eps/(9d)) 1200 / 2) = e^-22
// per choice, and a centre off the numbers (1,600 of them at least) at
// most Centres exp(-(4 eps/(9d)) 1600 / 4) = 2049 e^-59: the test has no
// practical false rejection.
func TestEstimateCentresText(t *testing.T) {
	const n, d = 4000, 3
	X := mat.NewDense(n, d, nil)
	for i := range n {
		row := make([]float64, d)
		for j, share := range []int{80, 35, 60} { // percent of text cells
			row[j] = float64(20 + i%50)
			if (i*37)%100 < share {
				row[j] = math.Inf(1)
			}
		}
		if i%7 == 0 {
			row[0] = math.NaN() // missing cells count for neither type
		}
		X.SetRow(i, row)
	}
	for s := range 20 {
		lo, hi, text, err := EstimateCentres(X, 1, perturb.Seeded(uint64(s)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(text, []bool{true, false, true}) {
			t.Fatalf("seed %d: text %v, want [true false true]", s, text)
		}
		m := lo[1]/2 + hi[1]/2
		if !math.IsNaN(lo[0]) || !math.IsNaN(hi[2]) || !OnCentreGrid(lo[1], hi[1]) || m < 20 || m > 70 {
			t.Fatalf("seed %d: constants [%v %v] [%v %v] [%v %v]", s, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2])
		}
	}
}

// TestTypeNeighbours replaces a cell of each test column by every
// adversarial value (a number, a missing cell, a text cell): the type's
// scores move by at most TypeSensitivity, and the exact laws of the
// type's permute-and-flip on the two columns have a log-ratio of at most
// its eps; at half the sensitivity some neighbour exceeds it (the check
// can fail). Exact laws: no false rejection.
func TestTypeNeighbours(t *testing.T) {
	const eps = 0.7
	exceeded := false
	for name, col := range columns() {
		base := TypeScores(col)
		p0, err := perturb.PermuteAndFlipLaw(base, eps, TypeSensitivity)
		if err != nil {
			t.Fatal(err)
		}
		for i := range col {
			for _, v := range adversarialValues() {
				nb := append([]float64(nil), col...)
				nb[i] = v
				sc := TypeScores(nb)
				for k := range sc {
					if d := sc[k] - base[k]; d > TypeSensitivity || d < -TypeSensitivity {
						t.Fatalf("%s, row %d replaced by %v: type %d moved %d", name, i, v, k, d)
					}
				}
				p1, _ := perturb.PermuteAndFlipLaw(sc, eps, TypeSensitivity)
				if r := logRatio(p0, p1); r > eps*(1+1e-9) {
					t.Fatalf("%s, row %d replaced by %v: log-ratio %v > eps = %v", name, i, v, r, eps)
				}
				h0, _ := perturb.PermuteAndFlipLaw(base, 2*eps, TypeSensitivity) // half the sensitivity
				h1, _ := perturb.PermuteAndFlipLaw(sc, 2*eps, TypeSensitivity)
				exceeded = exceeded || logRatio(h0, h1) > eps*(1+1e-6)
			}
		}
	}
	if !exceeded {
		t.Error("no neighbour exceeded e^eps at half the sensitivity: the ratio check cannot fail")
	}
}

// TestMedianScores checks the utility on counts whose median bin is known:
// 0 on the median's bin and -2 per row away from it.
func TestMedianScores(t *testing.T) {
	got := MedianScores([]int64{0, 1, 0, 4, 2, 1, 0})
	want := []int64{-8, -6, -6, 0, -2, -6, -8} // n = 8: rows below bin 3: 1, up to it: 5
	if !slices.Equal(got, want) {
		t.Errorf("MedianScores: %v, want %v", got, want)
	}
	if c := CentreValue(half * SubBins); c != 0 || CentreValue(half*SubBins+1) != -CentreValue(half*SubBins-1) || CentreValue(Centres-1) != -CentreValue(0) {
		t.Errorf("CentreValue: %v %v %v", c, CentreValue(half*SubBins+1), CentreValue(half*SubBins-1))
	}
	// Every candidate's value lies in its own part, in increasing order.
	prev := math.Inf(-1)
	for i := range Centres {
		v := CentreValue(i)
		if CentreIndex(v) != i || !(v > prev) {
			t.Fatalf("candidate %d: value %v, its index %d, after %v", i, v, CentreIndex(v), prev)
		}
		prev = v
	}
	if SpreadValue(half) != math.Ldexp(1, MinExp) || SpreadValue(Bins-1) != math.Ldexp(1, MaxExp) {
		t.Errorf("SpreadValue: %v %v", SpreadValue(half), SpreadValue(Bins-1))
	}
	// The spread's floor keeps m - s < m + s for every centre.
	for i := range Centres {
		m := CentreValue(i)
		if s := MinSpread(m); !(m-s < m+s) || !OnCentreGrid(m-s, m+s) {
			t.Fatalf("centre %v, spread %v: [%v, %v] on the grid %v", m, s, m-s, m+s, OnCentreGrid(m-s, m+s))
		}
	}
}

// TestEstimateCentres checks, with seeded draws, that the centre and the
// spread land on the bins of the median and of the median deviation when
// the rows pay for them (CentreRows), that the constants are on the grid,
// and the errors.
func TestEstimateCentres(t *testing.T) {
	const d = 3
	n := CentreRows(d, 1) * 2
	X := mat.NewDense(n, d, nil)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range n {
		X.SetRow(i, []float64{float64(18 + r.IntN(70)), 1e-3 * r.NormFloat64(), 1000 * r.NormFloat64()})
	}
	col := make([]float64, n)
	hits := make([]int, d)
	const runs = 40
	for s := range runs {
		lo, hi, _, err := EstimateCentres(X, 1, perturb.Seeded(uint64(s)))
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			if !OnCentreGrid(lo[j], hi[j]) {
				t.Fatalf("column %d: [%v, %v] not on the grid", j, lo[j], hi[j])
			}
			mat.Col(col, j, X)
			m, sp := lo[j]/2+hi[j]/2, hi[j]/2-lo[j]/2
			// The map standardizes: the spread is the upper end of the bin
			// of the median deviation from m, one to two times it, so more
			// than a quarter and not all of the column lies within one
			// spread of the centre.
			within := 0
			for _, v := range col {
				if math.Abs(v-m) <= sp {
					within++
				}
			}
			if f := float64(within) / float64(n); f > 0.25 && f < 0.97 {
				hits[j]++
			}
		}
	}
	// At twice CentreRows a miss of the data has probability below 1e-4
	// per selection; the centre's and the spread's bins are a power of two
	// wide, so about half the column lies within a spread. At least half
	// the runs must: it fails with probability below 1e-6 for a hit rate
	// of 0.85 or more.
	for j, h := range hits {
		if h < runs/2 {
			t.Errorf("column %d: standardized in %d of %d runs", j, h, runs)
		}
	}
	for _, c := range []struct {
		X   mat.Matrix
		eps float64
	}{{nil, 1}, {X, 0}, {X, math.Inf(1)}, {mat.NewDense(1, 1, []float64{math.Inf(-1)}), 1}} {
		if _, _, _, err := EstimateCentres(c.X, c.eps, perturb.Seeded(1)); !errors.Is(err, ErrEstimate) {
			t.Errorf("eps %v: %v, want ErrEstimate", c.eps, err)
		}
	}
	if _, _, _, err := EstimateCentres(X, 1, otherSource{perturb.Seeded(1)}); !errors.Is(err, perturb.ErrSource) {
		t.Errorf("a source other than Secure and Seeded: %v, want perturb.ErrSource", err)
	}
}

// TestOnCentreGrid checks the grid of the constants and CentreRows'
// limits.
func TestOnCentreGrid(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		ok     bool
	}{
		{24.5 - 8, 24.5 + 8, true},   // m = 24.5, the middle of part 8 of (16, 32]; s = 8
		{-24.5 - 8, -24.5 + 8, true}, // and its negative
		{-1, 1, true},                // m = 0, s = 1
		{24.5 - 7, 24.5 + 7, false},  // s = 7 is not a spread
		{24 - 8, 24 + 8, false},      // m = 24 is not a centre
		{CentreValue(Centres - 1), CentreValue(Centres - 1), false},
		{CentreValue(Centres-1) - math.Ldexp(1, MinExp), CentreValue(Centres-1) + math.Ldexp(1, MinExp), false}, // below the spread's floor
		{CentreValue(Centres-1) - 1, CentreValue(Centres-1) + 1, true},
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
	if lo, hi, w := PublicRange(); lo != -1 || hi != 1 || w != PublicHalfWidth {
		t.Errorf("PublicRange: %v %v %v", lo, hi, w)
	}
}

// otherSource is a Source that is neither Secure nor Seeded.
type otherSource struct{ perturb.Source }
