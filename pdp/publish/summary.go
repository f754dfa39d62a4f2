package publish

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// Format is the format name written into every summary file.
const Format = "stabpriv-pdp-summary/2"

// CertificateVersion is the version of the summary's certificate.
const CertificateVersion = "stabpriv-pdp-summary-certificate/2"

// ErrInput is wrapped by every error about unusable input (a bad budget,
// quantile or level, inconsistent constants); ErrFile by every error about
// a summary file that does not read or does not verify.
var (
	ErrInput = errors.New("publish: invalid input")
	ErrFile  = errors.New("publish: not a valid summary file")
)

// Defaults of Config.
var (
	// DefaultQuantiles are the quantiles of a summary when Config.Quantiles
	// is nil: the median, the 90th and 99th percentiles and the maximum.
	DefaultQuantiles = []float64{0.5, 0.9, 0.99, 1}
)

// DefaultBeta is the failure probability of all the claims of a summary
// together when Config.Beta is zero.
const DefaultBeta = 0.05

// maxQueries bounds the number of quantiles and of levels.
const maxQueries = 100

// maxGrid bounds the number of steps of the quantile grid on [0, 1].
const maxGrid = 100000

// Config is the request for a summary.
type Config struct {
	// Epsilon > 0 and Delta in [0, 1) are the summary's own budget, spent
	// on top of the release's (the two compose: together they are
	// (eps_release + Epsilon, delta_release + Delta)-DP). Delta > 0 is used
	// only when zCDP composition of the queries beats basic composition.
	Epsilon float64
	Delta   float64
	// Beta in (0, 1) is the probability, over the summary's randomness,
	// that any of its claims fails; zero means DefaultBeta.
	Beta float64
	// Quantiles lists the quantiles q in (0, 1] to bound; nil means
	// DefaultQuantiles.
	Quantiles []float64
	// Levels lists epsilon levels > 0: for each, the summary states a share
	// of rows whose per-instance epsilon is at most it.
	Levels []float64
	// StandardizedOnRows says the features were standardized with
	// statistics of the training rows: the summary is then not private for
	// the table (Verify's verdict) and never PUBLISHABLE. Summarize also
	// sets it from the analysis.
	StandardizedOnRows bool
}

// Budget is the summary's request as the file records it.
type Budget struct {
	Epsilon   float64   `json:"epsilon"`
	Delta     float64   `json:"delta"`
	Beta      float64   `json:"beta"`
	Quantiles []float64 `json:"quantiles"`
	Levels    []float64 `json:"levels"`
}

// Release holds the public constants of the analysed release
// (pdp.PublicConstants) as the file records them.
type Release struct {
	Mechanism  perturb.Mechanism `json:"mechanism"`
	NoiseScale float64           `json:"noise_scale"`
	// NoiseDelta is the delta of the Gaussian per-instance epsilons (0 for
	// Laplace and gamma).
	NoiseDelta float64 `json:"noise_delta"`
	Dim        int     `json:"dim"`
	N          int     `json:"n"`
	Lambda     float64 `json:"lambda"`
	Lipschitz  float64 `json:"lipschitz"`
	Smoothness float64 `json:"smoothness"`
	Tolerance  float64 `json:"solver_tolerance"`
	// StandardizedOnRows: the features were standardized with statistics
	// of the training rows. Replacing one row then changes every row, which
	// the shift does not bound: such a summary is not private for the table
	// (Verify says so) and never PUBLISHABLE.
	StandardizedOnRows bool `json:"standardized_on_rows"`
	// WeightsSHA256 binds the summary to the release of a model file: its
	// certificate's weights_sha256 (dp.WeightsSHA256); ReleaseEpsilon and
	// ReleaseDelta are that certificate's claim. All three are empty for a
	// simulated release, which publishes no weights. certify --model checks
	// them, and the constants above, against the model file.
	WeightsSHA256  string  `json:"weights_sha256"`
	ReleaseEpsilon float64 `json:"release_epsilon"`
	ReleaseDelta   float64 `json:"release_delta"`
}

// constants returns the release as pdp's public constants.
func (r Release) constants() (*pdp.PublicConstants, error) {
	m, err := pdp.NewPrivacyLoss(r.Mechanism, r.NoiseScale, r.NoiseDelta)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	c := &pdp.PublicConstants{N: r.N, Lambda: r.Lambda, Lipschitz: r.Lipschitz, Smoothness: r.Smoothness,
		Tolerance: r.Tolerance, Noise: m, Dim: r.Dim}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return c, nil
}

