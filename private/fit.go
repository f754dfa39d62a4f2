package private

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrOptions reports options a fit cannot use.
var ErrOptions = errors.New("private: invalid options")

// Options configures Fit. Every zero value is documented.
type Options struct {
	// Mechanism names the release method (release.Lookup): an
	// output-perturbation mechanism of package perturb, or objective or
	// amp. The empty string means a non-private fit: the trained weights
	// are returned as they are, with no certificate.
	Mechanism perturb.Mechanism
	// Noise is the noise source of the release. Nil means perturb.Secure(),
	// the only source whose release is private; perturb.Seeded gives a
	// reproducible release whose certificate says it is not private and
	// publishes the seed.
	Noise perturb.Source
	// Preprocess maps raw features to model inputs. The empty value means
	// Bounds when the schema declares bounds or the fit is private (the
	// bounds are then estimated, BoundsShare), and Standardize for a
	// non-private fit without bounds.
	Preprocess preprocess.Mode
	// BoundsShare is the share of the budget's epsilon that a private fit
	// whose schema declares no bounds spends on estimating them from the
	// training rows (privbounds.Estimate), in (0, 1): the release gets the
	// rest of epsilon and all of delta, and the certificate's ledger lists
	// both. Zero means DefaultBoundsShare. Declared bounds (Schema.Bounds,
	// Schema.All) cost nothing and leave it unused.
	BoundsShare float64
	// BoundsMethod chooses the private estimate of a fit without declared
	// bounds: BoundsCentres (the zero value) estimates a centre and a
	// spread per column and reads it on the log scale
	// (privbounds.EstimateCentres), BoundsRanges the ranges when the rows
	// pay for them (privbounds.Estimate, linear; the default of earlier
	// versions), the centres otherwise. Both fall back to the public log
	// map when the rows pay for neither (Plan.BoundsFor).
	BoundsMethod BoundsMethod
	// HashBuckets is the number of buckets of a text column: a feature
	// column that the fit finds to hold mostly text cells (for a private
	// fit without declared bounds, privately: privbounds.EstimateCentres;
	// for a non-private fit, by counting) and that the schema does not
	// declare categorical is one-hot encoded by hashing its cells
	// (datasets.Hashed). Zero means datasets.DefaultHashBuckets.
	HashBuckets int
	// Project, when positive, projects every mapped row to Project
	// dimensions by a seeded random projection (preprocess.Projection,
	// its seed Seed) before the unit-ball map: a public, data-independent
	// per-row map at no privacy cost, for data with many more features
	// than rows. It must not exceed the number of mapped features. Zero
	// means none, unless ProjectAuto.
	Project int
	// ProjectAuto, with Project 0, projects by the public rule
	// preprocess.AutoProjectDim from the number of training rows, the
	// number of mapped features, the model's outputs and the release's
	// epsilon: k dimensions when the mapped features outnumber the training
	// rows, none otherwise. The rule reads no row, so it costs nothing; the
	// model file records the projection like a given one. The train command
	// sets it unless --project is given.
	ProjectAuto bool
	// PCA, when positive, projects every mapped row (after Project, if
	// any) on PCA private principal directions before the unit-ball map:
	// Analyze Gauss (package dppca) on the training rows clip_1(z), paid
	// from the budget (PCAShare), the directions written in the model
	// file. It needs a private fit with delta > 0 (Analyze Gauss is
	// (eps, delta)-DP) and at most as many directions as mapped features;
	// it turns ProjectAuto off (the directions are the dimension
	// reduction; give Project for a random projection before them). Zero
	// means none.
	PCA int
	// PCAShare is the share of the budget, of epsilon and of delta alike,
	// that the principal components spend, in (0, 1); with the bounds'
	// share of epsilon it must leave the release a positive part. Zero
	// means DefaultPCAShare; it needs PCA.
	PCAShare float64
	// TestFrac in [0, 1) is the share of rows held out for testing; 0 trains
	// on every row.
	TestFrac float64
	// Seed seeds the split (by row position only), the permutations of SGD
	// and the dropout masks. It is published in the certificate.
	Seed uint64
	// Stratify splits within each class, keeping the class proportions.
	// The split then depends on the labels, so it is refused for a private
	// fit.
	Stratify bool
	// Trainer holds the training knobs (loss, elastic net, schedule, step,
	// passes, batch, clipping, dropout, averaging, engine). Fit sets its
	// Classes (from the schema), Kappa (1, enforced by the preprocessing),
	// Seed and Logger. A nil Loss means logistic for two classes and
	// softmax for more.
	Trainer trainer.Config
	// Auto chooses the knobs by the release method's rule from public
	// values alone (release.Tuner.Auto: for output perturbation lambda, the
	// clipping norm, the schedule and l1 ratio 0 by AutoKnobs; for
	// objective perturbation and AMP lambda), overriding the values in
	// Trainer. It needs a Mechanism. Per privacy ID the rule is taken at
	// the group's sensitivity: lambda is release.GroupScale(MaxRowsPerID)
	// times AutoKnobs' (Plan.Group).
	Auto bool
	// Diagnostics computes non-private statistics of the run (Released.
	// Diagnostics): metrics of the trained and released weights on both
	// splits, the run's statistics. They are not covered by any claim.
	Diagnostics bool
	// Select, with no Mechanism, makes the fit private with the setting
	// (mechanism, lambda, clipping norm) of the public rule
	// (selection.RuleSetting) at no cost, for selection.Rule and the zero
	// Config (the train command's default), or chosen by a private
	// selection inside the budget (selection.Plan) for selection.Holdout
	// and selection.RandomStopping.
	// Nil with no Mechanism means a non-private fit. It excludes Mechanism
	// and Auto: a mechanism named by the caller is used as named, at no
	// extra cost.
	Select *selection.Config
	// PrivacyID names the column that holds each row's privacy ID (a user,
	// say): the unit of privacy becomes all the rows of one ID, of which at
	// most MaxRowsPerID are kept (datasets.BoundContributions). The column
	// is not a feature. Only a partitioned fit (partition.Fit, with one
	// partition or more) trains per privacy ID; Fit refuses it. The empty
	// string means the unit of privacy is a row.
	PrivacyID string
	// MaxRowsPerID is c >= 1, the number of rows kept (and padded to) per
	// privacy ID; it needs PrivacyID. Zero without PrivacyID.
	MaxRowsPerID int
	// Logger receives progress. Nil means silent.
	Logger logrus.FieldLogger
}

