package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/modelfile/describe"
)

// trainFlags holds the flags of the train command: those it shares with
// stabpriv-beam (runflags) and its own.
type trainFlags struct {
	runflags.Flags
	data, positive     string
	header             string
	ignore, features   string
	tolerance          float64
	out                string
	diagnostics, force bool
}

func newTrainFlagSet(f *trainFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	f.Register(fs)
	fs.StringVar(&f.data, "data", "", "CSV `file` with a header row (or --header), the feature columns (numbers, missing cells, text: see --hash-buckets and --schema) and the label (default: the embedded breast-cancer data, label diagnosis); with --partitions P > 1 or --privacy-id, a glob of CSV shards")
	fs.StringVar(&f.header, "header", "", "the column `names` a,b,... of a --data file without a header row (its first line is then a data row), such as UCI Adult's adult.data")
	fs.StringVar(&f.ignore, "ignore", "", "leave the columns `a,b,...` out of the features (an ID, free text): chosen by name, so it reads no row")
	fs.StringVar(&f.features, "features", "", "use only the columns `a,b,...` as features (the label and --privacy-id are kept, named or not): chosen by name, so it reads no row; the bounds and categories declared for the other columns are dropped with them")
	fs.StringVar(&f.positive, "positive", "", "binary tasks without --classes (non-private): the `class` encoded +1 (default: the larger class name)")
	fs.Float64Var(&f.tolerance, "tolerance", 0, "non-private runs: stop after the first pass whose gradient norm is <= `tol` (a data-dependent stop: no release certifies it)")
	fs.StringVar(&f.out, "out", "", "write the model file ("+modelfile.Format+") to this local `file` (not a URL; parent directories are created; an existing file is replaced only with --force, an input never)")
	fs.BoolVar(&f.force, "force", false, "replace the file at --out")
	fs.BoolVar(&f.diagnostics, "diagnostics", false, "also print non-private statistics of the run (metrics of the trained and released weights, objective, passes done): for your eyes only, do not publish")
	fs.SetOutput(io.Discard) // parse errors are returned, not printed
	fs.Usage = func() {}     // the flag package calls it on every error
	return fs
}

