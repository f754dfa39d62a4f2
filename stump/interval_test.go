package stump

import (
	"errors"
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

// multiRows returns n rows of p mapped features in [-1, 1], half of the
// entries on the grid's points (ties on the thresholds), and classes 0 to
// K-1.
func multiRows(rng *rand.Rand, n, p, K, T int) (*mat.Dense, []float64) {
	Z, _ := pairRows(rng, n, p, T)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(K))
	}
	return Z, y
}

// TestTriples: tripleAt and triple are inverse over the K (K-1) (K-2)
// ordered triples of distinct classes, in lexicographic order.
func TestTriples(t *testing.T) {
	for _, K := range []int{3, 4, 6} {
		r := 0
		for a := range K {
			for b := range K {
				for c := range K {
					if a == b || b == c || a == c {
						continue
					}
					if ga, gb, gc := tripleAt(r, K); ga != a || gb != b || gc != c || triple(a, b, c, K) != r {
						t.Fatalf("K %d, triple %d: (%d %d %d), want (%d %d %d)", K, r, ga, gb, gc, a, b, c)
					}
					r++
				}
			}
		}
		if r != K*(K-1)*(K-2) {
			t.Fatalf("K %d: %d triples", K, r)
		}
	}
}

// TestMultiClassScoresCount: every candidate's score (MultiClassScores
// with the intervals, in the order of MultiMemberFromIndex) is the number
// of counted rows its Predict classifies as their class, and a model
// file's reader (trainer.Model.Predict, the argmax of its Weights) decides
// alike on every row, ties on the thresholds included; the weights read
// back as the candidate.
func TestMultiClassScoresCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, p, K, T = 30, 2, 4, 6
	Z, y := multiRows(rng, n, p, K, T)
	null := make([]bool, n)
	null[4] = true
	scores, err := MultiClassScores(Z, y, null, K, T, true)
	if err != nil {
		t.Fatal(err)
	}
	N := int64(MultiCandidates(p, T, K)) + IntervalCandidates(p, T, K)
	if int64(len(scores)) != N || IntervalCandidates(p, T, K) != p*T*(T-1)/2*K*(K-1)*(K-2) {
		t.Fatalf("%d scores, want %d", len(scores), N)
	}
	intervals := 0
	for r, q := range scores {
		c, err := MultiMemberFromIndex(r, p, T, K, true)
		if err != nil {
			t.Fatal(err)
		}
		if c.Interval != nil {
			intervals++
		}
		w := c.Weights(p, T, K)
		m := &trainer.Model{Loss: MultiLoss, Task: losses.Multiclass, K: K, D: p + 1, W: w}
		var want int64
		for i := range n {
			z := append(mat.Row(nil, i, Z), 1)
			got := c.Predict(z[:p], T)
			if read := int(m.Predict(z)); read != got {
				t.Fatalf("candidate %d (%+v %+v), row %d (%v): the reader predicts %d, the candidate %d", r, c.Multi, c.Interval, i, z, read, got)
			}
			if !null[i] && float64(got) == y[i] {
				want++
			}
		}
		if q != want {
			t.Fatalf("candidate %d (%+v %+v): score %d, counted %d", r, c.Multi, c.Interval, q, want)
		}
		back, err := MultiMemberFromWeights(w, K, T, true)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("candidate %d: read back %+v %+v (%v)", r, back.Multi, back.Interval, err)
		}
		if _, err := MultiMemberFromWeights(w, K, T, false); (err == nil) != (c.Interval == nil) {
			t.Fatalf("candidate %d (an interval %v) in the class without the intervals: %v", r, c.Interval != nil, err)
		}
	}
	if int64(intervals) != IntervalCandidates(p, T, K) {
		t.Errorf("%d intervals, want %d", intervals, IntervalCandidates(p, T, K))
	}
}

// TestIntervalScoresNeighbour: replacing one row (its features, its
// class, or making it null) moves no interval's score by more than
// Sensitivity.
func TestIntervalScoresNeighbour(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, p, K, T = 25, 2, 3, 9
	Z, y := multiRows(rng, n, p, K, T)
	relabel := func(v float64) float64 { return float64((int(v) + 1 + rng.IntN(K-1)) % K) }
	checkNeighbours(t, rng, Z, y, T, 30, relabel, func(Z mat.Matrix, y []float64, null []bool) ([]int64, error) {
		return IntervalScores(Z, y, null, K, T)
	})
}

