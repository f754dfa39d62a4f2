package selection

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stump"
	"github.com/stabpriv/stabpriv/trainer"
)

// Method names how a fit chooses its setting privately when the user
// names neither the mechanism nor lambda.
type Method string

const (
	// Rule selects nothing: it releases RuleSetting (the first family of
	// Settings at factor 1, or output perturbation for a scalar loss when
	// OutputFirst says so: the mechanism's public rule for lambda) on
	// every training row. The choice reads no row and costs nothing. On
	// every data set and budget of docs/RESULTS.md (useful by default) it
	// was at least as accurate as both selections, within noise, and
	// better on Adult: the default of train. Not a Plan's method.
	Rule Method = "rule"
	// Holdout tunes on a disjoint part of the training rows and releases
	// on the rest, each part at the whole budget (parallel composition):
	// the selection costs rows, not eps.
	Holdout Method = "holdout"
	// RandomStopping releases the best of a random number of private runs
	// on all training rows but a validation part (Select): the released
	// run gets eps/(2 + eta) of the budget.
	RandomStopping Method = "random-stopping"
)

// Methods lists the methods of a Plan (a private selection).
func Methods() []Method { return []Method{Holdout, RandomStopping} }

// IsRule reports whether m is Rule: Rule itself or the empty Method (the
// zero Config's, as the train command's default is the rule).
func (m Method) IsRule() bool { return m == "" || m == Rule }

// RuleSetting returns the setting that Rule releases for the budget b, a
// model with the given loss, k outputs and dim inputs, trained on n rows,
// with a unit of privacy of group rows, from those public values alone.
// The rule decides first, on the unprojected width, whether to release a
// decision stump instead (StumpFirst); RuleSetting is its choice among the
// linear mechanisms.
//
// Per row (group <= 1): the first family of Settings at factor 1, except
// that a scalar loss (k = 1) releases output perturbation (gamma, or the
// analytic Gaussian with delta) instead of objective perturbation (or AMP)
// when OutputFirst says so.
//
// Per group of c = group rows (the rows kept for one privacy ID; n is then
// c times the training IDs, docs/DESIGN.md section 12.1): OutputFamily(b)
// at the factor release.GroupScale(c) = sqrt(c) on the automatic lambda.
// The factor is AutoKnobs' argument at the group's sensitivity, c times a
// row's (release.GroupScale); the clipping norm is unchanged. The family
// is output perturbation because only it releases a fit per privacy ID:
// such a fit is partitioned (the average of SGD runs, whose group bound
// is proven), while objective perturbation and AMP are proven for one
// minimization per row. Between gamma and the Gaussian the choice is the
// budget's alone, as per row: both noises grow by the same factor c.
func RuleSetting(b dp.Budget, loss losses.Loss, k, n, dim, group int) Setting {
	if group > 1 {
		return Setting{Mechanism: OutputFamily(b), Scale: release.GroupScale(group)}
	}
	rule := ObjectiveSetting(b, k, dim)
	if k == 1 && (rule.Mechanism == perturb.Objective || rule.Mechanism == perturb.AMP) && OutputFirst(b, loss, rule.Mechanism, n, dim) {
		return Setting{Mechanism: OutputFamily(b), Scale: 1}
	}
	return rule
}

// ObjectiveSetting is the rule's setting per row before OutputFirst: the
// first family of Settings at factor 1 (objective perturbation, or AMP with
// a delta, for most budgets). A fit whose rows are on the public log map
// (private.Plan, privbounds.PublicRange) takes it for a scalar loss too:
// there the squashed features leave output perturbation's noise far above
// the weights it can fit (on two reviewed tables of 600 x 12 and 3,500 x 40
// at eps = 1, gamma released 0.49 to 0.61 against 0.56 to 0.79 for objective
// perturbation; a thin fit, stated as such in docs/DESIGN.md, section 6).
func ObjectiveSetting(b dp.Budget, k, dim int) Setting {
	s := Settings(b, k, dim)
	for _, x := range s {
		if x.Scale == 1 {
			return x
		}
	}
	return s[0]
}

