package stump

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// lawDraws is the number of seeded draws per data set of the empirical
// neighbour checks, and lawAlpha the one-sided error of each confidence
// bound they use.
const (
	lawDraws = 20000
	lawAlpha = 1e-8
)

// event is a set of members of the class, given by a test on the drawn
// member: its name and its test.
type event struct {
	name string
	in   func(c memberView) bool
}

// memberView is a drawn member as the events read it: its decision on a
// mapped row and whether it is of the larger family (a pair or an
// interval).
type memberView struct {
	predict func(z []float64) float64
	larger  bool
}

// counts returns how many of lawDraws draws (draw with the seeds 1 to
// lawDraws) fall in each event.
func counts(t *testing.T, events []event, draw func(seed uint64) memberView) []int {
	t.Helper()
	n := make([]int, len(events))
	for s := range uint64(lawDraws) {
		c := draw(s + 1)
		for i, e := range events {
			if e.in(c) {
				n[i]++
			}
		}
	}
	return n
}

// releaseDraws returns Release's draw on the scores q at eps from the
// seeded source of each seed: permute-and-flip, and member's view of the
// candidate it returns.
func releaseDraws(t *testing.T, q []int64, eps float64, member func(r int) memberView) func(seed uint64) memberView {
	return func(seed uint64) memberView {
		r, err := perturb.PermuteAndFlip(perturb.Seeded(seed), q, eps, Sensitivity)
		if err != nil {
			t.Fatal(err)
		}
		return member(r)
	}
}

// ratioViolations returns the events whose frequencies a (from one data
// set) and b (from its neighbour) reject P_a(E) <= e^eps P_b(E) or
// P_b(E) <= e^eps P_a(E): with Hoeffding's bound c = sqrt(ln(1/alpha) /
// (2 lawDraws)) on each frequency, a rejection needs f_a - c > e^eps
// (f_b + c). When the mechanism is eps-DP each rejection has probability
// at most 2 lawAlpha.
func ratioViolations(events []event, a, b []int, eps float64) []string {
	c := math.Sqrt(math.Log(1/lawAlpha) / (2 * lawDraws))
	var out []string
	for i, e := range events {
		fa, fb := float64(a[i])/lawDraws, float64(b[i])/lawDraws
		if fa-c > math.Exp(eps)*(fb+c) || fb-c > math.Exp(eps)*(fa+c) {
			out = append(out, fmt.Sprintf("%s: %.4f against %.4f", e.name, fa, fb))
		}
	}
	return out
}

// rowEvents are the events that tell the replaced row apart: the drawn
// member classifies its version in the first data set (z, y) correctly,
// or its version in the neighbour (z2, y2), and it is of the larger
// family. The scores of the candidates in the first two differ between
// the neighbours (by the replaced row's term), the third is the set a
// class that depended on the rows would offer to one and not the other.
func rowEvents(z []float64, y float64, z2 []float64, y2 float64) []event {
	return []event{
		{"right on the row", func(c memberView) bool { return c.predict(z) == y }},
		{"right on its replacement", func(c memberView) bool { return c.predict(z2) == y2 }},
		{"right on the row, wrong on its replacement", func(c memberView) bool { return c.predict(z) == y && c.predict(z2) != y2 }},
		{"of the larger family", func(c memberView) bool { return c.larger }},
	}
}