// TestIntervalFromWeightsRefuses: weights outside the interval class
// (thresholds not increasing, a B row that is not zero, a -0, a threshold
// off the grid, two classes) are refused.
func TestIntervalFromWeightsRefuses(t *testing.T) {
	const p, K, T = 2, 3, 7
	good := Interval{Feature: 1, Lo: 2, Hi: 5, A: 2, B: 0, C: 1}.Weights(p, T, K)
	if _, err := IntervalFromWeights(good, K, T); err != nil {
		t.Fatal(err)
	}
	d := p + 1
	for name, edit := range map[string]func(w []float64){
		"thresholds swapped": func(w []float64) { w[2*d+p], w[1*d+p] = -w[1*d+p], -w[2*d+p] },
		"B's bias -1":        func(w []float64) { w[0*d+p] = -1 },
		"a -0":               func(w []float64) { w[0*d] = math.Copysign(0, -1) },
		"t2 off the grid":    func(w []float64) { w[1*d+p] += 1e-3 },
		"a feature on B":     func(w []float64) { w[0*d+1] = 1 },
	} {
		w := slices.Clone(good)
		edit(w)
		if _, err := IntervalFromWeights(w, K, T); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", name, err)
		}
	}
	if _, err := IntervalFromWeights(make([]float64, 2*d), 2, T); !errors.Is(err, ErrInput) {
		t.Errorf("two classes: %v", err)
	}
}

// TestFitMultiClassIris: three classes in turn along one column (as
// iris's species along petal length): the class with the intervals
// reaches far above the best one-threshold stump (at most 2/3 of the
// rows), and the intervals are in the class only where their guarantee
// holds (IntervalsUseful, public values).
func TestFitMultiClassIris(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, K = 150, 3
	Z := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		c := i % K
		y[i] = float64(c)
		Z.Set(i, 0, -0.6+0.5*float64(c)+0.1*rng.Float64())
		Z.Set(i, 1, rng.Float64()-0.5)
	}
	if !IntervalsUseful(1, n, 2, MultiGrid, K) || IntervalsUseful(1, 30, 2, MultiGrid, K) || IntervalsUseful(1, n, 2, MultiGrid, 2) {
		t.Fatal("IntervalsUseful: want true for 150 rows of 2 features and 3 classes at eps 1, false for 30 rows or 2 classes")
	}
	m, err := FitMultiClass(Z, y, nil, K, Config{Epsilon: 1}, perturb.Seeded(2))
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i := range n {
		if float64(m.Predict(mat.Row(nil, i, Z), MultiGrid)) == y[i] {
			ok++
		}
	}
	if m.Interval == nil || float64(ok)/n < 0.9 {
		t.Errorf("chose %+v %+v, training accuracy %v; want an interval, >= 0.9", m.Multi, m.Interval, float64(ok)/n)
	}
}

// TestStumpMultiFamilies: a multiclass certificate of the one-threshold
// class (a file written before the intervals) rebuilds as it is and
// refuses an interval's weights; a certificate of the class with the
// intervals accepts them; a release names the class its n and eps give.
func TestStumpMultiFamilies(t *testing.T) {
	m := method{}
	b := dp.Budget{Epsilon: 1}
	const n, p, K = 300, 2, 3
	pub := release.Public{Classes: K, K: K, D: p + 1}
	fam := currentFamily(b, n, p, K)
	if !fam.intervals {
		t.Fatalf("no intervals for %d rows of %d features, %d classes at eps 1", n, p, K)
	}
	v1 := rebuiltAsIs(t, b, n, K, family{T: MultiGrid}, pub)
	v2 := rebuiltAsIs(t, b, n, K, fam, pub)
	w := Interval{Feature: 0, Lo: 10, Hi: 200, A: 1, B: 2, C: 0}.Weights(p, MultiGrid, K)
	if err := m.CheckWeights(v1, pub, w); !errors.Is(err, release.ErrConfig) {
		t.Errorf("an interval under the one-threshold certificate: %v, want refused", err)
	}
	if err := m.CheckWeights(v2, pub, w); err != nil {
		t.Errorf("an interval under the interval certificate: %v", err)
	}
}

// TestMultiMemberFromWeightsReason: weights refused by the class with the
// intervals give the reason of the member they are shaped as, once, in
// under 120 characters: an interval's when an output is zero, a
// one-threshold stump's otherwise.
func TestMultiMemberFromWeightsReason(t *testing.T) {
	const p, K, T = 2, 3, 7
	d := p + 1
	iv := Interval{Feature: 0, Lo: 2, Hi: 5, A: 1, B: 0, C: 2}.Weights(p, T, K)
	st := Multi{Feature: 1, Index: 3, Lo: 0, Hi: 2}.Weights(p, T, K)
	for _, c := range []struct {
		name string
		w    []float64
		edit func(w []float64)
		want string
	}{
		{"an interval's thresholds equal", iv, func(w []float64) { w[2*d+p] = -w[1*d+p] }, "not increasing"},
		{"an interval's threshold off the grid", iv, func(w []float64) { w[2*d+p] = math.Nextafter(w[2*d+p], 0) }, "not a point of the grid"},
		{"a stump's threshold off the grid", st, func(w []float64) { w[2*d+p] = math.Nextafter(w[2*d+p], 0) }, "grid of 7"},
		{"a stump's other class at -0.5", st, func(w []float64) { w[1*d+p] = -0.5 }, "as a stump writes it"},
	} {
		w := slices.Clone(c.w)
		c.edit(w)
		_, err := MultiMemberFromWeights(w, K, T, true)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "stump:") != 1 || len(err.Error()) > 120 {
			t.Errorf("%s: %v, want one reason naming %q in under 120 characters", c.name, err, c.want)
		}
	}
}
