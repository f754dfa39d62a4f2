package private

import (
	"fmt"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// Plan is a fit's settings, checked before any row is read: what Fit and a
// partitioned fit (package partition) derive from the schema, the budget
// and the options.
type Plan struct {
	Schema  datasets.Schema
	Budget  dp.Budget
	Options Options
	// Loss is the loss (Options.Trainer.Loss, or the default for the
	// classes) and Task its task.
	Loss losses.Loss
	Task losses.Task
	// Mode is the preprocessing.
	Mode preprocess.Mode
	// Method releases the weights; nil for a non-private fit.
	Method release.Method
	// EstimateBounds reports that the feature bounds are estimated
	// privately at BoundsEpsilon = BoundsShare * Budget.Epsilon before the
	// release, which gets Release: the rest of epsilon and all of delta.
	// Without an estimate Release is Budget.
	EstimateBounds bool
	BoundsEpsilon  float64
	Release        dp.Budget
	// publicMap reports that the numeric features are read on the public
	// log map (no estimate affordable; Plan.BoundsFor), which the rule
	// takes into account (useRule).
	publicMap bool
	// PCABudget is what the private principal components spend
	// (Options.PCA > 0): PCAShare of epsilon and of delta, after the
	// bounds' estimate and before the release; zero without them.
	PCABudget dp.Budget
	// ledger is the fit's account of Budget, opened by NewPlan: every
	// private step takes its charge from it as it runs (account.go), and
	// the certificate's claim is written from it.
	ledger *dp.Ledger
}

// NewPlan checks the settings of a fit. Errors wrap datasets.ErrSchema,
// dp.ErrBudget, release.ErrConfig or ErrOptions.
func NewPlan(schema datasets.Schema, budget dp.Budget, opts Options) (*Plan, error) {
	if m := opts.Method; m != nil && opts.Mechanism == "" {
		opts.Mechanism = m.Name()
	}
	pl := &Plan{Schema: schema, Budget: budget, Release: budget, Options: opts, Loss: opts.Trainer.Loss}
	pl.ledger, _ = dp.NewLedger(budget) // no charge yet: no refusal
	if pl.Loss == nil {
		pl.Loss = losses.Logistic{}
		if len(schema.Classes) > 2 {
			pl.Loss = losses.Softmax{}
		}
	}
	pl.Task = pl.Loss.Task()
	private := opts.Mechanism != "" || opts.Select != nil
	if err := pl.planBounds(); err != nil {
		return nil, err
	}
	if err := pl.planPCA(); err != nil {
		return nil, err
	}
	if opts.Select != nil {
		if err := opts.Select.Check(); err != nil {
			return nil, err
		}
		if opts.Mechanism != "" || opts.Auto {
			return nil, fmt.Errorf("%w: a private selection chooses the mechanism and the knobs; it excludes a named mechanism and the automatic knobs", ErrOptions)
		}
		if err := budget.Validate(); err != nil {
			return nil, err
		}
		if err := pl.Release.Validate(); err != nil {
			return nil, fmt.Errorf("the release's part of the budget after the bounds estimate: %w", err)
		}
		cfg := opts.Trainer
		cfg.Loss = pl.Loss
		if err := checkSelectable(cfg); err != nil {
			return nil, err
		}
	} else if private {
		m, err := lookupMethod(opts)
		if err != nil {
			return nil, err
		}
		if err := m.CheckBudget(budget); err != nil {
			return nil, err
		}
		if err := m.CheckBudget(pl.Release); err != nil {
			return nil, fmt.Errorf("the release's part of the budget after the bounds estimate: %w", err)
		}
		cfg := opts.Trainer
		cfg.Loss, cfg.Classes = pl.Loss, len(pl.Schema.Classes)
		if err := m.CheckConfig(cfg); err != nil {
			return nil, err
		}
		pl.Method = m
		if err := pl.checkStump(); err != nil {
			return nil, err
		}
	} else if budget != (dp.Budget{}) {
		return nil, fmt.Errorf("%w: a budget without a mechanism", dp.ErrBudget)
	}
	if err := schema.Validate(pl.Task); err != nil {
		return nil, err
	}

	switch {
	case opts.PrivacyID == "" && opts.MaxRowsPerID != 0:
		return nil, fmt.Errorf("%w: %d rows per privacy ID without a privacy-ID column", ErrOptions, opts.MaxRowsPerID)
	case opts.PrivacyID != "" && opts.MaxRowsPerID < 1:
		return nil, fmt.Errorf("%w: privacy ID %q with %d rows per ID, want c >= 1", ErrOptions, opts.PrivacyID, opts.MaxRowsPerID)
	case opts.PrivacyID != "" && opts.PrivacyID == schema.Label:
		return nil, fmt.Errorf("%w: the privacy-ID column %q is the label", datasets.ErrSchema, opts.PrivacyID)
	case !check.HalfOpenUnit(opts.TestFrac):
		return nil, fmt.Errorf("%w: test fraction %v, want in [0, 1)", ErrOptions, opts.TestFrac)
	case private && opts.Stratify:
		return nil, fmt.Errorf("%w: a stratified split depends on the labels and is refused for a private fit", ErrOptions)
	case opts.HashBuckets != 0 && (opts.HashBuckets < 2 || opts.HashBuckets > datasets.MaxHashBuckets):
		return nil, fmt.Errorf("%w: %d buckets of a text column, want 2 to %d", ErrOptions, opts.HashBuckets, datasets.MaxHashBuckets)
	case opts.Project < 0:
		return nil, fmt.Errorf("%w: a projection to %d dimensions", ErrOptions, opts.Project)
	case opts.Auto && !private:
		return nil, fmt.Errorf("%w: the automatic knobs are calibrated for a release; give a mechanism", ErrOptions)
	case private && pl.Task != losses.Regression && schema.Classes == nil:
		return nil, fmt.Errorf("%w: a private fit needs the classes declared in advance (reading them from the rows would leak them)", datasets.ErrSchema)
	}
	return pl, nil
}

// setRelease sets Release to what the private steps before the release
// leave of the budget: epsilon less the bounds' BoundsEpsilon and the
// principal components' PCABudget.Epsilon, delta less PCABudget.Delta,
// each rounded down (dp.Rest) so that the ledger's charges never add up
// to more than the budget. Epsilon is rounded down in the order of the
// certificate's composition (modelfile.ComposePipeline): the components'
// part first, then the bounds' from that rest, each time, so that the
// release fits in both roundings (with one, eps = 2 less 0.4 and 0.2 left
// 1.4, which the composition found an ulp too much). It is the one place
// Release is derived, so that taking a step back (the bounds of an
// all-categorical table) gives back that step's part only.
func (pl *Plan) setRelease() {
	pl.Release = dp.Budget{
		Epsilon: dp.Rest(dp.Rest(pl.Budget.Epsilon, pl.PCABudget.Epsilon), pl.BoundsEpsilon),
		Delta:   dp.Rest(pl.Budget.Delta, pl.PCABudget.Delta),
	}
}

// Config returns the trainer settings of a run on n training rows of dim
// model inputs with the trainer seed seed: the options' knobs with the loss,
// the classes, kappa = 1 (the preprocessing ends in the unit ball), and the
// method's automatic knobs with Options.Auto. A private run's progress log
// (objective, gradient norm, clipped rows) is a statistic of the data: it
// is kept only with Options.Diagnostics. A Plan that NewPlan did not make
// (nil, without a loss, or with Auto but no method) gives an error wrapping
// ErrOptions.
func (pl *Plan) Config(n, dim int, seed uint64) (trainer.Config, error) {
	switch {
	case pl == nil || pl.Loss == nil:
		return trainer.Config{}, fmt.Errorf("%w: a Plan without a loss (use NewPlan)", ErrOptions)
	case pl.Options.Auto && pl.Method == nil:
		return trainer.Config{}, fmt.Errorf("%w: a Plan with automatic knobs but no release method (use NewPlan)", ErrOptions)
	}
	cfg := pl.Options.Trainer
	cfg.Loss, cfg.Kappa, cfg.Seed, cfg.Logger = pl.Loss, 1, seed, pl.Options.Logger
	cfg.Classes = len(pl.Schema.Classes)
	if (pl.Method != nil || pl.Options.Select != nil) && !pl.Options.Diagnostics {
		cfg.Logger = nil
	}
	if !pl.Options.Diagnostics {
		// Nothing reads the objective and gradient norm of the trained
		// weights: skip the pass over the data that computes them.
		cfg.SkipObjective = true
	}
	if pl.Options.Auto {
		tu, ok := pl.Method.(release.Tuner)
		if !ok {
			return cfg, fmt.Errorf("%w: the release method %s has no automatic knobs (release.Tuner)", ErrOptions, pl.Method.Name())
		}
		var err error
		if cfg, _, err = tu.AutoScaled(cfg, n, dim, pl.Release, autoknobs.GroupScale(pl.Group())); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// Group returns the number of rows of one unit of privacy: MaxRowsPerID
// for a fit per privacy ID, 1 (a row) otherwise. The automatic knobs are
// the rule's at the unit's sensitivity, c times a row's: lambda is
// autoknobs.GroupScale(c) times the rule's for rows (docs/DESIGN.md, section
// 12.1), for the public rule and a named mechanism alike.
func (pl *Plan) Group() int {
	if pl.Options.PrivacyID != "" {
		return max(pl.Options.MaxRowsPerID, 1)
	}
	return 1
}

// CheckRows refuses a private fit's delta at or above 1/n for the n units
// of privacy among train training rows (dp.Budget.CheckRows): the rows, or
// for a fit per privacy ID the train/c privacy IDs (Group). A fit calls it
// once the split is known and before any noise is drawn; a partitioned
// fit (package partition) calls it with its layout. The count is public
// under the replace-one relations (neighbours have as many rows, and as
// many privacy IDs), so the refusal reveals nothing. A delta below 1/n
// but above WarnDeltaRows/n is logged as a warning (dp.Budget.DeltaWarning)
// to Options.Logger. A fit without a mechanism or selection is not
// checked. Errors wrap dp.ErrBudget.
func (pl *Plan) CheckRows(train int) error {
	if pl.Method == nil && pl.Options.Select == nil {
		return nil
	}
	n, unit := modelfile.Units(train, pl.Options.PrivacyID != "", pl.Group())
	if err := pl.Budget.CheckRows(n, unit); err != nil {
		return err
	}
	if w := pl.Budget.DeltaWarning(n, unit); w != "" {
		pl.log().Warn(w)
	}
	return nil
}

// stump reports whether the plan releases a decision stump, which reads
// the rows of the stump map (release.TakesStumpRows).
func (pl *Plan) stump() bool { return pl.Method != nil && release.TakesStumpRows(pl.Method) }

// checkStump refuses, for a stump, what its map cannot have: a
// preprocessing other than bounds (its threshold grid lies in the bounds'
// mapped range [-1, 1]), a random projection or principal components
// (the stump decides on one mapped feature, which they mix), and a fit per
// privacy ID (the stump's utility has sensitivity 1 for one row, a privacy
// ID moves up to MaxRowsPerID rows, and the group sensitivity is not
// implemented). Errors wrap ErrOptions.
func (pl *Plan) checkStump() error {
	if !pl.stump() {
		return nil
	}
	opts := pl.Options
	switch {
	case pl.Mode != preprocess.Bounds:
		return fmt.Errorf("%w: the stump's thresholds are a grid of the bounds' range: it needs the preprocessing bounds, not %s", ErrOptions, pl.Mode)
	case opts.Project > 0 || opts.PCA > 0:
		return fmt.Errorf("%w: the stump decides on one mapped feature: leave out the random projection (%d) and principal components (%d)", ErrOptions, opts.Project, opts.PCA)
	case opts.PrivacyID != "":
		return fmt.Errorf("%w: a stump per privacy ID (up to %d rows each) needs a group sensitivity, which is not implemented", ErrOptions, opts.MaxRowsPerID)
	}
	return nil
}

// stumpRule reports whether the public rule releases a decision stump for
// n training rows of p mapped features: selection.StumpFirst, or on the
// public log map (no feature scale estimated) wherever the stump is
// useful (selection.StumpUseful).
func (pl *Plan) stumpRule(n, p int) bool {
	k := pl.Loss.Outputs(len(pl.Schema.Classes))
	if pl.publicMap {
		return selection.StumpUseful(pl.Release, k, n, p)
	}
	return selection.StumpFirst(pl.Release, k, n, p)
}

// useStump makes pl the fit of a decision stump, which the rule chose
// (selection.StumpFirst) from public values (the release's budget, the
// number of outputs, of training rows and of mapped features) before the
// rows are mapped, at no cost.
func (pl *Plan) useStump() error {
	if err := pl.useMechanism(perturb.Stump); err != nil {
		return err
	}
	return pl.checkStump()
}

// useRule makes pl the fit of selection.RuleSetting for models of dim
// inputs trained on n rows (DP-SGD where selection.DPSGDFirst says so,
// on the public log map too): its mechanism with the automatic knobs, chosen
// from public values (the release's budget, the loss, the number of
// outputs, n, dim) before any row is read for training, at no cost.
func (pl *Plan) useRule(n, dim int) error {
	st := selection.RuleSetting(pl.Release, pl.Loss, pl.Loss.Outputs(len(pl.Schema.Classes)), n, dim, pl.Group())
	if pl.publicMap && pl.Group() <= 1 && st.Mechanism != perturb.DPSGD {
		// The public log map squashes the features: objective
		// perturbation's family (selection.ObjectiveSetting), where the
		// rule does not release DP-SGD (selection.DPSGDFirst).
		st = selection.ObjectiveSetting(pl.Release, pl.Loss.Outputs(len(pl.Schema.Classes)), dim)
	}
	return pl.useMechanism(st.Mechanism)
}

// useMechanism makes pl the fit of the mechanism mech, which a public rule
// chose, with the automatic knobs: mech's budget and training settings
// are checked first.
func (pl *Plan) useMechanism(mech dp.Mechanism) error {
	m, err := release.Lookup(mech)
	if err != nil {
		return err
	}
	if err := m.CheckBudget(pl.Release); err != nil {
		return err
	}
	cfg := pl.Options.Trainer
	cfg.Loss, cfg.Classes = pl.Loss, len(pl.Schema.Classes)
	if err := m.CheckConfig(cfg); err != nil {
		return err
	}
	pl.Method = m
	pl.Options.Mechanism, pl.Options.Method, pl.Options.Auto, pl.Options.Select = mech, m, true, nil
	return nil
}

// checkSelectable refuses training settings that a selection would
// override: it chooses lambda, the clipping norm, the schedule and the
// mechanism itself, and its candidates run with no other knob.
func checkSelectable(cfg trainer.Config) error {
	var bad []string
	if cfg.Reg.Lambda != 0 || cfg.Reg.L1Ratio != 0 {
		bad = append(bad, "lambda or an l1 ratio")
	}
	if cfg.Clip != 0 || cfg.Dropout != 0 && cfg.Dropout != 1 || cfg.Radius != 0 || cfg.Average || cfg.Tolerance != 0 || cfg.Model != nil {
		bad = append(bad, "clipping, dropout, a radius, averaging, a tolerance or a user model")
	}
	if cfg.Loss != nil && cfg.Loss.Task() == losses.Regression {
		bad = append(bad, "a regression loss (the rule and the selections are for classification: name a mechanism)")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: without a mechanism the setting is chosen for you (the rule or a selection), knobs included; the options set %s", ErrOptions, strings.Join(bad, " and "))
	}
	return nil
}

// log returns the options' logger, or a silent one.
func (pl *Plan) log() logrus.FieldLogger {
	if pl.Options.Logger != nil {
		return pl.Options.Logger
	}
	l := logrus.New()
	l.SetLevel(logrus.PanicLevel)
	return l
}