// StumpFirst reports whether the rule releases a private decision stump
// (perturb.Stump, package stump) instead of a linear model, for the
// budget b, k outputs, n training rows and p mapped features (the row's
// width before any projection): when the model is binary (k = 1), the
// features are at least as many as the training rows (p >= n), and the
// stump's utility guarantee is not vacuous: its expected excess error
// (2/eps)(ln(2 p T) + 1) rows, T = stump.DefaultGrid (the exponential
// mechanism's tail bound, P[excess >= (2/eps)(ln N + t)] <= e^-t, Dwork &
// Roth 2014, Theorem 3.11, integrated over t >= 0;
// permute-and-flip's expected utility is at least as good, McKenna &
// Sheldon 2020, Theorem 2), is at most half the training rows. It reads
// no row and costs nothing. docs/DESIGN.md, section 12.1, argues the
// rule from the mechanisms' guarantees: every linear mechanism's noise
// grows with the number of released weights (p/eps per unit sensitivity
// for the gamma noise, the noise ratio 2 nu/n of section 6 at least 2/eps
// once p >= n), while the stump's excess error grows with ln(p T).
//
// The rule has no upper limit in eps and cannot see whether the signal is
// sparse: its guarantee compares the stump with the best stump, which on
// dense-signal data (many features each carrying a little of the label)
// is near chance, while a linear release improves as eps grows (section
// 12.1 gives a measured case, where objective perturbation is ahead at
// eps = 10 and 100). A caller who wants a linear release there names its
// mechanism (--mechanism objective, gamma, ...) instead of the rule.
func StumpFirst(b dp.Budget, k, n, p int) bool {
	return p >= n && StumpUseful(b, k, n, p)
}

// StumpUseful reports whether a private decision stump's utility guarantee
// is not vacuous for the budget b, k outputs, n training rows and p mapped
// features (StumpFirst's condition without p >= n): the model is binary
// (k = 1) and the expected excess error (2/eps)(ln(2 p T) + 1) rows is at
// most half the training rows.
//
// A private fit whose rows are too few to estimate any feature scale
// (private.Plan, the public log map, privbounds.PublicRange) releases the
// stump by the public rule wherever it is useful: the stump needs only
// the order of a feature's values, which the public map keeps, and
// spends nothing on the scales, while the squashed features leave a
// linear release near the majority class. On the defaults benchmark's
// binary tables that fall to the public map at eps = 1 (MASS's Pima,
// biopsy and crabs, survival's colon; five splits) the linear rule
// released 0.63, 0.68, 0.46 and 0.80, the stump 0.78, 0.92, 0.63 and 0.90
// (docs/DESIGN.md, section 12.1).
func StumpUseful(b dp.Budget, k, n, p int) bool {
	if k != 1 || n < 1 || p < 1 || !(b.Epsilon > 0) {
		return false
	}
	excess := 2 / b.Epsilon * (math.Log(2*float64(p)*float64(stump.DefaultGrid)) + 1)
	return excess <= float64(n)/2
}

// OutputFamily returns the output-perturbation mechanism of the rule's
// output family for the budget b: the gamma-norm noise for a pure budget,
// the analytic Gaussian mechanism with delta > 0. It reads the budget
// alone.
func OutputFamily(b dp.Budget) perturb.Mechanism {
	if b.Delta > 0 {
		return perturb.AnalyticGaussian
	}
	return perturb.Gamma
}

// OutputFirst reports whether the public rule prefers output perturbation
// with clipping to objective perturbation (mechanism m, objective or AMP)
// for a scalar loss: when m's automatic lambda exceeds
// OutputFirstFactor * S_z kappa^2 / dim (kappa = 1, the rows in the unit
// ball).
//
// Why. Objective perturbation's noise moves the minimizer by H^{-1} b/n
// with H = lambda I + the data's mean Hessian, so beside lambda the data's
// own curvature damps the noise; that is its advantage over output
// perturbation, whose noise is calibrated to the sensitivity 2G/(lambda n)
// of a clipped loss, where lambda alone counts (Chaudhuri, Monteleoni &
// Sarwate 2011, Sections 3 and 4). The data's curvature is not public, but
// its mean over the dim directions is at most S_z kappa^2 / dim (the
// per-example Hessian, the loss's second derivative in the margin times
// x x^T, has trace at most S_z ||x||^2). When
// the rule's lambda is above that scale the data's curvature cannot add
// much to lambda, and output perturbation, which spends all of eps on one
// noise draw (objective perturbation keeps half for its Jacobian part and
// pays the noise in the full dimension), is the better release. A multiclass
// loss keeps objective perturbation: its output perturbation runs
// unclipped (a clipped multiclass step is not certified). An error
// computing the lambda (a budget or loss the mechanism refuses) keeps m.
func OutputFirst(b dp.Budget, loss losses.Loss, m perturb.Mechanism, n, dim int) bool {
	if loss == nil || n < 1 || dim < 1 {
		return false
	}
	cons, err := loss.Constants(losses.Domain{Kappa: 1})
	if err != nil || cons.Sz <= 0 {
		return false
	}
	meth, err := release.LookupTuner(m)
	if err != nil {
		return false
	}
	cfg, _, err := meth.Auto(trainer.Config{Loss: loss, Classes: 2, Kappa: 1}, n, dim, b)
	if err != nil {
		return false
	}
	return cfg.Reg.Lambda > OutputFirstFactor*cons.Sz/float64(dim)
}

