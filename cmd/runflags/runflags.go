package runflags

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrUsage is matched (errors.Is) by every error about the command line:
// the commands exit with status 2 for it.
var ErrUsage = errors.New("usage error")

// UsageError is an error in the command line. Its message is the wrapped
// error's; it matches ErrUsage.
type UsageError struct{ Err error }

func (e *UsageError) Error() string        { return e.Err.Error() }
func (e *UsageError) Unwrap() error        { return e.Err }
func (e *UsageError) Is(target error) bool { return target == ErrUsage }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// usagef is Usagef.
var usagef = Usagef

// SettingsErrors are the errors of a fit whose settings cannot make a run
// on the data given (a schema, budget or options that the data or each
// other refuse: more partitions than rows, a batch larger than a
// partition, no privacy-ID column, ...). Both commands exit with status 2
// for them, as for a usage error, wherever they are found: stabpriv train
// after reading the data, stabpriv-beam at launch or in the pipeline.
var SettingsErrors = []error{datasets.ErrSchema, datasets.ErrInvalid, private.ErrOptions, dp.ErrBudget,
	trainer.ErrConfig, release.ErrConfig, selection.ErrSelect}

// IsSettingsError reports whether err wraps one of SettingsErrors.
func IsSettingsError(err error) bool {
	for _, e := range SettingsErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Flags are the shared flags, as given.
type Flags struct {
	Label, Classes, Bounds, Loss string
	BoundsAll, Categories        string
	BoundsShare                  float64
	BoundsMethod                 string
	HashBuckets                  int
	Lambda, L1Ratio, Clip, Step  string
	Passes, Batch                int
	Schedule                     *choice[trainer.Schedule, *trainer.Schedule]
	Dropout, Radius              float64
	Average                      bool
	Engine                       trainer.Engine
	Seed                         uint64
	TestFrac                     float64
	LogLevel                     string
	LabelBound                   float64
	Mechanism                    *choice[dp.Mechanism, *dp.Mechanism]
	Noise                        string
	NoiseSeed                    uint64
	Epsilon, Delta               float64
	Standardize                  *choice[preprocess.Mode, *preprocess.Mode]
	Partitions                   int
	PrivacyID                    string
	MaxRowsPerID                 int
	Project                      string
	PCA                          int
	PCAShare                     float64
	Select                       string
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Label, "label", "", "label `column` of the data")
	fs.StringVar(&f.Classes, "classes", "", "the classes, declared: `a,b,...` (binary: the second is +1); required for a private or partitioned classification; matched exactly (case and spaces count): rows with another label are kept as null rows that train nothing")
	fs.StringVar(&f.Bounds, "bounds", "", "CSV `file` of public feature bounds, one line column,lo,hi per feature: values are clamped and scaled into [-1, 1] inside the guarantee, at no cost")
	fs.StringVar(&f.Categories, "schema", "", "CSV `file` declaring the categorical feature columns, one line column,category,... each: they are one-hot encoded inside the guarantee (a value not declared maps to zero); the categories are public, like the bounds")
	fs.StringVar(&f.BoundsAll, "bounds-all", "", "one public range `lo,hi` for every feature column (instead of --bounds): inside the guarantee, at no cost")
	fs.StringVar(&f.BoundsMethod, "bounds-method", string(private.BoundsCentres), "private runs without --bounds or --bounds-all: how every feature's scale is estimated from the training rows: centres (a centre and a spread per column, read on the log scale sign(t) log2(1 + |t|)) or ranges (a range per column on a power-of-two grid, linear, when the rows pay for it; the centres otherwise)")
	fs.IntVar(&f.HashBuckets, "hash-buckets", datasets.DefaultHashBuckets, fmt.Sprintf("the `number` of buckets, 2 to %d, of a text column the schema does not declare: a column of mostly text cells (private runs estimating the feature scales: a private choice beside each centre; --mechanism none: by counting) is one-hot encoded by hashing each cell's text into one of them (collisions merge categories); a text cell of another column reads as missing", datasets.MaxHashBuckets))
	fs.Float64Var(&f.BoundsShare, "bounds-share", private.DefaultBoundsShare, "private runs without --bounds or --bounds-all: the `share` of --epsilon, in (0, 1), spent on estimating every feature's scale from the training rows (--bounds-method; in the ledger); the release gets the rest. Left out, the centres take what they need, from 0.1 up to 0.5, and with too few rows for them the columns are read on a public log map at no cost. Given with the embedded data, it replaces the shipped bounds by the estimate")
	f.Standardize = newChoice[preprocess.Mode]("auto", map[string]preprocess.Mode{"train": preprocess.Standardize})
	fs.TextVar(f.Standardize, "standardize", f.Standardize, "feature map: auto (bounds with --bounds or the embedded data; train for a non-private run without bounds), none (features as they are), train (standardization fitted on the training split: outside the guarantee)")
	fs.StringVar(&f.Loss, "loss", "", "loss: "+strings.Join(losses.Names(), ", ")+" (default: logistic for 2 classes, softmax for more); it sets the task")
	fs.StringVar(&f.Lambda, "lambda", "auto", "elastic-net strength lambda >= 0, or auto: with --mechanism, chosen with --clip from (n, d, K, eps) alone; 1e-3 without")
	fs.StringVar(&f.L1Ratio, "l1-ratio", "auto", "elastic-net L1 share alpha in [0, 1] (auto: 0 with --mechanism, 0.15 without); mu = lambda*(1-alpha)")
	fs.StringVar(&f.Clip, "clip", "auto", "per-example gradient clipping norm `G` (0: none; auto: with --lambda auto, the rule's G; 0 otherwise)")
	fs.IntVar(&f.Passes, "passes", 10, "passes k over the training data (dp-sgd without knobs given: 5)")
	fs.IntVar(&f.Batch, "batch", 1, "minibatch size b (dp-sgd: the expected Poisson batch, without knobs given ceil(sqrt n))")
	fs.StringVar(&f.Step, "step", "auto", "constant step size eta, or auto for 1/beta (beta the smoothness of the per-example objective)")
	f.Schedule = newChoice[trainer.Schedule]("auto", nil)
	fs.TextVar(f.Schedule, "schedule", f.Schedule, "step schedule: constant, inverse-t, bounded-inverse-t (auto: bounded-inverse-t for a release with mu > 0, else constant)")
	fs.Float64Var(&f.Dropout, "dropout", 1, "s-dropout fraction `s` in (0, 1] (1: none); with --clip G <= s L it does not lower Delta")
	fs.Float64Var(&f.Radius, "radius", 0, "project the weights onto ||w|| <= `R` (0: none; squared loss needs it)")
	fs.BoolVar(&f.Average, "average", false, "return the average of the iterates")
	fs.TextVar(&f.Engine, "engine", trainer.Native, "gradient engine: native or graph (Gorgonia)")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the split, the partitions, the permutations and the dropout masks (published in the certificate)")
	fs.Float64Var(&f.TestFrac, "test-frac", 0, "share of the rows held out for testing, in [0, 1) (0: every row trains)")
	LogLevelVar(fs, &f.LogLevel)
	fs.Float64Var(&f.LabelBound, "label-bound", 0, "regression: the bound `B` in |y| <= B (squared loss needs it; 0: none); a release clamps labels to it")
	f.Mechanism = newChoice[dp.Mechanism]("none", nil)
	fs.TextVar(f.Mechanism, "mechanism", f.Mechanism, "release mechanism; left out, the public rule (or --select) chooses it and its knobs: "+release.List()+" (objective and amp perturb the training objective: lambda auto or at least its floor, no SGD knobs), or none for a non-private model")
	// Left out is not none: the help must not print "(default none)".
	fs.Lookup("mechanism").DefValue = ""
	fs.Float64Var(&f.Epsilon, "epsilon", 1, "privacy budget `eps` of the fit, from 2^-50 to 100: every run is private at this budget unless --mechanism none asks for a non-private model")
	fs.Float64Var(&f.Delta, "delta", 0, "privacy budget `delta` in [0, 1): 0 for laplace, gamma and objective (pure eps-DP), > 0 for the Gaussian mechanisms and amp, and below 1/n for n training rows (a warning above 1/(10 n))")
	fs.StringVar(&f.Noise, "noise", "secure", "noise source: secure (a private release), or seeded from --noise-seed (reproducible; its certificate says NOT private, since the seed is published)")
	fs.Uint64Var(&f.NoiseSeed, "noise-seed", 0, "seed of --noise seeded (required with it; published in the model file)")
	fs.StringVar(&f.Project, "project", "auto", "project every mapped row to `k` dimensions by a seeded random projection (Gaussian, its seed --seed, published in the model file) before the unit-ball map: public, no budget; for many more features than rows; k at most the number of mapped features; 0: none; auto: k from the public rule of (n, features, classes, eps) when the mapped features outnumber the training rows, none otherwise (a partitioned fit: none)")
	fs.IntVar(&f.PCA, "pca", 0, fmt.Sprintf("private runs with --delta: project every mapped row (after --project k, if given) on its top `k` private principal directions before the unit-ball map, computed from the training rows by Analyze Gauss with --pca-share of the budget (in the ledger; the directions are written in the model file); k at most the number of mapped features (with --pca, --project auto projects nothing: rows wider than %d entries need --project k first, k <= %d: the directions' time grows as the cube of the width); 0: none", dppca.MaxColumns, dppca.MaxColumns))
	fs.Float64Var(&f.PCAShare, "pca-share", private.DefaultPCAShare, "with --pca: the `share` of --epsilon and of --delta, in (0, 1), spent on the private principal directions; the release gets the rest (after --bounds-share, which with it must leave the release a positive part of --epsilon)")
	fs.StringVar(&f.Select, "select", string(selection.Rule), "with --epsilon and no --mechanism: how the release chooses its mechanism, lambda and clipping norm, inside the budget: "+
		string(selection.Rule)+" (the default: a public rule of the budget, the model's size and the number of rows, no row read, no cost: a private decision stump where its guarantee is not vacuous, for two to ten classes when the mapped features are at least the training rows (bounds preprocessing: in practice declared bounds or categorical columns, since the bounds estimate needs far more rows than numeric columns; no --project or --pca), for three to ten classes at a pure budget whatever the width, and on the public log map whatever the width (no --project or --pca; the rule does not see whether the signal is sparse, and on dense-signal data a named linear --mechanism can beat the stump at a large eps), else dp-sgd at its automatic knobs for more than two classes with --delta below 1/n when the training rows times eps are at least "+strconv.FormatFloat(selection.DPSGDFirstRows, 'g', -1, 64)+", else objective perturbation for a pure budget, AMP with --delta, gamma or the analytic Gaussian above 4096 weights or, for two classes, when the objective rule's lambda is above a quarter of the curvature bound S_z/dim; lambda by the mechanism's rule; with --partitions P > 1 always gamma, or the analytic Gaussian with --delta, at their automatic knobs, as a partitioned fit releases an average of SGD runs), "+
		string(selection.Holdout)+" (a private selection: tune on 20% of the training rows, release on the rest, each at the whole budget: parallel composition) or "+
		string(selection.RandomStopping)+" (the best of a random number of private runs: the release gets eps/2)")
	fs.IntVar(&f.Partitions, "partitions", 1, "train `P` partitions, a row's partition a seeded hash of its position (shard path relative to the input root, row number), and release the weighted average once (partition.Fit)")
	fs.StringVar(&f.PrivacyID, "privacy-id", "", "the `column` of each row's privacy ID (a user, say; not a feature): the unit of privacy becomes all the rows of one ID, at most --max-rows-per-id of them kept (a seeded choice) and padded to that many with null rows, all in one partition; the certificate protects the rows of one ID, the set of IDs (and their number) is public; needs --classes and public bounds; without --mechanism the public rule of a partitioned fit, its automatic lambda sqrt(c) times the one for rows (c times the sensitivity)")
	fs.IntVar(&f.MaxRowsPerID, "max-rows-per-id", 0, "with --privacy-id: keep `c` >= 1 rows of each ID; the noise grows with c (c times the bound for one row)")
}

