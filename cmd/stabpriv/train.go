package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	// The graph engine of --engine graph registers itself with the trainer.
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	_ "github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// trainFlags holds the flags of the train command.
type trainFlags struct {
	data, label, positive string
	classes, bounds       string
	loss                  string
	lambda, l1Ratio, clip string
	passes, batch         int
	step                  string
	schedule              *choice[trainer.Schedule, *trainer.Schedule]
	dropout, radius       float64
	average               bool
	engine                trainer.Engine
	seed                  uint64
	testFrac              float64
	out                   string
	logLevel              string
	labelBound            float64
	tolerance             float64
	mechanism             *choice[perturb.Mechanism, *perturb.Mechanism]
	noise                 string
	noiseSeed             uint64
	epsilon, delta        float64
	standardize           *choice[preprocess.Mode, *preprocess.Mode]
	diagnostics, force    bool
	partitions            int
}

func newTrainFlagSet(f *trainFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.StringVar(&f.data, "data", "", "CSV `file` with a header row and numeric features (default: the embedded breast-cancer data)")
	fs.StringVar(&f.label, "label", "", "label `column` of --data (default with the embedded data: diagnosis)")
	fs.StringVar(&f.classes, "classes", "", "the classes, declared: `a,b,...` (binary: the second is +1); required with --mechanism on --data; matched exactly (case and spaces count): rows with another label are kept as null rows that train nothing, so check a new file once with --diagnostics (null rows)")
	fs.StringVar(&f.positive, "positive", "", "binary tasks without --classes (non-private): the `class` encoded +1 (default: the larger class name)")
	fs.StringVar(&f.bounds, "bounds", "", "CSV `file` of public feature bounds, one line column,lo,hi per feature: values are clamped and scaled into [-1, 1] inside the guarantee")
	f.standardize = newChoice[preprocess.Mode]("auto", map[string]preprocess.Mode{"train": preprocess.Standardize})
	fs.TextVar(f.standardize, "standardize", f.standardize, "feature map: auto (bounds with --bounds or the embedded data; train for a non-private run on --data), none (features as they are), train (standardization fitted on the training split: outside the guarantee)")
	fs.StringVar(&f.loss, "loss", "", "loss: "+strings.Join(losses.Names(), ", ")+" (default: logistic for 2 classes, softmax for more); it sets the task")
	fs.StringVar(&f.lambda, "lambda", "auto", "elastic-net strength lambda >= 0, or auto: with --mechanism, chosen with --clip from (n, d, K, eps) alone; 1e-3 without")
	fs.StringVar(&f.l1Ratio, "l1-ratio", "auto", "elastic-net L1 share alpha in [0, 1] (auto: 0 with --mechanism, 0.15 without); mu = lambda*(1-alpha)")
	fs.StringVar(&f.clip, "clip", "auto", "per-example gradient clipping norm `G` (0: none; auto: with --lambda auto, the rule's G; 0 otherwise)")
	fs.IntVar(&f.passes, "passes", 10, "passes k over the training data")
	fs.IntVar(&f.batch, "batch", 1, "minibatch size b")
	fs.StringVar(&f.step, "step", "auto", "constant step size eta, or auto for 1/beta (beta the smoothness of the per-example objective)")
	f.schedule = newChoice[trainer.Schedule]("auto", nil)
	fs.TextVar(f.schedule, "schedule", f.schedule, "step schedule: constant, inverse-t, bounded-inverse-t (auto: bounded-inverse-t for a release with mu > 0, else constant)")
	fs.Float64Var(&f.dropout, "dropout", 1, "s-dropout fraction `s` in (0, 1] (1: none)")
	fs.Float64Var(&f.radius, "radius", 0, "project the weights onto ||w|| <= `R` (0: none; squared loss needs it)")
	fs.BoolVar(&f.average, "average", false, "return the average of the iterates")
	fs.TextVar(&f.engine, "engine", trainer.Native, "gradient engine: native or graph (Gorgonia)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the split, the permutations and the dropout masks (published in the certificate)")
	fs.Float64Var(&f.testFrac, "test-frac", 0.2, "share of the rows held out for testing, in [0, 1) (0: every row trains)")
	fs.StringVar(&f.out, "out", "", "write the model file ("+modelfile.Format+") to this `file` (parent directories are created; an existing model file is replaced only with --force)")
	fs.BoolVar(&f.force, "force", false, "replace the model file at --out")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: panic, error, warn, info, debug")
	fs.Float64Var(&f.labelBound, "label-bound", 0, "regression: the bound `B` in |y| <= B (squared loss needs it; 0: none); a release clamps labels to it")
	fs.Float64Var(&f.tolerance, "tolerance", 0, "non-private runs: stop after the first pass whose gradient norm is <= `tol` (a data-dependent stop: no release certifies it)")
	f.mechanism = newChoice[perturb.Mechanism]("none", nil)
	fs.TextVar(f.mechanism, "mechanism", f.mechanism, "release mechanism: none (a non-private model), "+release.List()+" (objective and amp perturb the training objective: lambda auto or at least its floor, no SGD knobs)")
	fs.Float64Var(&f.epsilon, "epsilon", 1, "privacy budget `eps` > 0 of the fit")
	fs.Float64Var(&f.delta, "delta", 0, "privacy budget `delta` in [0, 1): 0 for laplace and gamma (pure eps-DP), > 0 for the Gaussian mechanisms")
	fs.StringVar(&f.noise, "noise", "secure", "noise source: secure (a private release), or seeded from --noise-seed (reproducible; its certificate says NOT private, since the seed is published)")
	fs.Uint64Var(&f.noiseSeed, "noise-seed", 0, "seed of --noise seeded (required with it; published in the model file)")
	fs.IntVar(&f.partitions, "partitions", 1, "train `P` partitions, a row's partition a seeded hash of its position (file name, row number), and release the weighted average once (partition.Fit, the Beam pipeline's algorithm); with P > 1, --data may be a glob of CSV shards")
	fs.BoolVar(&f.diagnostics, "diagnostics", false, "also print non-private statistics of the run (metrics of the trained and released weights, objective, passes done): for your eyes only, do not publish")
	fs.SetOutput(io.Discard) // parse errors are returned, not printed
	fs.Usage = func() {}     // the flag package calls it on every error
	return fs
}