// Derived are the constants of the mechanism, all computed from the
// release's public constants and the budget.
type Derived struct {
	// RemoveOneBound is B = L/(n lambda), the bound on every row's
	// sensitivity; WorstCaseEpsilon = phi(B) bounds every row's epsilon.
	RemoveOneBound   float64 `json:"remove_one_bound"`
	WorstCaseEpsilon float64 `json:"worst_case_epsilon"`
	// Shift is rho (Shift), in units of B.
	Shift float64 `json:"shift"`
	// GridStep and GridSize describe the quantile grid {0, h, 2h, ..., 1}.
	GridStep float64 `json:"grid_step"`
	GridSize int     `json:"grid_size"`
	// Queries is the number of exponential-mechanism draws, each
	// QueryEpsilon-DP, composed by CompositionRule: one per distinct rank
	// of a bounded quantile (quantiles of equal rank share a draw) and one
	// per level below the worst case.
	Queries         int     `json:"queries"`
	QueryEpsilon    float64 `json:"query_epsilon"`
	CompositionRule string  `json:"composition_rule"`
	// QueryBeta = Beta/Queries is each claim's failure probability.
	QueryBeta float64 `json:"query_beta"`
	// QuantileSlack and LevelSlack are the length bounds K that hold with
	// probability 1 - QueryBeta for a quantile and a level draw.
	QuantileSlack int `json:"quantile_slack"`
	LevelSlack    int `json:"level_slack"`
}

// Quantile is the published bound for one quantile.
type Quantile struct {
	Q float64 `json:"q"`
	// Bounded is false when ceil(q n) + QuantileSlack exceeds n: the
	// mechanism cannot bound that quantile at this budget (the maximum,
	// q = 1, never: one replaced row is arbitrary), nothing is drawn, and
	// only the worst case holds (EpsilonAtMost the worst-case epsilon, for
	// all n rows).
	Bounded bool `json:"bounded"`
	// Rank is the rank the draw aimed at, ceil(q n) + QuantileSlack (0 when
	// not bounded); quantiles of equal rank share one draw. GridIndex is
	// the draw (-1 when not bounded); the published grid value t is
	// min(1, g h) with g the largest draw at this rank or below, so that
	// the bounds are monotone in q (a post-processing: a larger t keeps
	// the claim).
	Rank      int `json:"rank"`
	GridIndex int `json:"grid_index"`
	// EpsilonAtMost is phi(B min(1, t + K rho)): with probability at least
	// 1 - QueryBeta, at least RowsAtLeast = Rank - K >= ceil(q n) rows
	// (ShareAtLeast of n) have a per-instance epsilon at most it.
	EpsilonAtMost float64 `json:"epsilon_at_most"`
	RowsAtLeast   int     `json:"rows_at_least"`
	ShareAtLeast  float64 `json:"share_at_least"`
}

// Level is the published share for one epsilon level.
type Level struct {
	Epsilon float64 `json:"epsilon"`
	// Threshold is tau, the largest normalized statistic whose epsilon is at
	// most Epsilon (phi(B tau) <= Epsilon), and Count the draw of the
	// number of rows at most tau - K rho; -1 when the level is at least the
	// worst-case epsilon (every row is below it; nothing is drawn).
	Threshold float64 `json:"threshold"`
	Count     int     `json:"count"`
	// With probability at least 1 - QueryBeta, at least RowsAtLeast rows
	// (ShareAtLeast of n) have a per-instance epsilon at most Epsilon: the
	// count's claim, or a lower level's when larger (rows at most a lower
	// level are at most this one: the shares are monotone).
	RowsAtLeast  int     `json:"rows_at_least"`
	ShareAtLeast float64 `json:"share_at_least"`
}

