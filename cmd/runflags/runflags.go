package runflags

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
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
	Mechanism                    *choice[perturb.Mechanism, *perturb.Mechanism]
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
	fs.IntVar(&f.Passes, "passes", 10, "passes k over the training data")
	fs.IntVar(&f.Batch, "batch", 1, "minibatch size b")
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
	f.Mechanism = newChoice[perturb.Mechanism]("none", nil)
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
		string(selection.Rule)+" (the default: a public rule of the budget, the model's size and the number of rows, no row read, no cost: a private decision stump for two classes when the mapped features are at least the training rows and its guarantee is not vacuous (bounds preprocessing: in practice declared bounds or categorical columns, since the bounds estimate needs far more rows than numeric columns; no --project or --pca; the rule does not see whether the signal is sparse, and on dense-signal data a named linear --mechanism can beat the stump at a large eps), else dp-sgd at its automatic knobs for more than two classes with --delta below 1/n when the training rows times eps are at least "+strconv.FormatFloat(selection.DPSGDFirstRows, 'g', -1, 64)+", else objective perturbation for a pure budget, AMP with --delta, gamma or the analytic Gaussian above 4096 weights or, for two classes, when the objective rule's lambda is above a quarter of the curvature bound S_z/dim; lambda by the mechanism's rule; with --partitions P > 1 always gamma, or the analytic Gaussian with --delta, at their automatic knobs, as a partitioned fit releases an average of SGD runs), "+
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

// joinKnobs returns the knobs' flag names joined by ", --".
func joinKnobs(ks []release.Knob) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", --")
}

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

// checkPCA checks --pca and --pca-share: k >= 1, a private run per row
// with delta > 0 (Analyze Gauss is (eps, delta)-DP), and shares of the
// budget that leave the release a positive part.
func (f *Flags) checkPCA(set map[string]bool, r *Run) error {
	switch {
	case !set["pca"] && set["pca-share"]:
		return usagef("--pca-share applies with --pca k")
	case !set["pca"]:
		return nil
	case f.PCA < 1:
		return usagef("--pca %d, want k >= 1 principal directions (leave --pca out for none)", f.PCA)
	case !r.Private():
		return usagef("--pca computes the principal directions privately, paid from the budget: give --epsilon and --delta (a private run)")
	case f.Partitions > 1 || f.PrivacyID != "":
		return usagef("--pca is for a single fit per row; a partitioned fit (--partitions, --privacy-id) takes --project k")
	case !(r.Budget.Delta > 0):
		return usagef("--pca: the private principal directions (Analyze Gauss, a Gaussian mechanism) are (eps, delta)-DP: give --delta > 0 (e.g. 1e-5); a pure eps budget cannot pay for them")
	case !check.OpenUnit(f.PCAShare):
		return usagef("--pca-share %v leaves nothing for the %s: want a share in (0, 1) of --epsilon and --delta", f.PCAShare, map[bool]string{true: "release", false: "principal directions"}[f.PCAShare >= 1])
	}
	bs := 0.0
	if r.Options.Preprocess == "" && !r.Schema.Declared() {
		bs = f.BoundsShare // the bounds are estimated
	}
	if bs+f.PCAShare >= 1 {
		return usagef("--bounds-share %v and --pca-share %v spend %v of --epsilon: they must leave the release a positive part (their sum below 1)", bs, f.PCAShare, bs+f.PCAShare)
	}
	r.Options.PCA, r.Options.PCAShare = f.PCA, f.PCAShare
	return nil
}

