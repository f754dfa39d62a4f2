package stump

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// pairRows returns n rows of p mapped features in [-1, 1], some on a
// coarse lattice so that differences fall on the grid's points, and
// labels +1 or -1.
func pairRows(rng *rand.Rand, n, p, T int) (*mat.Dense, []float64) {
	Z := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range p {
			v := 2*rng.Float64() - 1
			if rng.IntN(2) == 0 {
				v = Threshold(1+rng.IntN(T), T) // a grid point: ties on the threshold
			}
			Z.Set(i, j, v)
		}
		y[i] = float64(2*rng.IntN(2) - 1)
	}
	return Z, y
}

// TestBinaryScoresCount: every candidate's score (BinaryScores, in the
// order of BinaryFromIndex) is the number of counted rows that the
// candidate's Predict classifies as their label, and that a model file's
// reader (trainer.Model.Predict on its Weights) classifies alike, ties on
// the threshold included.
func TestBinaryScoresCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, p, T = 40, 4, 7
	Z, y := pairRows(rng, n, p, T)
	null := make([]bool, n)
	null[3], null[17] = true, true
	scores, err := BinaryScores(Z, y, null, T)
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != BinaryCandidates(p, T) || BinaryCandidates(p, T) != 2*p*T+p*(p-1)*T {
		t.Fatalf("%d scores, %d candidates, want %d", len(scores), BinaryCandidates(p, T), 2*p*T+p*(p-1)*T)
	}
	pairs := 0
	for r, q := range scores {
		c, err := BinaryFromIndex(r, p, T)
		if err != nil {
			t.Fatal(err)
		}
		if c.Pair != nil {
			pairs++
		}
		m := &trainer.Model{Loss: Loss, Task: losses.Binary, K: 1, D: p + 1, W: c.Weights(p, T)}
		var want int64
		for i := range n {
			z := append(mat.Row(nil, i, Z), 1)
			got := c.Predict(z[:p], T)
			if read := m.Predict(z); read != got {
				t.Fatalf("candidate %d (%+v %+v), row %d: the reader predicts %v, the candidate %v", r, c.Stump, c.Pair, i, read, got)
			}
			if !null[i] && got == y[i] {
				want++
			}
		}
		if q != want {
			t.Fatalf("candidate %d (%+v %+v): score %d, counted %d", r, c.Stump, c.Pair, q, want)
		}
	}
	if pairs != PairCandidates(p, T) {
		t.Errorf("%d pair candidates, want %d", pairs, PairCandidates(p, T))
	}
	if _, err := BinaryFromIndex(BinaryCandidates(p, T), p, T); !errors.Is(err, ErrInput) {
		t.Errorf("a candidate past the class: %v", err)
	}
}

// TestPairScoresNeighbour: replacing one row by an adversarial one (a
// flipped label, features at the ends of the range, a null row) moves no
// candidate's score by more than Sensitivity.
func TestPairScoresNeighbour(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, p, T = 30, 5, 15
	Z, y := pairRows(rng, n, p, T)
	checkNeighbours(t, rng, Z, y, T, 40, func(v float64) float64 { return -v }, func(Z mat.Matrix, y []float64, null []bool) ([]int64, error) {
		return BinaryScores(Z, y, null, T)
	})
}

// checkNeighbours replaces, trials times, one row of (Z, y) by an
// adversarial one (its label by relabel, each feature by -1, 1, a point of
// the grid of T or its own value; every few trials the row null) and
// fails the test when a score of scores moves by more than Sensitivity.
func checkNeighbours(t *testing.T, rng *rand.Rand, Z *mat.Dense, y []float64, T, trials int, relabel func(float64) float64, scores func(mat.Matrix, []float64, []bool) ([]int64, error)) {
	t.Helper()
	base, err := scores(Z, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, p := Z.Dims()
	for trial := range trials {
		Z2, y2 := mat.DenseCopyOf(Z), slices.Clone(y)
		var null []bool
		i := rng.IntN(n)
		y2[i] = relabel(y[i])
		for j := range p {
			Z2.Set(i, j, []float64{-1, 1, Threshold(1+rng.IntN(T), T), Z.At(i, j)}[rng.IntN(4)])
		}
		if trial%4 == 0 {
			null = make([]bool, n)
			null[i] = true
		}
		got, err := scores(Z2, y2, null)
		if err != nil {
			t.Fatal(err)
		}
		for r := range got {
			if d := got[r] - base[r]; d > Sensitivity || d < -Sensitivity {
				t.Fatalf("trial %d, row %d replaced: candidate %d moved by %d", trial, i, r, d)
			}
		}
	}
}

// TestPairsPublic: the class holds the pairs for 2 to MaxPairFeatures
// features only, a function of p alone.
func TestPairsPublic(t *testing.T) {
	for _, c := range []struct {
		p    int
		want bool
	}{{1, false}, {2, true}, {MaxPairFeatures, true}, {MaxPairFeatures + 1, false}} {
		if Pairs(c.p) != c.want || (PairCandidates(c.p, 3) > 0) != c.want {
			t.Errorf("p = %d: pairs %v (%d candidates), want %v", c.p, Pairs(c.p), PairCandidates(c.p, 3), c.want)
		}
	}
	Z := mat.NewDense(2, MaxPairFeatures+1, nil)
	s, err := BinaryScores(Z, []float64{1, -1}, nil, 3)
	if err != nil || len(s) != Candidates(MaxPairFeatures+1, 3) {
		t.Errorf("%d features: %d scores (%v), want the %d one-feature stumps'", MaxPairFeatures+1, len(s), err, Candidates(MaxPairFeatures+1, 3))
	}
}

// TestBinaryFromWeights: every candidate's weights read back as that
// candidate; a pair is refused where the class has none; weights outside
// the class (two weights of one sign, three features, a threshold off
// the grid, a -0) are refused.
func TestBinaryFromWeights(t *testing.T) {
	const p, T = 4, 7
	for r := range BinaryCandidates(p, T) {
		c, _ := BinaryFromIndex(r, p, T)
		got, err := BinaryFromWeights(c.Weights(p, T), T, true)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("candidate %d: read back %+v %+v (%v)", r, got.Stump, got.Pair, err)
		}
		if _, err := BinaryFromWeights(c.Weights(p, T), T, false); (err == nil) != (c.Pair == nil) {
			t.Fatalf("candidate %d (a pair %v) in the class without the pairs: %v", r, c.Pair != nil, err)
		}
	}
	good := Pair{A: 1, B: 3, Index: 2, Sign: -1}.Weights(p, T)
	for name, edit := range map[string]func(w []float64){
		"same signs":     func(w []float64) { w[3] = -1 },
		"three features": func(w []float64) { w[0] = 1 },
		"off the grid":   func(w []float64) { w[p] += 1e-3 },
		"a -0":           func(w []float64) { w[2] = math.Copysign(0, -1) },
		"a weight of 2":  func(w []float64) { w[1], w[3] = 2, -2 },
	} {
		w := slices.Clone(good)
		edit(w)
		_, err := BinaryFromWeights(w, T, true)
		if !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
		if name == "same signs" && !strings.Contains(fmt.Sprint(err), "feature weights -1 and -1: a pair has +s and -s") {
			t.Errorf("same signs: %v, want the two weights named", err)
		}
	}
}