// TestNeighbourLawPairs is the empirical check of eps-DP on neighbours
// for the binary class with the pairs: 40 rows of two mapped features at
// eps = 1, where PairsUseful holds, labels a coin (so that the draw
// spreads over the class), against the same rows with row 0 replaced by
// (1, -1) (what +Inf and -Inf map to on the log map) with the other
// label, and with row 0 null (an undeclared label). Each draw is
// Release's: permute-and-flip on the scores of the class Prepare chose
// (the first draws are checked to be the release method's, as the
// command line calls it). For each event of rowEvents the frequencies
// over lawDraws seeded draws must not reject the ratio e^eps: 16
// one-sided tests at 2 lawAlpha each, a false-rejection probability of at
// most 3.2e-7 (the draws are seeded: the test is deterministic). A
// neighbour drawn from the class without the pairs (a class that
// depended on the rows) must be rejected: the check sees that violation.
func TestNeighbourLawPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("seeded draws: about 3 s")
	}
	const n, p, T, eps = 40, 2, DefaultGrid, 1.0
	if !PairsUseful(eps, n, p, T) {
		t.Fatalf("the pairs are not in the class at n = %d, eps = %v", n, eps)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	X := mat.NewDense(n, p+1, nil)
	y := make([]float64, n)
	for i := range n {
		X.SetRow(i, []float64{2*rng.Float64() - 1, 2*rng.Float64() - 1, 1})
		y[i] = float64(2*rng.IntN(2) - 1)
	}
	z0, y0 := []float64{X.At(0, 0), X.At(0, 1)}, y[0]
	adv, yAdv := mat.DenseCopyOf(X), append([]float64(nil), y...)
	adv.SetRow(0, []float64{1, -1, 1})
	yAdv[0] = -y0
	null := mat.DenseCopyOf(X)
	null.SetRow(0, []float64{0, 0, 0})
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2}
	b := dp.Budget{Epsilon: eps}
	// draw returns Release's draw on the rows X (null rows zero), from
	// the class with the pairs or without.
	draw := func(X *mat.Dense, y []float64, pairs bool) func(seed uint64) memberView {
		nul := make([]bool, n)
		for i := range n {
			nul[i] = X.At(i, p) == 0
		}
		Z := X.Slice(0, n, 0, p)
		score := Scores
		if pairs {
			score = BinaryScores
		}
		q, err := score(Z, y, nul, T)
		if err != nil {
			t.Fatal(err)
		}
		return releaseDraws(t, q, eps, func(r int) memberView {
			c, _ := BinaryFromIndex(r, p, T)
			return memberView{func(z []float64) float64 { return c.Predict(z, T) }, c.Pair != nil}
		})
	}
	for s := range uint64(20) {
		pr, err := method{}.Prepare(context.Background(), release.Rows{X: adv, Y: yAdv, Config: cfg}, b)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pr.Release(context.Background(), perturb.Seeded(s))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := BinaryFromWeights(out.Model.W, T, true)
		d := draw(adv, yAdv, true)(s)
		for _, z := range [][]float64{z0, {1, -1}, {0.3, 0.2}, {-0.7, 0.1}} {
			if c.Predict(z, T) != d.predict(z) || (c.Pair != nil) != d.larger {
				t.Fatalf("seed %d: the release method drew %+v %+v, the check's draw differs", s, c.Stump, c.Pair)
			}
		}
	}
	events := rowEvents(z0, y0, []float64{1, -1}, -y0)
	base := counts(t, events, draw(X, y, true))
	t.Logf("rows: %v", base)
	for _, nb := range []struct {
		name string
		X    *mat.Dense
		y    []float64
	}{{"row 0 at (1, -1), the other label", adv, yAdv}, {"row 0 null", null, y}} {
		got := counts(t, events, draw(nb.X, nb.y, true))
		t.Logf("%s: %v", nb.name, got)
		if v := ratioViolations(events, base, got, eps); len(v) > 0 {
			t.Errorf("%s: frequencies beyond e^eps: %v", nb.name, v)
		}
	}
	other := counts(t, events, draw(adv, yAdv, false))
	if v := ratioViolations(events, base, other, eps); len(v) == 0 {
		t.Errorf("a neighbour drawn without the pairs passes (%v): the check cannot see a class that depends on the rows", other)
	}
}

// TestNeighbourLawIntervals is TestNeighbourLawPairs for the multiclass
// class with the intervals: 60 rows of one mapped feature and three
// classes, a weak signal, at eps = 1 on a grid of 31 thresholds (a public
// constant like MultiGrid, with fewer candidates to draw from), where
// IntervalsUseful holds, against row 0 moved to z = 1 with another class
// and row 0 on a threshold of the grid with another class. Each draw is
// Release's: permute-and-flip on MultiClassScores and the member
// MultiMemberFromIndex. 16 one-sided tests: a false-rejection probability
// of at most 3.2e-7.
func TestNeighbourLawIntervals(t *testing.T) {
	if testing.Short() {
		t.Skip("seeded draws: about 3 s")
	}
	const n, p, K, T, eps = 60, 1, 3, 31, 1.0
	if !IntervalsUseful(eps, n, p, T, K) {
		t.Fatalf("the intervals are not in the class at n = %d, eps = %v", n, eps)
	}
	rng := rand.New(rand.NewPCG(23, 24))
	Z := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		c := i % K
		Z.Set(i, 0, math.Max(-1, math.Min(1, -0.2+0.2*float64(c)+0.5*rng.NormFloat64())))
		y[i] = float64(c)
	}
	draw := func(Z *mat.Dense, y []float64) func(seed uint64) memberView {
		q, err := MultiClassScores(Z, y, nil, K, T, true)
		if err != nil {
			t.Fatal(err)
		}
		return releaseDraws(t, q, eps, func(r int) memberView {
			m, err := MultiMemberFromIndex(r, p, T, K, true)
			if err != nil {
				t.Fatal(err)
			}
			return memberView{func(z []float64) float64 { return float64(m.Predict(z, T)) }, m.Interval != nil}
		})
	}
	z0, y0 := []float64{Z.At(0, 0)}, y[0]
	neighbours := []struct {
		name string
		z    float64
		y    float64
	}{{"row 0 at z = 1, class 1", 1, 1}, {"row 0 on a threshold, class 2", Threshold(16, T), 2}}
	// The rows' draws are counted once, in the events of every neighbour.
	var all []event
	for _, nb := range neighbours {
		all = append(all, rowEvents(z0, y0, []float64{nb.z}, nb.y)...)
	}
	base := counts(t, all, draw(Z, y))
	for i, nb := range neighbours {
		Z2, y2 := mat.DenseCopyOf(Z), append([]float64(nil), y...)
		Z2.Set(0, 0, nb.z)
		y2[0] = nb.y
		k := len(all) / len(neighbours)
		events := all[i*k : (i+1)*k]
		a, b := base[i*k:(i+1)*k], counts(t, events, draw(Z2, y2))
		t.Logf("%s: %v against %v", nb.name, a, b)
		if v := ratioViolations(events, a, b, eps); len(v) > 0 {
			t.Errorf("%s: frequencies beyond e^eps: %v", nb.name, v)
		}
	}
}
