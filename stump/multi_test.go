package stump

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// bruteMulti returns the scores of every multiclass candidate by applying
// each stump to every row.
func bruteMulti(Z *mat.Dense, y []float64, null []bool, K, T int) []int64 {
	n, p := Z.Dims()
	out := make([]int64, MultiCandidates(p, T, K))
	for r := range out {
		m := multiCandidate(r, T, K)
		for i := range n {
			if (null == nil || !null[i]) && float64(m.Predict(Z.RawRowView(i), T)) == y[i] {
				out[r]++
			}
		}
	}
	return out
}

// randomClasses returns randomRows' rows with classes 0..K-1.
func randomClasses(r *rand.Rand, n, p, K, T int) (*mat.Dense, []float64, []bool) {
	Z, y, null := randomRows(r, n, p, T)
	for i := range y {
		y[i] = float64(r.IntN(K))
	}
	return Z, y, null
}

// TestMultiScoresBrute checks the sorted sweep against applying every
// multiclass stump to every row, with ties at the thresholds, null rows
// and 2 to 5 classes, and the candidates' order (index, multiCandidate)
// as a bijection.
func TestMultiScoresBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 40 {
		n, p, K, T := 1+r.IntN(30), 1+r.IntN(3), 2+r.IntN(4), 1+r.IntN(7)
		Z, y, null := randomClasses(r, n, p, K, T)
		if trial%2 == 0 {
			null = nil
		}
		got, err := MultiScores(Z, y, null, K, T)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteMulti(Z, y, null, K, T)
		for i := range want {
			m := multiCandidate(i, T, K)
			if m.index(T, K) != i || m.Lo == m.Hi || m.Lo < 0 || m.Hi >= K || m.Hi < 0 || m.Lo >= K {
				t.Fatalf("K %d, T %d: candidate %d is %+v, index %d", K, T, i, m, m.index(T, K))
			}
			if got[i] != want[i] {
				t.Fatalf("trial %d (n %d, p %d, K %d, T %d): candidate %d (%+v) scores %d, want %d", trial, n, p, K, T, i, m, got[i], want[i])
			}
		}
	}
}

// TestMultiWeightsDecide checks that the K-output linear model of
// Weights, applied as a model file's reader applies it (trainer.Model's
// argmax), decides as the stump on every threshold of the grid, the
// values adjacent to it in float64, the ends and 0, for every pair of
// classes, and that MultiFromWeights gives the stump back with no -0.
func TestMultiWeightsDecide(t *testing.T) {
	const p = 3
	for _, K := range []int{2, 3, 5} {
		for _, T := range []int{1, 4, DefaultGrid, MultiGrid} {
			for r := range MultiCandidates(p, T, K) {
				m := multiCandidate(r, T, K)
				w := m.Weights(p, T, K)
				back, err := MultiFromWeights(w, K, T)
				if err != nil || back != m {
					t.Fatalf("K %d, T %d: MultiFromWeights of %+v = %+v, %v", K, T, m, back, err)
				}
				for j, v := range w {
					if v == 0 && math.Signbit(v) {
						t.Fatalf("K %d, T %d, %+v: weight %d is -0", K, T, m, j)
					}
				}
				model := &trainer.Model{Loss: "softmax", Task: losses.Multiclass, K: K, D: p + 1, W: w}
				th := Threshold(m.Index, T)
				for _, v := range []float64{th, math.Nextafter(th, 2), math.Nextafter(th, -2), -1, 1, 0, math.Copysign(0, -1)} {
					z := []float64{0.5, -0.25, 0.75, 1}
					z[m.Feature] = v
					if got, want := model.Predict(z), m.Predict(z[:p], T); got != float64(want) {
						t.Fatalf("K %d, T %d, %+v, z_j = %v: the weights predict %v, the stump %v", K, T, m, v, got, want)
					}
				}
			}
		}
	}
}

