package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/experiments"
	"github.com/stabpriv/stabpriv/perturb"
)

// dataEnv names the environment variable holding the data directory.
const dataEnv = "STABPRIV_DATA"

// paperFlags holds the flags shared by the sweep and featsel commands.
type paperFlags struct {
	dataset, dataDir   string
	data, label        string
	splits, passes     int
	passesList         string
	passList           []int
	lambdas, epsilons  string
	mechanism          string
	delta, l1Ratio     float64
	rowScale           string
	seed               uint64
	out, logLevel      string
	force              bool
	fixedScale         float64 // sweep
	components         int
	rate               float64 // featsel
	thresholds         string  // featsel
	lambdaList, epList []float64
	mechs              []perturb.Mechanism
	thresholdList      []float64
	level              logrus.Level
	protocol           experiments.ProtocolConfig
}

// newPaperFlagSet declares the shared flags of the command name.
func newPaperFlagSet(name string, f *paperFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.dataset, "dataset", "", "data set: "+strings.Join(experiments.DataSets, ", ")+" (required)")
	fs.StringVar(&f.dataDir, "data-dir", "", "`directory` holding adult/, lastfm_asia/ and gene_all/ (default: $"+dataEnv+")")
	fs.StringVar(&f.data, "data", "", "csv data set: the CSV `file` (header row, numeric features, a label of two classes (logistic) or more (softmax))")
	fs.StringVar(&f.label, "label", "", "csv data set: the label `column`")
	fs.IntVar(&f.splits, "splits", experiments.DefaultSplits, "number of seeded 80/20 splits (split s uses seed+s)")
	fs.StringVar(&f.lambdas, "lambdas", "", "comma-separated elastic-net strengths (default: 7 log-spaced values, from 1e-4 to 1e-2 for adult and csv, 1e-4 to 1e-1 for lastfm, 1e-3 to 1 for gene_all)")
	fs.StringVar(&f.epsilons, "epsilons", "0.1,0.5,1,2,5", "comma-separated privacy levels eps")
	fs.StringVar(&f.mechanism, "mechanism", string(perturb.Gamma), "noise: one of "+perturb.MechanismList()+" (sweep: a comma-separated list, released side by side, which may also name the training-time mechanisms objective and amp)")
	fs.Float64Var(&f.delta, "delta", experiments.DefaultDelta, "delta of the Gaussian mechanisms (ignored by gamma and laplace)")
	fs.Float64Var(&f.l1Ratio, "l1-ratio", experiments.DefaultL1Ratio, "elastic-net L1 share alpha in [0, 1); mu = lambda*(1-alpha)")
	fs.StringVar(&f.passesList, "passes", strconv.Itoa(experiments.DefaultPasses), "SGD passes (sweep: a comma-separated list)")
	fs.IntVar(&f.components, "components", experiments.DefaultComponents, "truncated-SVD components fitted on each training split (the paper's protocol: 32; -1 keeps every feature; lastfm is reduced by its loader)")
	fs.StringVar(&f.rowScale, "row-scale", experiments.ScaleClipOnly.String(), "map before clipping rows into the unit ball: clip or sqrt-d")
	fs.Uint64Var(&f.seed, "seed", 1, "base seed of the splits, the training and the (seeded) noise")
	fs.StringVar(&f.out, "out", "", "output `directory` (created; required; existing files there are replaced only with --force, an input or a model file never)")
	fs.BoolVar(&f.force, "force", false, "replace existing output files in --out (never a model file, nor an input)")
	runflags.LogLevelVar(fs, &f.logLevel)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// outputFiles are the files each paper command writes into --out
// (experiments.WriteSweep, experiments.WriteFeatSel).
var outputFiles = map[string][]string{
	"sweep":   {"results.csv", "summary.json", "fig1.png", "frontier.png", "fig2.png"},
	"featsel": {"featsel.csv", "fig3.png", "fig5.png"},
}

// listVar defines the flag name of a comma-separated list, read by parse:
// p stays nil unless the flag is given, and an empty list is refused.
func listVar[T any](fs *flag.FlagSet, p *[]T, name, usage string, parse func(string, string) ([]T, error)) {
	fs.Func(name, usage, func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("--%s: empty list", name)
		}
		v, err := parse(name, s)
		*p = v
		return err
	})
}

