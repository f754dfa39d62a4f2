package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/pdp/ridge"
	"github.com/stabpriv/stabpriv/perturb"
)

// summaryFlagNames are the names of the summary's options (they apply
// with and without a model file).
var summaryFlagNames = []string{"publish-epsilon", "publish-delta", "publish-beta", "publish-levels", "publish-seed"}

// summarySettings are the checked summary options; nil when not
// publishing.
type summarySettings struct {
	cfg  Config
	src  perturb.Source
	seed *uint64
	// warnings receives the summary's warnings.
	warnings io.Writer
}

// settings checks the summary options (set: the options given); the
// summary's warnings will go to warnings.
func (f SummaryOptions) settings(set map[string]bool, warnings io.Writer) (*summarySettings, error) {
	if !set["publish-epsilon"] {
		for _, name := range summaryFlagNames[1:] {
			if set[name] {
				return nil, settingsf("--%s applies with --publish-epsilon", name)
			}
		}
		return nil, nil
	}
	if err := (dp.Budget{Epsilon: f.Epsilon, Delta: f.Delta}).Validate(); err != nil {
		return nil, settingsf("--publish-epsilon %v --publish-delta %v: %w", f.Epsilon, f.Delta, err)
	}
	if !check.OpenUnit(f.Beta) {
		return nil, settingsf("--publish-beta %v: beta = %v, want in (0, 1)", f.Beta, f.Beta)
	}
	var levels []float64
	for _, s := range strings.Split(f.Levels, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, settingsf("--publish-levels %q: %q is not a number", f.Levels, s)
		}
		levels = append(levels, v)
	}
	ps := &summarySettings{cfg: Config{Epsilon: f.Epsilon, Delta: f.Delta, Beta: f.Beta, Levels: levels}, src: perturb.Secure(), warnings: warnings}
	if set["publish-seed"] {
		seed := f.Seed
		ps.src, ps.seed = perturb.Seeded(seed), &seed
	}
	if err := ps.cfg.Budget().Check(); err != nil {
		return nil, settingsf("--publish-*: %w", err)
	}
	return ps, nil
}

// standardizedFix names the ways to a summary that is private for the
// table.
const standardizedFix = "use --standardize none, or train with --bounds, --bounds-all or --bounds-share and use pdp --model"

// checkSimulation refuses, before any work, a summary of a simulated
// release that has no data-independent bound on a row's influence: lambda
// = 0, rows whose norm bound is assumed rather than enforced, or rows
// standardized with their own statistics (replacing one row changes every
// row, which no summary's neighbourhood covers).
func (ps *summarySettings) checkSimulation(lambda float64, standardize, bias string) error {
	switch {
	case ps == nil:
		return nil
	case lambda == 0:
		return settingsf("--publish-epsilon with --lambda 0: %v (a summary needs lambda > 0: strong convexity bounds every row's influence)", pdp.ErrNotPublishable)
	case standardize == "train":
		return settingsf("--publish-epsilon with --standardize train: %v (features standardized on the training rows); %s", pdp.ErrNotPublishable, standardizedFix)
	case standardize == "none" && bias == "false":
		return settingsf("--publish-epsilon with --standardize none --bias false: %v (the rows' norm bound is not enforced)", pdp.ErrNotPublishable)
	}
	return nil
}

// outFiles returns the files the job writes into Out.
func (ps *summarySettings) outFiles() []string {
	if ps == nil {
		return ReportFiles
	}
	return append(append([]string(nil), ReportFiles...), SummaryFile)
}

// Output is the result of a Job: the confidential analysis and the DP
// summary drawn from it (nil without one). Nothing is written yet.
type Output struct {
	job     *Job
	res     *report.Result
	summary *Summary
}

