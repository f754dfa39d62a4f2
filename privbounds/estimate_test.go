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

// TestGrid checks the bins on values of every magnitude and sign, the
// boundaries themselves and their neighbours in float64: every value lies
// in its bin, Lower(b) <= v <= Upper(b), and the boundaries are on the grid.
func TestGrid(t *testing.T) {
	var vals []float64
	for e := MinExp - 3; e <= MaxExp+3; e++ {
		p := math.Ldexp(1, e)
		for _, v := range []float64{p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), 1.5 * p} {
			vals = append(vals, v, -v)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, (r.Float64()-0.5)*math.Ldexp(1, r.IntN(MaxExp-MinExp+8)+MinExp-4))
	}
	vals = append(vals, 0, math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64)
	limit := math.Ldexp(1, MaxExp)
	for _, v := range vals {
		b := Bin(v)
		if b < 0 || b >= Bins {
			t.Fatalf("Bin(%v) = %d, want in [0, %d)", v, b, Bins)
		}
		lo, hi := Lower(b), Upper(b)
		if !(lo < hi) || !OnGrid(lo) || !OnGrid(hi) {
			t.Fatalf("bin %d of %v: [%v, %v], on grid %v %v", b, v, lo, hi, OnGrid(lo), OnGrid(hi))
		}
		c := math.Max(-limit, math.Min(limit, v)) // the outer bins hold what a map clamps
		if c < lo || c > hi {
			t.Errorf("%v (clamped %v) in bin %d = [%v, %v]", v, c, b, lo, hi)
		}
	}
	// Half-open bins: 2^k closes (2^(k-1), 2^k], the next float opens the
	// next bin.
	for e := MinExp + 1; e < MaxExp; e++ {
		p := math.Ldexp(1, e)
		if Upper(Bin(p)) != p || Lower(Bin(math.Nextafter(p, math.Inf(1)))) != p || Bin(-p) != Bins-1-Bin(p) {
			t.Errorf("2^%d: bins %d, %d, %d", e, Bin(p), Bin(math.Nextafter(p, math.Inf(1))), Bin(-p))
		}
	}
	for _, v := range []float64{0, 3, math.Ldexp(1, MaxExp+1), math.Ldexp(1, MinExp-1), math.NaN(), math.Inf(1)} {
		if OnGrid(v) {
			t.Errorf("OnGrid(%v) = true", v)
		}
	}
}

// neighbours returns X and its replace-one neighbours for adversarial
// replacements of row i: extreme magnitudes of either sign, zero, values on
// and next to bin boundaries, a row of missing cells (NaN), and the row of
// another row.
func neighbours(X *mat.Dense, i int) []*mat.Dense {
	_, d := X.Dims()
	repl := [][]float64{}
	for _, v := range []float64{math.NaN(), 0, math.MaxFloat64, -math.MaxFloat64, 1, math.Nextafter(1, 2), -1, math.Ldexp(1, MinExp), 1e-300, 7.5e11} {
		row := make([]float64, d)
		for j := range row {
			row[j] = v
		}
		repl = append(repl, row)
	}
	alt := make([]float64, d) // alternating signs and scales
	for j := range alt {
		alt[j] = math.Ldexp(float64(1-2*(j%2)), 3*j-20)
	}
	repl = append(repl, alt, X.RawRowView((i+1)%X.RawMatrix().Rows))
	var out []*mat.Dense
	for _, row := range repl {
		Y := mat.DenseCopyOf(X)
		Y.SetRow(i, row)
		out = append(out, Y)
	}
	return out
}