// trainHelp is the help of the train command, before its flags.
const trainHelp = "Usage: stabpriv train [flags]\n\n" +
	"Reads the table (--data, or the embedded breast-cancer data), splits its rows by\n" +
	"position (seeded), maps every row x to x' = [clip_1(z), 1]/sqrt(2) with z the feature\n" +
	"map of --standardize, trains, and reports the uniform stability beta and the L2\n" +
	"sensitivity Delta of the weights by every route. With --mechanism it releases the\n" +
	"weights with noise calibrated to Delta and the budget (--epsilon, --delta), and\n" +
	"writes only the released weights and their certificate. The guarantee is about the\n" +
	"rows of the table: with --bounds (or the embedded data) or --standardize none every\n" +
	"step is inside it; --standardize train is outside it, with a warning.\n\n" +
	"A private run on --data needs --classes (binary: the second class is +1) and\n" +
	"--bounds FILE or --standardize none|train. Without --lambda, the release chooses\n" +
	"lambda and the clipping norm from (n, d, K, eps) alone."

// settings are the checked values of the train flags.
type settings struct {
	trainFlags
	set    map[string]bool
	schema datasets.Schema
	budget dp.Budget
	opts   private.Options
	level  logrus.Level
	table  *datasets.Table
	// shards are the tables of a partitioned run (table is the first).
	shards []*datasets.Table
}

// parseTrain parses and checks the flags and reads the inputs; every error
// is returned before any training.
func parseTrain(args []string, stderr io.Writer) (*settings, error) {
	var f trainFlags
	set, err := parseFlags(newTrainFlagSet(&f), args, stderr, trainHelp)
	if err != nil {
		return nil, err
	}
	s := &settings{trainFlags: f, set: set}
	if s.level, err = logrus.ParseLevel(f.logLevel); err != nil {
		return nil, usagef("--log-level: %w", err)
	}
	if err := s.parsePrivacy(); err != nil {
		return nil, err
	}
	if err := s.parseKnobs(); err != nil {
		return nil, err
	}
	if err := s.parseData(); err != nil {
		return nil, err
	}
	return s, nil
}

