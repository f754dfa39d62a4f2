package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// trainFlags holds the flags of the train command.
type trainFlags struct {
	data, label, positive string
	loss                  string
	lambda, l1Ratio       float64
	kappa                 float64
	passes, batch         int
	step, schedule        string
	clip, dropout, radius float64
	average               bool
	engine                string
	seed                  uint64
	testFrac              float64
	out                   string
	logLevel              string
	labelBound            float64
	tolerance             float64
	// Privacy: the mechanism ("none" for a non-private model), its
	// (epsilon, delta) and the noise source.
	mechanism, noise string
	epsilon, delta   float64
	// standardize is "train" (statistics fitted on the training split) or
	// "none" (rows only clipped into the unit ball: no statistic of the data).
	standardize string
}

func newTrainFlagSet(f *trainFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.StringVar(&f.data, "data", "", "CSV `file` with a header row and numeric features (default: the embedded breast-cancer data)")
	fs.StringVar(&f.label, "label", "", "label `column` of --data (default with the embedded data: "+datasets.DefaultLabel+")")
	fs.StringVar(&f.positive, "positive", "", "binary tasks: the `class` encoded +1 (default: the larger class name; malignant for the embedded data)")
	fs.StringVar(&f.loss, "loss", "logistic", "loss: "+strings.Join(losses.Names(), ", ")+"; it sets the task (softmax: multiclass, huber and squared: regression)")
	fs.Float64Var(&f.lambda, "lambda", 1e-3, "elastic-net strength lambda >= 0")
	fs.Float64Var(&f.l1Ratio, "l1-ratio", 0.15, "elastic-net L1 share alpha in [0, 1]; mu = lambda*(1-alpha)")
	fs.Float64Var(&f.kappa, "kappa", 1, "row bound ||x|| <= kappa enforced by the trainer; the preprocessing already maps rows into the unit ball")
	fs.IntVar(&f.passes, "passes", 10, "passes k over the training data")
	fs.IntVar(&f.batch, "batch", 1, "minibatch size b")
	fs.StringVar(&f.step, "step", "auto", "constant step size eta, or auto for 1/beta (beta the smoothness of the per-example objective)")
	fs.StringVar(&f.schedule, "schedule", "constant", "step schedule: constant, inverse-t, bounded-inverse-t")
	fs.Float64Var(&f.clip, "clip", 0, "per-example gradient clipping norm `G` (0: none)")
	fs.Float64Var(&f.dropout, "dropout", 1, "s-dropout fraction `s` in (0, 1] (1: none)")
	fs.Float64Var(&f.radius, "radius", 0, "project the weights onto ||w|| <= `R` (0: none; squared loss needs it)")
	fs.BoolVar(&f.average, "average", false, "return the average of the iterates")
	fs.StringVar(&f.engine, "engine", "native", "gradient engine: native or graph (Gorgonia)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the split, the permutations and the dropout masks")
	fs.Float64Var(&f.testFrac, "test-frac", 0.2, "share of the rows held out for testing, in (0, 1)")
	fs.StringVar(&f.out, "out", "", "write the model, the run record and the preprocessing as JSON to this `file` (parent directories are created)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level on stderr: panic, error, warn, info, debug")
	fs.Float64Var(&f.labelBound, "label-bound", 0, "regression: the bound `B` in |y| <= B (squared loss needs it; 0: none)")
	fs.Float64Var(&f.tolerance, "tolerance", 0, "stop after the first pass whose gradient norm is <= `tol`, fixed in advance (0: run every pass); enables the erm route")
	fs.StringVar(&f.mechanism, "mechanism", "none", "release mechanism: none (a non-private model), laplace, gamma, gaussian, gaussian-analytic")
	fs.Float64Var(&f.epsilon, "epsilon", 1, "privacy parameter `eps` > 0 of the release")
	fs.Float64Var(&f.delta, "delta", 0, "privacy parameter `delta` in [0, 1): 0 for laplace and gamma (pure eps-DP), > 0 for the Gaussian mechanisms")
	fs.StringVar(&f.noise, "noise", "secure", "noise source of the release: secure, or seeded from --seed (reproducible, not for release)")
	fs.StringVar(&f.standardize, "standardize", "train", "feature standardization: train (means and scales fitted on the training split: not private, outside the guarantee) or none (features used as they are, for data already on a common, public scale)")
	fs.SetOutput(io.Discard) // parse errors are returned, not printed
	fs.Usage = func() {}     // the flag package calls it on every error
	return fs
}