// Certificate states the summary's claim, in the style of dp.Claim.
type Certificate struct {
	Version string `json:"version"`
	// Private is true only for draws from the secure source on rows not
	// standardized with their own statistics.
	Private bool `json:"private"`
	// Mechanism, Epsilon and Delta are the claim: the summary is
	// (Epsilon, Delta)-DP with respect to Neighbouring.
	Mechanism    string  `json:"mechanism"`
	Epsilon      float64 `json:"epsilon"`
	Delta        float64 `json:"delta"`
	Neighbouring string  `json:"neighbouring"`
	Sensitivity  string  `json:"sensitivity"`
	// Source is perturb.SourceSecure or perturb.SourceSeeded; NoiseSeed the
	// published seed of a seeded source.
	Source    string  `json:"source"`
	NoiseSeed *uint64 `json:"noise_seed,omitempty"`
	// Ledger lists the draws, each a dp.Charge of the mechanism
	// dp.InverseSensitivity.
	Ledger []dp.Charge `json:"ledger"`
	// Composition is the rule that adds the ledger up to the claim (zCDP
	// composition can claim less than the sum of the entries, so the
	// ledger is not a dp.Ledger, whose rule is basic composition).
	Composition dp.Composition `json:"composition"`
	Assumptions []string       `json:"not_covered"`
	// NotVerified lists what Verify (and certify) cannot check from the
	// file: what the producer states.
	NotVerified []string `json:"not_verified"`
	Citation    string   `json:"citation"`
}

// Summary is the DP summary of the per-instance epsilons of a release: the
// summary.dp.json file.
type Summary struct {
	Format string `json:"format"`
	// Status says that the file is publishable (unlike the rest of pdp's
	// output) and what its numbers are.
	Status      string      `json:"status"`
	Release     Release     `json:"release"`
	Budget      Budget      `json:"budget"`
	Derived     Derived     `json:"derived"`
	Quantiles   []Quantile  `json:"quantiles"`
	Levels      []Level     `json:"levels"`
	Certificate Certificate `json:"certificate"`
	// Warnings say, from public constants only, where the budget is too
	// small for the claims to be useful.
	Warnings []string `json:"warnings"`
}

// Status is the status line of a private summary.
const Status = "PUBLISHABLE: a differentially private summary of the per-instance epsilons of the release's training rows, " +
	"with its own certificate; each number bounds the per-instance epsilons from above, with the stated probability over the summary's randomness"

// Status lines of summaries that are not private.
const (
	// StatusStandardized: the rows were standardized with their own
	// statistics.
	StatusStandardized = "NOT PRIVATE FOR THE TABLE: the features were standardized with statistics of the training rows, so replacing one row " +
		"changes every row and the summary's neighbourhood does not hold; do not publish (use --standardize none, or declared or estimated bounds as in train)"
	// StatusSeeded: the draws came from a seeded source.
	StatusSeeded = "NOT PRIVATE: the draws came from a seeded generator whose seed is published (for tests); do not publish"
)

// status returns the status line of a summary.
func status(standardized, secure bool) string {
	switch {
	case standardized:
		return StatusStandardized
	case !secure:
		return StatusSeeded
	}
	return Status
}

// Neighbouring is the summary's neighbouring relation.
const Neighbouring = "replace-one: training sets of the same size n that differ in one row (docs/DESIGN.md, section 1: DP certificates)"

// Sensitivity states what the mechanism's sensitivity rests on.
const Sensitivity = "each row's statistic u_i = min(1, ||grad l(w_hat, z_i)||/L) bounds its per-instance epsilon through phi(B u_i); " +
	"replacing one row moves every other u_j by at most the shift rho and the replaced one anywhere in [0, 1] " +
	"(strong convexity: ||w_hat - w_hat'|| <= 2B; smoothness of the gradient); the exponential mechanism's utility " +
	"is minus the inverse-sensitivity length in that neighbourhood, of sensitivity 1"

// Citation names the sources of the summary's mechanism.
const Citation = "Redberg & Wang 2021, Privately Publishable Per-instance Privacy (publishing pDP through DP releases); " +
	"McSherry & Talwar 2007 (exponential mechanism); Asi & Duchi 2020 (inverse sensitivity); " +
	"Dwork & Roth 2014, Theorems 3.11 and 3.16; Bun & Steinke 2016, Propositions 1.3, 1.4 and Lemma 2.3 (zCDP composition)"

// emName is the mechanism of every draw.
const emName = string(dp.InverseSensitivity)