// parsePrivacy checks the mechanism, the budget and the noise source.
func (s *settings) parsePrivacy() error {
	name, private := s.mechanism.value()
	if !private {
		for _, name := range []string{"epsilon", "delta", "noise", "noise-seed"} {
			if s.set[name] {
				return usagef("--%s applies to a private release; choose --mechanism %s", name, perturb.MechanismList())
			}
		}
		return nil
	}
	method, err := release.Lookup(name)
	if err != nil {
		return usagef("--mechanism %q, want none, %s", name, release.List())
	}
	m := method.Name()
	if err := method.CheckBudget(dp.Budget{Epsilon: s.epsilon, Delta: s.delta}); err != nil {
		return usagef("--mechanism %s --epsilon %v --delta %v: %w%s", m, s.epsilon, s.delta, err, privacyHint(m, err))
	}
	if _, err := perturb.Lookup(m); err != nil {
		// The SGD knobs apply to output perturbation, which releases the
		// weights of an SGD run.
		for _, name := range []string{"passes", "batch", "step", "schedule", "engine", "clip", "dropout", "radius", "average", "partitions", "l1-ratio"} {
			if s.set[name] {
				return usagef("--%s does not apply to --mechanism %s, which minimizes the ridge-regularized objective exactly (no SGD knobs, no clipping, dropout, projection or L1 term, one partition)", name, m)
			}
		}
	}
	s.opts.Mechanism, s.budget = m, dp.Budget{Epsilon: s.epsilon, Delta: s.delta}
	switch s.noise {
	case "secure":
		if s.set["noise-seed"] {
			return usagef("--noise-seed applies to --noise seeded")
		}
	case "seeded":
		if !s.set["noise-seed"] {
			return usagef("--noise seeded needs --noise-seed N (separate from --seed; it is published, so the release is not private)")
		}
		s.opts.Noise = perturb.Seeded(s.noiseSeed)
	default:
		return usagef("--noise %q, want secure or seeded", s.noise)
	}
	if s.tolerance != 0 {
		return usagef("--tolerance stops a run at a data-dependent pass, which no release certifies; drop it for a private run")
	}
	return nil
}

