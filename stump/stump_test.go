package stump

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// brute returns the scores of every candidate by applying each stump to
// every row.
func brute(Z *mat.Dense, y []float64, null []bool, T int) []int64 {
	n, p := Z.Dims()
	out := make([]int64, Candidates(p, T))
	for r := range out {
		s := candidate(r, T)
		for i := range n {
			if null != nil && null[i] {
				continue
			}
			if s.Predict(Z.RawRowView(i), T) == y[i] {
				out[r]++
			}
		}
	}
	return out
}

// randomRows returns n rows of p values in [-1, 1], a third of them on the
// grid of T points or at the ends (ties with the thresholds), labels +-1
// and a few null rows.
func randomRows(r *rand.Rand, n, p, T int) (*mat.Dense, []float64, []bool) {
	Z := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	null := make([]bool, n)
	for i := range n {
		for j := range p {
			v := 2*r.Float64() - 1
			switch r.IntN(3) {
			case 0:
				v = Threshold(1+r.IntN(T), T)
			case 1:
				v = float64(2*r.IntN(2) - 1)
			}
			Z.Set(i, j, v)
		}
		y[i] = float64(2*r.IntN(2) - 1)
		null[i] = r.IntN(8) == 0
	}
	return Z, y, null
}

// TestScoresBrute checks the sorted sweep against applying every stump to
// every row, with ties at the thresholds and null rows.
func TestScoresBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		n, p, T := 1+r.IntN(30), 1+r.IntN(4), 1+r.IntN(9)
		Z, y, null := randomRows(r, n, p, T)
		if trial%2 == 0 {
			null = nil
		}
		got, err := Scores(Z, y, null, T)
		if err != nil {
			t.Fatal(err)
		}
		want := brute(Z, y, null, T)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d (n %d, p %d, T %d): candidate %d (%+v) scores %d, want %d", trial, n, p, T, i, candidate(i, T), got[i], want[i])
			}
		}
	}
}

// TestWeightsDecide checks that the linear classifier of Weights, applied
// as a model file's reader applies it (trainer.Model's margin, class +1 at
// a margin >= 0), decides as the stump on values at, just above and just
// below every threshold, and that FromWeights gives the stump back.
func TestWeightsDecide(t *testing.T) {
	const p = 3
	for _, T := range []int{1, 5, DefaultGrid, 100} {
		for k := 1; k <= T; k++ {
			for _, sign := range []int{1, -1} {
				s := Stump{Feature: k % p, Index: k, Sign: sign}
				w := s.Weights(p, T)
				m := &trainer.Model{Loss: "huber-hinge", Task: losses.Binary, K: 1, D: p + 1, W: w}
				back, err := FromWeights(w, T)
				if err != nil || back != s {
					t.Fatalf("T %d: FromWeights(%v) = %+v, %v; want %+v", T, w, back, err, s)
				}
				for j, v := range w {
					if v == 0 && math.Signbit(v) {
						t.Fatalf("T %d, %+v: weight %d is -0", T, s, j)
					}
				}
				th := Threshold(k, T)
				for _, v := range []float64{th, math.Nextafter(th, 2), math.Nextafter(th, -2), -1, 1, 0} {
					z := []float64{0.5, -0.25, 0.75, 1}
					z[s.Feature] = v
					if got, want := m.Predict(z), s.Predict(z[:p], T); got != want {
						t.Fatalf("T %d, %+v, z_j = %v: the weights predict %v, the stump %v", T, s, v, got, want)
					}
				}
			}
		}
	}
}

// TestFromWeightsRefuses checks that weights outside the class are
// refused: two feature weights, a weight other than +-1, a threshold off
// the grid, no feature weight, and the weights of a member with a zero
// written -0 (the feature weights' or the bias at the threshold 0), whose
// sign bits the mechanism never chose.
func TestFromWeightsRefuses(t *testing.T) {
	neg := math.Copysign(0, -1)
	if _, err := FromWeights([]float64{1, 0, 0}, 3); err != nil {
		t.Fatalf("the stump at t = 0: %v", err)
	}
	for _, w := range [][]float64{
		{1, 1, 0},
		{0.5, 0, 0},
		{1, 0, 0.3},
		{0, 0, 0.5},
		{1},
		{-1, 0, -2},
		{1, neg, 0},
		{neg, -1, 0.5},
		{1, 0, neg},
		{-1, 0, neg},
	} {
		if s, err := FromWeights(w, 3); !errors.Is(err, ErrInput) {
			t.Errorf("FromWeights(%v) = %+v, %v; want ErrInput", w, s, err)
		}
	}
}