// BoundsMethod names a private estimate of the feature bounds
// (Options.BoundsMethod).
type BoundsMethod string

const (
	// BoundsCentres is a centre and a spread per column, on the log scale.
	BoundsCentres BoundsMethod = "centres"
	// BoundsRanges is each column's range on a power-of-two grid, linear,
	// when the rows pay for it.
	BoundsRanges BoundsMethod = "ranges"
)

// DefaultBoundsShare is the share of epsilon a private fit without declared
// bounds spends on estimating them when Options.BoundsShare is zero: enough
// for the coarse ranges of a few columns on thousands of rows, little
// enough to leave the release most of the budget.
const DefaultBoundsShare = 0.1

// DefaultPCAShare is the share of epsilon and of delta that the private
// principal components spend when Options.PCAShare is zero.
const DefaultPCAShare = 0.2

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
}

// NewPlan checks the settings of a fit. Errors wrap datasets.ErrSchema,
// dp.ErrBudget, release.ErrConfig or ErrOptions.
func NewPlan(schema datasets.Schema, budget dp.Budget, opts Options) (*Plan, error) {
	pl := &Plan{Schema: schema, Budget: budget, Release: budget, Options: opts, Loss: opts.Trainer.Loss}
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
		m, err := release.Lookup(opts.Mechanism)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
		if err := m.CheckBudget(budget); err != nil {
			return nil, err
		}
		if err := m.CheckBudget(pl.Release); err != nil {
			return nil, fmt.Errorf("the release's part of the budget after the bounds estimate: %w", err)
		}
		cfg := opts.Trainer
		cfg.Loss = pl.Loss
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

// planBounds chooses the preprocessing (Options.Preprocess, or its
// default) and whether the bounds are estimated, and splits the budget:
// a private fit in Bounds mode whose schema declares no bounds spends
// BoundsShare of epsilon on the estimate. A share outside (0, 1), which
// leaves nothing for the estimate or for the release, is an error
// wrapping dp.ErrBudget.
func (pl *Plan) planBounds() error {
	private := pl.Options.Mechanism != "" || pl.Options.Select != nil
	declared := pl.Schema.Declared()
	pl.Mode = pl.Options.Preprocess
	switch {
	case pl.Mode != "":
	case declared || private:
		pl.Mode = preprocess.Bounds
	default:
		pl.Mode = preprocess.Standardize
	}
	if err := pl.Mode.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	share := pl.Options.BoundsShare
	if share != 0 && (!private || declared || pl.Mode != preprocess.Bounds) {
		return fmt.Errorf("%w: a bounds share of %v, but no bounds are estimated (they are estimated for a private fit in the preprocessing bounds without declared bounds)", ErrOptions, share)
	}
	switch m := pl.Options.BoundsMethod; {
	case m != "" && m != BoundsCentres && m != BoundsRanges:
		return fmt.Errorf("%w: bounds method %q, want %s or %s", ErrOptions, m, BoundsCentres, BoundsRanges)
	case m != "" && (!private || declared || pl.Mode != preprocess.Bounds):
		return fmt.Errorf("%w: a bounds method (%s), but no bounds are estimated", ErrOptions, m)
	}
	if !private || declared || pl.Mode != preprocess.Bounds {
		return nil
	}
	if share == 0 {
		share = DefaultBoundsShare
	}
	if !check.OpenUnit(share) {
		return fmt.Errorf("%w: bounds share %v of eps = %v: want in (0, 1), so that both the bounds estimate and the release get a positive part of the budget", dp.ErrBudget, share, pl.Budget.Epsilon)
	}
	pl.EstimateBounds = true
	pl.BoundsEpsilon = share * pl.Budget.Epsilon
	pl.setRelease()
	if !(pl.BoundsEpsilon > 0) || !(pl.Release.Epsilon > 0) {
		return fmt.Errorf("%w: bounds share %v of eps = %v leaves eps = %v for the bounds and %v for the release, want both > 0", dp.ErrBudget, share, pl.Budget.Epsilon, pl.BoundsEpsilon, pl.Release.Epsilon)
	}
	lap, err := perturb.Lookup(perturb.Laplace)
	if err != nil {
		return err
	}
	if err := lap.CheckBudget(pl.BoundsEpsilon, 0); err != nil {
		return fmt.Errorf("%w: the bounds estimate at eps = %v (share %v of %v): %w", dp.ErrBudget, pl.BoundsEpsilon, share, pl.Budget.Epsilon, err)
	}
	return nil
}

// planPCA checks the private principal components (Options.PCA) and
// takes their part of the budget: PCAShare of epsilon and of delta, the
// release keeping the rest. Errors wrap ErrOptions (a negative k, a share
// without components, a fit that is not private) or dp.ErrBudget (no
// delta, or a share that leaves nothing for the components or the
// release).
func (pl *Plan) planPCA() error {
	opts := pl.Options
	share := opts.PCAShare
	switch {
	case opts.PCA < 0:
		return fmt.Errorf("%w: %d principal components, want k >= 1 (0 for none)", ErrOptions, opts.PCA)
	case opts.PCA == 0 && share != 0:
		return fmt.Errorf("%w: a principal components share of %v without principal components", ErrOptions, share)
	case opts.PCA == 0:
		return nil
	case opts.Mechanism == "" && opts.Select == nil:
		return fmt.Errorf("%w: the private principal components spend a budget: they need a private fit (a mechanism or a selection, with eps and delta)", ErrOptions)
	case opts.PrivacyID != "":
		return fmt.Errorf("%w: the private principal components are for a single fit per row, not per privacy ID", ErrOptions)
	case !(pl.Budget.Delta > 0):
		return fmt.Errorf("%w: the private principal components (Analyze Gauss, the Gaussian mechanism) are (eps, delta)-DP and need delta > 0; a pure eps budget cannot pay for them", dp.ErrBudget)
	}
	if share == 0 {
		share = DefaultPCAShare
	}
	if !check.OpenUnit(share) {
		return fmt.Errorf("%w: principal components share %v: want in (0, 1), so that both the components and the release get a positive part of the budget", dp.ErrBudget, share)
	}
	b := dp.Budget{Epsilon: share * pl.Budget.Epsilon, Delta: share * pl.Budget.Delta}
	rel := dp.Budget{Epsilon: dp.Rest(pl.Release.Epsilon, b.Epsilon), Delta: dp.Rest(pl.Release.Delta, b.Delta)}
	if !(b.Epsilon > 0 && b.Delta > 0) || !(rel.Epsilon > 0 && rel.Delta > 0) {
		return fmt.Errorf("%w: principal components share %v of (eps, delta) = (%v, %v) leaves (%v, %v) for them and (%v, %v) for the release (after the bounds' eps = %v), want all > 0",
			dp.ErrBudget, share, pl.Budget.Epsilon, pl.Budget.Delta, b.Epsilon, b.Delta, rel.Epsilon, rel.Delta, pl.BoundsEpsilon)
	}
	if _, err := perturb.AnalyticGaussianSigma(b.Epsilon, b.Delta, dppca.Sensitivity); err != nil {
		return fmt.Errorf("%w: the principal components at (%v, %v): %w", dp.ErrBudget, b.Epsilon, b.Delta, err)
	}
	pl.PCABudget = b
	pl.setRelease()
	return nil
}

// setRelease sets Release to what the private steps before the release
// leave of the budget: epsilon less the bounds' BoundsEpsilon and the
// principal components' PCABudget.Epsilon, delta less PCABudget.Delta,
// each rounded down (dp.Rest) so that the ledger's charges never add up
// to more than the budget. It is the one place Release is derived, so
// that taking a step back (the bounds of an all-categorical table) gives
// back that step's part only.
func (pl *Plan) setRelease() {
	pl.Release = dp.Budget{
		Epsilon: dp.Rest(pl.Budget.Epsilon, pl.BoundsEpsilon, pl.PCABudget.Epsilon),
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
		tu, err := release.LookupTuner(pl.Method.Name())
		if err != nil {
			return cfg, err
		}
		if cfg, _, err = tu.AutoScaled(cfg, n, dim, pl.Release, release.GroupScale(pl.Group())); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// Group returns the number of rows of one unit of privacy: MaxRowsPerID
// for a fit per privacy ID, 1 (a row) otherwise. The automatic knobs are
// the rule's at the unit's sensitivity, c times a row's: lambda is
// release.GroupScale(c) times the rule's for rows (docs/DESIGN.md, section
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

// Fit runs the certified pipeline on the raw table: it parses the rows
// against the schema, splits them by position, maps them with the public
// preprocessing, and hands them to the release method of opts.Mechanism,
// which trains (or minimizes) and releases within the budget; without a
// mechanism the trained weights are returned as they are.
//
// The guarantee is about the table: for two tables that differ in one row
// (modelfile.TableNeighbours), the released weights and everything else in
// the Released but Diagnostics satisfy the budget's (eps, delta)-DP, with
// the not-covered list of the certificate naming what is outside
// (Standardize's statistics, with a warning). The steps between the file
// and the release are inside the proof because each is a per-row map or
// depends only on public values:
//   - the split depends only on (n, TestFrac, Seed), so replacing one row
//     of the table replaces at most one training row (datasets.SplitIndex);
//   - the classes, hence K and the release dimension, come from the schema;
//     a row whose label is not declared becomes a null row, the zero vector
//     with the bias zero too, whose loss gradient is zero at every w: it
//     keeps n public and is as good a neighbour as any other row;
//   - Bounds and None are per-row maps with public constants that end in
//     the unit ball, so kappa = 1 holds for every row;
//   - without declared bounds, a private fit in Bounds mode first estimates
//     them from the training rows at BoundsShare * eps (privbounds.Estimate,
//     eps_b-DP) and releases at the rest of the budget with those bounds
//     as public constants: the bounds and the weights together are
//     (eps, delta)-DP by basic composition with an adaptively chosen second
//     step (docs/DESIGN.md, section 6); the certificate lists the bounds
//     and both charges (modelfile.ComposeEstimate);
//   - the number of passes and every step size are fixed before training,
//     and the Auto knobs depend only on (n, d, K, eps, delta, mechanism).
//
// Errors: those of NewPlan, datasets.ErrFormat for a table outside the
// domain of the guarantee, or the error of the release method, all before
// anything is released.
func Fit(ctx context.Context, t *datasets.Table, schema datasets.Schema, budget dp.Budget, opts Options) (*modelfile.Released, error) {
	var observed []string
	if opts.Mechanism == "" && opts.Select == nil && t != nil && slices.Contains(t.Columns, schema.Label) && (opts.Trainer.Loss == nil || opts.Trainer.Loss.Task() != losses.Regression) {
		// A non-private fit may take its classes, hence its default loss,
		// from the rows.
		observed = t.LabelValues(schema.Label)
		if schema.Classes == nil {
			schema.Classes = observed
			if opts.Trainer.Loss != nil && opts.Trainer.Loss.Task() == losses.Binary && len(observed) != 2 {
				return nil, fmt.Errorf("%w: binary label column %q has %d classes (%v), want 2", datasets.ErrSchema, schema.Label, len(observed), observed)
			}
			if len(observed) < 2 {
				return nil, fmt.Errorf("%w: label column %q has a single class", datasets.ErrSchema, schema.Label)
			}
		}
	}
	pl, err := NewPlan(schema, budget, opts)
	if err != nil {
		return nil, err
	}
	if opts.PrivacyID != "" {
		return nil, fmt.Errorf("%w: a fit per privacy ID (%q) runs as a partitioned fit, with one partition or more (partition.Fit)", ErrOptions, opts.PrivacyID)
	}
	rows, err := pl.prepare(t)
	if err != nil {
		return nil, err
	}
	n, dim := rows.X.Dims()
	if pl.Options.Select != nil && pl.Options.Select.Method.IsRule() {
		if err := pl.useRule(n, dim); err != nil {
			return nil, err
		}
	}
	opts = pl.Options // the rule names its mechanism
	out := &modelfile.Released{
		Schema:        modelfile.PublicSchema(pl.Schema),
		Preprocessing: rows.prep,
		Split:         modelfile.SplitInfo{TestFrac: opts.TestFrac, Seed: opts.Seed, Stratified: opts.Stratify, Rows: rows.enc.N, TrainRows: n},
		AutoKnobs:     opts.Auto,
	}
	cfg, err := pl.Config(n, dim, opts.Seed)
	if err != nil {
		return nil, err
	}
	if w := release.DropoutWarning(cfg); w != "" {
		pl.log().Warn(w)
	}
	notes, err := out.PipelineNotes(pl.Task)
	if err != nil {
		return nil, err
	}
	pl.log().WithFields(logrus.Fields{"rows": rows.enc.N, "train": n, "d": dim, "preprocess": pl.Mode, "mechanism": opts.Mechanism}).Debug("private: rows prepared")
	var diag *modelfile.Diagnostics
	if opts.Diagnostics {
		diag = &modelfile.Diagnostics{NullRows: countTrue(rows.null)}
		if pl.Method == nil && opts.Select == nil {
			diag.Classes = observed
		}
		if pl.Task != losses.Regression {
			diag.MajorityTrain = majority(rows.y, rows.null)
			ty, tn := make([]float64, len(rows.testIdx)), make([]bool, len(rows.testIdx))
			for k, i := range rows.testIdx {
				ty[k], tn[k] = rows.enc.Y[i], rows.enc.Null[i]
			}
			diag.MajorityTest = majority(ty, tn)
		}
		out.Diagnostics = diag
	}
	if pl.Options.Select != nil {
		return fitSelect(ctx, pl, rows, cfg, notes, out)
	}
	if pl.Method == nil {
		return fitClear(ctx, pl, rows, cfg, notes, out)
	}
	p, err := pl.Method.Prepare(ctx, release.Rows{X: rows.X, Y: rows.y, Config: cfg, Notes: notes}, pl.Release)
	if err != nil {
		return nil, err
	}
	var test *evalRows
	if diag != nil {
		if test, err = rows.test(); err != nil {
			return nil, err
		}
		err := p.Trained(ctx, func(m *trainer.Model, _ trainer.Stats) {
			diag.TrainedTrain = evaluate(m, pl.Task, rows.X, rows.y, rows.null)
			diag.TrainedTest = test.evaluate(m, pl.Task)
		})
		if err != nil {
			return nil, err
		}
	}
	rel, err := p.Release(ctx, opts.Noise)
	if err != nil {
		return nil, err
	}
	rel.Certificate.Neighbouring = out.Neighbours()
	if err := pl.compose(rel.Certificate, rows.prep); err != nil {
		return nil, err
	}
	out.Private = rel.Certificate.Private && pl.Mode.Inside()
	out.Model, out.Certificate, out.Stability = rel.Model, rel.Certificate, p.Stability()
	if diag != nil {
		diag.Stats = rel.Stats
		diag.ReleasedTrain = evaluate(out.Model, pl.Task, rows.X, rows.y, rows.null)
		diag.ReleasedTest = test.evaluate(out.Model, pl.Task)
	}
	return out, nil
}

// compose turns the certificate of the release into the pipeline's: the
// private steps before the release (the bounds' estimate, the principal
// components) in the ledger and the claim the whole budget
// (modelfile.ComposePipeline).
func (pl *Plan) compose(c *release.Certificate, prep *preprocess.RowMap) error {
	return modelfile.ComposePipeline(c, prep, pl.Budget, pl.BoundsEpsilon, pl.PCABudget)
}

// stump reports whether the plan releases a decision stump, which reads
// the rows of the stump map (release.TakesStumpRows).
func (pl *Plan) stump() bool { return pl.Method != nil && release.TakesStumpRows(pl.Method) }

// checkStump refuses, for a stump, what its map cannot have: a
// preprocessing other than bounds (its threshold grid lies in the bounds'
// mapped range [-1, 1]), a random projection, principal components, and a
// fit per privacy ID (the group sensitivity is not implemented). Errors
// wrap ErrOptions.
func (pl *Plan) checkStump() error {
	if !pl.stump() {
		return nil
	}
	opts := pl.Options
	switch {
	case pl.Mode != preprocess.Bounds:
		return fmt.Errorf("%w: the stump's thresholds are a grid of the bounds' mapped range [-1, 1]: it needs the preprocessing bounds (declared or estimated), not %s", ErrOptions, pl.Mode)
	case opts.Project > 0 || opts.PCA > 0:
		return fmt.Errorf("%w: the stump decides on one mapped feature; a random projection (%d) or principal components (%d) mix them: leave them out", ErrOptions, opts.Project, opts.PCA)
	case opts.PrivacyID != "":
		return fmt.Errorf("%w: the stump's utility has sensitivity 1 for one row; a privacy ID moves up to %d rows (group sensitivity), which is not implemented", ErrOptions, opts.MaxRowsPerID)
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
// inputs trained on n rows: its mechanism with the automatic knobs, chosen
// from public values (the release's budget, the loss, the number of
// outputs, n, dim) before any row is read for training, at no cost.
func (pl *Plan) useRule(n, dim int) error {
	st := selection.RuleSetting(pl.Release, pl.Loss, pl.Loss.Outputs(len(pl.Schema.Classes)), n, dim, pl.Group())
	if pl.publicMap && pl.Group() <= 1 {
		// The public log map squashes the features: objective
		// perturbation's family (selection.ObjectiveSetting).
		st = selection.ObjectiveSetting(pl.Release, pl.Loss.Outputs(len(pl.Schema.Classes)), dim)
	}
	return pl.useMechanism(st.Mechanism)
}

// useMechanism makes pl the fit of the mechanism mech, which a public rule
// chose, with the automatic knobs: mech's budget and training settings
// are checked first.
func (pl *Plan) useMechanism(mech perturb.Mechanism) error {
	m, err := release.Lookup(mech)
	if err != nil {
		return err
	}
	if err := m.CheckBudget(pl.Release); err != nil {
		return err
	}
	cfg := pl.Options.Trainer
	cfg.Loss = pl.Loss
	if err := m.CheckConfig(cfg); err != nil {
		return err
	}
	pl.Method = m
	pl.Options.Mechanism, pl.Options.Auto, pl.Options.Select = mech, true, nil
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
		return fmt.Errorf("%w: without a mechanism the setting is chosen for you (the public rule or a private selection), knobs included; the options set %s", ErrOptions, strings.Join(bad, " and "))
	}
	return nil
}

// fitSelect is Fit with a private selection of the setting: the plan of
// the selection is checked from public values (n, the model's shape, the
// budget, the seed), then run on the training rows (selection.Plan.Run).
func fitSelect(ctx context.Context, pl *Plan, rows *preparedRows, cfg trainer.Config, notes []string, out *modelfile.Released) (*modelfile.Released, error) {
	n, dim := rows.X.Dims()
	sp, err := selection.NewPlan(*pl.Options.Select, n, pl.Loss, len(pl.Schema.Classes), dim, pl.Release, pl.Options.Seed)
	if err != nil {
		return nil, err
	}
	so, err := sp.Run(ctx, rows.X, rows.y, cfg, notes, pl.Options.Noise, pl.Options.Logger)
	if err != nil {
		return nil, err
	}
	rel := so.Release
	rel.Certificate.Neighbouring = out.Neighbours()
	if err := pl.compose(rel.Certificate, rows.prep); err != nil {
		return nil, err
	}
	out.Private = rel.Certificate.Private && pl.Mode.Inside()
	out.Model, out.Certificate, out.Selection, out.AutoKnobs = rel.Model, rel.Certificate, so.Record, true
	if so.Prepared != nil {
		out.Stability = so.Prepared.Stability()
	}
	if diag := out.Diagnostics; diag != nil {
		test, err := rows.test()
		if err != nil {
			return nil, err
		}
		diag.Stats = rel.Stats
		diag.ReleasedTrain = evaluate(out.Model, pl.Task, rows.X, rows.y, rows.null)
		diag.ReleasedTest = test.evaluate(out.Model, pl.Task)
	}
	return out, nil
}

// fitClear is Fit without a mechanism: the trainer and the schema, the
// weights returned as trained.
func fitClear(ctx context.Context, pl *Plan, rows *preparedRows, cfg trainer.Config, notes []string, out *modelfile.Released) (*modelfile.Released, error) {
	tr, err := release.TrainRows(ctx, rows.X, rows.y, cfg, notes)
	if err != nil {
		return nil, err
	}
	if out.Model, err = tr.Reveal(); err != nil {
		return nil, err
	}
	run := tr.Run()
	out.Stability = tr.Report()
	if diag := out.Diagnostics; diag != nil {
		test, err := rows.test()
		if err != nil {
			return nil, err
		}
		diag.Stats = run.Stats
		diag.TrainedTrain = evaluate(out.Model, pl.Task, rows.X, rows.y, rows.null)
		diag.TrainedTest = test.evaluate(out.Model, pl.Task)
		diag.ReleasedTrain, diag.ReleasedTest = diag.TrainedTrain, diag.TrainedTest
	}
	run.Stats = trainer.Stats{}
	out.Run = &run
	out.Notes = append(notes, "not private: the weights are released as trained, without a privacy guarantee")
	return out, nil
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

// preparedRows are the training rows of a table as a fit receives them.
type preparedRows struct {
	enc               *datasets.Encoded
	trainIdx, testIdx []int
	prep              *preprocess.RowMap
	// X, y and null are the training rows mapped by prep, their labels and
	// which of them are null rows.
	X    *mat.Dense
	y    []float64
	null []bool
}

// prepare parses the table against the schema, splits its rows by
// position (or stratified, for a non-private fit that asks for it), builds
// the preprocessing (a standardizer is fitted on the training rows) and
// maps the training rows with it.
func (pl *Plan) prepare(t *datasets.Table) (*preparedRows, error) {
	text := pl.textCells()
	enc, err := t.EncodeText(pl.Schema, pl.Task, text)
	if err != nil {
		return nil, err
	}
	opts := pl.Options
	trainIdx, testIdx, err := enc.Split(opts.TestFrac, opts.Seed, opts.Stratify)
	if err != nil {
		return nil, err
	}
	if err := pl.CheckRows(len(trainIdx)); err != nil {
		return nil, err
	}
	if opts.PCA > 0 {
		// Before any noise: the rows' width is public (the header, the
		// declared categories, the projection's k).
		w := 0
		for _, f := range enc.Features {
			if c, ok := pl.Schema.Categorical(f); ok {
				w += len(c.Values)
			} else {
				w++
			}
		}
		if opts.Project > 0 && opts.Project <= w {
			w = opts.Project
		}
		if err := pl.checkPCA(w); err != nil {
			return nil, err
		}
	}
	rawTrain := mat.NewDense(len(trainIdx), enc.D, nil)
	for r, i := range trainIdx {
		rawTrain.SetRow(r, enc.Row(i))
	}
	schema := pl.Schema
	numeric := preprocess.NumericColumns(rawTrain, enc.Features, schema)
	if pl.EstimateBounds && numeric == nil {
		// Every feature is categorical: nothing to estimate, and the
		// release gets the bounds' part back (a decision of the header
		// and the schema, both public); the principal components, if
		// any, keep theirs.
		pl.EstimateBounds, pl.BoundsEpsilon = false, 0
		pl.setRelease()
	}
	logScale := 0.0
	var textCols []string
	if pl.EstimateBounds {
		if schema, logScale, textCols, err = pl.estimateBounds(enc.Features, numeric); err != nil {
			return nil, err
		}
	} else if text == datasets.TextMark {
		textCols = mostlyText(enc.Features, numeric, schema)
	}
	if text == datasets.TextMark {
		if enc, rawTrain, err = pl.retype(t, enc, rawTrain, trainIdx, &schema, textCols); err != nil {
			return nil, err
		}
	}
	prep, err := preprocess.NewRowMap(pl.Mode, enc.Features, schema, rawTrain)
	if err != nil {
		return nil, err
	}
	prep.Estimated, prep.Log, prep.Text = pl.EstimateBounds, logScale, text == datasets.TextMark
	prep.Words = prep.Explain()
	if sel := pl.Options.Select; sel != nil && sel.Method.IsRule() && opts.PCA == 0 && opts.Project == 0 && pl.Mode == preprocess.Bounds && pl.Task == losses.Binary && pl.Group() <= 1 &&
		pl.stumpRule(len(trainIdx), prep.Width()) {
		if err := pl.useStump(); err != nil {
			return nil, err
		}
	}
	if pl.stump() {
		// The stump decides on z before the unit-ball map: no projection.
		prep.Stump = true
		prep.Words = prep.Explain()
	} else {
		k, err := pl.projectDim(len(trainIdx), prep.Width())
		if err != nil {
			return nil, err
		}
		if err := prep.SetProjection(k, opts.Seed); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
	}
	if opts.PCA > 0 {
		if err := pl.components(prep, enc, trainIdx); err != nil {
			return nil, err
		}
	}
	X, y, null, err := prep.Rows(enc, trainIdx)
	if err != nil {
		return nil, err
	}
	return &preparedRows{enc: enc, trainIdx: trainIdx, testIdx: testIdx, prep: prep, X: X, y: y, null: null}, nil
}

// textCells returns what the fit does with the text cells of the numeric
// feature columns (datasets.TextCells), a choice of public settings: a
// private fit without declared bounds and a non-private fit decide each
// column's type (TextMark: a private fit by the centres, estimateBounds,
// else by counting, mostlyText), but for the principal components, which
// check the rows' width before any noise (a text cell is then refused).
// A fit with declared bounds refuses a text cell.
func (pl *Plan) textCells() datasets.TextCells {
	private := pl.Options.Mechanism != "" || pl.Options.Select != nil
	if pl.Options.PCA > 0 || pl.Schema.Declared() || private && !pl.EstimateBounds {
		return datasets.TextError
	}
	return datasets.TextMark
}

// mostlyText returns the numeric features (the columns of X, n raw
// training rows with +Inf for a text cell) whose text cells outnumber
// their numbers: the type decision of a non-private fit, which reads the
// rows as it likes.
func mostlyText(features []string, X *mat.Dense, s datasets.Schema) []string {
	if X == nil {
		return nil
	}
	names := s.Numeric(features)
	n, d := X.Dims()
	col := make([]float64, n)
	var out []string
	for j := range d {
		mat.Col(col, j, X)
		if sc := privbounds.TypeScores(col); sc[1] > sc[0] {
			out = append(out, names[j])
		}
	}
	return out
}

// retype makes the columns textCols hashed categorical columns of schema
// (Options.HashBuckets buckets) and encodes the table again with them,
// every other text cell read as missing (datasets.TextMissing), and
// returns the encoded rows and the raw training rows idx (raw, those of
// enc, when no column is text: its text cells turn missing in place).
func (pl *Plan) retype(t *datasets.Table, enc *datasets.Encoded, raw *mat.Dense, idx []int, schema *datasets.Schema, textCols []string) (*datasets.Encoded, *mat.Dense, error) {
	b := pl.Options.HashBuckets
	if b == 0 {
		b = datasets.DefaultHashBuckets
	}
	if len(textCols) == 0 {
		// No text column: every text cell is missing, in place.
		textMissing(enc.X)
		textMissing(raw.RawMatrix().Data)
		return enc, raw, nil
	}
	s := *schema
	s.Categories = slices.Clone(s.Categories)
	for _, f := range textCols {
		s.Categories = append(s.Categories, datasets.Hashed(f, b))
	}
	enc, err := t.EncodeText(s, pl.Task, datasets.TextMissing)
	if err != nil {
		return nil, nil, err
	}
	*schema = s
	raw = mat.NewDense(len(idx), enc.D, nil)
	for r, i := range idx {
		raw.SetRow(r, enc.Row(i))
	}
	return enc, raw, nil
}

// textMissing replaces every +Inf of x (a text cell, datasets.TextMark)
// by NaN (a missing cell).
func textMissing(x []float64) {
	for i, v := range x {
		if math.IsInf(v, 1) {
			x[i] = math.NaN()
		}
	}
}

// projectDim returns the dimension of the fit's projection for n training
// rows of w mapped features: Options.Project, or with ProjectAuto (and
// Project 0) the public rule preprocess.AutoProjectDim at the release's
// epsilon (a non-private fit: epsilon 1, the rule's reference budget).
func (pl *Plan) projectDim(n, w int) (int, error) {
	opts := pl.Options
	if opts.Project != 0 || !opts.ProjectAuto || opts.PCA > 0 {
		return opts.Project, nil
	}
	outputs := 1
	if pl.Task == losses.Multiclass {
		outputs = len(pl.Schema.Classes)
	}
	eps := pl.Release.Epsilon
	if eps == 0 {
		eps = 1
	}
	k, err := preprocess.AutoProjectDim(n, w, outputs, eps)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if k > 0 {
		pl.log().WithFields(logrus.Fields{"k": k, "features": w, "rows": n, "eps": eps}).Info("private: the mapped features outnumber the training rows: random projection by the public rule (--project auto)")
	}
	return k, nil
}

// checkPCA checks, before any row is read, that the private principal
// components fit the rows of w entries they apply to (the mapped
// features, or the random projection's k): 1 <= PCA <= w, and at most
// dppca.MaxEntries second moments. Errors wrap ErrOptions.
func (pl *Plan) checkPCA(w int) error {
	k := pl.Options.PCA
	switch {
	case k > w:
		return fmt.Errorf("%w: %d principal components of rows of %d entries (the mapped features, or the random projection's k): want 1 <= k <= %d", ErrOptions, k, w, w)
	case w > 0 && w*(w+1)/2 > dppca.MaxEntries:
		return fmt.Errorf("%w: the principal components of rows of %d entries need %d second moments, more than %d (their time grows as the cube of the width): project the rows first with a random projection to k <= %d dimensions (Project, --project k)", ErrOptions, w, w*(w+1)/2, dppca.MaxEntries, dppca.MaxColumns)
	}
	return nil
}

// components computes the private principal directions of the training
// rows idx of enc, mapped by prep (dppca.Components on
// prep.ComponentRows, at PCABudget with the release's noise source: the
// second private step, after the bounds' estimate and before the
// release), and sets them in prep.
func (pl *Plan) components(prep *preprocess.RowMap, enc *datasets.Encoded, idx []int) error {
	Z, err := prep.ComponentRows(enc, idx)
	if err != nil {
		return err
	}
	src := pl.Options.Noise
	if src == nil {
		src = perturb.Secure()
	}
	res, err := dppca.Components(Z, pl.Options.PCA, pl.PCABudget.Epsilon, pl.PCABudget.Delta, src)
	if err != nil {
		if errors.Is(err, dppca.ErrInput) {
			return fmt.Errorf("%w: %w", ErrOptions, err)
		}
		return err
	}
	if err := prep.SetComponents(res.V); err != nil {
		return err
	}
	_, w := Z.Dims()
	pl.log().WithFields(logrus.Fields{"k": pl.Options.PCA, "width": w, "eps": pl.PCABudget.Epsilon, "delta": pl.PCABudget.Delta, "sigma": res.Calibration.Scale}).Info("private: principal directions computed privately (Analyze Gauss)")
	return nil
}

// MaxCentreShare is the largest share of epsilon that a private fit with
// the default bounds share (Options.BoundsShare zero) spends on the
// feature centres and spreads (BoundsFor): a model whose features sit on the wrong scale is
// worth little at any budget, so the centres may take up to half of it.
const MaxCentreShare = 0.5

// estimateBounds returns the plan's schema with the bounds of the numeric
// feature columns taken from their raw training rows (rawTrain, n x the
// numeric features; +Inf for a text cell, datasets.TextMark), the
// half-width of their log scale (preprocess.RowMap.Log; 0 for the linear
// map), and the columns found to hold text (a text centre, privbounds.
// EstimateCentres), which get no bounds. It never refuses for too
// few rows: BoundsFor chooses, from public values only, between the ranges
// (privbounds.Estimate, with Options.BoundsMethod BoundsRanges), the
// centres and spreads on the log scale (privbounds.EstimateCentres;
// BoundsEpsilon and Release are set anew when the share is raised), and
// the public constants on the log scale (privbounds.PublicRange), which
// cost nothing: EstimateBounds is then turned off and the release gets the
// bounds' part back, with a warning. The ranges and the public constants
// decide no type: every column is numeric, its text cells missing.
//
// The estimate is the first private step of the fit, drawn before the
// release's noise, with the release's noise source.
func (pl *Plan) estimateBounds(features []string, rawTrain *mat.Dense) (s datasets.Schema, logScale float64, textCols []string, err error) {
	features = pl.Schema.Numeric(features)
	n, d := rawTrain.Dims()
	epsB, logMap := pl.BoundsFor(n, d)
	minRows := privbounds.MinRows(d, pl.BoundsEpsilon) // at the plan's share
	if !logMap {
		if pl.textCells() == datasets.TextMark {
			pl.log().Warn("private: the ranges decide no column's type: a cell that is neither a number nor missing is read as missing; the centres (--bounds-method centres, the default) find the text columns and hash them, and --schema declares categories")
		}
		textMissing(rawTrain.RawMatrix().Data)
		s, err := pl.estimateRanges(features, rawTrain)
		return s, 0, nil, err
	}
	w := float64(privbounds.HalfWidth)
	eps := pl.Budget.Epsilon
	var lo, hi []float64
	var text []bool
	log := pl.log()
	if epsB > 0 {
		if epsB != pl.BoundsEpsilon {
			pl.BoundsEpsilon = epsB
			pl.setRelease()
			if pl.Method != nil {
				if err := pl.Method.CheckBudget(pl.Release); err != nil {
					return datasets.Schema{}, 0, nil, fmt.Errorf("the release's part of the budget after the feature centres (eps %g): %w", epsB, err)
				}
			}
		}
		if lo, hi, text, err = privbounds.EstimateCentres(rawTrain, pl.BoundsEpsilon, pl.Options.Noise); err != nil {
			return datasets.Schema{}, 0, nil, err
		}
		log.WithFields(logrus.Fields{"eps": epsB, "share": epsB / eps, "columns": d, "rows": n}).Warnf(
			"private: %d training rows are too few for the feature ranges of %d columns (%d needed): each column is standardized by a centre and a spread estimated privately, at eps = %.3g (a share %.3g of eps), and read on the log scale g((x - m)/s); "+
				"each centre or spread is off the data with probability at most %.2g (for a column without missing cells; a column's missing cells count as absent rows); declared bounds (--bounds, --bounds-all) cost nothing",
			n, d, minRows, epsB, epsB/eps, privbounds.MissProbability(n, d, epsB))
	} else {
		pl.EstimateBounds, pl.BoundsEpsilon, pl.publicMap = false, 0, true
		pl.setRelease()
		l, h, pw := privbounds.PublicRange()
		w = pw
		lo, hi = make([]float64, d), make([]float64, d)
		for j := range d {
			lo[j], hi[j] = l, h
		}
		given := ""
		if pl.Options.BoundsShare != 0 {
			given = fmt.Sprintf(", and the share given is %g", pl.Options.BoundsShare)
		}
		log.Warnf("private: %d training rows are too few to estimate the scale of %d feature columns at eps = %g (the centres need a share %.3g of it, at most %g by default%s): "+
			"every column is read on the public log scale z = g(x)/%g with g(x) = sign(x) log2(1 + |x|), at no cost, which can flatten a column far from 0 or of a small scale, and a cell that is not a number is read as missing (for two classes the rule then releases a private decision stump, which needs only the features' order); declare the bounds (--bounds, --bounds-all) and the categorical columns (--schema) for a better model",
			n, d, eps, privbounds.CentreShare(n, d, eps), MaxCentreShare, given, w)
	}
	s = pl.Schema
	s.Bounds = make([]datasets.Bound, 0, len(features))
	for j, f := range features {
		if text != nil && text[j] {
			textCols = append(textCols, f)
			continue
		}
		s.Bounds = append(s.Bounds, datasets.Bound{Column: f, Lo: lo[j], Hi: hi[j]})
	}
	if len(textCols) > 0 {
		// Post-processing of the centres, which the model file publishes.
		log.WithField("columns", textCols).Infof("private: %d column(s) hold mostly text (a private choice): each is one-hot encoded by hashing its cells into %d public buckets (--hash-buckets; categories that share a bucket merge, --schema declares them)", len(textCols), pl.hashBuckets())
	}
	return s, w, textCols, nil
}

// hashBuckets returns the buckets of a text column: Options.HashBuckets,
// or datasets.DefaultHashBuckets.
func (pl *Plan) hashBuckets() int {
	if b := pl.Options.HashBuckets; b != 0 {
		return b
	}
	return datasets.DefaultHashBuckets
}

// BoundsFor returns what the bounds' step of a private fit without
// declared bounds spends for n training rows of d numeric columns, and
// whether it reads them on the log scale (estimateBounds):
//
//   - with Options.BoundsMethod BoundsRanges, the plan's BoundsEpsilon and
//     false for the ranges (n >= privbounds.MinRows);
//   - for the centres and spreads, their eps and true: at the plan's share,
//     or with the default share at the smallest share that reaches
//     privbounds.CentreRows (a miss of the data at most 1% per choice),
//     rounded up at 3 significant digits and capped at MaxCentreShare, when
//     n reaches privbounds.CentreRowsAt at that share and CentreFallback
//     (a miss more likely than not: the public map is no better then);
//   - 0 and true for the public map, which costs nothing.
//
// It reads public values only (n, d, the budget, the shares), so a caller
// may forecast the release's part of the budget before the rows are read.
func (pl *Plan) BoundsFor(n, d int) (eps float64, logScale bool) {
	if pl.Options.BoundsMethod == BoundsRanges && n >= privbounds.MinRows(d, pl.BoundsEpsilon) {
		return pl.BoundsEpsilon, false
	}
	total := pl.Budget.Epsilon
	eps = pl.BoundsEpsilon
	share := eps / total
	if need := min(privbounds.CentreShare(n, d, total), MaxCentreShare); pl.Options.BoundsShare == 0 && need > share {
		// Rounded up at 3 significant digits, by an integer over a power
		// of ten: 0.237, not 237 * 0.001.
		inv := math.Pow(10, 2-math.Floor(math.Log10(need)))
		share = math.Ceil(need*inv) / inv
		eps = share * total
	}
	ps := pl.PCABudget.Epsilon / total
	if n >= privbounds.CentreRowsAt(d, eps, CentreFallback) && share+ps < 1 {
		return eps, true
	}
	return 0, true
}

// CentreFallback is the probability, per choice, of a centre or a spread
// off the data below which a fit estimates them (BoundsFor): at a larger
// one the public map, which reads no row, serves as well.
const CentreFallback = 0.5

// estimateRanges returns the plan's schema with the ranges of the numeric
// feature columns features (their training rows rawTrain) estimated
// privately (privbounds.Estimate at BoundsEpsilon), and warns about the
// ranges that look like the noise's pick (post-processing of the
// published bounds).
func (pl *Plan) estimateRanges(features []string, rawTrain *mat.Dense) (datasets.Schema, error) {
	lo, hi, err := privbounds.Estimate(rawTrain, pl.BoundsEpsilon, pl.Options.Noise)
	if err != nil {
		return datasets.Schema{}, err
	}
	s := pl.Schema
	s.Bounds = make([]datasets.Bound, len(features))
	for j, f := range features {
		s.Bounds[j] = datasets.Bound{Column: f, Lo: lo[j], Hi: hi[j]}
	}
	if g := privbounds.Guessed(lo, hi); len(g) > 0 {
		// Post-processing of the estimate, which the model file publishes.
		cols := make([]string, len(g))
		for i, j := range g {
			cols[i] = fmt.Sprintf("%s [%g, %g]", features[j], lo[j], hi[j])
		}
		pl.log().Warnf("private: the estimated range of %d of %d columns is one power-of-two bin: %s. Either their values lie in one bin, or no bin rose above the noise and the range is the noise's pick (too narrow: the values outside it are clamped). Check them, or declare the bounds (--bounds, --bounds-all), or give more rows or a larger --bounds-share",
			len(g), len(features), strings.Join(cols, ", "))
	}
	if w := modelfile.ImplausibleBounds(features, lo, hi); w != "" {
		// Post-processing of the estimate, which the model file publishes
		// (its certificate carries the same note).
		pl.log().Warn("private: " + w)
	}
	pl.log().WithFields(logrus.Fields{"eps": pl.BoundsEpsilon, "columns": len(features)}).Info("private: feature bounds estimated privately")
	return s, nil
}

// evalRows are held-out rows for diagnostics; nil when none are held out.
type evalRows struct {
	X    *mat.Dense
	y    []float64
	null []bool
}

// test maps the held-out rows.
func (r *preparedRows) test() (*evalRows, error) {
	if len(r.testIdx) == 0 {
		return nil, nil
	}
	X, y, null, err := r.prep.Rows(r.enc, r.testIdx)
	if err != nil {
		return nil, err
	}
	return &evalRows{X, y, null}, nil
}

// evaluate computes the metric of model on the held-out rows (the zero
// Metric when there are none).
func (e *evalRows) evaluate(model *trainer.Model, task losses.Task) modelfile.Metric {
	if e == nil {
		return modelfile.Metric{}
	}
	return evaluate(model, task, e.X, e.y, e.null)
}

// majority returns the accuracy of predicting the most frequent label of
// the rows that are not null: the baseline a classifier must beat (the
// zero Metric's Rows when there are none).
func majority(y []float64, null []bool) modelfile.Metric {
	count := map[float64]int{}
	rows, best := 0, 0
	for i, v := range y {
		if null[i] {
			continue
		}
		rows++
		count[v]++
		best = max(best, count[v])
	}
	if rows == 0 {
		return modelfile.Metric{Name: "none"}
	}
	return modelfile.Metric{Name: "accuracy", Value: float64(best) / float64(rows), Rows: rows}
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// evaluate computes the metric of model on the rows that are not null.
func evaluate(model *trainer.Model, task losses.Task, X *mat.Dense, y []float64, null []bool) modelfile.Metric {
	_, d := X.Dims()
	z := make([]float64, model.K)
	var hit, ss float64
	rows := 0
	for i := range y {
		if null[i] {
			continue
		}
		rows++
		x := X.RawRowView(i)[:d]
		if task == losses.Regression {
			model.Margins(z, x)
			r := z[0] - y[i]
			ss += r * r
			continue
		}
		if model.Predict(x) == y[i] {
			hit++
		}
	}
	if rows == 0 {
		return modelfile.Metric{Name: "none", Rows: 0}
	}
	if task == losses.Regression {
		return modelfile.Metric{Name: "rmse", Value: math.Sqrt(ss / float64(rows)), Rows: rows}
	}
	return modelfile.Metric{Name: "accuracy", Value: hit / float64(rows), Rows: rows}
}
