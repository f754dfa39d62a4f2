package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// pdpFlags holds the flags of the pdp command.
type pdpFlags struct {
	data, label, positive, loss string
	lambda, l1Ratio             float64
	epsilon, delta, sigma       float64
	mechanism                   string
	exactTop, top               int
	standardize, biasFlag       string
	bias                        bool
	testFrac                    float64
	seed                        uint64
	labelBound, kappa           float64
	out                         string
	model                       string
}

func newPDPFlagSet(f *pdpFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("pdp", flag.ContinueOnError)
	fs.StringVar(&f.model, "model", "", "model `file` written by train: analyse that release (its certificate gives the loss, lambda, clipping and noise; --data is the CSV it was trained on); only --data, --exact-top, --top and --out apply")
	fs.StringVar(&f.data, "data", "", "CSV `file` with a header row and numeric features (default: the embedded breast-cancer data)")
	fs.StringVar(&f.label, "label", "", "label `column` of --data (default with the embedded data: "+datasets.DefaultLabel+")")
	fs.StringVar(&f.positive, "positive", "", "binary tasks: the `class` encoded +1 (default: the larger class name)")
	fs.StringVar(&f.loss, "loss", "logistic", "smooth loss: logistic, huber, squared, huber-hinge, softmax")
	fs.Float64Var(&f.lambda, "lambda", 1e-3, "ridge strength lambda >= 0: the objective is sum_i l + (n lambda/2)||w||^2")
	fs.Float64Var(&f.l1Ratio, "l1-ratio", 0, "elastic-net L1 share: must be 0 (the L1 term is not differentiable, so Wang's Lemma 13 does not apply)")
	fs.Float64Var(&f.epsilon, "epsilon", 1, "the release is calibrated to this worst-case DP `eps` (replace-one neighbours)")
	fs.Float64Var(&f.delta, "delta", 1e-6, "`delta` of the Gaussian mechanisms (laplace and gamma use 0)")
	fs.StringVar(&f.mechanism, "mechanism", string(perturb.AnalyticGaussian), "output perturbation: one of "+perturb.MechanismList())
	fs.Float64Var(&f.sigma, "sigma", 0, "instead of --epsilon: Gaussian noise of this standard deviation `S` per coordinate")
	fs.IntVar(&f.exactTop, "exact-top", 100, "refine the sensitivity of the `k` most exposed rows to the exact value")
	fs.IntVar(&f.top, "top", 10, "list the `k` most exposed rows in the summary")
	fs.StringVar(&f.standardize, "standardize", "train", "train (standardize with statistics of the training rows) or none")
	fs.StringVar(&f.biasFlag, "bias", "true", "true: map rows to x' = [clip_1(x), 1]/sqrt(2) (a bias, kappa = 1); false keeps the features (clipped into the unit ball after standardization, as they are with --standardize none)")
	fs.Float64Var(&f.testFrac, "test-frac", 0.2, "share of the rows held out, in [0, 1): they are analysed as targets outside the data set; 0 makes every row a training row")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the split (it depends only on the number of rows, their positions and the seed)")
	fs.Float64Var(&f.labelBound, "label-bound", 0, "squared loss: clip labels into [-B, B], which gives the worst-case DP comparison (0: none)")
	fs.Float64Var(&f.kappa, "kappa", 1, "with --standardize none --bias false: the row bound ||x|| <= kappa of the worst-case DP comparison (not enforced: rows are kept as they are)")
	fs.StringVar(&f.out, "out", "", "output `dir` for pdp.csv, summary.json and pdp.png (required)")
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// pdpHelp is the help of the pdp command, before its flags.
var pdpHelp = "Usage: stabpriv pdp [flags] --out DIR\n       stabpriv pdp --model FILE.json [--data FILE.csv] [--exact-top N] [--top N] --out DIR\n\n" +
	"Per-instance differential privacy (Wang) of an output-perturbation release of the exact\n" +
	"ridge-regularized ERM solution: for every training row, the sensitivity of the solution to\n" +
	"removing that row and the per-instance epsilon of the release, against the worst-case DP\n" +
	"epsilon of the same release. Writes pdp.csv (one row per training row: id = index of the\n" +
	"row among the CSV's data rows, from 0), summary.json and pdp.png. The values are\n" +
	"CONFIDENTIAL: they are computed from the data and must not be published.\n\n" +
	"With --model, the release is the one of a model file written by train: the training rows are\n" +
	"rebuilt from the same CSV (the file's schema, split and preprocessing), the objective and the\n" +
	"noise come from its certificate, and each row's per-instance epsilon is compared with the\n" +
	"certified epsilon. The analysis is of the exact minimizer of the objective the SGD run\n" +
	"optimized, not of the SGD iterate.\n\n" +
	pdp.Neighbours + "."

// pdpSettings are the checked flags.
type pdpSettings struct {
	pdpFlags
	lossFn losses.Loss
	mech   perturb.Mechanism
	fixed  bool // --sigma given
}

func parsePDP(args []string, stderr io.Writer) (*pdpSettings, error) {
	var f pdpFlags
	set, err := parseFlags(newPDPFlagSet(&f), args, stderr, pdpHelp)
	if err != nil {
		return nil, err
	}
	s := &pdpSettings{pdpFlags: f}
	if set["model"] {
		return s, checkModelFlags(s, set)
	}
	switch f.loss {
	case "logistic", "huber", "squared", "huber-hinge", "softmax":
	default:
		return nil, usagef("--loss %q: the per-instance analysis needs a smooth loss (Wang's Lemma 13: differentiable with an absolutely continuous derivative); want logistic, huber, squared, huber-hinge or softmax", f.loss)
	}
	if s.lossFn, err = losses.ByName(f.loss); err != nil {
		return nil, usagef("--loss: %w", err)
	}
	if f.out == "" {
		return nil, usagef("--out DIR is required")
	}
	if st, err := os.Stat(f.out); err == nil && !st.IsDir() {
		return nil, usagef("--out %s is a file; give a directory", f.out)
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
	if set["sigma"] {
		if set["epsilon"] || (set["mechanism"] && f.mechanism != string(perturb.AnalyticGaussian) && f.mechanism != string(perturb.Gaussian)) {
			return nil, usagef("--sigma fixes Gaussian noise; it excludes --epsilon and --mechanism %s", f.mechanism)
		}
		if !check.Positive(f.sigma) {
			return nil, usagef("--sigma %v, want finite > 0", f.sigma)
		}
		s.fixed, s.mech = true, perturb.AnalyticGaussian
	} else if s.mech, err = perturb.ParseMechanism(f.mechanism); err != nil {
		return nil, usagef("--mechanism %q, want one of %s", f.mechanism, perturb.MechanismList())
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
			return nil, usagef("--mechanism %s --epsilon %v --delta %v: %w%s", s.mech, s.epsilon, s.delta, err, privacyHint(s.mech, err))
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
	n, _ := ds.X.Dims()
	trainIdx, testIdx, err := datasets.SplitIndex(n, s.testFrac, s.seed)
	if err != nil {
		return usagef("--test-frac %v: %w", s.testFrac, err)
	}
	notes := append([]string{"data: " + source}, ds.Notes...)
	train, test, kappa, prepNotes, err := preparePDP(s, ds, trainIdx, testIdx)
	if err != nil {
		return err
	}
	notes = append(notes, prepNotes...)
	xtr, ytr := train.X, train.Y
	_, d := xtr.Dims()
	classes := len(ds.Classes)
	cfg := pdp.Config{Loss: s.lossFn, Classes: classes, Lambda: s.lambda}
	a, err := pdp.New(xtr, ytr, cfg)
	if err != nil {
		if errors.Is(err, pdp.ErrSingular) || errors.Is(err, pdp.ErrNotSmooth) {
			return &usageError{err}
		}
		return err
	}
	dim := a.Solution().K * d

	// The release and its worst-case DP epsilon.
	replace, remove, dpErr := worstCase(s, kappa, xtr)
	var m pdp.Mechanism
	if s.fixed {
		m, err = pdp.NewMechanism(perturb.AnalyticGaussian, s.sigma, s.delta)
	} else {
		if dpErr != nil {
			return usagef("--epsilon %v needs a worst-case sensitivity to calibrate the noise: %v; pass --sigma S to analyse Gaussian noise of a fixed scale", s.epsilon, dpErr)
		}
		m, err = pdp.Calibrate(s.mech, s.epsilon, s.delta, replace, dim)
	}
	if err != nil {
		return err
	}

	diffs, one, refined, err := sensitivities(a, s.exactTop)
	if err != nil {
		return err
	}
	eps, err := m.Epsilons(diffs)
	if err != nil {
		return err
	}
	rep, err := pdp.NewReport(a, m, s.lambda, trainIdx, diffs, eps, s.top)
	if err != nil {
		return err
	}
	for _, i := range refined {
		if diffs[i].L2 > 0 {
			rep.MaxRelOneStepError = math.Max(rep.MaxRelOneStepError, math.Abs(one[i]-diffs[i].L2)/diffs[i].L2)
		}
	}
	if dpErr == nil {
		dpEps := s.epsilon
		if s.fixed {
			if dpEps, err = m.EpsilonAt(replace, 0); err != nil {
				return err
			}
		}
		l1 := math.Sqrt(float64(dim)) * remove
		worst, err := m.EpsilonAt(remove, l1)
		if err != nil {
			return err
		}
		rep.DPEpsilon, rep.DPSensitivity, rep.WorstCaseEpsilon = &dpEps, &replace, &worst
		rep.DPNeighbours = "replace-one (docs/DESIGN.md, section 1: DP certificates); the worst-case pDP epsilon uses the remove-one bound"
	} else {
		notes = append(notes, "no worst-case DP epsilon: "+dpErr.Error())
	}
	if test != nil {
		tn, _ := test.X.Dims()
		teps := make([]float64, 0, tn)
		for i := 0; i < tn; i++ {
			d, err := a.Add(test.X.RawRowView(i), test.Y[i])
			if err != nil {
				return err
			}
			e, err := m.Epsilon(d)
			if err != nil {
				return err
			}
			teps = append(teps, e)
		}
		if ts, err := pdp.Summarize(teps); err == nil {
			rep.Targets = &ts
		}
	}
	notes = append(notes,
		fmt.Sprintf("sensitivities: one-step estimates (Lemma 13 with the Hessian at the solution, Sherman-Morrison/Woodbury), the %d most exposed rows refined to the exact leave-one-out solution", len(refined)),
		"the release analysed is simulated from the flags, on the exact regularized minimizer computed here; for the release of a model file written by train, use --model")
	rep.Notes = notes
	if err := writePDP(s.out, rep, trainIdx, diffs, eps); err != nil {
		return err
	}
	printPDP(stdout, rep, s)
	return nil
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

// preparePDP builds the training and test rows (positions trainIdx and
// testIdx of ds) with the preprocessing of the flags, and returns the row
// bound kappa of the worst-case comparison.
func preparePDP(s *pdpSettings, ds *datasets.Dataset, trainIdx, testIdx []int) (train, test *datasets.Dataset, kappa float64, notes []string, err error) {
	_, d := ds.X.Dims()
	pick := func(idx []int) *datasets.Dataset {
		x := mat.NewDense(max(1, len(idx)), d, nil)
		y := make([]float64, len(idx))
		for r, i := range idx {
			x.SetRow(r, ds.X.RawRowView(i))
			y[r] = ds.Y[i]
		}
		return &datasets.Dataset{X: x, Y: y, Classes: ds.Classes}
	}
	train = pick(trainIdx)
	if len(testIdx) > 0 {
		test = pick(testIdx)
	}
	notes = append(notes, fmt.Sprintf("split: %d training rows, %d held out (--test-frac %v, seed %d; positions only, labels not used)", len(trainIdx), len(testIdx), s.testFrac, s.seed))
	sets := []*datasets.Dataset{train}
	if test != nil {
		sets = append(sets, test)
	}
	if s.standardize == "train" {
		std, err := preprocess.FitStandardizer(train.X)
		if err != nil {
			return nil, nil, 0, nil, err
		}
		for _, ds := range sets {
			if ds.X, err = std.Apply(ds.X); err != nil {
				return nil, nil, 0, nil, err
			}
		}
		notes = append(notes, "features standardized with statistics of the training rows (not private)")
	}
	kappa = 1
	switch {
	case s.bias:
		for _, ds := range sets {
			n, _ := ds.X.Dims()
			x := mat.NewDense(n, d+1, nil)
			for i := 0; i < n; i++ {
				if err := preprocess.UnitBallRow(x.RawRowView(i), ds.X.RawRowView(i)); err != nil {
					return nil, nil, 0, nil, err
				}
			}
			ds.X = x
		}
		notes = append(notes, "rows mapped to x' = [clip_1(x), 1]/sqrt(2): ||x'|| <= 1 with the bias")
	case s.standardize == "train":
		for _, ds := range sets {
			if _, err := preprocess.ScaleRows(ds.X, 1); err != nil {
				return nil, nil, 0, nil, err
			}
		}
		notes = append(notes, "standardized rows clipped into the unit ball (kappa = 1), no bias")
	default:
		kappa = s.kappa
		notes = append(notes, fmt.Sprintf("rows are the CSV's features as they are (no bias, no clipping); the worst-case comparison assumes ||x|| <= %g", kappa))
	}
	if s.labelBound > 0 {
		for _, ds := range sets {
			for i, v := range ds.Y {
				ds.Y[i] = math.Max(-s.labelBound, math.Min(s.labelBound, v))
			}
		}
		notes = append(notes, fmt.Sprintf("labels clipped into [-%g, %g] (a per-row map)", s.labelBound, s.labelBound))
	}
	return train, test, kappa, notes, nil
}

// worstCase returns the data-independent sensitivity bounds of the exact
// minimizer (pdp.WorstCaseSensitivity), or why there are none.
func worstCase(s *pdpSettings, kappa float64, x *mat.Dense) (replace, remove float64, err error) {
	if s.lambda == 0 {
		return 0, 0, errors.New("lambda = 0: the minimizer has no data-independent sensitivity bound")
	}
	dom := losses.Domain{Kappa: kappa}
	if s.lossFn.Name() == "squared" {
		if s.labelBound == 0 {
			return 0, 0, errors.New("the squared loss is not Lipschitz: pass --label-bound B (labels clipped into [-B, B]) for a bound")
		}
		// (n lambda/2)||w||^2 <= J(w_hat) <= J(0) <= n B^2/2 for Z and its
		// neighbours: ||w_hat|| <= B/sqrt(lambda).
		dom.Radius, dom.LabelBound = s.labelBound/math.Sqrt(s.lambda), s.labelBound
	}
	c, err := s.lossFn.Constants(dom)
	if err != nil {
		return 0, 0, err
	}
	n, _ := x.Dims()
	if !s.bias && s.standardize == "none" {
		// Rows are not clipped: the bound holds only if they are in the ball.
		for i := 0; i < n; i++ {
			if r := mat.Norm(x.RowView(i), 2); r > kappa {
				return 0, 0, fmt.Errorf("the rows are kept as they are (--standardize none --bias false) and some have ||x|| > --kappa %g", kappa)
			}
		}
	}
	return pdp.WorstCaseSensitivity(c.Lz, kappa, s.lambda, n)
}

// writePDP writes pdp.csv, summary.json and pdp.png into dir.
func writePDP(dir string, rep *pdp.Report, ids []int, diffs []pdp.Diff, eps []float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// pDP values are confidential statistics of the data: the files are
	// readable by their owner only.
	f, err := os.OpenFile(filepath.Join(dir, "pdp.csv"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,sensitivity,eps,leverage,residual,exact")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for i, d := range diffs {
		lev := ""
		if !math.IsNaN(d.Leverage) {
			lev = g(d.Leverage)
		}
		fmt.Fprintf(w, "%d,%s,%s,%s,%s,%t\n", ids[i], g(d.L2), g(eps[i]), lev, g(d.Residual), d.Exact)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o600); err != nil {
		return err
	}
	refs := []pdp.Reference{}
	if rep.DPEpsilon != nil {
		refs = append(refs, pdp.Reference{Name: "DP eps (replace-one)", Value: *rep.DPEpsilon})
	}
	if rep.WorstCaseEpsilon != nil {
		refs = append(refs, pdp.Reference{Name: "worst-case pDP eps (remove-one)", Value: *rep.WorstCaseEpsilon})
	}
	pf, err := os.OpenFile(filepath.Join(dir, "pdp.png"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("per-instance DP: %s loss, lambda %g, %s %s = %.3g", rep.Loss, rep.Lambda, rep.Mechanism, rep.NoiseScaleName, rep.NoiseScale)
	if err := pdp.WritePNG(pf, title, eps, refs...); err != nil {
		pf.Close()
		return err
	}
	return pf.Close()
}

// printPDP writes the summary.
func printPDP(w io.Writer, r *pdp.Report, s *pdpSettings) {
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
		fmt.Fprintf(w, "worst-case DP eps of the release: %.6g (replace-one, sensitivity %.6g); worst-case pDP eps of any target: %.6g\n", *r.DPEpsilon, *r.DPSensitivity, *r.WorstCaseEpsilon)
	} else {
		fmt.Fprintln(w, "worst-case DP eps of the release: none (see notes)")
	}
	e := r.Epsilon
	fmt.Fprintf(w, "\nper-instance eps over the training rows: mean %.4g, median %.4g, p90 %.4g, p99 %.4g, max %.4g\n", e.Mean, e.Median, e.P90, e.P99, e.Max)
	if r.Release != nil {
		printCertified(w, r)
	}
	fmt.Fprintf(w, "moments (Definition 7): E eps = %.4g, E eps^2 = %.4g, E eps^3 = %.4g, E eps^4 = %.4g\n", r.Moments[0], r.Moments[1], r.Moments[2], r.Moments[3])
	fmt.Fprintf(w, "sensitivity: median %.4g, max %.4g; %d rows exact (largest relative one-step error among them %.2g; the other rows' one-step values carry no such bound)\n", r.Sensitivity.Median, r.Sensitivity.Max, r.Exact, r.MaxRelOneStepError)
	if r.OnAverageKL != nil {
		fmt.Fprintf(w, "on-average KL-privacy of the Gaussian release: %.4g\n", *r.OnAverageKL)
	}
	if r.Targets != nil {
		fmt.Fprintf(w, "held-out rows as added targets: median eps %.4g, max %.4g\n", r.Targets.Median, r.Targets.Max)
	}
	if len(r.Top) > 0 {
		fmt.Fprintln(w, "\nmost exposed rows (id = row of the data file, from 0):")
		for _, t := range r.Top {
			kind := "one-step"
			if t.Exact {
				kind = "exact"
			}
			fmt.Fprintf(w, "  id %d: eps %.4g, sensitivity %.4g (%s), residual %.4g\n", t.ID, t.Epsilon, t.Sensitivity, kind, t.Residual)
		}
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	fmt.Fprintf(w, "\nwritten to %s: pdp.csv, summary.json, pdp.png (confidential)\n", s.out)
}

// modelFlags are the flags that apply with --model: everything else comes
// from the model file.
var modelFlags = map[string]bool{"model": true, "data": true, "exact-top": true, "top": true, "out": true}

// checkModelFlags validates the flags of pdp --model.
func checkModelFlags(s *pdpSettings, set map[string]bool) error {
	for name := range set {
		if !modelFlags[name] {
			return usagef("--%s with --model: the model file fixes the loss, lambda, clipping, preprocessing, split and noise; only --data, --exact-top, --top and --out apply", name)
		}
	}
	if s.out == "" {
		return usagef("--out DIR is required")
	}
	if st, err := os.Stat(s.out); err == nil && !st.IsDir() {
		return usagef("--out %s is a file; give a directory", s.out)
	}
	if s.exactTop < 0 || s.top < 0 {
		return usagef("--exact-top %d, --top %d, want >= 0", s.exactTop, s.top)
	}
	return nil
}

// modelObjective returns the pdp configuration of the objective the run of
// a certificate optimized, or why it has none that the Hessian identity
// covers.
func modelObjective(r *modelfile.Released) (pdp.Config, float64, []string, error) {
	run := r.Certificate.Run
	if run == nil {
		return pdp.Config{}, 0, nil, errors.New("the certificate has no run record: the objective is unknown")
	}
	switch {
	case run.UserModel:
		return pdp.Config{}, 0, nil, errors.New("the run trained a user-supplied graph model: its loss is not one whose smoothness is verified")
	case run.L1Ratio > 0:
		return pdp.Config{}, 0, nil, fmt.Errorf("l1_ratio = %g: %w; the per-instance analysis needs a smooth objective (Wang's Lemma 13), so it covers ridge releases (l1_ratio 0) only", run.L1Ratio, pdp.ErrNotSmooth)
	case run.Dropout < 1:
		return pdp.Config{}, 0, nil, fmt.Errorf("s-dropout (s = %g): each step used a randomly masked row, so the run minimizes no fixed empirical objective whose exact minimizer could stand for it", run.Dropout)
	}
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return pdp.Config{}, 0, nil, err
	}
	// The run records the loss by name; a loss with a parameter (huber's
	// delta, huber-hinge's width) must be the default one, which its
	// constants confirm.
	cons, err := loss.Constants(losses.Domain{Kappa: run.Kappa, Radius: run.Radius, LabelBound: run.LabelBound})
	if err != nil || cons.Lz != run.Lz || cons.Sz != run.Sz {
		return pdp.Config{}, 0, nil, fmt.Errorf("the run's loss constants (L_z = %g, S_z = %g) are not those of the %s loss of the default parameter: the loss cannot be rebuilt from the certificate", run.Lz, run.Sz, run.Loss)
	}
	var notes []string
	cfg := pdp.Config{Loss: loss, Classes: len(r.Schema.Classes), Lambda: run.Lambda}
	lip := run.L
	if run.Clip > 0 {
		switch {
		case run.Clip >= run.L:
			notes = append(notes, fmt.Sprintf("per-example clipping G = %g is at least the loss's Lipschitz constant L = %g: it never acts, and the objective is the unclipped one", run.Clip, run.L))
		case run.K > 1:
			return pdp.Config{}, 0, nil, fmt.Errorf("per-example clipping (G = %g < L = %g) of the %s loss: %w; scaling a multiclass gradient by its norm is not the gradient of any loss, so the run has no objective for Wang's Lemma 13", run.Clip, run.L, run.Loss, pdp.ErrNotSmooth)
		default:
			cfg.Clip, lip = run.Clip, run.Clip
			notes = append(notes, fmt.Sprintf("per-example clipping G = %g: the objective is the Huberized %s loss the clipped trainer minimizes, its margin derivative clamped to [-G/||x||, G/||x||] (convex, with a Lipschitz derivative, so Lemma 13 applies)", run.Clip, run.Loss))
		}
	}
	return cfg, lip, notes, nil
}

// runPDPModel is pdp --model: the per-instance DP of the training rows of
// a model file's release, against its certificate.
func runPDPModel(s *pdpSettings, stdout io.Writer) error {
	r, err := modelfile.ReadFile(s.model)
	if err != nil {
		return err
	}
	c := r.Certificate
	if c == nil {
		return fmt.Errorf("--model %s has no certificate: it was trained without a mechanism (its weights are published as trained), so there is no noise whose per-instance privacy could be analysed; train with --mechanism", s.model)
	}
	verdict, why, err := modelfile.Verify(r)
	if err != nil {
		return fmt.Errorf("--model %s: the analysis takes the objective and the noise from the certificate, which must verify: %w", s.model, err)
	}
	claim := fmt.Sprintf("private release: (%g, %g)-DP for replace-one neighbours of the table (certificate verified)", c.Epsilon, c.Delta)
	if verdict == modelfile.NotPrivate {
		claim = "NO privacy claim: " + why + "; the calibration of its noise is analysed as if the noise were secret"
	}
	cfg, lip, notes, err := modelObjective(r)
	if err != nil {
		return fmt.Errorf("--model %s: %w", s.model, err)
	}

	var tab *datasets.Table
	source := s.data
	if s.data != "" {
		tab, err = datasets.ReadTableFile(s.data)
	} else {
		tab, _, err = datasets.DefaultTable()
		source = "the embedded Wisconsin diagnostic breast cancer data (no --data)"
	}
	if err != nil {
		return err
	}
	X, y, ids, err := r.TrainingRows(tab)
	if err != nil {
		return fmt.Errorf("--data: rebuilding the training rows of %s: %w", s.model, err)
	}
	n, d := X.Dims()
	run := c.Run
	if n != run.N || d != run.D {
		return fmt.Errorf("--data: the rebuilt training rows are %d x %d, the certificate's run trained on %d x %d", n, d, run.N, run.D)
	}
	nulls := 0
	for i := 0; i < n; i++ {
		if mat.Norm(X.RowView(i), 2) == 0 {
			nulls++
		}
	}

	a, err := pdp.New(X, y, cfg)
	if err != nil {
		return fmt.Errorf("the exact minimizer of the run's objective: %w", err)
	}
	sol := a.Solution()
	m, err := pdp.NewMechanism(c.Mechanism, c.NoiseScale, c.Delta)
	if err != nil {
		return err
	}
	diffs, one, refined, err := sensitivities(a, s.exactTop)
	if err != nil {
		return err
	}
	if run.Radius > 0 {
		// The trainer projected onto ||w|| <= R. The unconstrained minimizers
		// of Z and of its neighbours are the constrained ones when they lie
		// inside the ball.
		var maxV float64
		for _, v := range diffs {
			maxV = math.Max(maxV, v.L2)
		}
		wn := floats.Norm(sol.W, 2)
		if !(wn+maxV < run.Radius) {
			return fmt.Errorf("--model %s: the run projected onto ||w|| <= R = %g and the exact minimizer (norm %.4g) or a neighbour's (up to %.4g further) reaches the boundary: the constrained problem is not smooth there", s.model, run.Radius, wn, maxV)
		}
		notes = append(notes, fmt.Sprintf("the run projected onto ||w|| <= %g; the exact minimizer (norm %.4g) and its neighbours (at most %.4g away) lie inside, where the projection does not act", run.Radius, wn, maxV))
	}
	eps, err := m.Epsilons(diffs)
	if err != nil {
		return err
	}
	rep, err := pdp.NewReport(a, m, run.Lambda, ids, diffs, eps, s.top)
	if err != nil {
		return err
	}
	for _, i := range refined {
		if diffs[i].L2 > 0 {
			rep.MaxRelOneStepError = math.Max(rep.MaxRelOneStepError, math.Abs(one[i]-diffs[i].L2)/diffs[i].L2)
		}
	}
	certEps, certSens := c.Epsilon, c.L2Sensitivity
	rep.DPEpsilon, rep.DPSensitivity, rep.DPNeighbours = &certEps, &certSens, c.Neighbouring
	cmp, err := pdp.CompareCertified(ids, diffs, eps, c.Epsilon, c.Delta)
	if err != nil {
		return err
	}
	rel := &pdp.ReleaseAnalysis{
		ModelFile: s.model, Claim: claim, Route: c.SensitivityRoute, Sensitivity: c.L2Sensitivity,
		Certified: cmp, Weights: pdp.AnalysedMinimizer,
		ReleasedToExact: floats.Distance(r.Model.W, sol.W, 2), ExactNorm: floats.Norm(sol.W, 2),
		NoiseRMSNorm: m.NoiseRMSNorm(len(sol.W)), Neighbours: pdp.NeighboursVersusCertificate, NullRows: nulls,
	}
	if run.Lambda > 0 {
		// J_{-i} is n lambda strongly convex and its gradient at w_hat is
		// minus the gradient of the removed loss, of norm at most L.
		rel.RemoveOneBound = lip / (float64(n) * run.Lambda)
		if rel.RemoveOneEpsilon, err = m.EpsilonAt(rel.RemoveOneBound, math.Sqrt(float64(len(sol.W)))*rel.RemoveOneBound); err != nil {
			return err
		}
		worst := rel.RemoveOneEpsilon
		rep.WorstCaseEpsilon = &worst
	} else {
		notes = append(notes, "lambda = 0: no data-independent bound on the per-instance sensitivity")
	}
	rep.Release = rel
	rep.Notes = append([]string{
		"data: " + source,
		fmt.Sprintf("training rows rebuilt from the model file: %d of the table's %d data rows (split: test fraction %g, seed %d%s), %d null rows (undeclared label: the zero vector, eps 0); ids are data-row indices from 0",
			n, r.Split.Rows, r.Split.TestFrac, r.Split.Seed, map[bool]string{true: ", stratified", false: ""}[r.Split.Stratified], nulls),
		"preprocessing (the model file's): " + r.Preprocessing.Words,
	}, notes...)
	if r.Preprocessing.Mode == preprocess.Standardize {
		rep.Notes = append(rep.Notes, "the standardization statistics were fitted on the training rows: removing a row would change them too, which this analysis (like the certificate) does not cover")
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("sensitivities: one-step estimates (Lemma 13 with the Hessian at the solution, Sherman-Morrison/Woodbury), the %d most exposed rows refined to the exact leave-one-out solution", len(refined)),
		"mechanism and noise scale from the certificate; Gaussian per-instance epsilons on the exact (Balle & Wang) curve at the certificate's delta, Laplace and gamma exact")
	if err := writePDP(s.out, rep, ids, diffs, eps); err != nil {
		return err
	}
	printPDP(stdout, rep, s)
	return nil
}

// printPDPRelease writes the model-file part of a report.
func printPDPRelease(w io.Writer, r *pdp.Report) {
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
func printCertified(w io.Writer, r *pdp.Report) {
	rel := r.Release
	c := rel.Certified
	fmt.Fprintf(w, "against the certified eps %g: %d of %d rows (%.2f%%) below it; worst row id %d: eps %.4g (%.3g of the certified eps), sensitivity %.4g\n",
		c.Epsilon, c.Below, r.Rows, 100*c.ShareBelow, c.Worst.ID, c.Worst.Epsilon, c.WorstRatio, c.Worst.Sensitivity)
	if rel.RemoveOneBound > 0 {
		fmt.Fprintf(w, "every row's sensitivity is at most L/(n lambda) = %.4g (eps %.4g), half the replace-one bound 2L/(n lambda) of the exact minimizer\n", rel.RemoveOneBound, rel.RemoveOneEpsilon)
	}
}

// sensitivities returns every training row's leave-one-out difference (the
// exact ones for the top rows after refinement), the one-step L2 norms
// before refinement, and the indices of the refined rows.
func sensitivities(a *pdp.Analysis, top int) (diffs []pdp.Diff, one []float64, refined []int, err error) {
	if diffs, err = a.RemoveAll(); err != nil {
		return nil, nil, refined, err
	}
	one = make([]float64, len(diffs))
	for i, d := range diffs {
		one[i] = d.L2
	}
	refined, err = a.RefineTop(diffs, top)
	return diffs, one, refined, err
}
