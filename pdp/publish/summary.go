package publish

import (
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