// trainHelp is the help of the train command, before its flags.
const trainHelp = "Usage: stabpriv train [flags]\n\n" +
	"Reads the table (--data, or the embedded breast-cancer data), holds out --test-frac\n" +
	"of its rows by position (seeded; none by default), maps every row x to\n" +
	"x' = [clip_1(z), 1]/sqrt(2) with z the feature map of --standardize, trains, and\n" +
	"reports the uniform stability beta and the L2 sensitivity Delta of the weights by\n" +
	"every route. Every run is private: it releases the weights within the budget\n" +
	"(--epsilon, default 1, and --delta) by --mechanism or, without it, by the public\n" +
	"rule, and writes only the released weights and their certificate; --mechanism none\n" +
	"asks for a non-private model. The guarantee is about the\n" +
	"rows of the table: with --bounds FILE, --bounds-all lo,hi, the estimated bounds or\n" +
	"--standardize none every step is inside it; --standardize train is outside it, with\n" +
	"a warning.\n\n" +
	"A private run on --data needs --classes (binary: the second class is +1). Without\n" +
	"--bounds or --bounds-all it standardizes each column by a centre and a spread\n" +
	"estimated privately from the training rows and reads it on the log scale\n" +
	"sign(t) log2(1 + |t|), with --bounds-share of --epsilon (left out, what they need,\n" +
	"from 0.1 up to 0.5), stated in the ledger; with too few rows for them, by a public\n" +
	"log map at no cost. --bounds-method ranges estimates linear power-of-two ranges\n" +
	"instead where the rows pay for them.\n" +
	"With --epsilon and no --mechanism, the release chooses the mechanism and lambda\n" +
	"by a public rule (--select rule, the default) or a private selection inside the\n" +
	"budget (--select holdout or random-stopping). Where its guarantee is not vacuous,\n" +
	"the rule releases a private decision stump (--mechanism stump) for two to ten\n" +
	"classes with at least as many mapped features as training rows and the bounds\n" +
	"preprocessing (in practice declared bounds or categorical columns, as the bounds\n" +
	"estimate needs far more rows than numeric columns), for three to ten classes at a\n" +
	"pure budget (no --delta) whatever the width, and on the public log map (rows too\n" +
	"few for the feature scales) whatever the width. The rule cannot see whether\n" +
	"the signal is sparse: on data whose\n" +
	"signal is spread over many features a linear release can beat the stump at a large\n" +
	"eps; name it (--mechanism objective, ...) there. With --partitions P > 1 the rule\n" +
	"releases the average of the partitions' SGD runs by output perturbation: gamma for\n" +
	"a pure budget, the analytic Gaussian with --delta, at their automatic knobs (the\n" +
	"same model as naming that --mechanism); a private selection is for a single fit.\n" +
	"With --mechanism and no --lambda, it uses the mechanism's rule for lambda and the\n" +
	"clipping norm, from (n, d, K, eps) alone. When the mapped features outnumber the\n" +
	"training rows and --project is not given (or is auto), it projects them to k\n" +
	"dimensions, k from (n, d, K, eps) alone (a public rule, no budget). With --pca k\n" +
	"(and --delta) it projects them instead on k principal directions computed privately\n" +
	"from the training rows (Analyze Gauss) with --pca-share of --epsilon and --delta\n" +
	"(default 0.2), stated in the ledger; the directions are in the model file. Before\n" +
	"training it warns when the budget cannot buy a useful model, and after it when the\n" +
	"released model predicts one class for every row its feature map can produce.\n\n" +
	"With --privacy-id COLUMN --max-rows-per-id c the unit of privacy is a user: all\n" +
	"the rows with one ID. At most c rows of each ID are kept (a seeded choice) and\n" +
	"padded to c with null rows, the ID's rows train in one partition, and the noise is\n" +
	"c times the bound for one row. The set of IDs (and their number) is public. It is a\n" +
	"partitioned fit (--partitions P, default 1): it needs --classes and public bounds.\n" +
	"Without --mechanism it releases by the partitioned rule, whose automatic lambda (as\n" +
	"that of a named mechanism without --lambda) is sqrt(c) times the one for rows."

// settings are the checked values of the train flags.
type settings struct {
	trainFlags
	*runflags.Run
	table *datasets.Table
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
	if err := checkNotEmpty(set, "out", f.out, "no model file is written then"); err != nil {
		return nil, err
	}
	s := &settings{trainFlags: f}
	var defaults *datasets.Schema
	if f.header != "" {
		if f.data == "" {
			return nil, usagef("--header names the columns of a --data file without a header row")
		}
		if err := checkHeader(f.header); err != nil {
			return nil, err
		}
	}
	if f.data == "" {
		table, schema, err := datasets.DefaultTable()
		if err != nil {
			return nil, err
		}
		if f.positive != "" {
			return nil, usagef("--positive applies to --data; the embedded data declares %s (+1)", schema.Classes[1])
		}
		s.table, defaults = table, &schema
	}
	if s.Run, err = f.Check(set, defaults); err != nil {
		return nil, err
	}
	if err := f.CheckEngine(graphEngine); err != nil {
		return nil, err
	}
	priv := s.Private()
	if priv && f.tolerance != 0 {
		return nil, usagef("--tolerance stops a run at a data-dependent pass, which no release certifies; drop it for a private run")
	}
	s.Options.Trainer.Tolerance = f.tolerance
	// A run without a claim shows its metrics; a release only on request.
	s.Options.Diagnostics = f.diagnostics || !priv
	if err := s.CheckPositive(f.positive); err != nil {
		return nil, err
	}
	if f.positive != "" && s.Schema.Classes != nil {
		return nil, usagef("--positive: with --classes the second declared class is +1")
	}
	if f.data != "" {
		if st, err := os.Stat(f.data); err == nil && st.IsDir() {
			return nil, usagef("--data %s is a directory; give a CSV file", f.data)
		}
		if err := s.readShards(); err != nil {
			return nil, err
		}
	}
	if err := s.selectColumns(); err != nil {
		return nil, err
	}
	if s.partitioned() {
		if f.tolerance != 0 {
			return nil, usagef("--partitions, --privacy-id: --tolerance stops at a data-dependent pass")
		}
		// Partitioned fits split by a hash of positions and compute no
		// diagnostics.
		s.Options.Diagnostics = false
		return s, nil
	}
	if priv || s.Regression() {
		return s, nil
	}
	// A non-private run may read its classes from the rows, and keeps the
	// stratified split of classification.
	s.Options.Stratify = f.TestFrac > 0
	if s.Schema.Classes == nil && f.data != "" {
		s.Schema.Classes, err = datasets.ObservedClasses(s.table, s.Schema.Label, f.positive, s.Options.Trainer.Loss)
		if err != nil {
			return nil, usagef("%w", err)
		}
	}
	return s, nil
}