// LogLevelVar defines --log-level on fs, its value stored in p (default
// info): every command of stabpriv and stabpriv-beam takes it, with this
// meaning (ParseLogLevel reads it).
func LogLevelVar(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "log-level", "info", "log level on stderr: panic, error, warn, info (progress), debug; warn keeps a run silent unless something is wrong, error drops the warnings too")
}

// ParseLogLevel returns the level the value of --log-level names, or a
// usage error.
func ParseLogLevel(s string) (logrus.Level, error) {
	l, err := logrus.ParseLevel(s)
	if err != nil {
		return 0, usagef("--log-level %q: want panic, error, warn, info or debug", s)
	}
	return l, nil
}

// sgdFlags are the flags that shape an SGD run: they apply only to the
// methods that release one (release.Method.SGD).
var sgdFlags = []string{"passes", "batch", "step", "schedule", "engine", "clip", "dropout", "radius", "average", "partitions", "l1-ratio", "privacy-id"}

// Run is what the flags ask for.
type Run struct {
	Schema  datasets.Schema
	Budget  dp.Budget
	Options private.Options
	Level   logrus.Level
}

// Private reports whether the run releases by a mechanism, named or
// chosen by a private selection.
func (r *Run) Private() bool { return r.Options.Mechanism != "" || r.Options.Select != nil }