// TestNeighbours holds the privacy claim on tiny inputs: for a data set
// and every replacement of one row by an adversarial row (the ends of the
// range, values on the thresholds, each label, a null row, rows that make
// another stump the best), it computes the exact output law of the
// mechanism on both (perturb.PermuteAndFlipLaw on the scores) and requires
// every score to move by at most Sensitivity and every output's
// probability ratio to be at most exp(eps) (to 1e-9, the float64 error of
// the law). The negative control computes the laws at 2 eps for the same
// sensitivity (a mechanism calibrated to half the true sensitivity) and
// requires some neighbour to exceed exp(eps): the check has power.
func TestNeighbours(t *testing.T) {
	const T, eps = 3, 1.0
	base := mat.NewDense(4, 2, []float64{
		-0.5, 0.9,
		0.5, -0.9,
		0, 0.5,
		1, -1,
	})
	y := []float64{-1, 1, 1, -1}
	vals := []float64{-1, 1, Threshold(1, T), Threshold(2, T), Threshold(3, T), 0.2}
	var worst, worstControl float64
	for i := range 4 {
		for _, a := range vals {
			for _, b := range vals {
				for _, label := range []float64{-1, 1, 0} {
					Z2 := mat.DenseCopyOf(base)
					Z2.Set(i, 0, a)
					Z2.Set(i, 1, b)
					y2 := append([]float64(nil), y...)
					var null []bool
					if label == 0 {
						null = make([]bool, 4)
						null[i] = true
						y2[i] = -1
					} else {
						y2[i] = label
					}
					s1, err := Scores(base, y, nil, T)
					if err != nil {
						t.Fatal(err)
					}
					s2, err := Scores(Z2, y2, null, T)
					if err != nil {
						t.Fatal(err)
					}
					for r := range s1 {
						if d := s1[r] - s2[r]; d > Sensitivity || -d > Sensitivity {
							t.Fatalf("row %d replaced by (%v, %v, %v): candidate %d moves by %d", i, a, b, label, r, d)
						}
					}
					for _, k := range []struct {
						e   float64
						out *float64
					}{{eps, &worst}, {2 * eps, &worstControl}} {
						l1, err := perturb.PermuteAndFlipLaw(s1, k.e, Sensitivity)
						if err != nil {
							t.Fatal(err)
						}
						l2, _ := perturb.PermuteAndFlipLaw(s2, k.e, Sensitivity)
						for r := range l1 {
							*k.out = max(*k.out, math.Log(l1[r]/l2[r]), math.Log(l2[r]/l1[r]))
						}
					}
				}
			}
		}
	}
	t.Logf("largest log ratio %.4f at eps %v; at 2 eps (the control) %.4f", worst, eps, worstControl)
	if worst > eps+1e-9 {
		t.Errorf("largest log probability ratio %v, want <= eps = %v", worst, eps)
	}
	if worstControl <= eps {
		t.Errorf("the control (2 eps) never exceeds eps (%v): the test has no power", worstControl)
	}
}

// TestFitLaw checks Fit (scores, mechanism and the map from index to
// stump) against the exact law on a small input by a chi-square test: its
// false-rejection probability is about alpha = 1e-6 (the asymptotic
// chi-square law with at least 10 expected draws per cell, which the
// cells below have). The draws are seeded, so the test is deterministic.
func TestFitLaw(t *testing.T) {
	const T, eps, draws, alpha = 2, 0.8, 40000, 1e-6
	Z := mat.NewDense(5, 2, []float64{-0.9, 0.1, -0.2, 0.8, 0.4, -0.7, 0.9, 0.3, 0.6, -0.5})
	y := []float64{-1, -1, 1, 1, 1}
	scores, _ := Scores(Z, y, nil, T)
	law, err := perturb.PermuteAndFlipLaw(scores, eps, Sensitivity)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, len(law))
	src := perturb.Seeded(3)
	for range draws {
		s, err := Fit(Z, y, nil, Config{Epsilon: eps, Grid: T}, src)
		if err != nil {
			t.Fatal(err)
		}
		counts[s.index(T)]++
	}
	var stat float64
	for i, p := range law {
		e := draws * p
		if e < 10 {
			t.Fatalf("cell %d expects %.1f draws", i, e)
		}
		stat += (counts[i] - e) * (counts[i] - e) / e
	}
	crit := distuv.ChiSquared{K: float64(len(law) - 1)}.Quantile(1 - alpha)
	t.Logf("chi-square %.1f, critical %.1f", stat, crit)
	if stat > crit {
		t.Errorf("chi-square %.1f above %.1f: Fit does not follow permute-and-flip's law", stat, crit)
	}
}