// selectColumns leaves out of every table of the run the columns of
// --ignore, and with --features every column that is not named there, the
// label or the privacy ID: a choice by the header's names, public, made
// before any row is read for training.
func (s *settings) selectColumns() error {
	if s.ignore == "" && s.features == "" {
		return nil
	}
	split := func(flag, v string) ([]string, error) {
		if v == "" {
			return nil, nil
		}
		var out []string
		for _, c := range strings.Split(v, ",") {
			c = strings.TrimSpace(c)
			switch {
			case c == "":
				return nil, usagef("--%s %q: a column name is empty", flag, v)
			case flag == "ignore" && (c == s.Schema.Label || c == s.Options.PrivacyID):
				return nil, usagef("--ignore names %q, the label or the privacy ID, which is not a feature and is always kept", c)
			case !slices.Contains(s.table.Columns, c):
				return nil, usagef("--%s names %q, which is not a column; the columns are %s", flag, c, strings.Join(s.table.Columns, ", "))
			}
			out = append(out, c)
		}
		return out, nil
	}
	drop, err := split("ignore", s.ignore)
	if err != nil {
		return err
	}
	keep, err := split("features", s.features)
	if err != nil {
		return err
	}
	for _, c := range drop {
		if slices.Contains(keep, c) {
			return usagef("--ignore and --features both name %q", c)
		}
	}
	if keep != nil {
		for _, c := range s.table.Columns {
			if !slices.Contains(keep, c) && c != s.Schema.Label && c != s.Options.PrivacyID {
				drop = append(drop, c)
			}
		}
	}
	slices.Sort(drop)
	drop = slices.Compact(drop)
	if len(drop) >= len(s.table.Columns)-1 {
		return usagef("--ignore and --features leave no feature column")
	}
	if s.shards == nil {
		s.shards = []*datasets.Table{s.table}
	}
	for _, t := range s.shards {
		// In place: the columns left out are never a second copy.
		if err := t.DropInPlace(drop); err != nil {
			return usagef("%w", err)
		}
	}
	s.table = s.shards[0]
	// The bounds and categories of the columns left out go with them (the
	// embedded data's shipped bounds, a bounds or schema file for the whole
	// table).
	s.Schema.Bounds = slices.DeleteFunc(slices.Clone(s.Schema.Bounds), func(b datasets.Bound) bool { return slices.Contains(drop, b.Column) })
	s.Schema.Categories = slices.DeleteFunc(slices.Clone(s.Schema.Categories), func(c datasets.Categorical) bool { return slices.Contains(drop, c.Column) })
	return nil
}

// partitioned reports whether the run is a partitioned fit
// (runflags.Run.Partitioned).
func (s *settings) partitioned() bool { return s.Partitioned(s.Partitions) }

// readShards reads --data (runflags.ReadData): one CSV file, or with
// --partitions > 1 (or --privacy-id) every file the glob matches.
func (s *settings) readShards() error {
	shards, err := runflags.ReadData(s.data, s.header, s.partitioned())
	if err != nil {
		return err
	}
	s.shards, s.table = shards, shards[0]
	return nil
}

// progressAfter is how long a train run stays quiet at the default log
// level before it logs its progress (info) on stderr.
// (A variable for the tests.)
var progressAfter = 2 * time.Second