// OutputFirstFactor is the factor of OutputFirst's threshold: the
// data's curvature along a direction is below its bound S_z kappa^2 / dim
// (a margin away from zero, a row shorter than kappa), so the threshold
// is a fraction of it. Fitted once across the binary data sets of
// docs/RESULTS.md (Adult prepared and raw, the breast cancer data,
// synthetic data, a wide synthetic set, gene_all projected): with 1/4 the
// rule chose the better of the two families at the automatic lambda on
// each where they differ by more than noise.
const OutputFirstFactor = 0.25

// Setting is one candidate of an automatic selection: a release mechanism
// (release.Lookup) and a factor on its automatic lambda
// (release.Tuner.AutoScaled). Its knobs at any number of rows and budget
// follow from the mechanism's public rule, which is how a setting chosen on
// a few rows extrapolates to more.
type Setting struct {
	Mechanism perturb.Mechanism `json:"mechanism"`
	Scale     float64           `json:"scale"`
}

// String describes the setting.
func (s Setting) String() string {
	return fmt.Sprintf("%s, %g x the automatic lambda", s.Mechanism, s.Scale)
}

// Scales returns the factors on the automatic lambda of the candidates:
// the refitted rules' lambda was within a factor 3 of the best fixed lambda
// on the data sets of the fit (docs/RESULTS.md, the fit of the automatic
// rules).
func Scales() []float64 { return []float64{1.0 / 3, 1, 3} }

// MaxObjectiveInputs bounds the number of released weights K*dim of the
// objective-perturbation candidates: their solver factors a K*dim square
// Hessian. A computational limit on public values, not a privacy one.
const MaxObjectiveInputs = 4096

// Settings returns the candidates of an automatic selection for a budget b
// and a model of k outputs and dim inputs, from those public values alone.
// Pure budgets: objective perturbation when k*dim is at most
// MaxObjectiveInputs (it was the best pure mechanism on every data set
// measured, docs/RESULTS.md), else output perturbation with the gamma-norm
// noise. With delta > 0: AMP (when k*dim allows it) and output
// perturbation with the analytic Gaussian, whose order changed from one
// data set to the next. Each at every factor of Scales.
//
// A first version also offered the pure output perturbation beside
// objective perturbation and factors up to 9 each way; on the tuning rows
// (fewer rows, half the eps) the ranking of the two mechanisms often flips,
// and that selection released gamma noise on Adult at eps = 0.1 seven
// times in ten, 0.759 against 0.804 for the rule alone.
func Settings(b dp.Budget, k, dim int) []Setting {
	obj, out := perturb.Objective, perturb.Gamma
	var fams []perturb.Mechanism
	switch {
	case b.Delta > 0 && k*dim <= MaxObjectiveInputs:
		fams = []perturb.Mechanism{perturb.AMP, perturb.AnalyticGaussian}
	case b.Delta > 0:
		fams = []perturb.Mechanism{perturb.AnalyticGaussian}
	case k*dim <= MaxObjectiveInputs:
		fams = []perturb.Mechanism{obj}
	default:
		fams = []perturb.Mechanism{out}
	}
	var s []Setting
	for _, m := range fams {
		for _, f := range Scales() {
			s = append(s, Setting{Mechanism: m, Scale: f})
		}
	}
	return s
}

// pureTwin returns the pure mechanism whose runs stand for m's in the
// tuning of a holdout selection (Select accounts for pure runs): objective
// for amp, gamma for the Gaussian mechanisms, m itself when pure.
func pureTwin(m perturb.Mechanism) perturb.Mechanism {
	switch m {
	case perturb.AMP:
		return perturb.Objective
	case perturb.Gaussian, perturb.AnalyticGaussian:
		return perturb.Gamma
	}
	return m
}

// Config configures an automatic selection (Plan). Every zero value is
// documented; every value is public and fixed before the data is read.
type Config struct {
	// Method is Rule (no Plan: private.Fit releases RuleSetting), or
	// Holdout or RandomStopping (a Plan's). Empty means Rule, the train
	// command's default (--select rule), so that the zero Config is the
	// default choice.
	Method Method
	// TuneFrac in (0, 1) is the share of the training rows a Holdout
	// selection tunes on. Zero means 0.2.
	TuneFrac float64
	// ValFrac in (0, 1) is the share of the tuning rows (Holdout) or of
	// the training rows (RandomStopping) held out to score the runs. Zero
	// means 0.25 for Holdout and 0.1 for RandomStopping.
	ValFrac float64
	// Eta and MeanRuns set the law of the number of runs (SelectOptions).
	// Zero means eta = 0 and E[K] = 10 runs per candidate.
	Eta, MeanRuns float64
}