// checkPrivacy checks the mechanism, the budget and the noise source.
func (f *Flags) checkPrivacy(set map[string]bool, r *Run) error {
	name, private := f.Mechanism.value()
	if set["select"] && (private || !set["epsilon"] && !set["delta"]) {
		return usagef("--select applies to a private run without --mechanism (give --epsilon, and no --mechanism)")
	}
	if !private && !set["mechanism"] {
		return f.checkSelect(set, r)
	}
	if !private {
		for _, name := range []string{"epsilon", "delta", "noise", "noise-seed"} {
			if set[name] {
				return usagef("--%s applies to a private release; choose --mechanism %s", name, release.List())
			}
		}
		return nil
	}
	method, err := release.Lookup(name)
	if err != nil {
		return usagef("--mechanism %q, want none, %s", name, release.List())
	}
	m := method.Name()
	r.Budget = dp.Budget{Epsilon: f.Epsilon, Delta: f.Delta}
	if set["pca"] && m.Pure() {
		return usagef("--pca with --mechanism %s: the private principal directions spend a share of --delta and the release the rest, so the release's mechanism must take delta (%s), with --delta > 0; or leave --mechanism out (with --delta the rule releases by AMP)", m, deltaMethods())
	}
	if err := method.CheckBudget(r.Budget); err != nil {
		return usagef("--mechanism %s --epsilon %v --delta %v: %w%s", m, f.Epsilon, f.Delta, err, PrivacyHint(m, err))
	}
	if !method.SGD() {
		// The SGD knobs, and the partitions whose SGD runs a partitioned
		// fit averages, apply to the methods that release an SGD run.
		// A method may take some of them for a run of its own
		// (release.KnobTaker: dp-sgd).
		taken := release.TakenKnobs(method)
		for _, name := range sgdFlags {
			switch {
			case !set[name] || release.TakesKnob(method, release.Knob(name)):
			case len(taken) > 0:
				return usagef("--%s does not apply to --mechanism %s, which takes --%s", name, m, joinKnobs(taken))
			default:
				return usagef("--%s does not apply to --mechanism %s, which does not release the weights of an SGD run: the SGD knobs (--%s) apply to %s", name, m, strings.Join(sgdFlags, ", --"), release.SGDList())
			}
		}
	}
	r.Options.Mechanism, r.Options.Method = m, method
	return f.checkNoise(set, r)
}

// checkSelect checks a private run without --mechanism: the setting is
// chosen by the public rule or a private selection (--select), which sets
// the knobs itself; the SGD knobs are refused, as a named mechanism that
// runs no SGD refuses them.
func (f *Flags) checkSelect(set map[string]bool, r *Run) error {
	method := selection.Method(f.Select)
	if method != selection.Rule && !slices.Contains(selection.Methods(), method) {
		return usagef("--select %q, want %s, %s or %s", f.Select, selection.Rule, selection.Holdout, selection.RandomStopping)
	}
	r.Budget = dp.Budget{Epsilon: f.Epsilon, Delta: f.Delta}
	if err := r.Budget.Validate(); err != nil {
		return usagef("--epsilon %v --delta %v: %w", f.Epsilon, f.Delta, err)
	}
	if method != selection.Rule && set["privacy-id"] {
		return usagef("--select %s with --privacy-id: the private selection is proven for a single fit per row; a fit per privacy ID is a partitioned fit, which releases the average of the partitions' SGD runs once: leave --select out (the public rule: %s, or %s with --delta, at the automatic knobs for the ID's c rows) or give --mechanism",
			method, selection.OutputFamily(dp.Budget{Epsilon: 1}), selection.OutputFamily(dp.Budget{Epsilon: 1, Delta: 1e-5}))
	}
	if method != selection.Rule && f.Partitions > 1 {
		// partition.UseRule's reason, in the flags' words.
		return usagef("--select %s with --partitions %d: the private selection is proven for a single fit, where it tunes on a part of the training rows and releases on the rest (holdout) or releases the best of several runs on the same rows (random-stopping), with candidates that include objective perturbation and AMP; a partitioned fit releases the average of the partitions' SGD runs once: leave --select out (the public rule: %s, or %s with --delta) or give --mechanism",
			method, f.Partitions, selection.OutputFamily(dp.Budget{Epsilon: 1}), selection.OutputFamily(dp.Budget{Epsilon: 1, Delta: 1e-5}))
	}
	how := "by a public rule"
	if method != selection.Rule {
		how = "privately"
	}
	for _, name := range append([]string{"lambda"}, sgdFlags...) {
		if set[name] && name != "partitions" && name != "privacy-id" {
			return usagef("--%s: without --mechanism the release chooses the mechanism and its knobs %s (--select %s), and the SGD knobs do not apply; give --mechanism to set them yourself", name, how, method)
		}
	}
	r.Options.Select = &selection.Config{Method: method}
	return f.checkNoise(set, r)
}

// checkNoise checks the noise source of a private run.
func (f *Flags) checkNoise(set map[string]bool, r *Run) error {
	switch f.Noise {
	case "secure":
		if set["noise-seed"] {
			return usagef("--noise-seed applies to --noise seeded")
		}
	case "seeded":
		if !set["noise-seed"] {
			return usagef("--noise seeded needs --noise-seed N (separate from --seed; it is published, so the release is not private)")
		}
		r.Options.Noise = perturb.Seeded(f.NoiseSeed)
	default:
		return usagef("--noise %q, want secure or seeded", f.Noise)
	}
	return nil
}

