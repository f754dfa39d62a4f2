package publish

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/perturb"
)

// SummaryFile is the file a Job with a summary writes into its directory,
// beside ReportFiles: the one publishable file.
const SummaryFile = "summary.dp.json"

// ReportFiles are the confidential files a Job writes into its directory
// (report.Result.WriteDir).
var ReportFiles = []string{"pdp.csv", "targets.csv", "summary.json", "pdp.png"}

// Words of the stabpriv pdp command's help and defaults.
const (
	// DefaultMechanism is the release simulated when Options.Mechanism
	// is not given: the analytic Gaussian mechanism.
	DefaultMechanism = string(perturb.AnalyticGaussian)
	// Neighbours is pdp.Neighbours, the pDP neighbouring relation.
	Neighbours = pdp.Neighbours
)

// Mechanisms lists the output-perturbation mechanisms Options.Mechanism
// may name beside the ridge releases (report.RidgeOPS, ...).
func Mechanisms() string { return perturb.MechanismList() }

// Options are the settings of one per-instance DP analysis, as the flags
// of stabpriv pdp give them (the error messages name those flags). The
// zero value of a field is its zero, not the command's default.
type Options struct {
	// Model is a model file to analyse ("": a simulated release); then
	// only Data, ExactTop, Top, Out, Force and Summary apply.
	Model string
	// Data is the CSV file ("": the embedded breast-cancer data), Label
	// its label column and Positive the class encoded +1.
	Data, Label, Positive string
	// Loss names the smooth loss (losses.ByName).
	Loss string
	// Lambda >= 0 is the ridge strength; L1Ratio must be 0.
	Lambda, L1Ratio float64
	// Epsilon and Delta calibrate the release; Sigma > 0 instead fixes
	// Gaussian noise of that standard deviation.
	Epsilon, Delta, Sigma float64
	// Mechanism names the release: a perturb mechanism or, with the
	// squared loss, report.RidgeOPS, report.RidgeAdaOPS or
	// report.RidgeGaussianCov (with Gamma, Cond and Precision).
	Mechanism   string
	Gamma, Cond float64
	Precision   string
	// ExactTop rows are refined exactly and Top rows listed.
	ExactTop, Top int
	// Standardize is "train" or "none"; Bias "true" or "false".
	Standardize, Bias string
	// TestFrac in [0, 1) of the rows are held out (by Seed) as targets.
	TestFrac float64
	Seed     uint64
	// LabelBound >= 0 clips labels (regression); Kappa > 0 is the row
	// bound assumed with no standardization and no bias.
	LabelBound, Kappa float64
	// Out is the output directory; Force replaces files there.
	Out   string
	Force bool
	// Summary holds the settings of the DP summary (SummaryFile).
	Summary SummaryOptions
	// Set names the options given (by their flag names, without dashes):
	// several checks depend on which were given.
	Set map[string]bool
	// Warnings receives the summary's warnings (nil: discarded).
	Warnings io.Writer
	// CheckOut, when not nil, checks before any work that the run may
	// write files (the names) into Out; it is called at the point of the
	// checks where the command refuses an output path.
	CheckOut func(files []string) error
	// ReadModel reads Model (nil: modelfile.ReadFile).
	ReadModel func(path string) (*modelfile.Released, error)
	// PeakHeap, when not nil, is called once the data of a simulated
	// release are read (not with Model), before the analysis, with
	// report.PeakHeap's estimate of the live heap the analysis will peak
	// at: the pdp command sizes its soft memory limit from it.
	PeakHeap func(bytes int64)
}

// SummaryOptions are the settings of the DP summary of a Job, given
// when Options.Set names "publish-epsilon".
type SummaryOptions struct {
	Epsilon, Delta, Beta float64
	// Levels is a comma-separated list of epsilon levels.
	Levels string
	// Seed seeds the draws when Options.Set names "publish-seed"
	// (reproducible, not private); otherwise the secure source draws.
	Seed uint64
}

// SettingsError reports options that cannot make a run (stabpriv pdp
// exits with status 2 on it). Its message names the flag.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string { return e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

// settingsf returns a *SettingsError with a formatted message.
func settingsf(format string, args ...any) error {
	return &SettingsError{fmt.Errorf(format, args...)}
}

// Job is a checked pDP analysis (NewJob), run by Run.
type Job struct {
	Options
	lossFn losses.Loss
	mech   dp.Mechanism
	fixed  bool                 // Sigma given
	ridge  *report.RidgeRelease // ops, adaops or gaussian-cov
	bias   bool
	// summary is the DP summary requested (nil: none).
	summary *summarySettings
}

