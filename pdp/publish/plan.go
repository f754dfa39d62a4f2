package publish

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/pdp"
)

// plan is everything about a summary that follows from public inputs.
type plan struct {
	rel       Release
	budget    Budget
	pc        *pdp.PublicConstants
	derived   Derived
	rho       float64
	eps       float64 // delta of the certificate
	delta     float64
	quantiles []quantilePlan
	// ranks are the distinct ranks drawn, increasing: one draw each.
	ranks  []int
	levels []levelPlan
}

// quantilePlan is one quantile: its rank, and the index of its draw in
// plan.ranks (-1: not bounded, nothing drawn).
type quantilePlan struct {
	q    float64
	rank int
	draw int
}

type levelPlan struct {
	level, tau, queryTau float64
	drawn                bool
}

// newPlan checks the inputs and derives the mechanism's constants.
func newPlan(rel Release, b Budget) (*plan, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	pc, err := rel.constants()
	if err != nil {
		return nil, err
	}
	// n is public under the summary's replace-one relation (Neighbouring).
	if err := (dp.Budget{Epsilon: b.Epsilon, Delta: b.Delta}).CheckRows(pc.N, "training row"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if rel.ReleaseDelta > 0 {
		// Bound to a release: the two compose, and so do their deltas.
		if err := (dp.Budget{Epsilon: b.Epsilon, Delta: b.Delta + rel.ReleaseDelta}).CheckRows(pc.N, "training row"); err != nil {
			return nil, fmt.Errorf("%w: the summary's delta %g with the release's %g, which compose: %w", ErrInput, b.Delta, rel.ReleaseDelta, err)
		}
	}
	pl := &plan{rel: rel, budget: b, pc: pc, rho: Shift(pc)}
	d := &pl.derived
	d.RemoveOneBound = pc.RemoveOneBound()
	if d.WorstCaseEpsilon, err = pl.phi(1); err != nil {
		return nil, err
	}
	d.Shift = pl.rho
	d.GridStep, d.GridSize = grid(pl.rho)
	for _, l := range b.Levels {
		lp := levelPlan{level: l, tau: 1, drawn: l < d.WorstCaseEpsilon}
		if lp.drawn {
			if lp.tau, err = pl.threshold(l); err != nil {
				return nil, err
			}
		}
		pl.levels = append(pl.levels, lp)
		if lp.drawn {
			d.Queries++
		}
	}
	levelQueries := d.Queries
	// Which quantiles are drawn depends on the slack, which depends on the
	// number of draws: first with every distinct rank drawn, then without
	// the quantiles whose rank ceil(q n) + K exceeds n at that slack (the
	// slack only falls, so the others stay below n). All of it is public.
	base := make([]int, len(b.Quantiles)) // ceil(q n)
	for i, q := range b.Quantiles {
		base[i] = int(math.Ceil(q * float64(pc.N)))
	}
	pl.slacks(levelQueries + len(distinctRanks(base, 0, pc.N)))
	k0 := d.QuantileSlack
	kept := distinctRanks(base, k0, pc.N)
	pl.slacks(levelQueries + len(kept))
	for i, q := range b.Quantiles {
		qp := quantilePlan{q: q, draw: -1}
		if base[i]+k0 <= pc.N {
			qp.rank = base[i] + d.QuantileSlack
			if len(pl.ranks) == 0 || pl.ranks[len(pl.ranks)-1] != qp.rank {
				pl.ranks = append(pl.ranks, qp.rank)
			}
			qp.draw = len(pl.ranks) - 1
		}
		pl.quantiles = append(pl.quantiles, qp)
	}
	for i := range pl.levels {
		pl.levels[i].queryTau = pl.levels[i].tau - float64(d.LevelSlack)*pl.rho
	}
	return pl, nil
}

// slacks sets the composition, the failure probability and the slacks of
// m draws.
func (pl *plan) slacks(m int) {
	d := &pl.derived
	d.Queries = m
	if m == 0 {
		// Only levels at or above the worst case and unbounded quantiles:
		// nothing is drawn.
		d.CompositionRule = "none: every claim follows from the data-independent worst case"
		d.QueryEpsilon, d.QueryBeta, d.QuantileSlack, d.LevelSlack, pl.eps, pl.delta = 0, 0, 0, 0, 0, 0
		return
	}
	b := pl.budget
	d.QueryEpsilon, d.CompositionRule, pl.eps, pl.delta = compose(b.Epsilon, b.Delta, m)
	d.QueryBeta = b.Beta / float64(m)
	d.QuantileSlack = quantileSlack(pl.rho, d.QueryEpsilon, d.QueryBeta)
	// Dwork & Roth, Theorem 3.11 as in quantileSlack, over the n + 1
	// counts, whose optimum is 0.
	d.LevelSlack = int(math.Ceil(2 / d.QueryEpsilon * (math.Log(float64(pl.pc.N+1)) + math.Log(1/d.QueryBeta))))
}

// grid returns the step h and the size of the quantile grid {0, h, ..., 1}
// at shift rho.
func grid(rho float64) (float64, int) {
	h := math.Min(1, math.Max(rho, 1.0/maxGrid))
	return h, int(math.Ceil(1/h)) + 1
}

// quantileSlack returns the slack K of a quantile draw of epsilon eps0 at
// shift rho, exceeded with probability at most beta0: Dwork & Roth,
// Theorem 3.11 with sensitivity 1, the draw's length exceeds the optimum
// by (2/eps0)(ln |outputs| + t) with probability at most e^-t; the optimum
// is at most ceil(h/(2 rho)) on the grid (a grid point within h/2 of the
// order statistic).
func quantileSlack(rho, eps0, beta0 float64) int {
	h, size := grid(rho)
	return int(math.Ceil(h/(2*rho))) + int(math.Ceil(2/eps0*(math.Log(float64(size))+math.Log(1/beta0))))
}

// UsefulNLambda returns the smallest n lambda (within 1%) at which a
// summary with the budget b of a release whose loss has the smoothness s
// in the weights (pdp.PublicConstants.Smoothness) can be useful: the
// floor of its quantile bounds, K rho in units of B (rho = 2 s/(n lambda),
// Shift for a negligible solver tolerance), is below one half, so that a
// data set whose rows have small epsilons can show it. It counts every
// quantile below 1 and every level as a draw (the most the budget can be
// split into). It depends on public constants only; below it, Summarize
// warns that the budget is too small to be useful.
func UsefulNLambda(s float64, b Budget) (float64, error) {
	if err := b.Check(); err != nil {
		return 0, err
	}
	if !check.Positive(s) {
		return 0, fmt.Errorf("%w: smoothness %v, want finite > 0", ErrInput, s)
	}
	q := len(b.Levels)
	for _, v := range b.Quantiles {
		if v < 1 {
			q++
		}
	}
	if q == 0 {
		return 0, nil
	}
	eps0, _, _, _ := compose(b.Epsilon, b.Delta, q)
	useful := func(nl float64) bool {
		rho := 2 * s / nl
		return float64(quantileSlack(rho, eps0, b.Beta/float64(q)))*rho < 0.5
	}
	lo, hi := 1e-6, 1.0
	for !useful(hi) {
		if lo, hi = hi, 2*hi; hi > 1e15 {
			return math.Inf(1), nil
		}
	}
	for hi > 1.01*lo {
		if mid := math.Sqrt(lo * hi); useful(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// distinctRanks returns the distinct values r + k at most n of the
// nondecreasing ranks r, increasing.
func distinctRanks(ranks []int, k, n int) []int {
	var out []int
	for _, r := range ranks {
		if r += k; r <= n && (len(out) == 0 || out[len(out)-1] != r) {
			out = append(out, r)
		}
	}
	return out
}

// compose returns the epsilon of each of m pure-DP draws whose
// composition is (eps, delta)-DP, the rule, and the claim: basic
// composition (m eps0 <= eps in exact arithmetic, dp.Part; delta 0; Dwork
// & Roth, Theorem 3.16) or, when delta > 0 and it allows a larger eps0,
// zCDP: an eps0-DP draw is
// eps0^2/2-zCDP (Bun & Steinke, Proposition 1.4), m of them are
// m eps0^2/2-zCDP (Lemma 2.3), and rho-zCDP is
// (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Proposition 1.3): the largest
// rho is (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)))^2.
func compose(eps, delta float64, m int) (eps0 float64, rule string, claimEps, claimDelta float64) {
	basic := dp.Part(eps, m) // rounded down: m draws add up to at most eps exactly
	if delta > 0 {
		l := math.Log(1 / delta)
		rho := math.Pow(math.Sqrt(l+eps)-math.Sqrt(l), 2)
		// Rounded down by a relative 1e-12 so that the claim holds in
		// floating point.
		z := math.Sqrt(2*rho/float64(m)) * (1 - 1e-12)
		if z > basic {
			return z, fmt.Sprintf("zCDP: %d draws of eps0 = %.6g are %.6g-zCDP, hence (%g, %g)-DP", m, z, rho, eps, delta), eps, delta
		}
	}
	return basic, fmt.Sprintf("basic: %d draws of eps0 = %.6g add up to %g-DP", m, basic, eps), eps, 0
}

// phi returns the release's epsilon at the normalized sensitivity u (in
// units of B).
func (pl *plan) phi(u float64) (float64, error) {
	e, err := pl.pc.EpsilonAtSensitivity(u * pl.pc.RemoveOneBound())
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return e, nil
}

// threshold returns the largest normalized u (to 1e-12, rounded down) with
// phi(u) <= level < phi(1), by bisection on the nondecreasing phi.
func (pl *plan) threshold(level float64) (float64, error) {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		e, err := pl.phi(mid)
		if err != nil {
			return 0, err
		}
		if e <= level {
			lo = mid
		} else {
			hi = mid
		}
	}
	// A margin keeps tau - K rho + K rho, computed in floating point, at
	// most lo.
	return math.Max(0, lo-1e-12), nil
}

// gridValue returns the grid value of index g.
func (pl *plan) gridValue(g int) float64 {
	return math.Min(1, float64(g)*pl.derived.GridStep)
}
