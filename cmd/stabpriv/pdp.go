package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"runtime/debug"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/pdp/publish"
)

// newPDPFlagSet declares the flags of the pdp command into f and
// logLevel.
func newPDPFlagSet(f *publish.Options, logLevel *string) *flag.FlagSet {
	fs := flag.NewFlagSet("pdp", flag.ContinueOnError)
	fs.StringVar(&f.Model, "model", "", "model `file` written by train: analyse that release (its certificate gives the loss, lambda, clipping and noise; --data is the CSV it was trained on); only --data, --exact-top, --top, --out, --force, --log-level and the --publish-* flags apply")
	fs.StringVar(&f.Data, "data", "", "CSV `file` with a header row and numeric features (default: the embedded breast-cancer data)")
	fs.StringVar(&f.Label, "label", "", "label `column` of --data (default with the embedded data: "+datasets.DefaultLabel+")")
	fs.StringVar(&f.Positive, "positive", "", "binary tasks: the `class` encoded +1 (default: the larger class name)")
	fs.StringVar(&f.Loss, "loss", "logistic", "smooth loss: logistic, huber, squared, huber-hinge, softmax")
	fs.Float64Var(&f.Lambda, "lambda", 1e-3, "ridge strength lambda >= 0: the objective is sum_i l + (n lambda/2)||w||^2")
	fs.Float64Var(&f.L1Ratio, "l1-ratio", 0, "elastic-net L1 share: must be 0 (the L1 term is not differentiable, so Wang's Lemma 13 does not apply)")
	fs.Float64Var(&f.Epsilon, "epsilon", 1, "the release is calibrated to this worst-case DP `eps` (replace-one neighbours)")
	fs.Float64Var(&f.Delta, "delta", 1e-6, "`delta` of the Gaussian mechanisms (laplace and gamma use 0), below 1/n for n training rows")
	fs.StringVar(&f.Mechanism, "mechanism", publish.DefaultMechanism, "output perturbation: one of "+publish.Mechanisms()+"; with --loss squared (ridge regression) also ops (one posterior sample, --gamma), adaops (AdaOPS at --epsilon and --delta, --cond) or gaussian-cov (N(w, A^{-1}/gamma), --gamma, --precision)")
	fs.Float64Var(&f.Gamma, "gamma", 0, "ops: the posterior scale (exp(-(gamma/2)(||y - Xw||^2 + n lambda ||w||^2))); gaussian-cov: the precision scale")
	fs.Float64Var(&f.Cond, "cond", 0, "adaops: Algorithm 1's kappa, the largest acceptable condition number (fixed independently of the data)")
	fs.StringVar(&f.Precision, "precision", "", "gaussian-cov: CSV `file` of the matrix A (d x d, no header, d the number of weights with the bias), fixed independently of the data (default: the identity)")
	fs.Float64Var(&f.Sigma, "sigma", 0, "instead of --epsilon: Gaussian noise of this standard deviation `S` per coordinate")
	fs.IntVar(&f.ExactTop, "exact-top", 100, "refine the sensitivity of the `k` most exposed rows to the exact value")
	fs.IntVar(&f.Top, "top", 10, "list the `k` most exposed rows in the summary")
	fs.StringVar(&f.Standardize, "standardize", "train", "train (standardize with statistics of the training rows) or none")
	fs.StringVar(&f.Bias, "bias", "true", "true: map rows to x' = [clip_1(x), 1]/sqrt(2) (a bias, kappa = 1); false keeps the features (clipped into the unit ball after standardization, as they are with --standardize none)")
	fs.Float64Var(&f.TestFrac, "test-frac", 0.2, "share of the rows held out, in [0, 1): they are analysed as targets outside the data set; 0 makes every row a training row")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed of the split (it depends only on the number of rows, their positions and the seed)")
	fs.Float64Var(&f.LabelBound, "label-bound", 0, "squared loss: clip labels into [-B, B], which gives the worst-case DP comparison (0: none)")
	fs.Float64Var(&f.Kappa, "kappa", 1, "with --standardize none --bias false: the row bound ||x|| <= kappa of the worst-case DP comparison (not enforced: rows are kept as they are)")
	fs.StringVar(&f.Out, "out", "", "output `dir` for pdp.csv, targets.csv, summary.json and pdp.png (required; existing files there are replaced only with --force, an input or a model file never)")
	fs.BoolVar(&f.Force, "force", false, "replace existing output files in --out (never a model file, nor an input)")
	addPublishFlags(fs, &f.Summary)
	runflags.LogLevelVar(fs, logLevel)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// addPublishFlags defines the publish flags on fs.
func addPublishFlags(fs *flag.FlagSet, f *publish.SummaryOptions) {
	fs.Float64Var(&f.Epsilon, "publish-epsilon", 0, "also write "+publish.SummaryFile+": a DP summary of the per-instance epsilons (quantile bounds, shares below --publish-levels) with its own certificate, `eps`-DP on top of the release (publishable; everything else stays confidential)")
	fs.Float64Var(&f.Delta, "publish-delta", 0, "`delta` in [0, 1) of the summary, below 1/n for n training rows (used when zCDP composition of its draws beats basic composition)")
	fs.Float64Var(&f.Beta, "publish-beta", publish.DefaultBeta, "probability in (0, 1) that any claim of the summary fails")
	fs.StringVar(&f.Levels, "publish-levels", "0.01,0.1,1", "comma-separated epsilon `levels`: the summary bounds the share of rows whose per-instance epsilon is at most each")
	fs.Uint64Var(&f.Seed, "publish-seed", 0, "draw the summary from a generator seeded with `N` (reproducible, published, NOT private); default: the secure source")
}

// pdpHelp is the help of the pdp command, before its flags.
var pdpHelp = "Usage: stabpriv pdp [flags] --out DIR\n       stabpriv pdp --model FILE.json [--data FILE.csv] [--exact-top N] [--top N] --out DIR\n\n" +
	"Per-instance differential privacy (Wang) of an output-perturbation release of the exact\n" +
	"ridge-regularized ERM solution: for every training row, the sensitivity of the solution to\n" +
	"removing that row and the per-instance epsilon of the release, against the worst-case DP\n" +
	"epsilon of the same release. Writes pdp.csv (one row per training row: id = the row's data\n" +
	"row number, from 1 after the header; remove-one and replace-one epsilons, and the kind of\n" +
	"each value: exact, upper-bound or estimate), targets.csv (the held-out rows added as\n" +
	"targets), summary.json and pdp.png. The values are CONFIDENTIAL: they are computed from the\n" +
	"data and must not be published. With --publish-epsilon E, it also writes summary.dp.json, a\n" +
	"DP summary of them with its own certificate (E-DP on top of the release; 'stabpriv certify\n" +
	"summary.dp.json [--model m.json]' verifies it): the one publishable file. It needs rows not\n" +
	"standardized with their own statistics (--standardize none, or a model trained with declared\n" +
	"or estimated bounds) and n lambda large against its number of draws over E: for the logistic\n" +
	"loss with the default quantiles and levels, n lambda >= about 270, 125, 60, 22, 11 at E = 0.5,\n" +
	"1, 2, 5, 10 (the defaults here, n lambda = 0.46, bound nothing; pdp warns with the figure).\n\n" +
	"With --model, the release is the one of a model file written by train: the training rows are\n" +
	"rebuilt from the same CSV (the file's schema, split and preprocessing), the objective and the\n" +
	"noise come from its certificate, and each row's per-instance epsilon is compared with the\n" +
	"certified epsilon. The analysis is of the exact minimizer of the objective the SGD run\n" +
	"optimized, not of the SGD iterate.\n\n" +
	publish.Neighbours + "."

// parsePDP parses and checks the flags of the pdp command
// (publish.NewJob); nothing is read but --precision.
func parsePDP(args []string, stderr io.Writer) (*publish.Job, error) {
	var f publish.Options
	var logLevel string
	set, err := parseFlags(newPDPFlagSet(&f, &logLevel), args, stderr, pdpHelp)
	if err != nil {
		return nil, err
	}
	if f.Warnings, err = warningsTo(stderr, logLevel); err != nil {
		return nil, err
	}
	f.Set, f.ReadModel = set, readModel
	f.CheckOut = func(files []string) error {
		rep := keep
		if f.Force {
			rep = notModels
		}
		return checkOutDir("--out", f.Out, rep, []string{f.Model, f.Data, f.Precision}, files...)
	}
	j, err := publish.NewJob(f)
	return j, pdpError(err)
}

// pdpError makes a *publish.SettingsError the usage error it is (exit 2).
func pdpError(err error) error {
	var se *publish.SettingsError
	if errors.As(err, &se) {
		return &usageError{Err: err}
	}
	return err
}

// setMemoryLimit is debug.SetMemoryLimit (a test watches the calls).
var setMemoryLimit = debug.SetMemoryLimit

// limitPDPMemory has j's analysis of a simulated release run under a soft
// memory limit (runtime/debug.SetMemoryLimit) sized from the rows read,
// pdpMemoryLimit of report.PeakHeap's estimate, or a lower one already
// set (GOMEMLIMIT); it returns the function that restores the limit as it
// was. Without it the collector lets the heap grow to about twice its
// live size (GOGC=100): at 1,000,000 x 20, 780 MB resident for a live
// heap of 373 MB.
func limitPDPMemory(j *publish.Job) (restore func()) {
	old := setMemoryLimit(-1)
	j.PeakHeap = func(peak int64) { setMemoryLimit(min(old, pdpMemoryLimit(peak))) }
	return func() { setMemoryLimit(old) }
}

// pdpMemoryLimit returns the soft memory limit of an analysis whose live
// heap peaks at about peak bytes: that, a sixteenth more and 4 MiB for
// the runtime and the estimate's error. A live heap above it costs the
// collector's CPU time (at most about half of it, the runtime's limiter),
// never a failure.
func pdpMemoryLimit(peak int64) int64 { return peak + peak/16 + 4<<20 }

// runPDP is the pdp command.
func runPDP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	j, err := parsePDP(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	defer limitPDPMemory(j)()
	out, err := j.Run(ctx)
	if err != nil {
		return pdpError(err)
	}
	if err := out.WriteDir(j.Out, j.Force); err != nil {
		return outputError("--out", err)
	}
	out.Print(stdout, j.Out)
	return nil
}