// ridgeMechanisms are the releases of ridge regression that Mechanism
// names beside perturb's.
var ridgeMechanisms = map[string]bool{report.RidgeOPS: true, report.RidgeAdaOPS: true, report.RidgeGaussianCov: true}

// modelFlags are the options that apply with a model file: everything
// else comes from the file.
var modelFlags = map[string]bool{"model": true, "data": true, "exact-top": true, "top": true, "out": true, "force": true, "log-level": true,
	"publish-epsilon": true, "publish-delta": true, "publish-beta": true, "publish-levels": true, "publish-seed": true}

// NewJob checks opts, reading nothing but the precision matrix: every
// error of the settings is a *SettingsError (or the error of CheckOut).
func NewJob(opts Options) (*Job, error) {
	j := &Job{Options: opts}
	if j.Set == nil {
		j.Set = map[string]bool{}
	}
	if j.Warnings == nil {
		j.Warnings = io.Discard
	}
	var err error
	if j.summary, err = j.Summary.settings(j.Set, j.Warnings); err != nil {
		return nil, err
	}
	if j.Set["model"] {
		return j, j.checkModel()
	}
	if j.lossFn, err = losses.ByName(j.Loss); err != nil {
		return nil, settingsf("--loss: %w; the per-instance analysis needs a smooth loss (Wang's Lemma 13)", err)
	}
	if err := j.checkOut(); err != nil {
		return nil, err
	}
	if err := j.summary.checkSimulation(j.Lambda, j.Standardize, j.Bias); err != nil {
		return nil, err
	}
	if err := j.checkModelSettings(); err != nil {
		return nil, err
	}
	if ridgeMechanisms[j.Mechanism] {
		return j, j.checkRidge()
	}
	for _, name := range []string{"gamma", "cond", "precision"} {
		if j.Set[name] {
			return nil, settingsf("--%s applies to --mechanism ops, adaops or gaussian-cov (ridge regression)", name)
		}
	}
	if err := j.checkNoise(); err != nil {
		return nil, err
	}
	return j, nil
}

// checkOut calls CheckOut with the files the job writes.
func (j *Job) checkOut() error {
	if j.CheckOut == nil {
		return nil
	}
	return j.CheckOut(j.summary.outFiles())
}

// checkModel validates the options of an analysis of a model file.
func (j *Job) checkModel() error {
	for name := range j.Set {
		if !modelFlags[name] {
			return settingsf("--%s with --model: the model file fixes it; only --data, --exact-top, --top, --out, --force, --log-level, --publish-*", name)
		}
	}
	if err := j.checkOut(); err != nil {
		return err
	}
	if j.ExactTop < 0 || j.Top < 0 {
		return settingsf("--exact-top %d, --top %d, want >= 0", j.ExactTop, j.Top)
	}
	return nil
}

// checkModelSettings checks the objective, the split, the preprocessing
// and the data options of a simulated release.
func (j *Job) checkModelSettings() error {
	if !check.NonNegative(j.Lambda) {
		return settingsf("--lambda %v, want finite >= 0", j.Lambda)
	}
	if j.L1Ratio != 0 {
		return settingsf("--l1-ratio %v: %v; the per-instance analysis covers ridge (l1-ratio 0) only", j.L1Ratio, pdp.ErrNotSmooth)
	}
	if !check.HalfOpenUnit(j.TestFrac) {
		return settingsf("--test-frac %v, want in [0, 1)", j.TestFrac)
	}
	if j.Standardize != "train" && j.Standardize != "none" {
		return settingsf("--standardize %q, want train or none", j.Standardize)
	}
	b, err := strconv.ParseBool(j.Bias)
	if err != nil {
		return settingsf("--bias %q, want true or false", j.Bias)
	}
	j.bias = b
	if j.ExactTop < 0 || j.Top < 0 {
		return settingsf("--exact-top %d, --top %d, want >= 0", j.ExactTop, j.Top)
	}
	if !check.Positive(j.Kappa) {
		return settingsf("--kappa %v, want finite > 0", j.Kappa)
	}
	if !check.NonNegative(j.LabelBound) {
		return settingsf("--label-bound %v, want finite >= 0", j.LabelBound)
	}
	if j.LabelBound != 0 && j.lossFn.Task() != losses.Regression {
		return settingsf("--label-bound applies to regression losses, not %s", j.Loss)
	}
	if j.Positive != "" && j.lossFn.Task() != losses.Binary {
		return settingsf("--positive applies to binary losses, not %s", j.Loss)
	}
	if j.Data == "" && j.Label != "" && j.Label != datasets.DefaultLabel {
		return settingsf("--label %q without --data: the embedded data set's label is %q", j.Label, datasets.DefaultLabel)
	}
	if j.Data != "" && j.Label == "" {
		return settingsf("--data needs --label, the name of the label column")
	}
	return nil
}