// Check returns an error wrapping ErrSelect for a Config no fit can use:
// an unknown method, or the rule (which selects nothing) with a fraction
// or a law of the number of runs. A Plan's fractions and law are checked
// by NewPlan.
func (c Config) Check() error {
	switch {
	case c.Method.IsRule() && c != (Config{Method: c.Method}):
		return fmt.Errorf("%w: the rule (method %q) selects nothing, so it takes no tuning or validation fraction and no law of the number of runs (%+v); give the method %s or %s with them", ErrSelect, Rule, c, Holdout, RandomStopping)
	case !c.Method.IsRule() && !slices.Contains(Methods(), c.Method):
		return fmt.Errorf("%w: method %q, want %s, %s or %s", ErrSelect, c.Method, Rule, Holdout, RandomStopping)
	}
	return nil
}

// Record is what a model file publishes about the selection that chose
// its setting: the public plan (method, fractions, law of the number of
// runs, candidates, the sizes of the parts) and the chosen candidate, which
// is the selection's private output.
type Record struct {
	Method   Method    `json:"method"`
	Settings []Setting `json:"settings"`
	Chosen   int       `json:"chosen"`
	TuneFrac float64   `json:"tune_frac,omitempty"`
	ValFrac  float64   `json:"val_frac"`
	Eta      float64   `json:"eta"`
	MeanRuns float64   `json:"mean_runs"`
	// TuneRows are the rows the runs train on, ValRows the rows that
	// score them, and ReleaseRows the rows of the released fit.
	TuneRows    int `json:"tune_rows"`
	ValRows     int `json:"val_rows"`
	ReleaseRows int `json:"release_rows"`
	// Skipped reports a holdout plan that did not tune (NewPlan's public
	// rule): TuneRatio, at least release.Weak, is the noise ratio its runs
	// would have had, and the chosen setting is the rule's.
	Skipped   bool    `json:"skipped,omitempty"`
	TuneRatio float64 `json:"tune_ratio,omitempty"`
}

// Plan is an automatic selection checked before any row is read: the
// candidates, the parts of the training rows and the budget of each step.
type Plan struct {
	cfg      Config
	budget   dp.Budget
	settings []Setting
	// n training rows split by position: tune (the runs' training rows),
	// val (their validation rows) and rel (the release's rows; for
	// RandomStopping the runs' rows).
	tune, val, rel []int
	seed           uint64
	loss           losses.Loss
	classes, dim   int
	// skip is set when the tuning runs could not tell the candidates
	// apart (NewPlan); ratio is then their noise ratio.
	skip  bool
	ratio float64
}