// privacyHint says how to fix the privacy flags that gave err.
func privacyHint(m perturb.Mechanism, err error) string {
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

// parseFloatFlag parses a numeric flag value that may be "auto".
func parseFloatFlag(name, v string, lo, hi float64) (float64, bool, error) {
	if v == "auto" {
		return 0, true, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return 0, false, usagef("--%s %q, want auto or a number in [%g, %g]", name, v, lo, hi)
	}
	return x, false, nil
}

// parseKnobs checks the training knobs and fills s.opts.Trainer.
func (s *settings) parseKnobs() error {
	priv := s.opts.Mechanism != ""
	cfg := &s.opts.Trainer
	if s.loss != "" {
		l, err := losses.ByName(s.loss)
		if err != nil {
			return usagef("--loss: %w", err)
		}
		cfg.Loss = l
	}
	lambda, autoLambda, err := parseFloatFlag("lambda", s.lambda, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	alpha, autoAlpha, err := parseFloatFlag("l1-ratio", s.l1Ratio, 0, 1)
	if err != nil {
		return err
	}
	clip, autoClip, err := parseFloatFlag("clip", s.clip, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	if autoLambda && !priv {
		lambda = 1e-3
	}
	if autoAlpha && !priv {
		alpha = 0.15
	}
	s.opts.Auto = priv && autoLambda
	if s.opts.Auto {
		for _, name := range []string{"clip", "l1-ratio", "schedule", "step"} {
			if s.set[name] {
				return usagef("--%s: with --lambda auto the release chooses lambda, --clip, --l1-ratio 0 and the schedule itself; give --lambda to set them", name)
			}
		}
	} else if autoClip {
		clip = 0
	}
	cfg.Reg = regularizers.ElasticNet{Lambda: lambda, L1Ratio: alpha}
	cfg.Clip, cfg.Dropout, cfg.Radius, cfg.Average = clip, s.dropout, s.radius, s.average
	cfg.Passes, cfg.Batch, cfg.Tolerance, cfg.LabelBound = s.passes, s.batch, s.tolerance, s.labelBound
	if s.passes <= 0 || s.batch <= 0 {
		return usagef("--passes %d, --batch %d, want >= 1", s.passes, s.batch)
	}
	if s.dropout <= 0 || s.dropout > 1 || math.IsNaN(s.dropout) {
		return usagef("--dropout %v, want in (0, 1]", s.dropout)
	}
	cfg.Engine = s.engine
	schedule, given := s.schedule.value()
	if !given && priv && s.step == "auto" && lambda*(1-alpha) > 0 {
		schedule = trainer.BoundedInverseT
	}
	if schedule == trainer.Custom {
		return usagef("--schedule custom needs a step function: use the library")
	}
	cfg.Schedule = schedule
	if s.step != "auto" {
		eta, err := strconv.ParseFloat(s.step, 64)
		if err != nil || !check.Positive(eta) {
			return usagef("--step %q, want auto or a finite number > 0", s.step)
		}
		if cfg.Schedule != trainer.Constant {
			return usagef("--step %s applies to the constant schedule, not %s", s.step, cfg.Schedule)
		}
		cfg.Eta = eta
	}
	if !check.HalfOpenUnit(s.testFrac) {
		return usagef("--test-frac %v, want in [0, 1)", s.testFrac)
	}
	s.opts.TestFrac, s.opts.Seed = s.testFrac, s.seed
	// A run without a claim shows its metrics; a release only on request.
	s.opts.Diagnostics = s.diagnostics || s.opts.Mechanism == ""
	if cfg.Loss != nil {
		task := cfg.Loss.Task()
		if s.positive != "" && task != losses.Binary {
			return usagef("--positive applies to binary losses, not %s (%v)", s.loss, task)
		}
		if s.labelBound != 0 && task != losses.Regression {
			return usagef("--label-bound applies to regression losses, not %s (%v)", s.loss, task)
		}
	}
	return nil
}

// parseData reads the table, the bounds and the schema.
func (s *settings) parseData() error {
	priv := s.opts.Mechanism != ""
	if s.partitions < 1 || s.partitions > datasets.MaxPartitions {
		return usagef("--partitions %d, want 1 to %d", s.partitions, datasets.MaxPartitions)
	}
	var err error
	if s.data == "" {
		if s.label != "" && s.label != "diagnosis" {
			return usagef("--label %q without --data: the embedded data set's label is diagnosis", s.label)
		}
		if s.classes != "" || s.positive != "" {
			return usagef("--classes and --positive apply to --data; the embedded data declares benign and malignant (+1)")
		}
		if s.table, s.schema, err = datasets.DefaultTable(); err != nil {
			return err
		}
		s.label = s.schema.Label
	} else {
		if s.label == "" {
			return usagef("--data needs --label, the name of the label column")
		}
		if st, err := os.Stat(s.data); err == nil && st.IsDir() {
			return usagef("--data %s is a directory; give a CSV file", s.data)
		}
		if s.partitions > 1 && s.classes == "" && (s.opts.Trainer.Loss == nil || s.opts.Trainer.Loss.Task() != losses.Regression) {
			return usagef("--partitions needs --classes declared: the partitions must agree on them")
		}
		s.schema = datasets.Schema{Label: s.label, LabelBound: s.labelBound}
		if s.classes != "" {
			s.schema.Classes = strings.Split(s.classes, ",")
			for i := range s.schema.Classes {
				s.schema.Classes[i] = strings.TrimSpace(s.schema.Classes[i])
			}
			if s.positive != "" {
				return usagef("--positive: with --classes the second declared class is +1")
			}
		}
	}
	if s.bounds != "" {
		b, err := datasets.ReadBoundsFile(s.bounds)
		if err != nil {
			return usagef("--bounds: %w", err)
		}
		s.schema.Bounds = b
	}
	if mode, given := s.standardize.value(); given {
		if mode == preprocess.Bounds {
			return usagef("--standardize bounds: give --bounds FILE (--standardize auto uses it)")
		}
		if s.bounds != "" {
			return usagef("--bounds and --standardize %s exclude each other", s.standardize.text)
		}
		s.opts.Preprocess = mode
	} else if s.schema.Bounds == nil && priv {
		return usagef("a private run on --data needs --bounds FILE (public feature bounds, inside the guarantee) or --standardize none|train (train is outside the guarantee)")
	}
	if s.data != "" {
		if err := s.readShards(); err != nil {
			return err
		}
	}
	if s.partitions > 1 {
		if s.opts.Preprocess == preprocess.Standardize {
			return usagef("--partitions: a standardization fitted on the rows is refused; give --bounds or --standardize none")
		}
		if s.tolerance != 0 {
			return usagef("--partitions: --tolerance stops at a data-dependent pass")
		}
		// Partitioned fits split by a hash of positions and compute no
		// diagnostics.
		s.opts.Stratify, s.opts.Diagnostics = false, false
		return nil
	}
	if priv {
		if s.schema.Classes == nil && (s.opts.Trainer.Loss == nil || s.opts.Trainer.Loss.Task() != losses.Regression) {
			return usagef("a private run needs --classes a,b,... declared in advance (classes read from the rows would leak them)")
		}
		return nil
	}
	// A non-private run may read its classes from the rows, and keeps the
	// stratified split of classification.
	s.opts.Stratify = s.testFrac > 0 && (s.opts.Trainer.Loss == nil || s.opts.Trainer.Loss.Task() != losses.Regression)
	if s.schema.Classes == nil && s.data != "" && (s.opts.Trainer.Loss == nil || s.opts.Trainer.Loss.Task() != losses.Regression) {
		s.schema.Classes, err = datasets.ObservedClasses(s.table, s.label, s.positive, s.opts.Trainer.Loss)
		if err != nil {
			return usagef("%w", err)
		}
	}
	return nil
}

// readShards reads --data: one CSV file, or with --partitions > 1 every
// file the glob matches (in name order), each a shard.
func (s *settings) readShards() error {
	paths := []string{s.data}
	if s.partitions == 1 && strings.ContainsAny(s.data, "*?[") {
		if _, err := os.Stat(s.data); err != nil {
			return usagef("--data %q looks like a glob: shards are read with --partitions P > 1", s.data)
		}
	}
	if s.partitions > 1 {
		m, err := filepath.Glob(s.data)
		if err != nil {
			return usagef("--data %q: %w", s.data, err)
		}
		if len(m) == 0 {
			return fmt.Errorf("--data %q matches no file", s.data)
		}
		paths = m
	}
	for _, p := range paths {
		t, err := datasets.ReadTableFile(p)
		if err != nil {
			return err
		}
		s.shards = append(s.shards, t)
	}
	s.table = s.shards[0]
	return nil
}

// runTrain is the train command.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parseTrain(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := checkOutFile("--out", s.out, s.force); err != nil {
		return err
	}
	log := logrus.New()
	log.SetOutput(stderr)
	log.SetLevel(s.level)
	s.opts.Logger = log
	if s.opts.Preprocess == preprocess.Standardize && s.opts.Mechanism != "" {
		log.Warn("--standardize train: the standardization statistics are fitted on the training split and are not private; the certificate does not cover the table, only the standardized rows")
	}
	var rel *modelfile.Released
	if s.partitions > 1 {
		if s.data == "" {
			s.shards = []*datasets.Table{s.table}
		}
		rel, err = partition.Fit(ctx, s.shards, s.schema, s.budget, s.opts, s.partitions)
	} else {
		rel, err = private.Fit(ctx, s.table, s.schema, s.budget, s.opts)
	}
	if err != nil {
		if errors.Is(err, datasets.ErrSchema) || errors.Is(err, private.ErrOptions) || errors.Is(err, dp.ErrBudget) || errors.Is(err, trainer.ErrConfig) || errors.Is(err, release.ErrConfig) {
			return &usageError{err}
		}
		return err
	}
	if err := printFit(stdout, s, rel); err != nil {
		return err
	}
	if s.out != "" {
		if err := rel.WriteFile(s.out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nmodel written to %s\n", s.out)
	}
	return nil
}