// printTrainUsage writes the help of the train command.
func printTrainUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, "Usage: stabpriv train [flags]\n\n"+
		"Loads the data, splits it (stratified for classification, seeded), standardizes the\n"+
		"features with statistics fitted on the training split (--standardize none skips it),\n"+
		"maps every row to\n"+
		"x' = [x, 1]/sqrt(2) with x clipped into the unit ball (so ||x'|| <= 1 and kappa = 1\n"+
		"holds, the bias included), trains, and reports the test metric and every constant\n"+
		"of the run, the uniform stability beta and the L2 sensitivity Delta of the weights\n"+
		"by every route. With --mechanism, it releases the weights with noise calibrated to\n"+
		"Delta and (--epsilon, --delta), and writes only the private weights and their\n"+
		"certificate; unless --schedule or --step is given, the step schedule is then\n"+
		"bounded-inverse-t when mu > 0 (route strongly-convex-sgd, Delta <= 2L/(mu n)).\n\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// settings are the checked values of the train flags.
type settings struct {
	trainFlags
	lossFn   losses.Loss
	schedule trainer.Schedule
	engine   trainer.Engine
	eta      float64
	level    logrus.Level
	// mech is the release mechanism, "" for none; autoSchedule reports that
	// the schedule was chosen for the release, not by the user.
	mech         perturb.Mechanism
	autoSchedule bool
}