// TestFitBinaryRatio: two columns whose difference (on the log map, a
// ratio) separates the labels while neither does alone: the binary class
// finds the pair at a large eps, and its training accuracy is far above
// the best one-feature stump's.
func TestFitBinaryRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 200
	Z := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range n {
		size := 0.1 + 0.1*rng.Float64() // the rows' overall size hides the label in each column
		y[i] = float64(2*(i%2) - 1)
		Z.Set(i, 0, size+0.01*y[i])
		Z.Set(i, 1, size)
		Z.Set(i, 2, rng.Float64()-0.5)
	}
	acc := func(predict func([]float64) float64) float64 {
		ok := 0
		for i := range n {
			if predict(mat.Row(nil, i, Z)) == y[i] {
				ok++
			}
		}
		return float64(ok) / n
	}
	c, err := FitBinary(Z, y, nil, Config{Epsilon: 50}, perturb.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if c.Pair == nil || c.Pair.A != 0 || c.Pair.B != 1 {
		t.Fatalf("chose %+v %+v, want the pair (0, 1)", c.Stump, c.Pair)
	}
	if a := acc(func(z []float64) float64 { return c.Predict(z, DefaultGrid) }); a < 0.95 {
		t.Errorf("the pair's training accuracy %v, want >= 0.95", a)
	}
	s, err := Fit(Z, y, nil, Config{Epsilon: 50}, perturb.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if a := acc(func(z []float64) float64 { return s.Predict(z, DefaultGrid) }); a > 0.8 {
		t.Errorf("a one-feature stump reaches %v: the rows do not need the pair", a)
	}
}

// TestStumpFamilies: a certificate of the one-feature class on the grid of
// DefaultGrid (a file written before the pairs) rebuilds as it is and
// refuses a pair's weights; a certificate of the class with the pairs
// accepts them; a new binary release of more than MaxPairFeatures
// features names the one-feature class.
func TestStumpFamilies(t *testing.T) {
	m := method{}
	b := dp.Budget{Epsilon: 1}
	pub := release.Public{Classes: 2, K: 1, D: 4}
	if !currentFamily(b, 400, 3, 0).pairs || currentFamily(b, 20, 3, 0).pairs {
		t.Fatal("the pairs are not in the class of 400 rows, or are in that of 20 rows, of 3 features at eps 1")
	}
	v1 := rebuiltAsIs(t, b, 400, 0, family{T: DefaultGrid}, pub)
	v2 := rebuiltAsIs(t, b, 400, 0, currentFamily(b, 400, 3, 0), pub)
	w := Pair{A: 0, B: 2, Index: 600, Sign: 1}.Weights(3, DefaultGrid)
	if err := m.CheckWeights(v1, pub, w); !errors.Is(err, release.ErrConfig) {
		t.Errorf("a pair under the one-feature certificate: %v, want refused", err)
	}
	if err := m.CheckWeights(v2, pub, w); err != nil {
		t.Errorf("a pair under the pair certificate: %v", err)
	}
	if f := currentFamily(b, 1e6, MaxPairFeatures+1, 0); f.pairs || f.class(MaxPairFeatures+1, 0) != binaryClass(MaxPairFeatures+1, DefaultGrid) {
		t.Errorf("%d features: the class %+v, want the one-feature class", MaxPairFeatures+1, f)
	}
}

// rebuiltAsIs returns the certificate of a secure release at b from n rows
// of the model pub (K classes, 0 for binary) on the class fam, after
// checking that Rebuild gives it back as it is (the class read from the
// certificate).
func rebuiltAsIs(t *testing.T, b dp.Budget, n, K int, fam family, pub release.Public) *release.Certificate {
	t.Helper()
	c, err := certificate(b, n, pub.D-1, K, fam, 5, perturb.SourceSecure, nil)
	if err != nil {
		t.Fatal(err)
	}
	if re, _, err := (method{}).Rebuild(c, pub); err != nil || !reflect.DeepEqual(re, c) {
		t.Fatalf("the certificate of the class %+v rebuilds as %+v (%v)", fam, re, err)
	}
	return c
}