// TestFitBadInput checks the refusals, before any draw.
func TestFitBadInput(t *testing.T) {
	Z := mat.NewDense(2, 2, []float64{0, 1, -1, 0.5})
	nan := mat.NewDense(2, 2, []float64{0, math.NaN(), -1, 0.5})
	y := []float64{1, -1}
	for _, c := range []struct {
		name string
		Z    mat.Matrix
		y    []float64
		cfg  Config
	}{
		{"eps 0", Z, y, Config{Epsilon: 0}},
		{"eps -1", Z, y, Config{Epsilon: -1}},
		{"eps NaN", Z, y, Config{Epsilon: math.NaN()}},
		{"eps Inf", Z, y, Config{Epsilon: math.Inf(1)}},
		{"grid", Z, y, Config{Epsilon: 1, Grid: -2}},
		{"NaN feature", nan, y, Config{Epsilon: 1}},
		{"no rows", nil, nil, Config{Epsilon: 1}},
		{"labels", Z, []float64{1}, Config{Epsilon: 1}},
		{"label 0", Z, []float64{1, 0}, Config{Epsilon: 1}},
		{"label 2", Z, []float64{2, 1}, Config{Epsilon: 1}},
	} {
		var Zm mat.Matrix = c.Z
		if c.Z == nil {
			Zm = nil
		}
		if _, err := Fit(Zm, c.y, nil, c.cfg, perturb.Seeded(1)); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", c.name, err)
		}
	}
}

// TestFitFindsSignal checks the utility on a wide problem (the case the
// stump is for: more columns than rows): 100 rows, 2,000 columns of noise
// but one that separates the labels; at eps = 1 the chosen stump is on
// the informative column in most seeds. Kasiviswanathan et al.'s bound
// (the exponential mechanism errs on at most 2 (ln(2 p T) + ln(1/beta))/eps
// more rows than the best, about 28 rows here at beta = 0.01) makes a miss
// in more than 3 of 10 seeds improbable; the seeds are fixed, so the test
// is deterministic.
func TestFitFindsSignal(t *testing.T) {
	const n, p = 100, 2000
	r := rand.New(rand.NewPCG(5, 6))
	Z := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		y[i] = float64(2*(i%2) - 1)
		for j := range p {
			Z.Set(i, j, 2*r.Float64()-1)
		}
		Z.Set(i, 7, 0.5*y[i]+0.3*(2*r.Float64()-1))
	}
	hits := 0
	for seed := range uint64(10) {
		s, err := Fit(Z, y, nil, Config{Epsilon: 1}, perturb.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		if s.Feature == 7 && s.Sign == 1 {
			hits++
		}
	}
	if hits < 7 {
		t.Errorf("the informative column chosen in %d of 10 seeds, want >= 7", hits)
	}
}

// TestNeighboursDefaultGrid: on the grid of DefaultGrid thresholds, the
// replacement of one row by an adversarial row (on a threshold, just off
// one, at the ends of the range, between two points of LegacyGrid, each
// label, a null row) moves every candidate's score by at most
// Sensitivity, and some score by exactly that (the bound is tight).
func TestNeighboursDefaultGrid(t *testing.T) {
	const T = DefaultGrid
	base := mat.NewDense(5, 2, []float64{
		0.25, 0.26,
		0.251, -0.3,
		0.2509765625, 0.9,
		-1, 1,
		0.7, 0.2,
	})
	y := []float64{1, -1, 1, -1, 1}
	s1, err := Scores(base, y, nil, T)
	if err != nil {
		t.Fatal(err)
	}
	t0 := Threshold(641, T) // 0.251953125
	vals := []float64{-1, 1, t0, math.Nextafter(t0, 0), math.Nextafter(t0, 1), Threshold(1, T), Threshold(T, T), 0.2509765625, 0.253}
	moved := int64(0)
	for i := range 5 {
		for _, a := range vals {
			for _, label := range []float64{-1, 1, 0} {
				Z2 := mat.DenseCopyOf(base)
				Z2.Set(i, 0, a)
				Z2.Set(i, 1, -a)
				y2 := append([]float64(nil), y...)
				var null []bool
				if label == 0 {
					null = make([]bool, 5)
					null[i] = true
				} else {
					y2[i] = label
				}
				s2, err := Scores(Z2, y2, null, T)
				if err != nil {
					t.Fatal(err)
				}
				for r := range s1 {
					d := s1[r] - s2[r]
					if d > Sensitivity || -d > Sensitivity {
						t.Fatalf("row %d replaced by (%v, %v, %v): candidate %d moves by %d", i, a, -a, label, r, d)
					}
					moved = max(moved, d, -d)
				}
			}
		}
	}
	if moved != Sensitivity {
		t.Errorf("the largest move is %d, want %d", moved, Sensitivity)
	}
}