// runTrain is the train command.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parseTrain(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	rep := keep
	if s.force {
		rep = anyFile
	}
	if err := checkOutFile("--out", s.out, rep, s.inputs()...); err != nil {
		return err
	}
	log, settle := progressLogger(stderr, s.Level)
	defer settle()
	s.Options.Logger = log
	if s.StandardizedOnRows() {
		log.Warn("--standardize train: the standardization statistics are fitted on the training split and are not private; the certificate does not cover the table, only the standardized rows")
	}
	if s.Private() {
		if w := s.Forecast(s.table, s.shards, s.Partitions); w != "" {
			log.Warn(w)
		}
	}
	fields := logrus.Fields{"source": s.table.Source}
	if s.Options.PrivacyID == "" {
		// Per privacy ID the number of rows read depends on the users'
		// row counts, which the relation protects: only c times the
		// number of IDs is public.
		fields["rows"] = s.table.Len()
	}
	log.WithFields(fields).Info("train: fitting")
	rel, err := fit(ctx, s)
	if err != nil {
		return err
	}
	settle()
	log.Info("train: done")
	if c, ok := rel.ConstantClass(); ok {
		// Post-processing of the released weights: free.
		log.Warnf("the released model predicts %q for every row its feature map can produce: it is useless; a larger --epsilon, more rows, fewer features (--features, --ignore) or declared bounds may help", c)
	}
	if s.out != "" {
		// Written before the report: a reader that stops reading the
		// report (| head) must not lose the release.
		if err := rel.WriteFile(s.out, s.force); err != nil {
			return outputError("--out", err)
		}
	}
	words := describe.Run{Source: s.table.Source, Shards: len(s.shards), Pattern: s.data, NoiseSeed: s.NoiseSeed, Auto: s.Options.Auto}
	if err := describe.Fit(stdout, words, rel); err != nil {
		return err
	}
	if s.out != "" {
		fmt.Fprintf(stdout, "\nmodel written to %s\n", s.out)
	}
	return nil
}

// progressLogger returns the logger of a run at level: at info (the
// default) it stays at warn until the run has taken progressAfter, then
// logs its progress. settle ends the quiet period (waiting for the
// progress log's start if it began), so that the run's last line is logged
// after its first; it may be called more than once.
func progressLogger(stderr io.Writer, level logrus.Level) (log *logrus.Logger, settle func()) {
	log = logrus.New()
	log.SetOutput(stderr)
	log.SetLevel(level)
	if level != logrus.InfoLevel {
		return log, func() {}
	}
	log.SetLevel(logrus.WarnLevel)
	started := make(chan struct{})
	start := func() {
		log.SetLevel(logrus.InfoLevel)
		log.Info("train: still running")
		close(started)
	}
	if progressAfter <= 0 {
		start()
		return log, func() {}
	}
	t := time.AfterFunc(progressAfter, start)
	return log, sync.OnceFunc(func() {
		if !t.Stop() {
			<-started
		}
	})
}

// fit runs the fit s asks for (runflags.Run.Fit): partitioned (with a
// privacy ID too) or not. Errors of settings that cannot make a run are
// usage errors.
func fit(ctx context.Context, s *settings) (*modelfile.Released, error) {
	if s.partitioned() && s.data == "" {
		s.shards = []*datasets.Table{s.table}
	}
	return s.Fit(ctx, s.table, s.shards, s.Partitions)
}

// inputs returns the paths of the files the run reads: the data (every
// shard), the bounds and the categories.
func (s *settings) inputs() []string {
	in := []string{s.Bounds, s.Categories, s.data}
	// A shard's Source is its name under the input root, not a path:
	// list the files the pattern matches.
	if m, err := filepath.Glob(s.data); err == nil {
		in = append(in, m...)
	}
	return in
}

// checkHeader checks the column names of --header a,b,...: non-empty and
// distinct (a usage error otherwise).
func checkHeader(header string) error {
	seen := map[string]bool{}
	for _, c := range strings.Split(header, ",") {
		if c = strings.TrimSpace(c); c == "" || seen[c] {
			return usagef("--header %q: the column names must be non-empty and distinct", header)
		}
		seen[c] = true
	}
	return nil
}