// Summarize draws the DP summary of the per-instance epsilons of p with
// the budget of cfg, from src (perturb.Secure for a publishable summary;
// seed is the seed of a seeded source, published in the file, and must be
// nil otherwise). Bad input (eps <= 0, delta outside [0, 1), a quantile
// outside (0, 1], a level <= 0, NaN) is an error wrapping ErrInput before
// any draw.
func Summarize(p *pdp.Publishable, cfg Config, src perturb.Source, seed *uint64) (*Summary, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nothing to summarize", ErrInput)
	}
	if src == nil {
		return nil, fmt.Errorf("%w: no randomness source", ErrInput)
	}
	if (src.Kind() == perturb.SourceSeeded) != (seed != nil) {
		return nil, fmt.Errorf("%w: a seeded source needs its seed (published), and only a seeded source has one", ErrInput)
	}
	pc := p.Public
	rel := Release{
		Mechanism: pc.Noise.Kind, NoiseScale: pc.Noise.Scale, NoiseDelta: pc.Noise.Delta, Dim: pc.Dim,
		N: pc.N, Lambda: pc.Lambda, Lipschitz: pc.Lipschitz, Smoothness: pc.Smoothness, Tolerance: pc.Tolerance,
		StandardizedOnRows: cfg.StandardizedOnRows || len(pc.NotCovered) > 0,
	}
	if b := pc.Binding; b != nil {
		rel.WeightsSHA256, rel.ReleaseEpsilon, rel.ReleaseDelta = b.WeightsSHA256, b.Epsilon, b.Delta
	}
	pl, err := newPlan(rel, cfg.Budget())
	if err != nil {
		return nil, err
	}
	u, err := Values(p)
	if err != nil {
		return nil, err
	}
	q := make([]int, len(pl.ranks))
	for i, r := range pl.ranks {
		lengths := make([]int, pl.derived.GridSize)
		for g := range lengths {
			lengths[g] = Length(u, r, pl.gridValue(g), pl.rho)
		}
		q[i] = sample(lengths, pl.derived.QueryEpsilon, src)
	}
	l := make([]int, len(pl.levels))
	for i, lp := range pl.levels {
		l[i] = -1
		if !lp.drawn {
			continue
		}
		lengths := make([]int, pc.N+1)
		for c := range lengths {
			lengths[c] = CountLength(u, c, lp.queryTau, pl.rho)
		}
		l[i] = sample(lengths, pl.derived.QueryEpsilon, src)
	}
	return pl.assemble(q, l, src.Kind(), seed)
}

// Budget returns the request as the file records it, defaults applied.
func (cfg Config) Budget() Budget {
	b := Budget{Epsilon: cfg.Epsilon, Delta: cfg.Delta, Beta: cfg.Beta, Quantiles: cfg.Quantiles, Levels: cfg.Levels}
	if b.Beta == 0 {
		b.Beta = DefaultBeta
	}
	if b.Quantiles == nil {
		b.Quantiles = DefaultQuantiles
	}
	if b.Levels == nil {
		b.Levels = []float64{}
	}
	return b
}

// Check validates a budget: eps > 0 finite, delta in [0, 1), beta in
// (0, 1), at least one quantile or level, quantiles in (0, 1] and levels
// > 0 finite, each strictly increasing, at most 100 of each.
func (b Budget) Check() error {
	if err := (dp.Budget{Epsilon: b.Epsilon, Delta: b.Delta}).Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	if !check.OpenUnit(b.Beta) {
		return fmt.Errorf("%w: beta = %v, want in (0, 1)", ErrInput, b.Beta)
	}
	if len(b.Quantiles)+len(b.Levels) == 0 {
		return fmt.Errorf("%w: no quantile and no level to publish", ErrInput)
	}
	if len(b.Quantiles) > maxQueries || len(b.Levels) > maxQueries {
		return fmt.Errorf("%w: %d quantiles and %d levels, want at most %d of each", ErrInput, len(b.Quantiles), len(b.Levels), maxQueries)
	}
	for i, q := range b.Quantiles {
		if !(q > 0 && q <= 1) || (i > 0 && !(q > b.Quantiles[i-1])) {
			return fmt.Errorf("%w: quantile %v, want increasing values in (0, 1]", ErrInput, q)
		}
	}
	for i, l := range b.Levels {
		if !check.Positive(l) || (i > 0 && !(l > b.Levels[i-1])) {
			return fmt.Errorf("%w: level %v, want increasing finite values > 0", ErrInput, l)
		}
	}
	return nil
}

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