// TestSensitivity replaces one row of random tables by adversarial rows and
// checks that the histogram moves by at most 2d in L1, the sensitivity the
// noise is calibrated to, and that 2d is attained (the bound is tight).
func TestSensitivity(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	attained := false
	for _, d := range []int{1, 3, 17} {
		X := mat.NewDense(40, d, nil)
		for i := range 40 {
			for j := range d {
				X.Set(i, j, r.NormFloat64()*math.Ldexp(1, r.IntN(20)-10))
			}
		}
		h := histogram(X)
		for i := range 40 {
			for _, Y := range neighbours(X, i) {
				var l1 float64
				for k, c := range histogram(Y) {
					l1 += math.Abs(c - h[k])
				}
				if l1 > Sensitivity(d) {
					t.Fatalf("d = %d, row %d: histograms %v apart, sensitivity %v", d, i, l1, Sensitivity(d))
				}
				attained = attained || l1 == Sensitivity(d)
			}
		}
	}
	if !attained {
		t.Error("no neighbour attains the sensitivity 2d: the test's replacements are too weak")
	}
}

// recorder is a Source that records the arguments of AddLaplace and adds
// no noise.
type recorder struct {
	perturb.Source
	n       int
	l1, eps float64
}

func (r *recorder) AddLaplace(w []float64, l1, eps float64) error {
	r.n, r.l1, r.eps = len(w), l1, eps
	return nil
}