// Run analyses the release the job names (a model file's, or a simulated
// one) and draws its DP summary when one is asked for; it writes nothing.
// Inputs that cannot make a run (a stump model, a singular Hessian, an
// AdaOPS kappa above its limit, ...) give a *SettingsError; a data file
// that does not read gives its datasets error, a model file modelfile's.
func (j *Job) Run(ctx context.Context) (*Output, error) {
	var res *report.Result
	var err error
	if j.Model != "" {
		res, err = j.analyzeModel()
	} else {
		res, err = j.simulate()
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &Output{job: j, res: res}
	if j.summary != nil {
		// Drawn before anything is written: an error leaves Out as it was.
		if out.summary, err = j.summarize(res); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// simulate analyses a simulated release of the data. AdaOPS refuses a
// kappa (--cond) above its limit n eps/(4 d (1 + log(4/delta))) for n
// training rows and d weights (ridge.CondError).
func (j *Job) simulate() (*report.Result, error) {
	ds, source, err := j.loadData()
	if err != nil {
		return nil, err
	}
	if j.PeakHeap != nil {
		n, d := ds.X.Dims()
		j.PeakHeap(report.PeakHeap(n, d, j.lossFn.Outputs(len(ds.Classes))))
	}
	sim := report.Simulation{
		Rows: report.Rows{ExactTop: j.ExactTop, Top: j.Top}, Loss: j.lossFn, Lambda: j.Lambda,
		Mechanism: j.mech, Epsilon: j.Epsilon, Delta: j.Delta, TestFrac: j.TestFrac, Seed: j.Seed,
		Standardize: j.Standardize == "train", Bias: j.bias, Kappa: j.Kappa, LabelBound: j.LabelBound, Source: source,
	}
	if j.fixed {
		sim.Sigma = j.Sigma
	}
	var res *report.Result
	if j.ridge != nil {
		res, err = report.SimulateRidge(ds, sim, *j.ridge)
	} else {
		res, err = report.Simulate(ds, sim)
	}
	var cond *ridge.CondError
	switch {
	case errors.As(err, &cond):
		return nil, settingsf("--cond %v is above AdaOPS's limit %.6g for n = %d rows, d = %d weights: lower --cond or raise --epsilon", j.Cond, cond.Max, cond.N, cond.D)
	case errors.Is(err, pdp.ErrNoBound):
		return nil, settingsf("--epsilon %v: %w; pass --sigma S to analyse Gaussian noise of a fixed scale", j.Epsilon, err)
	case errors.Is(err, pdp.ErrSingular) || errors.Is(err, pdp.ErrNotSmooth) || errors.Is(err, pdp.ErrInput) || errors.Is(err, dp.ErrBudget):
		return nil, &SettingsError{err}
	}
	return res, err
}

// analyzeModel analyses the training rows of a model file's release,
// against its certificate. A summary of a model whose features were
// standardized with statistics of the training rows is refused:
// replacing one row changes every row, so no summary of them is private
// for the table (checkSimulation says the same of a simulated release).
func (j *Job) analyzeModel() (*report.Result, error) {
	read := j.ReadModel
	if read == nil {
		read = modelfile.ReadFile
	}
	r, err := read(j.Model)
	if err != nil {
		return nil, err
	}
	if j.summary != nil && !r.Preprocessing.Mode.Inside() {
		return nil, settingsf("--publish-epsilon with --model %s: %v (features standardized on the training rows); %s", j.Model, pdp.ErrNotPublishable, standardizedFix)
	}
	tab, source := (*datasets.Table)(nil), j.Data
	if j.Data != "" {
		tab, err = datasets.ReadTableFile(j.Data)
	} else {
		tab, _, err = datasets.DefaultTable()
		source = "the embedded Wisconsin diagnostic breast cancer data (no --data)"
	}
	if err != nil {
		return nil, err
	}
	res, err := report.AnalyzeRelease(r, tab, report.Release{Rows: report.Rows{ExactTop: j.ExactTop, Top: j.Top}, File: j.Model, Source: source})
	switch {
	case errors.Is(err, pdp.ErrInput):
		// A release with nothing to analyse (a decision stump, ...): an
		// input that cannot make a run.
		return nil, settingsf("--model %s: %w", j.Model, err)
	case err != nil:
		return nil, fmt.Errorf("--model %s: %w", j.Model, err)
	}
	return res, nil
}

// loadData reads Data or the embedded data, labels encoded for the loss.
func (j *Job) loadData() (*datasets.Dataset, string, error) {
	task := j.lossFn.Task()
	if j.Data != "" {
		ds, err := datasets.ReadCSVFile(j.Data, datasets.CSVOptions{Label: j.Label, Task: task, Positive: j.Positive})
		return ds, j.Data, err
	}
	j.Label = datasets.DefaultLabel
	ds, err := datasets.Default()
	if err != nil {
		return nil, "", err
	}
	switch task {
	case losses.Binary:
		if j.Positive != "" && j.Positive != ds.Classes[1] {
			return nil, "", settingsf("--positive %q: the embedded data set encodes %s as +1", j.Positive, ds.Classes[1])
		}
	case losses.Multiclass:
		for i, v := range ds.Y {
			ds.Y[i] = (v + 1) / 2
		}
	default:
		return nil, "", settingsf("--loss %s is a regression loss; the embedded data set is binary: give --data and --label", j.Loss)
	}
	return ds, "embedded Wisconsin diagnostic breast cancer data", nil
}

// summarize draws the DP summary of the analysis. A budget the rows
// cannot take (a delta at or above 1/n) is a settings error.
func (j *Job) summarize(res *report.Result) (*Summary, error) {
	ps := j.summary
	p, err := res.Publishable()
	if err != nil {
		return nil, &SettingsError{fmt.Errorf("--publish-epsilon: %w", err)}
	}
	s, err := Summarize(p, ps.cfg, ps.src, ps.seed)
	if errors.Is(err, dp.ErrBudget) {
		return nil, settingsf("--publish-delta %v: %w", ps.cfg.Delta, err)
	}
	return s, err
}

// WriteDir writes the analysis into dir (report.Result.WriteDir: readable
// by the owner only) and the summary, readable by all, as SummaryFile. An
// existing file is replaced only with force; a refused target is
// safefile's error.
func (o *Output) WriteDir(dir string, force bool) error {
	if err := o.res.WriteDir(dir, force); err != nil {
		return err
	}
	if o.summary == nil {
		return nil
	}
	mode := safefile.New
	if force {
		mode = safefile.Replace
	}
	return safefile.Write(filepath.Join(dir, SummaryFile), 0o644, mode, o.summary.Write)
}

// Print writes the report of the analysis in words, then the summary's
// claims (its warnings to the job's Warnings); dir is where WriteDir
// wrote the files.
func (o *Output) Print(w io.Writer, dir string) {
	printReport(w, o.res.Report, dir)
	if o.summary != nil {
		PrintSummary(w, o.job.summary.warnings, filepath.Join(dir, SummaryFile), o.summary)
	}
}