// assemble builds the summary from the draws: q[j] the grid index drawn
// for rank pl.ranks[j], l[i] the count of level i (-1 when not drawn).
func (pl *plan) assemble(q, l []int, source string, seed *uint64) (*Summary, error) {
	d := pl.derived
	n := pl.pc.N
	if len(q) != len(pl.ranks) || len(l) != len(pl.levels) {
		return nil, fmt.Errorf("%w: %d quantile and %d level draws for %d and %d", ErrFile, len(q), len(l), len(pl.ranks), len(pl.levels))
	}
	s := &Summary{Format: Format, Status: status(pl.rel.StandardizedOnRows, source == perturb.SourceSecure), Release: pl.rel, Budget: pl.budget, Derived: d,
		Quantiles: []Quantile{}, Levels: []Level{}}
	published := make([]int, len(q)) // running maximum of the draws
	for j, g := range q {
		if g < 0 || g >= d.GridSize {
			return nil, fmt.Errorf("%w: rank %d: grid index %d outside [0, %d)", ErrFile, pl.ranks[j], g, d.GridSize)
		}
		published[j] = g
		if j > 0 {
			published[j] = max(g, published[j-1])
		}
	}
	for _, qp := range pl.quantiles {
		v := Quantile{Q: qp.q, GridIndex: -1, EpsilonAtMost: d.WorstCaseEpsilon, RowsAtLeast: n}
		if qp.draw >= 0 {
			// len(t) <= K: at most n - r + K values exceed t + K rho.
			bound, err := pl.phi(math.Min(1, pl.gridValue(published[qp.draw])+float64(d.QuantileSlack)*pl.rho))
			if err != nil {
				return nil, err
			}
			v.Bounded, v.Rank, v.GridIndex, v.EpsilonAtMost, v.RowsAtLeast = true, qp.rank, q[qp.draw], bound, qp.rank-d.QuantileSlack
		}
		v.ShareAtLeast = float64(v.RowsAtLeast) / float64(n)
		s.Quantiles = append(s.Quantiles, v)
	}
	prev := 0 // the largest count claimed at a lower level
	for i, lp := range pl.levels {
		lv := Level{Epsilon: lp.level, Threshold: lp.tau, Count: l[i], RowsAtLeast: n}
		if lp.drawn {
			if l[i] < 0 || l[i] > n {
				return nil, fmt.Errorf("%w: level %v: count %d outside [0, %d]", ErrFile, lp.level, l[i], n)
			}
			// len(c) <= K: c <= #{u <= tau - K rho + K rho} + K.
			lv.RowsAtLeast = max(prev, l[i]-d.LevelSlack)
			prev = lv.RowsAtLeast
		} else if l[i] != -1 {
			return nil, fmt.Errorf("%w: level %v is at least the worst case: count %d, want -1 (not drawn)", ErrFile, lp.level, l[i])
		}
		lv.ShareAtLeast = float64(lv.RowsAtLeast) / float64(n)
		s.Levels = append(s.Levels, lv)
	}
	s.Certificate = pl.certificate(source, seed)
	var err error
	if s.Warnings, err = pl.warnings(); err != nil {
		return nil, err
	}
	return s, nil
}

// certificate returns the summary's certificate.
func (pl *plan) certificate(source string, seed *uint64) Certificate {
	d := pl.derived
	c := Certificate{
		Version: CertificateVersion, Private: source == perturb.SourceSecure && !pl.rel.StandardizedOnRows, Mechanism: emName,
		Epsilon: pl.eps, Delta: pl.delta, Neighbouring: Neighbouring, Sensitivity: Sensitivity,
		Source: source, NoiseSeed: seed, Ledger: []dp.Charge{},
		Composition: dp.Composition{Rule: d.CompositionRule, Parts: d.Queries, TotalEpsilon: pl.eps, TotalDelta: pl.delta},
		Citation:    Citation,
	}
	for j, r := range pl.ranks {
		var qs []string
		for _, qp := range pl.quantiles {
			if qp.draw == j {
				qs = append(qs, strconv.FormatFloat(qp.q, 'g', -1, 64))
			}
		}
		c.Ledger = append(c.Ledger, dp.Charge{Step: fmt.Sprintf("quantile %s (rank %d)", strings.Join(qs, ", "), r), Mechanism: dp.InverseSensitivity, Epsilon: d.QueryEpsilon})
	}
	for _, lp := range pl.levels {
		if lp.drawn {
			c.Ledger = append(c.Ledger, dp.Charge{Step: fmt.Sprintf("share at level %g", lp.level), Mechanism: dp.InverseSensitivity, Epsilon: d.QueryEpsilon})
		}
	}
	c.Assumptions = []string{
		"the claim is about the training rows as the analysis saw them (after preprocessing), n public; the release's own certificate is separate: together the two are (eps_release + eps, delta_release + delta)-DP by composition",
		"the per-row statistic is computed at the solver's minimizer (gradient of F at most the recorded tolerance), which the shift accounts for",
		"the exponential mechanism is sampled in floating point from one uniform draw; floating-point effects on its probabilities are not covered",
		"each bound holds with probability at least 1 - query_beta over the summary's randomness (all together with 1 - beta)",
	}
	if pl.rel.StandardizedOnRows {
		c.Assumptions = append(c.Assumptions, "the features were standardized with statistics of the training rows: replacing a row changes them, and so every row, which the claim does not cover (it holds for the standardized rows)")
	}
	if source != perturb.SourceSecure {
		c.Assumptions = append(c.Assumptions, "NOT PRIVATE: the draws came from the source "+source+" and can be recomputed")
	}
	c.NotVerified = pl.notVerified()
	return c
}