// deltaMethods returns the names of the release methods that spend a
// delta, joined by ", ".
func deltaMethods() string {
	var out []string
	for _, m := range release.Methods() {
		if !m.Name().Pure() {
			out = append(out, string(m.Name()))
		}
	}
	return strings.Join(out, ", ")
}

// PrivacyHint says how to fix the privacy flags that gave err.
func PrivacyHint(m perturb.Mechanism, err error) string {
	switch {
	case errors.Is(err, perturb.ErrClassicalRange):
		return " (pass --epsilon below 1, or --mechanism gaussian-analytic)"
	case errors.Is(err, perturb.ErrDelta) && m.Pure():
		return " (laplace and gamma are pure eps-DP: leave --delta at 0, or choose a Gaussian mechanism)"
	case errors.Is(err, perturb.ErrDelta):
		return " (the Gaussian mechanisms need --delta in (0, 1), e.g. --delta 1e-5)"
	}
	return ""
}

// floatFlag parses a numeric flag value that may be "auto".
func floatFlag(name, v string, lo, hi float64) (float64, bool, error) {
	if v == "auto" {
		return 0, true, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return 0, false, usagef("--%s %q, want auto or a number in [%g, %g]", name, v, lo, hi)
	}
	return x, false, nil
}

// checkKnobs checks the training knobs, the seed and the split.
func (f *Flags) checkKnobs(set map[string]bool, r *Run) error {
	priv := r.Private()
	cfg := &r.Options.Trainer
	if f.Loss != "" {
		l, err := losses.ByName(f.Loss)
		if err != nil {
			return usagef("--loss: %w", err)
		}
		cfg.Loss = l
	}
	lambda, autoLambda, err := floatFlag("lambda", f.Lambda, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	alpha, autoAlpha, err := floatFlag("l1-ratio", f.L1Ratio, 0, 1)
	if err != nil {
		return err
	}
	clip, autoClip, err := floatFlag("clip", f.Clip, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	if autoLambda && !priv {
		lambda = 1e-3
	}
	if autoAlpha && !priv {
		alpha = 0.15
	}
	if r.Options.Select != nil {
		lambda, alpha, autoClip = 0, 0, true // the selection chooses them
	}
	// A method's rule sets the knobs it takes (release.KnobTaker); the
	// user's value of one of them means the user's knobs, not the rule's.
	r.Options.Auto = r.Options.Mechanism != "" && autoLambda && !slices.ContainsFunc(release.TakenKnobs(r.Options.Method), func(k release.Knob) bool { return set[string(k)] })
	if r.Options.Auto {
		for _, name := range []string{"clip", "l1-ratio", "schedule", "step"} {
			if set[name] {
				return usagef("--%s: with --lambda auto the release chooses lambda, --clip, --l1-ratio 0 and the schedule itself; give --lambda to set them", name)
			}
		}
	} else if autoClip {
		clip = 0
	}
	cfg.Reg = regularizers.ElasticNet{Lambda: lambda, L1Ratio: alpha}
	cfg.Clip, cfg.Dropout, cfg.Radius, cfg.Average = clip, f.Dropout, f.Radius, f.Average
	cfg.Passes, cfg.Batch, cfg.LabelBound = f.Passes, f.Batch, f.LabelBound
	if f.Passes <= 0 || f.Batch <= 0 {
		return usagef("--passes %d, --batch %d, want >= 1", f.Passes, f.Batch)
	}
	if f.Dropout <= 0 || f.Dropout > 1 || math.IsNaN(f.Dropout) {
		return usagef("--dropout %v, want in (0, 1]", f.Dropout)
	}
	if err := f.checkProject(set, r); err != nil {
		return err
	}
	if f.Partitions < 1 || f.Partitions > datasets.MaxPartitions {
		return usagef("--partitions %d, want 1 to %d", f.Partitions, datasets.MaxPartitions)
	}
	if err := f.checkPrivacyID(set, r); err != nil {
		return err
	}
	cfg.Engine = f.Engine
	schedule, given := f.Schedule.value()
	if !given && priv && f.Step == "auto" && lambda*(1-alpha) > 0 {
		schedule = trainer.BoundedInverseT
	}
	if schedule == trainer.Custom {
		return usagef("--schedule custom needs a step function: use the library")
	}
	cfg.Schedule = schedule
	if f.Step != "auto" {
		eta, err := strconv.ParseFloat(f.Step, 64)
		if err != nil || !check.Positive(eta) {
			return usagef("--step %q, want auto or a finite number > 0", f.Step)
		}
		if cfg.Schedule != trainer.Constant {
			return usagef("--step %s applies to the constant schedule, not %s", f.Step, cfg.Schedule)
		}
		cfg.Eta = eta
	}
	if !check.HalfOpenUnit(f.TestFrac) {
		return usagef("--test-frac %v, want in [0, 1)", f.TestFrac)
	}
	r.Options.TestFrac, r.Options.Seed = f.TestFrac, f.Seed
	if cfg.Loss != nil && f.LabelBound != 0 && cfg.Loss.Task() != losses.Regression {
		return usagef("--label-bound applies to regression losses, not %s (%v)", f.Loss, cfg.Loss.Task())
	}
	return nil
}

// checkPrivacyID checks --privacy-id and --max-rows-per-id: both or
// neither, c >= 1, a non-empty column, and a run that is not a private
// selection (a fit per privacy ID is a partitioned fit, which releases the
// mechanism it is given or the public rule's).
func (f *Flags) checkPrivacyID(set map[string]bool, r *Run) error {
	switch {
	case f.PrivacyID == "" && set["privacy-id"]:
		return usagef("--privacy-id: give the column of the privacy IDs")
	case f.PrivacyID == "" && set["max-rows-per-id"]:
		return usagef("--max-rows-per-id applies with --privacy-id COLUMN")
	case f.PrivacyID == "":
		return nil
	case !set["max-rows-per-id"]:
		return usagef("--privacy-id %s needs --max-rows-per-id c: the number of rows kept per ID, which the noise grows with", f.PrivacyID)
	case f.MaxRowsPerID < 1:
		return usagef("--max-rows-per-id %d, want c >= 1", f.MaxRowsPerID)
	case r.Options.Select != nil && !r.Options.Select.Method.IsRule():
		return usagef("--privacy-id: a fit per privacy ID is a partitioned fit, which releases a named mechanism or the public rule; leave --select out or give --mechanism (the private selection is for a fit per row)")
	}
	r.Options.PrivacyID, r.Options.MaxRowsPerID = f.PrivacyID, f.MaxRowsPerID
	return nil
}

// checkBounds reads the feature bounds and the feature map: --bounds FILE
// or --bounds-all lo,hi (public, at no cost), or, for a private run without
// them, the share of epsilon the bounds estimate spends (--bounds-share);
// or --standardize. embedded reports the command's own data, whose shipped
// bounds --bounds-share replaces by the estimate.
func (f *Flags) checkBounds(set map[string]bool, embedded bool, r *Run) error {
	if f.Bounds != "" && f.BoundsAll != "" {
		return usagef("--bounds and --bounds-all exclude each other: give the bounds of each column in the file, or one range for all")
	}
	if f.Bounds != "" {
		b, err := datasets.ReadBoundsFile(f.Bounds)
		if err != nil {
			return usagef("--bounds: %w", err)
		}
		r.Schema.Bounds = b
	}
	if f.BoundsAll != "" {
		b, err := datasets.ParseRange(f.BoundsAll)
		if err != nil {
			return usagef("--bounds-all: %w", err)
		}
		r.Schema.Bounds, r.Schema.All = nil, &b
	}
	mode, given := f.Standardize.value()
	if set["bounds-method"] {
		switch m := private.BoundsMethod(f.BoundsMethod); {
		case m != private.BoundsCentres && m != private.BoundsRanges:
			return usagef("--bounds-method %q, want %s or %s", f.BoundsMethod, private.BoundsCentres, private.BoundsRanges)
		case !r.Private() || f.Bounds != "" || f.BoundsAll != "" || given:
			return usagef("--bounds-method applies to a private run whose bounds are estimated (no --bounds, --bounds-all or --standardize)")
		}
		if embedded {
			r.Schema.Bounds = nil // the estimate replaces the shipped bounds
		}
		r.Options.BoundsMethod = private.BoundsMethod(f.BoundsMethod)
	}
	if set["hash-buckets"] {
		if f.HashBuckets < 2 || f.HashBuckets > datasets.MaxHashBuckets {
			return usagef("--hash-buckets %d, want 2 to %d", f.HashBuckets, datasets.MaxHashBuckets)
		}
		r.Options.HashBuckets = f.HashBuckets
	}
	if set["bounds-share"] {
		switch {
		case !r.Private():
			return usagef("--bounds-share applies to a private release (--mechanism %s): a non-private run without bounds standardizes", release.List())
		case f.Bounds != "" || f.BoundsAll != "":
			return usagef("--bounds-share: the bounds are declared (--bounds, --bounds-all) and cost nothing; drop one of them")
		case given:
			return usagef("--bounds-share estimates the bounds of the feature map bounds; drop --standardize %s", f.Standardize.text)
		case !check.OpenUnit(f.BoundsShare):
			return usagef("--bounds-share %v leaves nothing for the %s: want a share in (0, 1) of --epsilon", f.BoundsShare, map[bool]string{true: "release", false: "bounds estimate"}[f.BoundsShare >= 1])
		}
		if embedded {
			r.Schema.Bounds = nil // the estimate replaces the shipped bounds
		}
		r.Options.BoundsShare = f.BoundsShare
	}
	if !given {
		return nil
	}
	if mode == preprocess.Bounds {
		return usagef("--standardize bounds: give --bounds FILE or --bounds-all lo,hi, or nothing for a private estimate (--standardize auto)")
	}
	if f.Bounds != "" || f.BoundsAll != "" {
		return usagef("--bounds or --bounds-all and --standardize %s exclude each other", f.Standardize.text)
	}
	r.Options.Preprocess = mode
	return nil
}

// regression reports whether the run's loss is a regression loss.
func (r *Run) regression() bool {
	l := r.Options.Trainer.Loss
	return l != nil && l.Task() == losses.Regression
}

// checkSchema builds the schema: the label, the declared classes, the
// bounds (read from --bounds, or --bounds-all, or estimated from
// --bounds-share of the budget) and the feature map.
func (f *Flags) checkSchema(set map[string]bool, defaults *datasets.Schema, r *Run) error {
	if defaults != nil {
		if f.Label != "" && f.Label != defaults.Label {
			return usagef("--label %q without --data: the embedded data set's label is %s", f.Label, defaults.Label)
		}
		if f.Classes != "" {
			return usagef("--classes applies to --data; the embedded data declares %s", strings.Join(defaults.Classes, " and "))
		}
		r.Schema = *defaults
	} else {
		if f.Label == "" {
			return usagef("--label is required: the name of the label column")
		}
		r.Schema = datasets.Schema{Label: f.Label, LabelBound: f.LabelBound}
		if f.Classes != "" {
			for _, c := range strings.Split(f.Classes, ",") {
				r.Schema.Classes = append(r.Schema.Classes, strings.TrimSpace(c))
			}
		}
	}
	if f.Categories != "" {
		c, err := datasets.ReadCategoriesFile(f.Categories)
		if err != nil {
			return usagef("--schema: %w", err)
		}
		r.Schema.Categories = c // checked against the label and the bounds by private.NewPlan
	}
	if err := f.checkBounds(set, defaults != nil, r); err != nil {
		return err
	}
	if f.Partitions > 1 || f.PrivacyID != "" {
		// A fit per privacy ID is a partitioned fit, with one partition or more.
		what := "--partitions"
		if f.PrivacyID != "" {
			what = "--privacy-id"
		}
		if r.Options.Preprocess == preprocess.Standardize {
			return usagef("%s: a standardization fitted on the rows is refused; give --bounds or --standardize none", what)
		}
		if r.Private() && r.Options.Preprocess == "" && !r.Schema.Declared() {
			return usagef("%s needs public bounds (--bounds FILE or --bounds-all lo,hi) or --standardize none: the private estimate of the bounds is for a single fit per row", what)
		}
		if r.Schema.Classes == nil && !r.regression() {
			return usagef("%s needs --classes declared: the partitions must agree on them", what)
		}
	}
	if r.Private() && r.Schema.Classes == nil && !r.regression() {
		return usagef("a private run needs --classes a,b,... declared in advance (classes read from the rows would leak them)")
	}
	return nil
}

// checkProject sets the projection of --project: k, 0 for none, or auto
// (the default) for the public rule of private.Options.ProjectAuto. A
// partitioned fit (with --privacy-id too) does not know n before its
// pass, so it refuses an explicit auto and runs without a projection by default.
func (f *Flags) checkProject(set map[string]bool, r *Run) error {
	if f.Project == "auto" {
		partitioned := f.Partitions > 1 || f.PrivacyID != ""
		if partitioned && set["project"] {
			return usagef("--project auto needs the number of training rows before the fit; a partitioned fit (--partitions, --privacy-id) takes --project k")
		}
		r.Options.ProjectAuto = !partitioned
		return nil
	}
	k, err := strconv.Atoi(f.Project)
	if err != nil || k < 0 {
		return usagef("--project %q, want k >= 1, 0 for none, or auto", f.Project)
	}
	r.Options.Project = k
	return nil
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