// TestEstimateNoise checks that Estimate draws its noise once, for the
// whole histogram, calibrated to the sensitivity 2d and eps, and that
// without noise it gives the outer boundaries of the occupied bins.
func TestEstimateNoise(t *testing.T) {
	X := mat.NewDense(4000, 3, nil)
	for i := range 4000 {
		X.SetRow(i, []float64{17 + float64(i%74), -float64(i % 3), float64(i%2) * 99999})
	}
	rec := &recorder{}
	lo, hi, err := Estimate(X, 0.5, rec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.n != 3*Bins || rec.l1 != 6 || rec.eps != 0.5 {
		t.Errorf("AddLaplace on %d counts, l1 %v, eps %v; want %d, 6, 0.5", rec.n, rec.l1, rec.eps, 3*Bins)
	}
	// Without noise: ages 17..90 in (16, 128]; 0, -1, -2 in [-2, 2^-24]; 0
	// and 99999 in [-2^-24, 2^17].
	want := [][2]float64{{16, 128}, {-2, math.Ldexp(1, MinExp)}, {-math.Ldexp(1, MinExp), 131072}}
	for j, w := range want {
		if lo[j] != w[0] || hi[j] != w[1] {
			t.Errorf("column %d: [%v, %v], want %v", j, lo[j], hi[j], w)
		}
	}
}

// TestEstimateRecovers runs the estimate with seeded noise on a table large
// enough for its budget: it finds the occupied bins of every column.
func TestEstimateRecovers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	X := mat.NewDense(20000, 2, nil)
	for i := range 20000 {
		X.SetRow(i, []float64{20 + 40*r.Float64(), -0.3 - 0.6*r.Float64()})
	}
	for seed := range uint64(20) {
		lo, hi, err := Estimate(X, 1, perturb.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		// With 20000 rows, the threshold (about 4 ln(2 Bins / 0.1) / 1 =
		// 31) is far below the counts of the occupied bins (>= 1/6 of
		// the rows) and far above the noise of an empty bin but for the
		// probability Failure = 0.05 per run; a seed that hits it would
		// widen a range, so a few are allowed.
		if lo[0] > 16 || hi[0] < 64 || lo[1] > -1 || hi[1] < -0.25 {
			t.Errorf("seed %d: [%v, %v] and [%v, %v] miss the data", seed, lo[0], hi[0], lo[1], hi[1])
		}
		if lo[0] != 16 || hi[0] != 64 || lo[1] != -1 || hi[1] != -0.25 {
			t.Logf("seed %d: wider than the occupied bins: [%v, %v], [%v, %v]", seed, lo[0], hi[0], lo[1], hi[1])
		}
	}
}

// TestEstimateErrors checks the refusals.
func TestEstimateErrors(t *testing.T) {
	for name, c := range map[string]struct {
		X   mat.Matrix
		eps float64
	}{
		"nil":      {nil, 1},
		"inf 2":    {mat.NewDense(1, 2, []float64{1, math.Inf(1)}), 1},
		"inf":      {mat.NewDense(1, 1, []float64{math.Inf(-1)}), 1},
		"eps zero": {mat.NewDense(1, 1, []float64{1}), 0},
		"eps nan":  {mat.NewDense(1, 1, []float64{1}), math.NaN()},
		"eps inf":  {mat.NewDense(1, 1, []float64{1}), math.Inf(1)},
	} {
		if _, _, err := Estimate(c.X, c.eps, perturb.Seeded(1)); !errors.Is(err, ErrEstimate) {
			t.Errorf("%s: %v, want ErrEstimate", name, err)
		}
	}
}

// laplaceTail returns P(c + Lap(s) >= t).
func laplaceTail(c, s, t float64) float64 {
	if z := (t - c) / s; z >= 0 {
		return math.Exp(-z) / 2
	} else {
		return 1 - math.Exp(z)/2
	}
}

// outcome returns the exact probability that the occupied bins of one
// column with counts h (noise Laplace(s), threshold t) are first..last,
// for an outcome where some bin passes (the bins are independent).
func outcome(h []float64, s, t float64, first, last int) float64 {
	p := laplaceTail(h[first], s, t)
	if last != first {
		p *= laplaceTail(h[last], s, t)
	}
	for b := range h {
		if b < first || b > last {
			p *= 1 - laplaceTail(h[b], s, t)
		}
	}
	return p
}

// TestOutputDistribution computes the exact probability of every outcome
// (first, last occupied bin) of a one-column estimate on adversarial
// neighbours and checks that it changes by at most the factor e^eps: the
// eps-DP claim itself, on the outcomes where some bin passes the
// threshold. At half the noise scale (the add/remove calibration of
// Google's library) the ratio exceeds e^eps, so the test can fail.
func TestOutputDistribution(t *testing.T) {
	const eps = 0.7
	s := Sensitivity(1) / eps
	thr := Threshold(1, eps)
	h := make([]float64, Bins)
	// A column with counts near the threshold, where the decisions are
	// most sensitive.
	for b, c := range map[int]float64{half - 3: thr, half: thr - 1, half + 5: thr + 1, half + 6: 2} {
		h[b] = c
	}
	worst := func(scale float64) float64 {
		var w float64
		for _, mv := range [][2]int{{half + 5, half - 3}, {half + 6, 0}, {half, Bins - 1}, {half - 3, half + 5}, {half + 5, half + 6}} {
			g := append([]float64(nil), h...)
			g[mv[0]]--
			g[mv[1]]++
			for first := half - 6; first <= half+8; first++ {
				for last := first; last <= Bins-1; last++ {
					p, q := outcome(h, scale, thr, first, last), outcome(g, scale, thr, first, last)
					if p < 1e-300 || q < 1e-300 {
						continue
					}
					w = math.Max(w, math.Abs(math.Log(p/q)))
				}
			}
		}
		return w
	}
	if w := worst(s); w > eps*(1+1e-12) {
		t.Errorf("privacy loss %v on some outcome, claimed eps = %v", w, eps)
	}
	if w := worst(s / 2); w <= eps {
		t.Errorf("at half the scale the worst loss is %v <= eps = %v: the test cannot tell the calibrations apart", w, eps)
	}
}

// TestGuessed: a column too sparse for the threshold falls back to one
// bin, and Guessed names it (on both sides of zero and at zero); a column
// whose rows fill several bins above the threshold is not named; MinRows
// saturates instead of wrapping at tiny eps.
func TestGuessed(t *testing.T) {
	lo := []float64{Lower(Bin(0.7)), Lower(Bin(-3)), Lower(Bin(0)), Lower(Bin(-3))}
	hi := []float64{Upper(Bin(0.7)), Upper(Bin(-3)), Upper(Bin(0)), Upper(Bin(5))}
	if got := Guessed(lo, hi); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("Guessed = %v, want [0 1 2]", got)
	}
	// 40 rows of N(0, 1) at eps = 1 on one column: far below the
	// threshold, so the range is the modal noisy bin.
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(40, 1, nil)
	for i := range 40 {
		X.Set(i, 0, rng.NormFloat64())
	}
	l, h, err := Estimate(X, 1, perturb.Seeded(3))
	if err != nil {
		t.Fatal(err)
	}
	if len(Guessed(l, h)) != 1 {
		t.Errorf("40 rows: range [%v, %v] not reported as guessed", l[0], h[0])
	}
	if n := MinRows(5, 1e-300); n != math.MaxInt {
		t.Errorf("MinRows at eps = 1e-300: %d, want math.MaxInt", n)
	}
}