// TestMultiFromWeightsRefuses checks that weights outside the class are
// refused: a member's weights with one entry changed (to another value,
// to -0 where it is +0, a second feature weight, the other rows' bias
// moved), a threshold off the grid, a row Lo that is not Hi's negation,
// and shapes that do not fit K.
func TestMultiFromWeightsRefuses(t *testing.T) {
	const p, T, K = 2, 3, 3
	m := Multi{Feature: 1, Index: 2, Lo: 2, Hi: 0} // t = 0
	w := m.Weights(p, T, K)
	if back, err := MultiFromWeights(w, K, T); err != nil || back != m {
		t.Fatalf("the member %+v: %+v, %v", m, back, err)
	}
	neg := math.Copysign(0, -1)
	for i := range w {
		for _, v := range []float64{neg, 0.5, -1, 1, 0} {
			if math.Float64bits(v) == math.Float64bits(w[i]) {
				continue
			}
			f := append([]float64(nil), w...)
			f[i] = v
			if s, err := MultiFromWeights(f, K, T); !errors.Is(err, ErrInput) {
				t.Errorf("weight %d set to %v in %v: %+v, %v; want ErrInput", i, v, f, s, err)
			}
		}
	}
	off := append([]float64(nil), w...)
	off[2], off[8] = -0.3, 0.3 // t = 0.3, off the grid, Lo still Hi's negation
	for _, f := range [][]float64{off, w[:8], w[:3], {1, 0, 0, -1, 0, 0}} {
		if s, err := MultiFromWeights(f, K, T); !errors.Is(err, ErrInput) {
			t.Errorf("MultiFromWeights(%v) = %+v, %v; want ErrInput", f, s, err)
		}
	}
	for _, k := range []int{1, MaxClasses + 1} {
		if _, err := MultiFromWeights(w, k, T); !errors.Is(err, ErrInput) {
			t.Errorf("K = %d: %v, want ErrInput", k, err)
		}
	}
}

// TestMultiNeighbours holds the privacy claim of the multiclass class on
// tiny inputs, as TestNeighbours does for the binary one: for a data set
// of 3 classes and every replacement of one row by an adversarial row (the
// ends of the range, values on the thresholds, each class, a null row), it
// requires every score to move by at most Sensitivity and the exact output
// laws (perturb.PermuteAndFlipLaw) to be within a factor exp(eps) (to
// 1e-9); the control at 2 eps must exceed it somewhere.
func TestMultiNeighbours(t *testing.T) {
	const T, K, eps = 2, 3, 1.0
	base := mat.NewDense(4, 2, []float64{
		-0.5, 0.9,
		0.5, -0.9,
		0, 0.5,
		1, -1,
	})
	y := []float64{0, 1, 2, 1}
	s1, err := MultiScores(base, y, nil, K, T)
	if err != nil {
		t.Fatal(err)
	}
	var law1 [2][]float64
	for c, e := range []float64{eps, 2 * eps} {
		if law1[c], err = perturb.PermuteAndFlipLaw(s1, e, Sensitivity); err != nil {
			t.Fatal(err)
		}
	}
	vals := []float64{-1, 1, Threshold(1, T), Threshold(2, T), 0.2}
	var worst [2]float64
	for i := range 4 {
		for _, a := range vals {
			for _, b := range vals {
				for label := -1; label < K; label++ {
					Z2 := mat.DenseCopyOf(base)
					Z2.Set(i, 0, a)
					Z2.Set(i, 1, b)
					y2 := append([]float64(nil), y...)
					null := make([]bool, 4)
					if label < 0 {
						null[i], y2[i] = true, 7 // a null row's label is not read
					} else {
						y2[i] = float64(label)
					}
					s2, err := MultiScores(Z2, y2, null, K, T)
					if err != nil {
						t.Fatal(err)
					}
					for r := range s1 {
						if d := s1[r] - s2[r]; d > Sensitivity || -d > Sensitivity {
							t.Fatalf("row %d replaced by (%v, %v, class %d): candidate %d moves by %d", i, a, b, label, r, d)
						}
					}
					for c, e := range []float64{eps, 2 * eps} {
						l2, err := perturb.PermuteAndFlipLaw(s2, e, Sensitivity)
						if err != nil {
							t.Fatal(err)
						}
						for r := range l2 {
							worst[c] = max(worst[c], math.Abs(math.Log(law1[c][r]/l2[r])))
						}
					}
				}
			}
		}
	}
	t.Logf("largest log ratio %.4f at eps %v; at 2 eps (the control) %.4f", worst[0], eps, worst[1])
	if worst[0] > eps+1e-9 {
		t.Errorf("largest log probability ratio %v, want <= eps = %v", worst[0], eps)
	}
	if worst[1] <= eps {
		t.Errorf("the control (2 eps) never exceeds eps (%v): the test has no power", worst[1])
	}
}

