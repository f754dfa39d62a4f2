package publish

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestStandardizedNotPrivate: a summary of rows standardized with their
// own statistics is never private nor PUBLISHABLE, whatever its source:
// Verify returns the not-private verdict with the table wording.
func TestStandardizedNotPrivate(t *testing.T) {
	f := newFixture(t, 200, 0.5)
	s, err := Summarize(f.p, Config{Epsilon: 2, StandardizedOnRows: true}, perturb.Secure(), nil)
	if err != nil {
		t.Fatal(err)
	}
	private, why, err := Verify(s)
	if err != nil || private || !strings.Contains(why, "NOT PRIVATE FOR THE TABLE") {
		t.Fatalf("Verify of a summary of standardized rows: private %v, %q, %v", private, why, err)
	}
	if s.Certificate.Private || strings.HasPrefix(s.Status, "PUBLISHABLE") || s.Status != StatusStandardized {
		t.Errorf("certificate private %v, status %q", s.Certificate.Private, s.Status)
	}
	// Relabelling it private or publishable does not verify.
	for _, edit := range []func(*Summary){
		func(c *Summary) { c.Certificate.Private = true },
		func(c *Summary) { c.Status = Status },
	} {
		var buf bytes.Buffer
		if err := s.Write(&buf); err != nil {
			t.Fatal(err)
		}
		c, err := Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		edit(c)
		if _, _, err := Verify(c); !errors.Is(err, ErrFile) {
			t.Errorf("a relabelled summary of standardized rows: %v, want ErrFile", err)
		}
	}
}

// TestQuantileRanks: quantiles whose rank ceil(q n) + K exceeds n (the
// maximum always) are not drawn and say so; quantiles of equal rank share
// one draw and pay once; the ledger has one charge per draw and adds up to
// the claim; the published bounds are monotone in q even when the draws
// are not.
func TestQuantileRanks(t *testing.T) {
	f := newFixture(t, 100, 0.5)
	// 0.891 and 0.9 both have ceil(q n) = 90: one rank.
	cfg := Config{Epsilon: 20, Quantiles: []float64{0.2, 0.5, 0.891, 0.9, 1}}
	src, sd := seeded(5)
	s, err := Summarize(f.p, cfg, src, sd)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Derived
	t.Logf("slack %d, queries %d, quantiles %+v", d.QuantileSlack, d.Queries, s.Quantiles)
	max := s.Quantiles[4]
	if max.Bounded || max.GridIndex != -1 || max.RowsAtLeast != 100 || max.EpsilonAtMost != d.WorstCaseEpsilon {
		t.Errorf("the maximum: %+v, want not bounded (only the worst case %v)", max, d.WorstCaseEpsilon)
	}
	drawn := map[int]bool{}
	for _, q := range s.Quantiles {
		if q.Bounded {
			drawn[q.Rank] = true
			if q.RowsAtLeast < int(math.Ceil(q.Q*100)) {
				t.Errorf("quantile %v covers %d rows, fewer than ceil(q n)", q.Q, q.RowsAtLeast)
			}
		} else if q.Q < 1 && int(math.Ceil(q.Q*100))+d.QuantileSlack <= 100 {
			t.Errorf("quantile %v not drawn though its rank fits", q.Q)
		}
	}
	if d.Queries != len(drawn) || len(s.Certificate.Ledger) != d.Queries {
		t.Errorf("%d queries, %d distinct ranks drawn, %d charges", d.Queries, len(drawn), len(s.Certificate.Ledger))
	}
	var total float64
	for _, c := range s.Certificate.Ledger {
		total += c.Epsilon
	}
	if math.Abs(total-s.Certificate.Epsilon) > 1e-9 {
		t.Errorf("ledger adds up to %v, claim %v", total, s.Certificate.Epsilon)
	}
	if q2, q3 := s.Quantiles[2], s.Quantiles[3]; !q2.Bounded || q2.Rank != q3.Rank || q2.GridIndex != q3.GridIndex {
		t.Errorf("quantiles of equal rank: %+v %+v, want one shared draw", q2, q3)
	}
	for i := 1; i < len(s.Quantiles); i++ {
		if s.Quantiles[i].EpsilonAtMost < s.Quantiles[i-1].EpsilonAtMost || s.Quantiles[i].RowsAtLeast < s.Quantiles[i-1].RowsAtLeast {
			t.Errorf("bounds not monotone: %+v then %+v", s.Quantiles[i-1], s.Quantiles[i])
		}
	}
	if _, _, err := Verify(s); err != nil {
		t.Fatal(err)
	}
	// Two shared quantiles that disagree about their draw do not verify.
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	c, _ := Read(&buf)
	c.Quantiles[3].GridIndex = (c.Quantiles[3].GridIndex + 1) % d.GridSize
	if _, _, err := Verify(c); !errors.Is(err, ErrFile) {
		t.Errorf("a shared draw that differs: %v, want ErrFile", err)
	}

	// Non-monotone draws: the median drawn above the 0.981 quantile.
	pl, err := newPlan(s.Release, s.Budget)
	if err != nil {
		t.Fatal(err)
	}
	draws := make([]int, len(pl.ranks))
	draws[len(draws)-2] = d.GridSize - 1
	m, err := pl.assemble(draws, []int{}, perturb.SourceSeeded, sd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(m.Quantiles); i++ {
		if m.Quantiles[i].EpsilonAtMost < m.Quantiles[i-1].EpsilonAtMost {
			t.Errorf("non-monotone draws give non-monotone bounds: %+v", m.Quantiles)
		}
	}
}

// TestUsefulNLambda: just above the n lambda UsefulNLambda states, a
// summary has no "too small to be useful" floor warning; just below, it
// has one, and the warning names the figure. The default budget at n = 455
// and lambda = 1e-3 (pdp's defaults) is far below it.
func TestUsefulNLambda(t *testing.T) {
	const n = 200
	cfg := Config{Epsilon: 1, Quantiles: []float64{0.5}}
	need, err := UsefulNLambda(0.25, cfg.Budget())
	if err != nil {
		t.Fatal(err)
	}
	floorWarned := func(nl float64) (bool, string) {
		p := &pdp.Publishable{Public: logisticConstants(n, 3, nl/n), GradNorms: make([]float64, n)}
		src, sd := seeded(1)
		s, err := Summarize(p, cfg, src, sd)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range s.Warnings {
			if strings.HasPrefix(w, "budget too small to be useful:") {
				return true, w
			}
		}
		return false, ""
	}
	if w, msg := floorWarned(1.02 * need); w {
		t.Errorf("n lambda = 1.02 x %v: %s", need, msg)
	}
	w, msg := floorWarned(0.97 * need)
	if !w || !strings.Contains(msg, "needs n lambda >= ") {
		t.Errorf("n lambda = 0.97 x %v: warned %v %q", need, w, msg)
	}
	def, err := UsefulNLambda(0.25, Config{Epsilon: 1, Levels: []float64{0.01, 0.1, 1}}.Budget())
	if err != nil || !(def > 455*1e-3*100) {
		t.Errorf("the default summary needs n lambda >= %v (%v), want far above 0.455", def, err)
	}
	if _, err := UsefulNLambda(0, cfg.Budget()); !errors.Is(err, ErrInput) {
		t.Errorf("smoothness 0: %v", err)
	}
}