// Check checks the flags (set names those given) and returns the run they
// ask for: the mechanism and budget, the knobs, and the schema with the
// classes, the bounds (read from --bounds) and the feature map. defaults,
// when not nil, is the schema of data the command supplies itself (the
// embedded data set of stabpriv train): its label, classes and bounds
// stand unless the flags give others. Every error wraps ErrUsage or names
// the file it could not read.
func (f *Flags) Check(set map[string]bool, defaults *datasets.Schema) (*Run, error) {
	r := &Run{}
	var err error
	if r.Level, err = ParseLogLevel(f.LogLevel); err != nil {
		return nil, err
	}
	if err := f.checkPrivacy(set, r); err != nil {
		return nil, err
	}
	if err := f.checkKnobs(set, r); err != nil {
		return nil, err
	}
	if err := f.checkSchema(set, defaults, r); err != nil {
		return nil, err
	}
	if err := f.checkPCA(set, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Floats parses the comma-separated list of finite numbers s, the value of
// the flag --name (nil for a blank s); a bad entry is a usage error.
func Floats(name, s string) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []float64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, usagef("--%s: %q is not a finite number", name, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// Ints parses the comma-separated list of integers s, the value of the
// flag --name (nil for a blank s); a bad entry is a usage error.
func Ints(name, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return nil, usagef("--%s: %q is not an integer", name, part)
		}
		out = append(out, v)
	}
	return out, nil
}