// TestFitMultiFindsSignal checks the utility on a small 3-class table
// shaped like iris (150 rows, 4 columns, one of which orders the
// classes): at eps = 1 the chosen stump classifies at least 60% of the
// rows (the best stump 2/3, the majority 1/3) in 9 of 10 fixed seeds.
func TestFitMultiFindsSignal(t *testing.T) {
	const n, p, K = 150, 4, 3
	r := rand.New(rand.NewPCG(7, 8))
	Z := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		y[i] = float64(i % K)
		for j := range p {
			Z.Set(i, j, 2*r.Float64()-1)
		}
		Z.Set(i, 2, -0.6+0.6*y[i]+0.2*(2*r.Float64()-1))
	}
	good := 0
	for seed := range uint64(10) {
		m, err := FitMulti(Z, y, nil, K, Config{Epsilon: 1}, perturb.Seeded(seed))
		if err != nil {
			t.Fatal(err)
		}
		hit := 0
		for i := range n {
			if float64(m.Predict(Z.RawRowView(i), MultiGrid)) == y[i] { // the grid of Grid 0
				hit++
			}
		}
		if hit >= 90 {
			good++
		}
	}
	if good < 9 {
		t.Errorf("a stump right on >= 60%% of the rows in %d of 10 seeds, want >= 9", good)
	}
}

// TestFitMultiBadInput checks the refusals, before any draw.
func TestFitMultiBadInput(t *testing.T) {
	Z := mat.NewDense(2, 2, []float64{0, 1, -1, 0.5})
	nan := mat.NewDense(2, 2, []float64{0, math.NaN(), -1, 0.5})
	y := []float64{0, 2}
	for _, c := range []struct {
		name string
		Z    mat.Matrix
		y    []float64
		K    int
		cfg  Config
	}{
		{"eps 0", Z, y, 3, Config{Epsilon: 0}},
		{"grid", Z, y, 3, Config{Epsilon: 1, Grid: MaxGrid + 1}},
		{"NaN feature", nan, y, 3, Config{Epsilon: 1}},
		{"no rows", nil, nil, 3, Config{Epsilon: 1}},
		{"labels", Z, []float64{1}, 3, Config{Epsilon: 1}},
		{"class K", Z, []float64{0, 3}, 3, Config{Epsilon: 1}},
		{"class -1", Z, []float64{-1, 0}, 3, Config{Epsilon: 1}},
		{"class 0.5", Z, []float64{0.5, 0}, 3, Config{Epsilon: 1}},
		{"K 1", Z, []float64{0, 0}, 1, Config{Epsilon: 1}},
		{"K above the cap", Z, y, MaxClasses + 1, Config{Epsilon: 1}},
		{"candidates above the cap", mat.NewDense(2, MaxMultiCandidates/(MultiGrid*90)+1, nil), []float64{0, 9}, 10, Config{Epsilon: 1}},
	} {
		var Zm mat.Matrix = c.Z
		if c.Z == nil {
			Zm = nil
		}
		if _, err := FitMulti(Zm, c.y, nil, c.K, c.cfg, perturb.Seeded(1)); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", c.name, err)
		}
	}
}