// TestImplausible checks the rule on published bounds: a range at the
// grid's end (alone or among others), a range more than WideFactor times
// the median width of the others (the noise's [-2^20, 8] among columns of
// width about 8), and none among raw Adult's estimated scales, whose
// widest column (fnlwgt) is about 2^14 times the others' median.
func TestImplausible(t *testing.T) {
	top := math.Ldexp(1, MaxExp)
	for _, tc := range []struct {
		name   string
		lo, hi []float64
		want   []int
	}{
		{"one column at the grid's top", []float64{-1}, []float64{top}, []int{0}},
		{"one column at the grid's bottom", []float64{-top}, []float64{1}, []int{0}},
		{"one column, wide", []float64{-1}, []float64{1 << 30}, nil},
		{"the noise's range among narrow ones", []float64{-2, -1 << 20, 0.5, -8}, []float64{8, 8, 16, 8}, []int{1}},
		{"just within the factor", []float64{-2, -1 << 19, 0.5, -8}, []float64{8, 8, 16, 8}, nil},
		{"raw Adult's scales", []float64{16, 8192, 2, -0x1p-24, -0x1p-24, 8}, []float64{128, 1 << 21, 16, 8192, 2048, 128}, nil},
		{"raw Adult with the noise's hours", []float64{16, 8192, 2, -0x1p-24, -0x1p-24, 8}, []float64{128, 1 << 21, 16, 8192, 2048, 1 << 34}, []int{5}},
		{"two columns", []float64{0, -top}, []float64{1, 1}, []int{1}},
	} {
		if got := Implausible(tc.lo, tc.hi); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Implausible = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEstimateAt checks that EstimateAt at Failure is Estimate, that a
// smaller failure probability raises the threshold (so a range can only
// shrink on the same noise), and that it refuses a probability outside
// (0, 1).
func TestEstimateAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	X := mat.NewDense(3000, 2, nil)
	for i := range 3000 {
		X.SetRow(i, []float64{rng.ExpFloat64() * 100, rng.NormFloat64()})
	}
	for seed := range uint64(10) {
		lo, hi, err := Estimate(X, 0.5, perturb.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		l, h, err := EstimateAt(X, 0.5, Failure, perturb.Seeded(seed))
		if err != nil || !slices.Equal(lo, l) || !slices.Equal(hi, h) {
			t.Fatalf("seed %d: EstimateAt at Failure [%v, %v], Estimate [%v, %v] (%v)", seed, l, h, lo, hi, err)
		}
		l, h, err = EstimateAt(X, 0.5, 1e-3, perturb.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		for j := range lo {
			if l[j] < lo[j] && Guessed(l[j:j+1], h[j:j+1]) == nil || h[j] > hi[j] && Guessed(l[j:j+1], h[j:j+1]) == nil {
				t.Errorf("seed %d, column %d: [%v, %v] at failure 1e-3, wider than [%v, %v] at %g", seed, j, l[j], h[j], lo[j], hi[j], Failure)
			}
		}
	}
	for _, f := range []float64{0, 1, -0.1, math.NaN()} {
		if _, _, err := EstimateAt(X, 0.5, f, nil); !errors.Is(err, ErrEstimate) {
			t.Errorf("failure %v: %v, want ErrEstimate", f, err)
		}
	}
}