// parseTrain parses and checks the flags; every error is a usage error.
func parseTrain(args []string, stderr io.Writer) (*settings, error) {
	var f trainFlags
	fs := newTrainFlagSet(&f, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printTrainUsage(fs, stderr)
			return nil, err
		}
		return nil, usagef("%w (run 'stabpriv help train' for the flags)", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	s := &settings{trainFlags: f}
	var err error
	if s.lossFn, err = losses.ByName(f.loss); err != nil {
		return nil, usagef("--loss: %w", err)
	}
	if f.positive != "" && s.lossFn.Task() != losses.Binary {
		return nil, usagef("--positive applies to binary losses, not %s (%v)", f.loss, s.lossFn.Task())
	}
	if f.labelBound != 0 && s.lossFn.Task() != losses.Regression {
		return nil, usagef("--label-bound applies to regression losses, not %s (%v)", f.loss, s.lossFn.Task())
	}
	switch f.schedule {
	case "constant":
		s.schedule = trainer.Constant
	case "inverse-t":
		s.schedule = trainer.InverseT
	case "bounded-inverse-t":
		s.schedule = trainer.BoundedInverseT
	default:
		return nil, usagef("--schedule %q, want constant, inverse-t or bounded-inverse-t", f.schedule)
	}
	switch f.engine {
	case "native":
		s.engine = trainer.Native
	case "graph":
		s.engine = trainer.Graph
	default:
		return nil, usagef("--engine %q, want native or graph", f.engine)
	}
	if f.step != "auto" {
		s.eta, err = strconv.ParseFloat(f.step, 64)
		if err != nil || math.IsNaN(s.eta) || math.IsInf(s.eta, 0) || s.eta <= 0 {
			return nil, usagef("--step %q, want auto or a finite number > 0", f.step)
		}
		if s.schedule != trainer.Constant {
			return nil, usagef("--step %s applies to the constant schedule, not %s", f.step, f.schedule)
		}
	}
	if math.IsNaN(f.testFrac) || f.testFrac <= 0 || f.testFrac >= 1 {
		return nil, usagef("--test-frac %v, want in (0, 1)", f.testFrac)
	}
	if f.kappa <= 0 || math.IsNaN(f.kappa) || math.IsInf(f.kappa, 0) {
		return nil, usagef("--kappa %v, want finite > 0", f.kappa)
	}
	if f.dropout <= 0 || f.dropout > 1 || math.IsNaN(f.dropout) {
		return nil, usagef("--dropout %v, want in (0, 1]", f.dropout)
	}
	if f.passes <= 0 || f.batch <= 0 {
		return nil, usagef("--passes %d, --batch %d, want >= 1", f.passes, f.batch)
	}
	if f.data == "" && f.label != "" && f.label != datasets.DefaultLabel {
		return nil, usagef("--label %q without --data: the embedded data set's label is %q", f.label, datasets.DefaultLabel)
	}
	if f.data != "" && f.label == "" {
		return nil, usagef("--data needs --label, the name of the label column")
	}
	if s.level, err = logrus.ParseLevel(f.logLevel); err != nil {
		return nil, usagef("--log-level: %w", err)
	}
	set := make(map[string]bool)
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := s.parsePrivacy(set); err != nil {
		return nil, err
	}
	return s, nil
}

// parsePrivacy checks the privacy flags, given the names of the flags set on
// the command line, and chooses the step schedule of a private run.
func (s *settings) parsePrivacy(set map[string]bool) error {
	if s.noise != "secure" && s.noise != "seeded" {
		return usagef("--noise %q, want secure or seeded", s.noise)
	}
	if s.standardize != "train" && s.standardize != "none" {
		return usagef("--standardize %q, want train or none", s.standardize)
	}
	if s.mechanism == "none" {
		for _, name := range []string{"epsilon", "delta", "noise"} {
			if set[name] {
				return usagef("--%s applies to a private release; choose --mechanism laplace, gamma, gaussian or gaussian-analytic", name)
			}
		}
		return nil
	}
	m, err := perturb.ParseMechanism(s.mechanism)
	if err != nil {
		return usagef("--mechanism %q, want none, laplace, gamma, gaussian or gaussian-analytic", s.mechanism)
	}
	// The release calibrates with the same checks; a unit sensitivity
	// stands in for the one the stability analysis will give.
	if _, err := perturb.Calibrate(m, s.epsilon, s.delta, perturb.Sensitivity{L2: 1}, 1); err != nil {
		return usagef("--mechanism %s --epsilon %v --delta %v: %w%s", m, s.epsilon, s.delta, err, privacyHint(m, err))
	}
	s.mech = m
	if !set["schedule"] && !set["step"] && s.lambda*(1-s.l1Ratio) > 0 {
		s.schedule, s.autoSchedule = trainer.BoundedInverseT, true
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

// runTrain is the train command.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := parseTrain(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	// A model file that cannot be written is found out before the run.
	if st, err := os.Stat(s.out); s.out != "" && err == nil && st.IsDir() {
		return fmt.Errorf("--out %s is a directory; give a file name", s.out)
	}
	task := s.lossFn.Task()
	full, source, err := loadData(s, task)
	if err != nil {
		return err
	}
	train, test, err := datasets.Split(full, s.testFrac, s.seed, task != losses.Regression)
	if err != nil {
		return err
	}
	var std *datasets.Standardizer
	if s.standardize == "train" {
		train, test, std, err = datasets.PrepareUnitBall(train, test, datasets.UnitBallOptions{})
	} else if train, err = datasets.UnitBallWithBias(train); err == nil {
		test, err = datasets.UnitBallWithBias(test)
	}
	if err != nil {
		return err
	}

	log := logrus.New()
	log.SetOutput(stderr)
	log.SetLevel(s.level)
	cfg := trainer.Config{
		Loss:       s.lossFn,
		Classes:    len(train.Classes),
		Reg:        regularizers.ElasticNet{Lambda: s.lambda, L1Ratio: s.l1Ratio},
		LabelBound: s.labelBound,
		Kappa:      s.kappa,
		Schedule:   s.schedule,
		Eta:        s.eta,
		Passes:     s.passes,
		Batch:      s.batch,
		Clip:       s.clip,
		Dropout:    s.dropout,
		Radius:     s.radius,
		Average:    s.average,
		Tolerance:  s.tolerance,
		Seed:       s.seed,
		Engine:     s.engine,
		Logger:     log,
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		return &usageError{err}
	}
	model, rec, err := tr.Train(ctx, train.X, train.Y)
	if err != nil {
		if errors.Is(err, trainer.ErrConfig) {
			return &usageError{err}
		}
		return err
	}
	res := &result{
		source: source, label: s.label, model: model, run: rec, std: std,
		train: train, test: test,
		trainMetric: metric(model, train), testMetric: metric(model, test),
		testFrac: s.testFrac,
	}
	if s.autoSchedule && s.tolerance == 0 {
		fmt.Fprintf(stdout, "schedule: bounded-inverse-t, chosen for --mechanism %s since mu = %g > 0: with it route %v bounds Delta by 2L/(mu n) after any number of passes, without convergence (more with --average; the stability table below gives the bound used) (--schedule or --step overrides it)\n",
			s.mech, rec.Mu, stability.RouteStronglyConvexSGD)
	} else if s.mech != "" && rec.Mu == 0 {
		fmt.Fprintf(stdout, "schedule: %s; mu = 0, so no schedule contracts: the sensitivity grows with the passes (route %v); --lambda > 0 with --l1-ratio < 1 gives route %v\n",
			rec.Schedule, stability.RouteConvexSGD, stability.RouteStronglyConvexSGD)
	}
	if err := res.print(stdout); err != nil {
		return err
	}
	if res.report, err = stability.Analyze(rec); err != nil {
		return err
	}
	if err := res.printStability(stdout); err != nil {
		return err
	}
	if s.mech != "" {
		if err := res.release(s); err != nil {
			return err
		}
		if err := res.printRelease(stdout, s); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, "\nnot private: --mechanism none releases the trained weights as they are")
	}
	if s.out != "" {
		if err := res.write(s.out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nmodel written to %s\n", s.out)
	}
	return nil
}

// release adds the noise of s.mech to the trained model, calibrated to the
// sensitivity of the chosen stability route, and records the private model,
// its certificate and its metrics in r. It fails, releasing nothing, when no
// route applies.
func (r *result) release(s *settings) error {
	sens, notes, err := perturb.FromReport(r.report)
	if err != nil {
		return err
	}
	src := perturb.Secure()
	if s.noise == "seeded" {
		src = perturb.Seeded(s.seed)
	}
	cfg := perturb.ReleaseConfig{
		Mechanism: s.mech, Epsilon: s.epsilon, Delta: s.delta, Source: src,
		Notes: append(notes, r.train.Notes...),
	}
	priv, cert, err := perturb.Release(r.model, r.run, sens, cfg)
	if err != nil {
		return err
	}
	r.private, r.cert = priv, cert
	r.privTrain, r.privTest = metric(priv, r.train), metric(priv, r.test)
	return nil
}

// loadData reads --data, or the embedded data set, with labels encoded for
// the task. It returns the data set and a description of its source.
func loadData(s *settings, task losses.Task) (*datasets.Dataset, string, error) {
	if s.data != "" {
		ds, err := datasets.ReadCSVFile(s.data, datasets.CSVOptions{Label: s.label, Task: task, Positive: s.positive})
		return ds, s.data, err
	}
	s.label = datasets.DefaultLabel
	const source = "embedded Wisconsin diagnostic breast cancer data"
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
		// Two classes as indices 0 and 1, in the same order.
		for i, v := range ds.Y {
			ds.Y[i] = (v + 1) / 2
		}
		ds.Notes = append(ds.Notes, fmt.Sprintf("labels re-encoded as class indices: %s = 0, %s = 1", ds.Classes[0], ds.Classes[1]))
	default:
		return nil, "", usagef("--loss %s is a %v loss; the embedded data set is binary, give --data and --label", s.lossFn.Name(), task)
	}
	return ds, source, nil
}

// metric is the reported quality of a model on a data set: accuracy for
// classification, root mean squared error for regression.
type metricValue struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Rows  int     `json:"rows"`
}

func metric(m *trainer.Model, ds *datasets.Dataset) metricValue {
	n, d := ds.X.Dims()
	if m.Task != losses.Regression {
		return metricValue{"accuracy", m.Accuracy(ds.X, ds.Y), n}
	}
	x := make([]float64, d)
	var ss float64
	for i := 0; i < n; i++ {
		mat.Row(x, i, ds.X)
		r := m.Predict(x) - ds.Y[i]
		ss += r * r
	}
	return metricValue{"rmse", math.Sqrt(ss / float64(n)), n}
}