// tuneRatio returns the smallest noise ratio of the tuning runs (pure
// twins of the candidates, at the tuning rows' n and one run's budget).
func (pl *Plan) tuneRatio() (float64, error) {
	var ms []release.Method
	for _, s := range pl.settings {
		m, err := release.Lookup(pureTwin(s.Mechanism))
		if err != nil {
			return 0, err
		}
		if !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	f, err := release.Predict(ms, trainer.Config{Loss: pl.loss, Classes: pl.classes}, len(pl.tune), pl.dim, dp.Budget{Epsilon: pl.runEps()})
	return f.Ratio, err
}

// ruleIndex returns the index of the first family's setting at factor 1.
func (pl *Plan) ruleIndex() int {
	for i, s := range pl.settings {
		if s.Scale == 1 {
			return i
		}
	}
	return 0
}

// NewPlan checks an automatic selection for n training rows, a model with
// the loss and the number of classes given and dim inputs, the budget b
// and the seed of the fit (which splits the rows by position), and returns
// its plan. It reads no rows.
//
// A holdout plan skips the tuning when its runs could not tell the
// candidates apart, by a public rule: when the smallest noise ratio
// (release.Tuner.NoiseRatio) of the runs, at the tuning rows' n and the
// budget of one run, is at least release.Weak, the plan releases the
// first family's automatic setting (factor 1) on every training row,
// which costs nothing (the decision reads no row). On the data sets of
// docs/RESULTS.md a selection from such runs lost to the rule alone
// (the breast cancer data at eps = 1: 0.921 against 0.936).
// Errors wrap ErrSelect (or dp.ErrBudget): a fraction outside (0, 1), a
// part left empty (too few rows for the fractions), a budget no candidate
// can spend.
func NewPlan(cfg Config, n int, loss losses.Loss, classes, dim int, b dp.Budget, seed uint64) (*Plan, error) {
	if loss == nil {
		return nil, fmt.Errorf("%w: no loss", ErrSelect)
	}
	k := loss.Outputs(classes)
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if cfg.Method.IsRule() {
		return nil, fmt.Errorf("%w: the rule (method %q, the zero Config's) runs no selection: private.Fit releases RuleSetting; a Plan is for %s or %s", ErrSelect, Rule, Holdout, RandomStopping)
	}
	if !slices.Contains(Methods(), cfg.Method) {
		return nil, fmt.Errorf("%w: method %q, want %s or %s", ErrSelect, cfg.Method, Holdout, RandomStopping)
	}
	if cfg.ValFrac == 0 {
		cfg.ValFrac = 0.25
		if cfg.Method == RandomStopping {
			cfg.ValFrac = 0.1
		}
	}
	if cfg.Method == Holdout && cfg.TuneFrac == 0 {
		cfg.TuneFrac = 0.2
	}
	if cfg.Method == RandomStopping && cfg.TuneFrac != 0 {
		return nil, fmt.Errorf("%w: a tuning fraction applies to a holdout selection; random stopping tunes on the training rows", ErrSelect)
	}
	if cfg.Method == Holdout && !check.OpenUnit(cfg.TuneFrac) {
		return nil, fmt.Errorf("%w: tuning fraction %v, want in (0, 1): the rest is released", ErrSelect, cfg.TuneFrac)
	}
	if !check.OpenUnit(cfg.ValFrac) {
		return nil, fmt.Errorf("%w: validation fraction %v, want in (0, 1)", ErrSelect, cfg.ValFrac)
	}
	if !(cfg.Eta == 0 || cfg.Eta >= minEta && cfg.Eta <= 1) {
		return nil, fmt.Errorf("%w: eta = %v, want 0 or in [%g, 1]", ErrSelect, cfg.Eta, minEta)
	}
	sb := b
	if cfg.Method == RandomStopping {
		sb.Delta = 0 // the runs are pure; a pure claim implies every delta
	}
	pl := &Plan{cfg: cfg, budget: b, settings: Settings(sb, k, dim), seed: seed, loss: loss, classes: classes, dim: dim}
	if cfg.MeanRuns == 0 {
		pl.cfg.MeanRuns = 10 * float64(len(pl.settings))
	}
	if _, err := tnbGamma(cfg.Eta, pl.cfg.MeanRuns); err != nil || !(pl.cfg.MeanRuns > 1) {
		return nil, fmt.Errorf("%w: mean number of runs %v, want in (1, 1e6] for eta = %v", ErrSelect, pl.cfg.MeanRuns, cfg.Eta)
	}
	runs := n
	if cfg.Method == Holdout {
		tuneIdx, relIdx, err := datasets.SplitIndex(n, 1-cfg.TuneFrac, seed^0x7e1d0)
		if err != nil || len(tuneIdx) == 0 || len(relIdx) == 0 {
			return nil, fmt.Errorf("%w: %d training rows cannot be split into tuning and release parts at tuning fraction %v", ErrSelect, n, cfg.TuneFrac)
		}
		// relIdx holds about (1 - TuneFrac) n rows: SplitIndex names its
		// parts train and test; here the larger one is released.
		pl.rel, runs = relIdx, len(tuneIdx)
		tr, val, err := ValidationSplit(runs, cfg.ValFrac, seed)
		if err != nil {
			return nil, fmt.Errorf("%w: the %d tuning rows (tuning fraction %v of %d training rows) cannot be split into runs and validation at fraction %v", ErrSelect, runs, cfg.TuneFrac, n, cfg.ValFrac)
		}
		pl.tune, pl.val = pick(tuneIdx, tr), pick(tuneIdx, val)
	} else {
		tr, val, err := ValidationSplit(n, cfg.ValFrac, seed)
		if err != nil {
			return nil, fmt.Errorf("%w: %d training rows cannot be split into runs and validation at fraction %v", ErrSelect, n, cfg.ValFrac)
		}
		pl.tune, pl.val, pl.rel = tr, val, tr
	}
	if cfg.Method == Holdout {
		r, err := pl.tuneRatio()
		if err != nil {
			return nil, err
		}
		if r >= release.Weak {
			pl.skip, pl.ratio = true, r
			pl.tune, pl.val, pl.rel = nil, nil, make([]int, n)
			for i := range pl.rel {
				pl.rel[i] = i
			}
		}
	}
	// Every candidate must accept the budget of its runs and, for a
	// holdout, of the release.
	for _, s := range pl.settings {
		m, err := release.Lookup(pureTwin(s.Mechanism))
		if err != nil {
			return nil, err
		}
		if err := m.CheckBudget(dp.Budget{Epsilon: pl.runEps()}); err != nil {
			return nil, err
		}
		if cfg.Method == Holdout {
			if m, err = release.Lookup(s.Mechanism); err == nil {
				err = m.CheckBudget(b)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return pl, nil
}

// pick returns idx[j] for each j of at.
func pick(idx, at []int) []int {
	out := make([]int, len(at))
	for r, j := range at {
		out[r] = idx[j]
	}
	return out
}

// runEps is the budget of one run: eps/(2 + eta) (Select).
func (pl *Plan) runEps() float64 { return runBudget(pl.budget.Epsilon, pl.cfg.Eta) }

// ReleaseBudget returns the budget the released weights' noise is
// calibrated to: a run's pure eps/(2 + eta) for random stopping (the best
// run is the release), the whole budget for a holdout (the chosen setting
// trained on the release rows). A forecast of the release reads it.
func (pl *Plan) ReleaseBudget() dp.Budget {
	if pl.cfg.Method == RandomStopping {
		return dp.Budget{Epsilon: pl.runEps()}
	}
	return pl.budget
}

// Settings returns the plan's candidates.
func (pl *Plan) Settings() []Setting { return slices.Clone(pl.settings) }

// ReleaseRows returns the positions, among the training rows, of the rows
// of the released fit.
func (pl *Plan) ReleaseRows() []int { return slices.Clone(pl.rel) }

// record returns the plan's record with the chosen candidate.
func (pl *Plan) record(chosen int) *Record {
	r := &Record{Method: pl.cfg.Method, Settings: pl.Settings(), Chosen: chosen, ValFrac: pl.cfg.ValFrac,
		Eta: pl.cfg.Eta, MeanRuns: pl.cfg.MeanRuns, TuneRows: len(pl.tune), ValRows: len(pl.val), ReleaseRows: len(pl.rel)}
	if pl.cfg.Method == Holdout {
		r.TuneFrac = pl.cfg.TuneFrac
	}
	if pl.skip {
		r.Skipped, r.TuneRatio = true, pl.ratio
	}
	return r
}

// Outcome is the result of Plan.Run.
type Outcome struct {
	// Release holds the released weights, their certificate (with the
	// selection in its ledger) and the statistics of the released run
	// (not private).
	Release *release.Outcome
	// Prepared is the chosen release (for its stability analysis; its
	// weights are used up).
	Prepared release.Prepared
	// Record is what the model file publishes about the selection.
	Record *Record
}

// Rows returns the rows of X and y at the positions idx.
func Rows(X *mat.Dense, y []float64, idx []int) (*mat.Dense, []float64) {
	_, d := X.Dims()
	Xs, ys := mat.NewDense(max(len(idx), 1), d, nil), make([]float64, len(idx))
	for r, i := range idx {
		Xs.SetRow(r, X.RawRowView(i))
		ys[r] = y[i]
	}
	if len(idx) == 0 {
		return nil, ys
	}
	return Xs, ys
}

// Run runs the selection on the training rows X, y (the rows of the plan's
// n, each of norm at most the kappa of base) and releases the chosen
// setting's fit. base holds the loss, the classes, kappa and the seed;
// each candidate's knobs are its mechanism's AutoScaled for the rows it
// trains on and the budget of its runs. notes are the certificate's notes
// about the rows; src is the noise source (nil: perturb.Secure()); log
// receives progress (nil: none).
//
// # Privacy
//
// Neighbours are replace-one on the n training rows, with the same
// settings and seed. The parts are functions of (n, fractions, seed): the
// differing row lies in exactly one of them.
//
// Holdout (parallel composition; McSherry 2009, "Privacy integrated
// queries", Theorem 4, in its adaptive form): the selection Select runs on
// the tuning and validation rows alone and is eps-DP with respect to them
// (its proof); the release of the chosen setting reads the release rows
// alone and is (eps, delta)-DP with respect to them for every setting. If
// the differing row is among the tuning or validation rows, the release is
// a fixed function of (choice, release rows), post-processing of an eps-DP
// choice; if it is among the release rows, the choice has the same law on
// both and, for each choice c, P[out in S | c] <= e^eps P'[out in S | c] +
// delta, so summing over c weighted by the common law of the choice gives
// (eps, delta). Only the chosen index leaves the selection: the runs'
// weights and scores are dropped.
//
// RandomStopping: Select's claim (Papernot & Steinke 2022, Theorem 2),
// pure eps-DP, on the runs' training rows and the validation rows.
func (pl *Plan) Run(ctx context.Context, X *mat.Dense, y []float64, base trainer.Config, notes []string, src perturb.Source, log logrus.FieldLogger) (*Outcome, error) {
	if log == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		log = l
	}
	if src == nil {
		src = perturb.Secure()
	}
	n, d := X.Dims()
	if pl.skip {
		return pl.release(ctx, X, y, pl.ruleIndex(), base, notes, src, log)
	}
	if want := len(pl.tune) + len(pl.val); pl.cfg.Method == Holdout && want+len(pl.rel) != n || pl.cfg.Method == RandomStopping && want != n {
		return nil, fmt.Errorf("%w: %d training rows, the plan was made for others", ErrSelect, n)
	}
	final := base
	base.Logger = nil // the runs' progress is not the release's
	Xt, yt := Rows(X, y, pl.tune)
	Xv, yv := Rows(X, y, pl.val)
	runBudget := dp.Budget{Epsilon: pl.runEps()}
	cands := make([]Candidate, len(pl.settings))
	for i, s := range pl.settings {
		mech := pureTwin(s.Mechanism)
		tu, err := release.LookupTuner(mech)
		if err != nil {
			return nil, err
		}
		cfg, _, err := tu.AutoScaled(base, len(pl.tune), d, runBudget, s.Scale)
		if err != nil {
			return nil, fmt.Errorf("%w: candidate %d (%s): %w", ErrSelect, i, s, err)
		}
		cands[i] = FromRows(s.String(), mech, release.Rows{X: Xt, Y: yt, Config: cfg, Notes: notes})
	}
	log.WithFields(logrus.Fields{"method": pl.cfg.Method, "candidates": len(cands), "tune rows": len(pl.tune), "validation rows": len(pl.val), "mean runs": pl.cfg.MeanRuns}).
		Info("selection: preparing the candidates")
	sel, err := Select(ctx, cands, Xv, yv, dp.Budget{Epsilon: pl.budget.Epsilon}, SelectOptions{Eta: pl.cfg.Eta, MeanRuns: pl.cfg.MeanRuns, Noise: src})
	if err != nil {
		return nil, err
	}
	log.WithField("chosen", pl.settings[sel.Index].String()).Info("selection: done")
	if pl.cfg.Method == RandomStopping {
		// The best run's weights are the release; Select certified them.
		return &Outcome{Release: &release.Outcome{Model: sel.Model, Certificate: sel.Certificate}, Prepared: sel.Prepared, Record: pl.record(sel.Index)}, nil
	}
	return pl.release(ctx, X, y, sel.Index, final, notes, src, log)
}

// release trains the chosen setting on the release rows with the whole
// budget and releases it.
func (pl *Plan) release(ctx context.Context, X *mat.Dense, y []float64, chosen int, base trainer.Config, notes []string, src perturb.Source, log logrus.FieldLogger) (*Outcome, error) {
	n, d := X.Dims()
	if pl.skip && len(pl.rel) != n {
		return nil, fmt.Errorf("%w: %d training rows, the plan was made for %d", ErrSelect, n, len(pl.rel))
	}
	rec := pl.record(chosen)
	s := pl.settings[chosen]
	m, err := release.Lookup(s.Mechanism)
	if err != nil {
		return nil, err
	}
	tu, err := release.LookupTuner(s.Mechanism)
	if err != nil {
		return nil, err
	}
	Xr, yr := Rows(X, y, pl.rel)
	cfg, _, err := tu.AutoScaled(base, len(pl.rel), d, pl.budget, s.Scale)
	if err != nil {
		return nil, err
	}
	log.WithFields(logrus.Fields{"mechanism": s.Mechanism, "lambda": cfg.Reg.Lambda, "rows": len(pl.rel)}).Info("selection: releasing the chosen setting on the release rows")
	p, err := m.Prepare(ctx, release.Rows{X: Xr, Y: yr, Config: cfg, Notes: notes}, pl.budget)
	if err != nil {
		return nil, err
	}
	out, err := p.Release(ctx, src, rec.Assumptions()...)
	if err != nil {
		return nil, err
	}
	if err := rec.Finish(out.Certificate); err != nil {
		return nil, err
	}
	return &Outcome{Release: out, Prepared: p, Record: rec}, nil
}

// HoldoutStep names the ledger entry of a holdout selection.
const HoldoutStep = "private selection of the setting on the tuning and validation rows (Select: the best of K runs by noisy validation accuracy, Papernot & Steinke 2022, Theorem 2), disjoint from the release rows"

// Rows labels of the ledger entries of a holdout selection: the parts are
// disjoint, so the claim is the largest part's total (parallel
// composition), not the sum of the entries.
const (
	TuningRows  = "tuning and validation rows"
	ReleaseRows = "release rows"
)

// Assumptions returns the not-covered notes a holdout selection adds to
// the release's certificate (none for random stopping, whose notes Select
// writes).
func (r *Record) Assumptions() []string {
	if r.Method != Holdout {
		return nil
	}
	if r.Skipped {
		return []string{fmt.Sprintf("the setting is the public rule's (%s), chosen without a selection: a holdout selection's runs on %g of the %d training rows would have had a noise ratio of %.3g (at least %g), too noisy to tell the candidates apart; the decision depends on public values only and costs nothing",
			r.Settings[r.Chosen], r.TuneFrac, r.ReleaseRows, r.TuneRatio, release.Weak)}
	}
	return []string{
		fmt.Sprintf("the setting was chosen privately (holdout selection, docs/DESIGN.md section 12) among %d candidates on %d tuning and %d validation rows, disjoint by position from the %d release rows: "+
			"by parallel composition the selection (eps, on its rows) and the release (on the release rows) together satisfy the claim; the candidates, the fractions (tuning %g, validation %g) and the law of the number of runs (eta = %g, E[K] = %g) are public",
			len(r.Settings), r.TuneRows, r.ValRows, r.ReleaseRows, r.TuneFrac, r.ValFrac, r.Eta, r.MeanRuns),
		"the floating-point sampling of the number of runs and of the candidate index of the selection lies outside the exact claim",
	}
}

// Finish adds the selection's ledger entry to the certificate of the
// released fit of a holdout selection, and labels the release's own
// entries with the rows they read: all taken from a ledger of the
// certificate's claim (parallel composition: the selection's rows and the
// release's are disjoint). An error means they do not fit in it.
func (r *Record) Finish(c *release.Certificate) error {
	if r.Method != Holdout || r.Skipped {
		return nil
	}
	l, err := dp.NewLedger(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, dp.Charge{Step: HoldoutStep, Mechanism: perturb.Laplace, Epsilon: c.Epsilon, Rows: TuningRows})
	if err != nil {
		return err
	}
	for _, ch := range c.Ledger {
		ch.Rows = ReleaseRows
		if _, err := l.Spend(ch); err != nil {
			return err
		}
	}
	c.Account(l)
	return nil
}

// ErrRecord is wrapped by every inconsistency Record.Check finds.
var ErrRecord = errors.New("selection: the selection record does not match its plan")

// Check recomputes the plan of a record from the public values of a fit (n
// training rows, the loss, the classes, dim inputs, the budget and the
// seed) and
// returns the chosen setting, the budget and number of rows of the
// released run, or an error wrapping ErrRecord naming what differs.
func (r *Record) Check(n int, loss losses.Loss, classes, dim int, b dp.Budget, seed uint64) (Setting, dp.Budget, int, error) {
	cfg := Config{Method: r.Method, TuneFrac: r.TuneFrac, ValFrac: r.ValFrac, Eta: r.Eta, MeanRuns: r.MeanRuns}
	pl, err := NewPlan(cfg, n, loss, classes, dim, b, seed)
	if err != nil {
		return Setting{}, dp.Budget{}, 0, fmt.Errorf("%w: %w", ErrRecord, err)
	}
	if r.Chosen < 0 || r.Chosen >= len(pl.settings) {
		return Setting{}, dp.Budget{}, 0, fmt.Errorf("%w: chosen candidate %d of %d", ErrRecord, r.Chosen, len(pl.settings))
	}
	want := pl.record(r.Chosen)
	if !reflect.DeepEqual(want, r) {
		return Setting{}, dp.Budget{}, 0, fmt.Errorf("%w: the record %+v, the plan %+v", ErrRecord, *r, *want)
	}
	rb := b
	if r.Method == RandomStopping {
		rb = dp.Budget{Epsilon: pl.runEps()}
	}
	return pl.settings[r.Chosen], rb, len(pl.rel), nil
}

// FinishSelected rewrites the certificate c of the run a random-stopping
// selection released (as its method rebuilds it at the run's budget) into
// the certificate Select writes: a verifier's counterpart of Select.
func (r *Record) FinishSelected(c *release.Certificate, b dp.Budget) error {
	if r.Method != RandomStopping {
		return nil
	}
	gamma, err := tnbGamma(r.Eta, r.MeanRuns)
	if err != nil {
		return err
	}
	return finishSelect(c, b.Epsilon, runBudget(b.Epsilon, r.Eta), r.Eta, gamma, r.MeanRuns, len(r.Settings), r.ValRows)
}