// notVerified lists what no check of the file can show: what the producer
// states.
func (pl *plan) notVerified() []string {
	out := []string{
		"provenance: the file has no signature; which values were drawn cannot be checked (a consistent forgery verifies)",
		"that the release's constants (n, lambda, Lipschitz and smoothness constants, solver tolerance, noise) and standardized_on_rows are those of the analysed run: the producer states them",
	}
	if pl.rel.WeightsSHA256 == "" {
		out = append(out, "the release: a simulated one, bound to no published model (no weights_sha256)")
	} else {
		out = append(out, "that the rows summarized are the model file's training rows: certify --model checks the weights' SHA-256, the certificate's claim and the constants against the model file, not the data")
	}
	return out
}

// warnings says, from the public constants and the budget only, where the
// budget is too small for the claims to be useful.
func (pl *plan) warnings() ([]string, error) {
	d := pl.derived
	n := pl.pc.N
	w := []string{}
	if len(pl.ranks) > 0 {
		floor := math.Min(1, float64(d.QuantileSlack)*pl.rho)
		fe, err := pl.phi(floor)
		if err != nil {
			return nil, err
		}
		if floor >= 0.5 {
			need, err := UsefulNLambda(pl.pc.Smoothness, pl.budget)
			if err != nil {
				return nil, err
			}
			w = append(w, fmt.Sprintf("budget too small to be useful: even if every row had epsilon 0, the published quantile bounds would be at least %.4g, %.0f%% of the worst-case per-instance epsilon %.4g (slack %d draws of shift %.3g); raise the budget or lambda: at this budget a useful summary needs n lambda >= %.3g, here n lambda = %.3g", fe, 100*fe/d.WorstCaseEpsilon, d.WorstCaseEpsilon, d.QuantileSlack, pl.rho, need, float64(n)*pl.pc.Lambda))
		}
		for _, qp := range pl.quantiles {
			if qp.draw < 0 && qp.q < 1 {
				w = append(w, fmt.Sprintf("quantile %g not bounded at this budget: ceil(q n) = %d plus the rank slack %d exceeds n = %d; only the worst case holds", qp.q, int(math.Ceil(qp.q*float64(n))), d.QuantileSlack, n))
			}
		}
	}
	for _, lp := range pl.levels {
		if lp.drawn && (lp.queryTau < 0 || n-d.LevelSlack <= n/2) {
			w = append(w, fmt.Sprintf("budget too small to be useful for level %g: the published share cannot exceed %.3g whatever the data (count slack %d rows, threshold slack %.3g of %.3g)",
				lp.level, levelCeiling(lp, d, n), d.LevelSlack, float64(d.LevelSlack)*pl.rho, lp.tau))
		}
	}
	return w, nil
}

// levelCeiling returns the largest share a level can publish.
func levelCeiling(lp levelPlan, d Derived, n int) float64 {
	if lp.queryTau < 0 {
		return 0
	}
	return float64(max(0, n-d.LevelSlack)) / float64(n)
}

// Equal reports whether two summaries are the same (their JSON forms).
func Equal(a, b *Summary) bool {
	ja, ea := marshal(a)
	jb, eb := marshal(b)
	return ea == nil && eb == nil && slices.Equal(ja, jb)
}
