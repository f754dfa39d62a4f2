package selection

import (
	"context"
	"fmt"
	"slices"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/forecast"
	"github.com/stabpriv/stabpriv/trainer"
)

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
// an unknown method, or the rule (which selects nothing, so it takes no
// tuning or validation fraction and no law of the number of runs: those
// go with Holdout or RandomStopping) with a fraction or a law of the
// number of runs. A Plan's fractions and law are checked
// by NewPlan.
func (c Config) Check() error {
	switch {
	case c.Method.IsRule() && c != (Config{Method: c.Method}):
		return fmt.Errorf("%w: the rule (%q) takes no fraction and no law of the number of runs (%+v); give them with %s or %s", ErrSelect, Rule, c, Holdout, RandomStopping)
	case !c.Method.IsRule() && !slices.Contains(Methods(), c.Method):
		return fmt.Errorf("%w: method %q, want %s, %s or %s", ErrSelect, c.Method, Rule, Holdout, RandomStopping)
	}
	return nil
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
	f, err := forecast.Predict(ms, trainer.Config{Loss: pl.loss, Classes: pl.classes}, len(pl.tune), pl.dim, dp.Budget{Epsilon: pl.runEps()})
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
// budget of one run, is at least forecast.Weak, the plan releases the
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
		if r >= forecast.Weak {
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
