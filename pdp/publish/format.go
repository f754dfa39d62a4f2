package publish

import (
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/pdp"
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
	Mechanism  dp.Mechanism `json:"mechanism"`
	NoiseScale float64      `json:"noise_scale"`
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