// parseBools parses a comma-separated list of true/false.
func parseBools(name, s string) ([]bool, error) {
	var out []bool
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseBool(strings.TrimSpace(part))
		if err != nil {
			return nil, usagef("--%s: %q is not true or false", name, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// parsePaper parses and checks the shared flags; every error is a usage
// error. help prints the command's help.
func parsePaper(fs *flag.FlagSet, f *paperFlags, args []string, stderr io.Writer, help string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, help, "\nFlags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return err
		}
		return usagef("%w (run 'stabpriv help %s' for the flags)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if f.lambdaList, err = runflags.Floats("lambdas", f.lambdas); err != nil {
		return err
	}
	if f.epList, err = runflags.Floats("epsilons", f.epsilons); err != nil {
		return err
	}
	if f.thresholdList, err = runflags.Floats("thresholds", f.thresholds); err != nil {
		return err
	}
	if f.passList, err = runflags.Ints("passes", f.passesList); err != nil {
		return err
	}
	if len(f.passList) == 0 {
		return usagef("--passes: empty list")
	}
	f.passes = f.passList[0]
	if f.level, err = runflags.ParseLogLevel(f.logLevel); err != nil {
		return err
	}
	rs, err := experiments.ParseRowScale(f.rowScale)
	if err != nil {
		return usagef("--row-scale: %w", err)
	}
	if f.components == 0 || f.components < -1 {
		return usagef("--components %d, want >= 1, or -1 for no SVD", f.components)
	}
	if f.components != experiments.DefaultComponents && f.dataset == "lastfm" {
		return usagef("--components: lastfm is reduced by its loader (32 components, fitted on all nodes), not by the protocol")
	}
	if f.splits < 1 {
		return usagef("--splits %d, want >= 1", f.splits)
	}
	for _, p := range f.passList {
		if p < 1 {
			return usagef("--passes %d, want >= 1", p)
		}
	}
	if !(f.l1Ratio >= 0 && f.l1Ratio < 1) {
		return usagef("--l1-ratio %v, want in [0, 1): the stability route needs mu = lambda(1 - l1 ratio) > 0", f.l1Ratio)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	pure := true
	for _, name := range strings.Split(f.mechanism, ",") {
		mech, err := perturb.ParseMechanism(strings.TrimSpace(name))
		if err != nil {
			return usagef("--mechanism: %w", err)
		}
		if slices.Contains(f.mechs, mech) {
			return usagef("--mechanism: %s repeated", mech)
		}
		if mech == perturb.Stump {
			return usagef("--mechanism stump: %s sweeps lambda over released linear models, and the decision stump has no lambda; train one with 'stabpriv train --mechanism stump'", fs.Name())
		}
		if _, err := perturb.Lookup(mech); fs.Name() != "sweep" && err != nil {
			return usagef("--mechanism %s: %s releases trained weights by output perturbation; the training-time mechanisms run in sweep", mech, fs.Name())
		}
		f.mechs = append(f.mechs, mech)
		pure = pure && mech.Pure()
	}
	if fs.Name() != "sweep" && (len(f.mechs) > 1 || len(f.passList) > 1 || f.l1Ratio == 0) {
		return usagef("%s takes one --mechanism, one --passes and an --l1-ratio in (0, 1)", fs.Name())
	}
	switch {
	case pure && set["delta"] && f.delta != 0:
		return usagef("--delta %v with --mechanism %s: a pure mechanism takes no delta", f.delta, f.mechanism)
	case !pure && !(f.delta > 0 && f.delta < 1):
		return usagef("--delta %v with --mechanism %s, want in (0, 1)", f.delta, f.mechanism)
	}
	rep := keep
	if f.force {
		rep = notModels
	}
	if err := checkOutDir("--out", f.out, rep, []string{f.data}, outputFiles[fs.Name()]...); err != nil {
		return err
	}
	switch f.dataset {
	case "":
		return usagef("--dataset is required: one of %s", strings.Join(experiments.DataSets, ", "))
	case experiments.CSV:
		if f.data == "" || f.label == "" {
			return usagef("--dataset csv needs --data FILE and --label COLUMN")
		}
	default:
		if !slices.Contains(experiments.DataSets, f.dataset) {
			return usagef("--dataset %q, want one of %s", f.dataset, strings.Join(experiments.DataSets, ", "))
		}
		if f.data != "" || f.label != "" {
			return usagef("--data and --label apply to --dataset csv only")
		}
		if f.dataDir == "" {
			f.dataDir = os.Getenv(dataEnv)
		}
		if f.dataDir == "" {
			return usagef("no data directory: give --data-dir DIR (e.g. ../shared/datasets) or set $%s", dataEnv)
		}
	}
	f.protocol = experiments.ProtocolConfig{Dataset: f.dataset, DataDir: f.dataDir, CSVFile: f.data, Label: f.label, RowScale: rs, Components: f.components}
	return nil
}

// logger returns a logrus logger on w at the flags' level.
func (f *paperFlags) logger(w io.Writer) *logrus.Logger {
	log := logrus.New()
	log.SetOutput(w)
	log.SetLevel(f.level)
	return log
}

// asUsage turns an experiments.ErrConfig error (a bad flag value the
// shared checks did not catch) into a usage error.
func asUsage(err error) error {
	if errors.Is(err, experiments.ErrConfig) {
		return &usageError{Err: err}
	}
	return err
}

const sweepHelp = `Usage: stabpriv sweep --dataset adult|lastfm|gene_all|csv --out DIR [flags]

Runs the paper's Figure 1 and 2 experiments and the knob sweep: for each split and knob
setting (every lambda with every combination of --l1-ratios, --clips, --dropouts, --batches,
--passes and --average), trains once by permutation SGD (step min(1/beta, 1/(mu t)),
sensitivity by the strongly convex SGD route with the setting's constants), releases the
weights once per eps and mechanism (--mechanism, a list: pure and (eps, delta) mechanisms
side by side) with noise calibrated to that sensitivity (each a separate release), and once
at a fixed noise scale reporting the eps it buys. The training-time mechanisms objective
(pure eps) and amp ((eps, delta)) put the noise in the objective, so they train once per
split, lambda and eps (ridge objective minimized exactly; the knobs do not apply; a lambda
below the mechanism's floor runs at the floor, Chaudhuri et al.'s extra ridge) and are
reported beside the others. With --select-val F, it also selects the
setting and the pure mechanism privately (selection.Select on a validation split of F of the
training rows, inside each eps): the candidates are every setting with gamma or laplace,
and, when objective is listed, objective perturbation at every lambda at or above its
floor at eps_run = eps/(2+eta), the lower ones at that floor once (trained afresh at each
run of the selection). The noise is seeded: the results are reproducible and not
for release.

Writes DIR/results.csv (one row per split, setting, mechanism and eps, plus the selected
releases), DIR/summary.json, DIR/fig1.png (accuracy vs lambda per eps, baseline knobs),
DIR/fig2.png (fixed scale) and DIR/frontier.png (best accuracy vs eps per mechanism, for its
best knob family and lambda alone, with the privately selected releases), and
prints the best mean test accuracy per eps (best setting, chosen on the test accuracy: an
optimistic figure) with its std over the splits, beside the privately selected one.
`

// runSweep is the sweep command.
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f paperFlags
	fs := newPaperFlagSet("sweep", &f)
	fs.Float64Var(&f.fixedScale, "fixed-scale", 0, "noise scale `b` of the Figure 2 releases (0: the scale eps = 1 gives at the middle lambda; < 0: skip)")
	var knobs experiments.Knobs
	listVar(fs, &knobs.L1Ratios, "l1-ratios", "comma-separated elastic-net L1 shares in [0, 1) (default: --l1-ratio); the first is the baseline", runflags.Floats)
	listVar(fs, &knobs.Clips, "clips", "comma-separated per-example clipping norms G >= 0, 0 = none (default: 0)", runflags.Floats)
	listVar(fs, &knobs.Dropouts, "dropouts", "comma-separated s-dropout levels s in (0, 1], 1 = none (default: 1)", runflags.Floats)
	listVar(fs, &knobs.Batches, "batches", "comma-separated minibatch sizes >= 1 (default: 1)", runflags.Ints)
	listVar(fs, &knobs.Averages, "average", "comma-separated iterate averaging, false and/or true (default: false)", parseBools)
	var sel experiments.SelectConfig
	fs.Float64Var(&sel.ValFrac, "select-val", 0, "private selection: share of each split's training rows held out for validation, in (0, 1) (0: no selection)")
	fs.Float64Var(&sel.Eta, "select-eta", 1, "private selection: eta in [0, 1] of the law of the number of runs (cost (2+eta) eps_run; 1 is Liu & Talwar's geometric law, 0 the logarithmic law)")
	fs.Float64Var(&sel.MeanRuns, "select-runs", 0, "private selection: mean number of runs E[K] (0: 10 per candidate)")
	if err := parsePaper(fs, &f, args, stderr, sweepHelp); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if len(f.passList) > 1 {
		knobs.Passes = f.passList
	}
	if knobs.L1Ratios == nil {
		// A zero on the command line is what the user typed, not the
		// experiments package's default.
		knobs.L1Ratios = []float64{f.l1Ratio}
	}
	if sel.ValFrac != 0 && !(sel.ValFrac > 0 && sel.ValFrac < 1) {
		return usagef("--select-val %v, want in (0, 1)", sel.ValFrac)
	}
	start := time.Now()
	rows, err := experiments.Sweep(ctx, experiments.SweepConfig{
		Protocol: f.protocol, Splits: f.splits, Lambdas: f.lambdaList, Epsilons: f.epList,
		Mechanisms: f.mechs, Delta: f.delta, L1Ratio: f.l1Ratio, Passes: f.passes, Knobs: knobs, Select: sel,
		Seed: f.seed, FixedScale: f.fixedScale, Logger: f.logger(stderr),
	})
	if err != nil {
		return asUsage(err)
	}
	sum := experiments.Summarize(rows, append(f.protocol.Notes(), experiments.ExperimentNotes...)...)
	sum.Seconds = time.Since(start).Seconds()
	sum.Command = "stabpriv sweep " + strings.Join(args, " ")
	if err := sum.WriteTable(stdout); err != nil {
		return err
	}
	paths, err := experiments.WriteSweep(f.out, rows, sum, f.force)
	if err != nil {
		return outputError("--out", err)
	}
	fmt.Fprintf(stdout, "\n%d rows in %.1f s; wrote %s\n", len(rows), sum.Seconds, strings.Join(paths, ", "))
	return nil
}