// checkNoise checks the output perturbation of a simulated release.
func (j *Job) checkNoise() error {
	if j.Set["sigma"] {
		mech := dp.Mechanism(j.Mechanism)
		if j.Set["epsilon"] || (j.Set["mechanism"] && mech != perturb.AnalyticGaussian && mech != perturb.Gaussian) {
			return settingsf("--sigma fixes Gaussian noise; it excludes --epsilon and --mechanism %s", j.Mechanism)
		}
		if !check.Positive(j.Sigma) {
			return settingsf("--sigma %v, want finite > 0", j.Sigma)
		}
		j.fixed, j.mech = true, perturb.AnalyticGaussian
	} else if _, err := perturb.Lookup(dp.Mechanism(j.Mechanism)); err != nil {
		return settingsf("--mechanism %q, want one of %s (with --loss squared also ops, adaops, gaussian-cov)", j.Mechanism, perturb.MechanismList())
	} else {
		j.mech = dp.Mechanism(j.Mechanism)
	}
	if j.mech.Pure() {
		if j.Set["delta"] && j.Delta != 0 {
			return settingsf("--delta %v with --mechanism %s: laplace and gamma are pure eps-DP, leave --delta unset", j.Delta, j.mech)
		}
		j.Delta = 0
	} else if !(j.Delta > 0 && j.Delta < 1) {
		return settingsf("--delta %v, want in (0, 1) for a Gaussian mechanism", j.Delta)
	}
	if !j.fixed {
		if _, err := perturb.Calibrate(j.mech, j.Epsilon, j.Delta, perturb.Sensitivity{L2: 1}, 1); err != nil {
			return settingsf("--mechanism %s --epsilon %v --delta %v: %w%s", j.mech, j.Epsilon, j.Delta, err, perturb.Hint(j.mech, err))
		}
	}
	return nil
}

// checkRidge checks the options of a ridge release (Mechanism ops, adaops
// or gaussian-cov) and reads Precision.
func (j *Job) checkRidge() error {
	kind := j.Mechanism
	if j.lossFn.Name() != "squared" {
		return settingsf("--mechanism %s is a release of ridge regression: it needs --loss squared", kind)
	}
	if j.Set["sigma"] {
		return settingsf("--sigma fixes isotropic Gaussian noise; it excludes --mechanism %s", kind)
	}
	rr := &report.RidgeRelease{Kind: kind, Gamma: j.Gamma, Cond: j.Cond, Seed: j.Seed}
	switch kind {
	case report.RidgeOPS, report.RidgeGaussianCov:
		if !check.Positive(j.Gamma) {
			return settingsf("--mechanism %s needs --gamma finite > 0", kind)
		}
		if j.Set["cond"] {
			return settingsf("--cond applies to --mechanism adaops")
		}
		if j.Set["epsilon"] {
			return settingsf("--epsilon applies to --mechanism adaops; %s is set by --gamma", kind)
		}
	case report.RidgeAdaOPS:
		if !check.Positive(j.Cond) || !check.Positive(j.Epsilon) {
			return settingsf("--mechanism adaops needs --cond (kappa) and --epsilon finite > 0")
		}
		if j.Set["gamma"] {
			return settingsf("--gamma with --mechanism adaops: AdaOPS chooses its own")
		}
	}
	if !(j.Delta > 0 && j.Delta < 1) || (kind != report.RidgeGaussianCov && !(j.Delta < 2/math.E)) {
		return settingsf("--delta %v, want in (0, 1) (ops and adaops: (0, 2/e))", j.Delta)
	}
	if j.Precision != "" {
		if kind != report.RidgeGaussianCov {
			return settingsf("--precision applies to --mechanism gaussian-cov")
		}
		a, err := report.ReadPrecision(j.Precision)
		if err != nil {
			return settingsf("--precision: %w", err)
		}
		rr.Precision = a
	}
	j.ridge = rr
	return nil
}
