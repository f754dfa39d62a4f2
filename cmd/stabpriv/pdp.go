package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/publish"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/pdp/ridge"
	"github.com/stabpriv/stabpriv/perturb"
)

// pdpFlags holds the flags of the pdp command.
type pdpFlags struct {
	data, label, positive, loss string
	lambda, l1Ratio             float64
	epsilon, delta, sigma       float64
	mechanism                   perturb.Mechanism
	exactTop, top               int
	standardize, biasFlag       string
	bias                        bool
	testFrac                    float64
	seed                        uint64
	labelBound, kappa           float64
	out                         string
	force                       bool
	model                       string
	pub                         publishFlags
	gamma, cond                 float64
	precision                   string
	logLevel                    string
}

func newPDPFlagSet(f *pdpFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("pdp", flag.ContinueOnError)
	fs.StringVar(&f.model, "model", "", "model `file` written by train: analyse that release (its certificate gives the loss, lambda, clipping and noise; --data is the CSV it was trained on); only --data, --exact-top, --top, --out, --force, --log-level and the --publish-* flags apply")
	fs.StringVar(&f.data, "data", "", "CSV `file` with a header row and numeric features (default: the embedded breast-cancer data)")
	fs.StringVar(&f.label, "label", "", "label `column` of --data (default with the embedded data: "+datasets.DefaultLabel+")")
	fs.StringVar(&f.positive, "positive", "", "binary tasks: the `class` encoded +1 (default: the larger class name)")
	fs.StringVar(&f.loss, "loss", "logistic", "smooth loss: logistic, huber, squared, huber-hinge, softmax")
	fs.Float64Var(&f.lambda, "lambda", 1e-3, "ridge strength lambda >= 0: the objective is sum_i l + (n lambda/2)||w||^2")
	fs.Float64Var(&f.l1Ratio, "l1-ratio", 0, "elastic-net L1 share: must be 0 (the L1 term is not differentiable, so Wang's Lemma 13 does not apply)")
	fs.Float64Var(&f.epsilon, "epsilon", 1, "the release is calibrated to this worst-case DP `eps` (replace-one neighbours)")
	fs.Float64Var(&f.delta, "delta", 1e-6, "`delta` of the Gaussian mechanisms (laplace and gamma use 0), below 1/n for n training rows")
	fs.StringVar((*string)(&f.mechanism), "mechanism", string(perturb.AnalyticGaussian), "output perturbation: one of "+perturb.MechanismList()+"; with --loss squared (ridge regression) also ops (one posterior sample, --gamma), adaops (AdaOPS at --epsilon and --delta, --cond) or gaussian-cov (N(w, A^{-1}/gamma), --gamma, --precision)")
	fs.Float64Var(&f.gamma, "gamma", 0, "ops: the posterior scale (exp(-(gamma/2)(||y - Xw||^2 + n lambda ||w||^2))); gaussian-cov: the precision scale")
	fs.Float64Var(&f.cond, "cond", 0, "adaops: Algorithm 1's kappa, the largest acceptable condition number (fixed independently of the data)")
	fs.StringVar(&f.precision, "precision", "", "gaussian-cov: CSV `file` of the matrix A (d x d, no header, d the number of weights with the bias), fixed independently of the data (default: the identity)")
	fs.Float64Var(&f.sigma, "sigma", 0, "instead of --epsilon: Gaussian noise of this standard deviation `S` per coordinate")
	fs.IntVar(&f.exactTop, "exact-top", 100, "refine the sensitivity of the `k` most exposed rows to the exact value")
	fs.IntVar(&f.top, "top", 10, "list the `k` most exposed rows in the summary")
	fs.StringVar(&f.standardize, "standardize", "train", "train (standardize with statistics of the training rows) or none")
	fs.StringVar(&f.biasFlag, "bias", "true", "true: map rows to x' = [clip_1(x), 1]/sqrt(2) (a bias, kappa = 1); false keeps the features (clipped into the unit ball after standardization, as they are with --standardize none)")
	fs.Float64Var(&f.testFrac, "test-frac", 0.2, "share of the rows held out, in [0, 1): they are analysed as targets outside the data set; 0 makes every row a training row")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the split (it depends only on the number of rows, their positions and the seed)")
	fs.Float64Var(&f.labelBound, "label-bound", 0, "squared loss: clip labels into [-B, B], which gives the worst-case DP comparison (0: none)")
	fs.Float64Var(&f.kappa, "kappa", 1, "with --standardize none --bias false: the row bound ||x|| <= kappa of the worst-case DP comparison (not enforced: rows are kept as they are)")
	fs.StringVar(&f.out, "out", "", "output `dir` for pdp.csv, targets.csv, summary.json and pdp.png (required; existing files there are replaced only with --force, an input or a model file never)")
	fs.BoolVar(&f.force, "force", false, "replace existing output files in --out (never a model file, nor an input)")
	addPublishFlags(fs, &f.pub)
	runflags.LogLevelVar(fs, &f.logLevel)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
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
	pdp.Neighbours + "."

// pdpFiles are the files pdp writes into --out (report.Result.WriteDir).
var pdpFiles = []string{"pdp.csv", "targets.csv", "summary.json", "pdp.png"}

// pdpSettings are the checked flags.
type pdpSettings struct {
	pdpFlags
	lossFn losses.Loss
	mech   perturb.Mechanism
	fixed  bool                 // --sigma given
	ridge  *report.RidgeRelease // --mechanism ops, adaops or gaussian-cov
	// publish is the DP summary requested (nil: none).
	publish *publishSettings
}

// ridgeMechanisms are the releases of ridge regression that --mechanism
// names beside perturb's.
var ridgeMechanisms = map[string]bool{report.RidgeOPS: true, report.RidgeAdaOPS: true, report.RidgeGaussianCov: true}

// parseRidge checks the flags of a ridge release (--mechanism ops, adaops
// or gaussian-cov) and reads --precision.
func parseRidge(s *pdpSettings, set map[string]bool) error {
	kind := string(s.mechanism)
	if s.lossFn.Name() != "squared" {
		return usagef("--mechanism %s is a release of ridge regression: it needs --loss squared", kind)
	}
	if set["sigma"] {
		return usagef("--sigma fixes isotropic Gaussian noise; it excludes --mechanism %s", kind)
	}
	rr := &report.RidgeRelease{Kind: kind, Gamma: s.gamma, Cond: s.cond, Seed: s.seed}
	switch kind {
	case report.RidgeOPS, report.RidgeGaussianCov:
		if !check.Positive(s.gamma) {
			return usagef("--mechanism %s needs --gamma finite > 0", kind)
		}
		if set["cond"] {
			return usagef("--cond applies to --mechanism adaops")
		}
		if set["epsilon"] {
			return usagef("--epsilon applies to --mechanism adaops; %s is set by --gamma", kind)
		}
	case report.RidgeAdaOPS:
		if !check.Positive(s.cond) || !check.Positive(s.epsilon) {
			return usagef("--mechanism adaops needs --cond (kappa) and --epsilon finite > 0")
		}
		if set["gamma"] {
			return usagef("--gamma with --mechanism adaops: AdaOPS chooses its own")
		}
	}
	if !(s.delta > 0 && s.delta < 1) || (kind != report.RidgeGaussianCov && !(s.delta < 2/math.E)) {
		return usagef("--delta %v, want in (0, 1) (ops and adaops: (0, 2/e))", s.delta)
	}
	if s.precision != "" {
		if kind != report.RidgeGaussianCov {
			return usagef("--precision applies to --mechanism gaussian-cov")
		}
		a, err := report.ReadPrecision(s.precision)
		if err != nil {
			return usagef("--precision: %w", err)
		}
		rr.Precision = a
	}
	s.ridge = rr
	return nil
}

// replace is what --force allows: replacing output files that are not
// model files.
func (f *pdpFlags) replace() replace {
	if f.force {
		return notModels
	}
	return keep
}

// inputs returns the files pdp reads.
func (f *pdpFlags) inputs() []string { return []string{f.model, f.data, f.precision} }

func parsePDP(args []string, stderr io.Writer) (*pdpSettings, error) {
	var f pdpFlags
	set, err := parseFlags(newPDPFlagSet(&f), args, stderr, pdpHelp)
	if err != nil {
		return nil, err
	}
	s := &pdpSettings{pdpFlags: f}
	warnings, err := warningsTo(stderr, f.logLevel)
	if err != nil {
		return nil, err
	}
	if s.publish, err = f.pub.settings(set, warnings); err != nil {
		return nil, err
	}
	if set["model"] {
		return s, checkModelFlags(s, set)
	}
	if s.lossFn, err = losses.ByName(f.loss); err != nil {
		return nil, usagef("--loss: %w; the per-instance analysis needs a smooth loss (Wang's Lemma 13: differentiable with an absolutely continuous derivative), and the built-in ones are", err)
	}
	if err := checkOutDir("--out", f.out, f.replace(), f.inputs(), s.publish.outFiles()...); err != nil {
		return nil, err
	}
	if err := s.publish.checkSimulation(f.lambda, f.standardize, f.biasFlag); err != nil {
		return nil, err
	}
	if !check.NonNegative(f.lambda) {
		return nil, usagef("--lambda %v, want finite >= 0", f.lambda)
	}
	if f.l1Ratio != 0 {
		return nil, usagef("--l1-ratio %v: %v; the per-instance analysis covers ridge (l1-ratio 0) only", f.l1Ratio, pdp.ErrNotSmooth)
	}
	if !check.HalfOpenUnit(f.testFrac) {
		return nil, usagef("--test-frac %v, want in [0, 1)", f.testFrac)
	}
	if f.standardize != "train" && f.standardize != "none" {
		return nil, usagef("--standardize %q, want train or none", f.standardize)
	}
	b, err := strconv.ParseBool(f.biasFlag)
	if err != nil {
		return nil, usagef("--bias %q, want true or false", f.biasFlag)
	}
	s.bias = b
	if f.exactTop < 0 || f.top < 0 {
		return nil, usagef("--exact-top %d, --top %d, want >= 0", f.exactTop, f.top)
	}
	if !check.Positive(f.kappa) {
		return nil, usagef("--kappa %v, want finite > 0", f.kappa)
	}
	if !check.NonNegative(f.labelBound) {
		return nil, usagef("--label-bound %v, want finite >= 0", f.labelBound)
	}
	if f.labelBound != 0 && s.lossFn.Task() != losses.Regression {
		return nil, usagef("--label-bound applies to regression losses, not %s", f.loss)
	}
	if f.positive != "" && s.lossFn.Task() != losses.Binary {
		return nil, usagef("--positive applies to binary losses, not %s", f.loss)
	}
	if f.data == "" && f.label != "" && f.label != datasets.DefaultLabel {
		return nil, usagef("--label %q without --data: the embedded data set's label is %q", f.label, datasets.DefaultLabel)
	}
	if f.data != "" && f.label == "" {
		return nil, usagef("--data needs --label, the name of the label column")
	}
	if ridgeMechanisms[string(f.mechanism)] {
		return s, parseRidge(s, set)
	}
	for _, name := range []string{"gamma", "cond", "precision"} {
		if set[name] {
			return nil, usagef("--%s applies to --mechanism ops, adaops or gaussian-cov (ridge regression)", name)
		}
	}
	if set["sigma"] {
		if set["epsilon"] || (set["mechanism"] && f.mechanism != perturb.AnalyticGaussian && f.mechanism != perturb.Gaussian) {
			return nil, usagef("--sigma fixes Gaussian noise; it excludes --epsilon and --mechanism %s", f.mechanism)
		}
		if !check.Positive(f.sigma) {
			return nil, usagef("--sigma %v, want finite > 0", f.sigma)
		}
		s.fixed, s.mech = true, perturb.AnalyticGaussian
	} else if _, err = perturb.Lookup(f.mechanism); err != nil {
		return nil, usagef("--mechanism %q, want one of %s (with --loss squared also ops, adaops, gaussian-cov)", f.mechanism, perturb.MechanismList())
	} else {
		s.mech = f.mechanism
	}
	if s.mech.Pure() {
		if set["delta"] && f.delta != 0 {
			return nil, usagef("--delta %v with --mechanism %s: laplace and gamma are pure eps-DP, leave --delta unset", f.delta, s.mech)
		}
		s.delta = 0
	} else if !(s.delta > 0 && s.delta < 1) {
		return nil, usagef("--delta %v, want in (0, 1) for a Gaussian mechanism", s.delta)
	}
	if !s.fixed {
		if _, err := perturb.Calibrate(s.mech, s.epsilon, s.delta, perturb.Sensitivity{L2: 1}, 1); err != nil {
			return nil, usagef("--mechanism %s --epsilon %v --delta %v: %w%s", s.mech, s.epsilon, s.delta, err, runflags.PrivacyHint(s.mech, err))
		}
	}
	return s, nil
}

// runPDP is the pdp command.
func runPDP(_ context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parsePDP(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.model != "" {
		return runPDPModel(s, stdout)
	}
	ds, source, err := loadPDPData(s)
	if err != nil {
		return err
	}
	sim := report.Simulation{
		Rows: report.Rows{ExactTop: s.exactTop, Top: s.top}, Loss: s.lossFn, Lambda: s.lambda,
		Mechanism: s.mech, Epsilon: s.epsilon, Delta: s.delta, TestFrac: s.testFrac, Seed: s.seed,
		Standardize: s.standardize == "train", Bias: s.bias, Kappa: s.kappa, LabelBound: s.labelBound, Source: source,
	}
	if s.fixed {
		sim.Sigma = s.sigma
	}
	var res *report.Result
	if s.ridge != nil {
		res, err = report.SimulateRidge(ds, sim, *s.ridge)
	} else {
		res, err = report.Simulate(ds, sim)
	}
	var cond *ridge.CondError
	switch {
	case errors.As(err, &cond):
		return usagef("--cond %v is above AdaOPS's limit %.6g = n eps/(4 d (1 + log(4/delta))) for n = %d training rows, d = %d weights, --epsilon %v, --delta %v: lower --cond or raise --epsilon", s.cond, cond.Max, cond.N, cond.D, s.epsilon, s.delta)
	case errors.Is(err, pdp.ErrNoBound):
		return usagef("--epsilon %v: %w; pass --sigma S to analyse Gaussian noise of a fixed scale", s.epsilon, err)
	case errors.Is(err, pdp.ErrSingular) || errors.Is(err, pdp.ErrNotSmooth) || errors.Is(err, dp.ErrBudget):
		return &usageError{Err: err}
	case err != nil:
		return err
	}
	return writeAndPrintPDP(stdout, res, s)
}

// runPDPModel is pdp --model: the per-instance DP of the training rows of
// a model file's release, against its certificate.
func runPDPModel(s *pdpSettings, stdout io.Writer) error {
	r, err := readModel(s.model)
	if err != nil {
		return err
	}
	if s.publish != nil && !r.Preprocessing.Mode.Inside() {
		return usagef("--publish-epsilon with --model %s: %v (the model's features were standardized with statistics of the training rows: replacing one row changes every row, so no summary of them is private for the table); %s", s.model, pdp.ErrNotPublishable, standardizedFix)
	}
	tab, source := (*datasets.Table)(nil), s.data
	if s.data != "" {
		tab, err = datasets.ReadTableFile(s.data)
	} else {
		tab, _, err = datasets.DefaultTable()
		source = "the embedded Wisconsin diagnostic breast cancer data (no --data)"
	}
	if err != nil {
		return err
	}
	res, err := report.AnalyzeRelease(r, tab, report.Release{Rows: report.Rows{ExactTop: s.exactTop, Top: s.top}, File: s.model, Source: source})
	if err != nil {
		return fmt.Errorf("--model %s: %w", s.model, err)
	}
	return writeAndPrintPDP(stdout, res, s)
}

// loadPDPData reads --data or the embedded data, labels encoded for the
// loss.
func loadPDPData(s *pdpSettings) (*datasets.Dataset, string, error) {
	task := s.lossFn.Task()
	if s.data != "" {
		ds, err := datasets.ReadCSVFile(s.data, datasets.CSVOptions{Label: s.label, Task: task, Positive: s.positive})
		return ds, s.data, err
	}
	s.label = datasets.DefaultLabel
	ds, err := datasets.Default()
	if err != nil {
		return nil, "", err
	}
	switch task {
	case losses.Binary:
		if s.positive != "" && s.positive != ds.Classes[1] {
			return nil, "", usagef("--positive %q: the embedded data set encodes %s as +1", s.positive, ds.Classes[1])
		}
	case losses.Multiclass:
		for i, v := range ds.Y {
			ds.Y[i] = (v + 1) / 2
		}
	default:
		return nil, "", usagef("--loss %s is a regression loss; the embedded data set is binary: give --data and --label", s.loss)
	}
	return ds, "embedded Wisconsin diagnostic breast cancer data", nil
}

// writeAndPrintPDP writes the analysis into --out and prints its summary.
func writeAndPrintPDP(w io.Writer, res *report.Result, s *pdpSettings) error {
	var sum *publish.Summary
	if s.publish != nil {
		// Drawn before anything is written: an error leaves --out as it was.
		var err error
		if sum, err = summarizePDP(res, s.publish); err != nil {
			return err
		}
	}
	if err := res.WriteDir(s.out, s.force); err != nil {
		return outputError("--out", err)
	}
	if sum != nil {
		if err := writeSummary(s.out, sum, s.force); err != nil {
			return outputError("--out", err)
		}
	}
	printPDP(w, res.Report, s)
	if sum != nil {
		printSummary(w, s.publish.stderr, filepath.Join(s.out, summaryFile), sum)
	}
	return nil
}

// printPDP writes the summary.
func printPDP(w io.Writer, r *report.Report, s *pdpSettings) {
	fmt.Fprintln(w, r.Confidential+".")
	fmt.Fprintf(w, "\nneighbours: %s.\n", r.Neighbours)
	fmt.Fprintf(w, "\nmodel: %s loss, lambda = %g, n = %d training rows, d = %d, K = %d; exact minimizer: ||grad F|| = %.2g after %d Newton steps\n",
		r.Loss, r.Lambda, r.Rows, r.Features, r.Outputs, r.GradNorm, r.Iterations)
	fmt.Fprintf(w, "release: %s, %s = %.6g", r.Mechanism, r.NoiseScaleName, r.NoiseScale)
	if r.Delta > 0 {
		fmt.Fprintf(w, ", delta = %g", r.Delta)
	}
	fmt.Fprintln(w)
	if r.Release != nil {
		printPDPRelease(w, r)
	} else if r.DPEpsilon != nil {
		fmt.Fprintf(w, "worst-case DP eps of the release: %.6g (%s", *r.DPEpsilon, strings.Fields(r.DPNeighbours + " ?")[0])
		if r.DPSensitivity != nil {
			fmt.Fprintf(w, ", sensitivity %.6g", *r.DPSensitivity)
		}
		fmt.Fprint(w, ")")
		if r.WorstCaseEpsilon != nil {
			fmt.Fprintf(w, "; worst-case pDP eps of any target, any data set: %.6g", *r.WorstCaseEpsilon)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "worst-case DP eps of the release: none (see notes)")
	}
	if r.PDPForAllEpsilon != nil {
		fmt.Fprintf(w, "pDP for all targets, this data set (Wang's Figure 1): eps <= %.4g (sensitivity <= %.4g)\n", *r.PDPForAllEpsilon, *r.PDPForAllSensitivity)
	}
	if k := r.Kinds[pdp.KindEstimate]; k > 0 {
		fmt.Fprintf(w, "\nWARNING: %d rows' values are one-step ESTIMATES without a proven bound (they may be a few percent low): the %s loss's second derivative is not Lipschitz (it is not twice differentiable everywhere), per-example clipping acts, or lambda = 0; raise --exact-top to refine more rows exactly\n", k, r.Loss)
	}
	e := r.Epsilon
	fmt.Fprintf(w, "\nper-instance eps over the training rows (remove-one; %s): mean %.4g, median %.4g, p90 %.4g, p99 %.4g, max %.4g\n", kindWords(r.Kinds), e.Mean, e.Median, e.P90, e.P99, e.Max)
	if r.Release != nil {
		printCertified(w, r)
	}
	fmt.Fprintf(w, "moments (Definition 7): E eps = %.4g, E eps^2 = %.4g, E eps^3 = %.4g, E eps^4 = %.4g\n", r.Moments[0], r.Moments[1], r.Moments[2], r.Moments[3])
	if g := r.Generalization; g != nil {
		fmt.Fprintf(w, "generalization (Wang, Proposition 9 and Corollary 12): gap of any loss in [0, 1] <= mean e^{2 eps} - 1 + delta (1 + mean e^eps) = %.4g (series terms 2^j/j! E eps^j: %.3g, %.3g, %.3g, %.3g; a plug-in estimate of the expected gap's bound)\n",
			g.Bound, g.Series[0], g.Series[1], g.Series[2], g.Series[3])
	}
	fmt.Fprintf(w, "sensitivity: median %.4g, max %.4g", r.Sensitivity.Median, r.Sensitivity.Max)
	if r.Exact > 0 {
		fmt.Fprintf(w, "; largest relative one-step error among the %d exact rows %.2g", r.Exact, r.MaxRelOneStepError)
	}
	fmt.Fprintln(w)
	if q := r.ReplaceEpsilon; q != nil {
		fmt.Fprintf(w, "replace-one eps (upper bounds over every replacement): median %.4g, p99 %.4g, max %.4g\n", q.Median, q.P99, q.Max)
	}
	if f := r.FlipToRemove; f != nil {
		fmt.Fprintf(w, "a label-flipped copy moves the minimizer %.3g times as far as removing the row (median over the rows; max %.3g; one-step estimates)\n", f.Median, f.Max)
	}
	if kl := r.OnAverageKL; kl != nil {
		pairs := "each pair's value an upper bound for its pair"
		if kl.Kind != pdp.KindBound {
			pairs = "some pairs' values one-step estimates without a proven bound"
		}
		fmt.Fprintf(w, "on-average KL-privacy of the Gaussian release: ESTIMATE %.4g, standard error %.2g (mean over %d replacements of a training row by a held-out row, %d pairings; %s)\n", kl.KL, kl.StdErr, kl.Pairs, kl.Pairings, pairs)
	}
	if r.Targets != nil {
		fmt.Fprintf(w, "held-out rows as added targets (%s): median eps %.4g, max %.4g\n", kindWords(r.TargetKinds), r.Targets.Median, r.Targets.Max)
	}
	if len(r.Top) > 0 {
		fmt.Fprintln(w, "\nmost exposed rows (id = data row number, from 1 after the header):")
		for _, t := range r.Top {
			fmt.Fprintf(w, "  id %d: eps %.4g, sensitivity %.4g (%s), residual %.4g\n", t.ID, t.Epsilon, t.Sensitivity, t.Kind, t.Residual)
		}
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	fmt.Fprintf(w, "\nwritten to %s: pdp.csv, targets.csv, summary.json, pdp.png (confidential)\n", s.out)
}

// modelFlags are the flags that apply with --model: everything else comes
// from the model file.
var modelFlags = map[string]bool{"model": true, "data": true, "exact-top": true, "top": true, "out": true, "force": true, "log-level": true,
	"publish-epsilon": true, "publish-delta": true, "publish-beta": true, "publish-levels": true, "publish-seed": true}

// checkModelFlags validates the flags of pdp --model.
func checkModelFlags(s *pdpSettings, set map[string]bool) error {
	for name := range set {
		if !modelFlags[name] {
			return usagef("--%s with --model: the model file fixes the loss, lambda, clipping, preprocessing, split and noise; only --data, --exact-top, --top, --out, --force, --log-level and the --publish-* flags apply", name)
		}
	}
	if err := checkOutDir("--out", s.out, s.replace(), s.inputs(), s.publish.outFiles()...); err != nil {
		return err
	}
	if s.exactTop < 0 || s.top < 0 {
		return usagef("--exact-top %d, --top %d, want >= 0", s.exactTop, s.top)
	}
	return nil
}

// printPDPRelease writes the model-file part of a report.
func printPDPRelease(w io.Writer, r *report.Report) {
	rel := r.Release
	c := rel.Certified
	fmt.Fprintf(w, "\nmodel file: %s\n  claim: %s\n", rel.ModelFile, rel.Claim)
	fmt.Fprintf(w, "  certified: eps = %g", c.Epsilon)
	if c.Delta > 0 {
		fmt.Fprintf(w, ", delta = %g", c.Delta)
	}
	fmt.Fprintf(w, " (replace-one), Delta = %.6g by route %s\n", rel.Sensitivity, rel.Route)
	fmt.Fprintf(w, "  weights: %s.\n  ||released - w_hat|| = %.4g (||w_hat|| = %.4g; root mean square norm of the noise %.4g)\n", rel.Weights, rel.ReleasedToExact, rel.ExactNorm, rel.NoiseRMSNorm)
	fmt.Fprintf(w, "  neighbours: %s.\n", rel.Neighbours)
}

// printCertified writes the comparison with the certified epsilon.
func printCertified(w io.Writer, r *report.Report) {
	rel := r.Release
	c := rel.Certified
	fmt.Fprintf(w, "against the certified eps %g: %d of %d rows (%.2f%%) below it; worst row id %d: eps %.4g (%.3g of the certified eps), sensitivity %.4g\n",
		c.Epsilon, c.Below, r.Rows, 100*c.ShareBelow, c.Worst.ID, c.Worst.Epsilon, c.WorstRatio, c.Worst.Sensitivity)
	if rel.RemoveOneBound > 0 {
		fmt.Fprintf(w, "every row's sensitivity is at most L/(n lambda) = %.4g (eps %.4g), half the replace-one bound 2L/(n lambda) of the exact minimizer\n", rel.RemoveOneBound, rel.RemoveOneEpsilon)
	}
}

// kindWords says how many values of each kind a count holds.
func kindWords(k map[string]int) string {
	return fmt.Sprintf("%d exact, %d upper bounds, %d estimates", k[pdp.KindExact], k[pdp.KindBound], k[pdp.KindEstimate])
}
