package private

import (
	"errors"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
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
	Mechanism dp.Mechanism
	// Method is the release method itself, when the caller has looked it
	// up already (the command line's flags do): NewPlan then holds it
	// without looking Mechanism up again. Nil means release.Lookup of
	// Mechanism. With both set, Mechanism must be Method's name.
	Method release.Method
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
	// clipping norm, the schedule and l1 ratio 0 by autoknobs.Choose; for
	// objective perturbation and AMP lambda), overriding the values in
	// Trainer. It needs a Mechanism. Per privacy ID the rule is taken at
	// the group's sensitivity: lambda is autoknobs.GroupScale(MaxRowsPerID)
	// times autoknobs.Choose's (Plan.Group).
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
	// most MaxRowsPerID are kept (placement.BoundContributions). The column
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
