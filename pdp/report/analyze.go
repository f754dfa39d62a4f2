package report

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// Result is a per-instance analysis of a release over its training rows:
// the report, and for each training row its id (its data row number in the
// file, from 1 for the first row after the header, as every message counts
// rows: rowNumbers), its leave-one-out difference and its per-instance
// epsilon. Everything in it is CONFIDENTIAL (Confidential): functions of
// the data.
type Result struct {
	Report *Report
	// IDs, Diffs and Epsilons describe the training rows: Epsilons[i] is
	// the per-instance epsilon of row IDs[i] at its remove-one difference
	// Diffs[i], exact, an upper bound or an estimate (pdp.Diff.Kind). The
	// differences keep their vectors V for the refined rows only
	// (pdp.Analysis.RemoveNorms).
	IDs      []int
	Diffs    []pdp.Diff
	Epsilons []float64
	// FlipSensitivities are the norms of the one-step differences of
	// replacing each row by its label-flipped copy (pdp.Analysis.FlipLabel):
	// estimates of how far one replace-one neighbour moves the minimizer
	// (pdp.Analysis.FlipSensitivities).
	FlipSensitivities []float64
	// Replace and ReplaceEpsilons bound each row's replace-one sensitivity
	// and epsilon over every replacement in the domain (pdp.ReplaceBound); nil
	// when there is no data-independent bound on an added row.
	Replace, ReplaceEpsilons []float64
	// TargetIDs, TargetDiffs and TargetEpsilons describe the held-out rows
	// analysed as targets added to the data set; nil when there are none.
	// The differences keep their vectors V for the refined targets only
	// (pdp.Analysis.AddNorms).
	TargetIDs      []int
	TargetDiffs    []pdp.Diff
	TargetEpsilons []float64

	// a is the analysis, public the constants of a DP summary (or
	// publicErr why there are none): see Publishable.
	a         *pdp.Analysis
	public    *pdp.PublicConstants
	publicErr error
}

// Rows are the settings a per-instance analysis shares: how many rows to
// refine to their exact leave-one-out solution, and how many of the most
// exposed rows the report lists.
type Rows struct {
	// ExactTop is the number of most exposed rows refined to the exact
	// value (RefineTop, RefineTopTargets for the held-out targets); the
	// others keep their one-step values, with a proven error bound where
	// the loss allows one (pdp.Diff.Kind).
	ExactTop int
	// Top is the number of most exposed rows the report lists.
	Top int
}

func (o Rows) check() error {
	if o.ExactTop < 0 || o.Top < 0 {
		return fmt.Errorf("%w: exact top %d, top %d, want >= 0", pdp.ErrInput, o.ExactTop, o.Top)
	}
	return nil
}

// Simulation is a release simulated on a data set: the exact ridge ERM
// solution of a smooth loss plus output-perturbation noise, calibrated to
// the worst-case DP epsilon of that minimizer or of a fixed Gaussian scale.
type Simulation struct {
	Rows
	// Loss is a smooth loss (Wang's Lemma 13); Lambda >= 0 the ridge.
	Loss   losses.Loss
	Lambda float64
	// Mechanism and (Epsilon, Delta) calibrate the noise to the worst-case
	// replace-one sensitivity of the minimizer. A positive Sigma instead
	// fixes Gaussian noise of that standard deviation per coordinate
	// (Mechanism and Epsilon are then ignored).
	Mechanism      dp.Mechanism
	Epsilon, Delta float64
	Sigma          float64
	// TestFrac in [0, 1) of the rows are held out by position (SplitIndex
	// with Seed) and analysed as targets outside the data set.
	TestFrac float64
	Seed     uint64
	// Standardize maps the features with statistics of the training rows
	// (not private). Bias maps each row to [clip_1(x), 1]/sqrt(2) (kappa =
	// 1); without Bias, standardized rows are clipped into the unit ball,
	// and raw rows are kept as they are, with Kappa > 0 their assumed bound
	// for the worst-case comparison.
	Standardize, Bias bool
	Kappa             float64
	// LabelBound > 0 clips regression labels into [-B, B].
	LabelBound float64
	// Source names the data, for the report's notes.
	Source string
}

// Simulate analyses the release sim describes on the data set ds (labels
// encoded for sim.Loss): it splits the rows by position, prepares them,
// solves the ridge ERM exactly, and computes every training row's
// leave-one-out sensitivity and per-instance epsilon against the worst-case
// DP epsilon of the same release, and the held-out rows' epsilons as added
// targets. Errors wrap pdp.ErrInput, pdp.ErrNotSmooth or pdp.ErrSingular for settings
// or data the analysis cannot use.
func Simulate(ds *datasets.Dataset, sim Simulation) (*Result, error) {
	if err := sim.check(); err != nil {
		return nil, err
	}
	// Nothing below reads ds once its rows are prepared: a caller that
	// drops it lets the collector take its rows while the analysis runs
	// (the pdp command's peak memory).
	classes := len(ds.Classes)
	l, err := sim.load(ds)
	if err != nil {
		return nil, err
	}
	train, test, kappa, notes, trainIdx, testIdx := l.train, l.test, l.kappa, l.notes, l.trainIdx, l.testIdx
	xtr, ytr := train.X, train.Y
	_, d := xtr.Dims()
	a, err := pdp.New(xtr, ytr, pdp.Config{Loss: sim.Loss, Classes: classes, Lambda: sim.Lambda, LabelBound: sim.LabelBound})
	if err != nil {
		return nil, err
	}
	dim := a.Solution().K * d

	// The release and its worst-case DP epsilon.
	replace, remove, dpErr := sim.worstCase(kappa, xtr)
	var m pdp.PrivacyLoss
	if sim.Sigma > 0 {
		m, err = pdp.NewPrivacyLoss(perturb.AnalyticGaussian, sim.Sigma, sim.Delta)
	} else {
		if dpErr != nil {
			return nil, fmt.Errorf("%w: eps %v needs a worst-case sensitivity to calibrate the noise: %v", pdp.ErrNoBound, sim.Epsilon, dpErr)
		}
		m, err = pdp.CalibratedLoss(sim.Mechanism, sim.Epsilon, sim.Delta, replace, dim)
	}
	if err != nil {
		return nil, err
	}
	ex := extras{seed: sim.Seed}
	if dpErr == nil {
		ex.addBound = remove
	}
	if test != nil {
		ex.testX, ex.testY, ex.testIDs = test.X, test.Y, rowNumbers(testIdx)
	}
	res, refined, err := analyse(a, m, sim.Lambda, rowNumbers(trainIdx), sim.Rows, ex)
	if err != nil {
		return nil, err
	}
	res.public, res.publicErr = sim.publicConstants(kappa, classes, len(trainIdx), dim, m)
	rep := res.Report
	if dpErr == nil {
		dpEps := sim.Epsilon
		if sim.Sigma > 0 {
			if dpEps, err = m.EpsilonAt(replace, 0); err != nil {
				return nil, err
			}
		}
		worst, err := m.EpsilonAt(remove, math.Sqrt(float64(dim))*remove)
		if err != nil {
			return nil, err
		}
		rep.DPEpsilon, rep.DPSensitivity, rep.WorstCaseEpsilon = &dpEps, &replace, &worst
		rep.DPNeighbours = "replace-one (docs/DESIGN.md, section 1: DP certificates); the worst-case pDP epsilon uses the remove-one bound"
	} else {
		notes = append(notes, "no worst-case DP epsilon: "+dpErr.Error())
	}
	rep.Notes = append(notes, refinedNote(len(refined), rep.Kinds))
	rep.Notes = append(rep.Notes, analysisNotes(res)...)
	rep.Notes = append(rep.Notes, "the release analysed is simulated on the exact regularized minimizer computed here; for the release of a model file, use AnalyzeRelease")
	return res, nil
}

// analysisNotes states what the report's replace-one, target and
// on-average numbers are.
func analysisNotes(res *Result) []string {
	rep := res.Report
	var notes []string
	if rep.ReplaceEpsilon != nil {
		notes = append(notes, "replace-one epsilons (column eps_replace): for each row, an upper bound over every replacement in the domain, the row's remove-one bound plus the largest move any added row can cause, L/(n lambda) (ReplaceBound)")
	} else {
		notes = append(notes, "no replace-one epsilons: there is no data-independent bound on the move an added row can cause (lambda = 0, or a loss that is not Lipschitz on the domain)")
	}
	if rep.Targets != nil {
		notes = append(notes, fmt.Sprintf("held-out rows analysed as targets added to the data set: %s", kindWords(rep.TargetKinds)))
	}
	if kl := rep.OnAverageKL; kl != nil {
		notes = append(notes, fmt.Sprintf("on-average KL-privacy: %s; an estimate of the expectation from %d pairs (%d pairings), standard error %.3g over the training and held-out rows; each pair's value of kind %s", kl.Definition, kl.Pairs, kl.Pairings, kl.StdErr, kl.Kind))
	}
	return notes
}

// kindWords describes counts of kinds of values.
func kindWords(k map[string]int) string {
	return fmt.Sprintf("%d exact, %d upper bounds, %d estimates", k[pdp.KindExact], k[pdp.KindBound], k[pdp.KindEstimate])
}

// check validates the settings of a simulation.
func (sim *Simulation) check() error {
	switch {
	case sim.Loss == nil:
		return fmt.Errorf("%w: no loss", pdp.ErrInput)
	case !check.NonNegative(sim.Lambda):
		return fmt.Errorf("%w: lambda = %v, want finite >= 0", pdp.ErrInput, sim.Lambda)
	case !check.HalfOpenUnit(sim.TestFrac):
		return fmt.Errorf("%w: test fraction %v, want in [0, 1)", pdp.ErrInput, sim.TestFrac)
	case !check.Positive(sim.Kappa):
		return fmt.Errorf("%w: kappa = %v, want finite > 0", pdp.ErrInput, sim.Kappa)
	case !check.NonNegative(sim.LabelBound):
		return fmt.Errorf("%w: label bound %v, want finite >= 0", pdp.ErrInput, sim.LabelBound)
	case sim.LabelBound != 0 && sim.Loss.Task() != losses.Regression:
		return fmt.Errorf("%w: a label bound applies to regression losses, not %s", pdp.ErrInput, sim.Loss.Name())
	case !check.NonNegative(sim.Sigma):
		return fmt.Errorf("%w: sigma = %v, want finite > 0 (or 0: calibrated to eps)", pdp.ErrInput, sim.Sigma)
	}
	return sim.Rows.check()
}

// loaded is a data set split by position and prepared.
type loaded struct {
	trainIdx, testIdx []int
	train, test       *datasets.Dataset
	kappa             float64
	notes             []string // the data and the preparation
}

// load splits ds by position (TestFrac, Seed) and prepares both parts
// (prepare). A delta at or above 1/n for the n training rows is refused
// (dp.Budget.CheckRows; n is public under replace-one neighbours): the
// simulated release could publish a row outright.
func (sim *Simulation) load(ds *datasets.Dataset) (*loaded, error) {
	n, _ := ds.X.Dims()
	l := &loaded{}
	var err error
	l.trainIdx, l.testIdx, err = datasets.SplitIndex(n, sim.TestFrac, sim.Seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pdp.ErrInput, err)
	}
	if err := (dp.Budget{Epsilon: sim.Epsilon, Delta: sim.Delta}).CheckRows(len(l.trainIdx), "training row"); err != nil {
		return nil, fmt.Errorf("%w: %w", pdp.ErrInput, err)
	}
	var prepNotes []string
	l.train, l.test, l.kappa, prepNotes, err = sim.prepare(ds, l.trainIdx, l.testIdx)
	if err != nil {
		return nil, err
	}
	l.notes = append(append([]string{"data: " + sim.Source}, ds.Notes...), prepNotes...)
	return l, nil
}

// worstCase returns the data-independent sensitivity bounds of the exact
// minimizer (pdp.WorstCaseSensitivity), or why there are none.
func (sim *Simulation) worstCase(kappa float64, x *mat.Dense) (replace, remove float64, err error) {
	if sim.Lambda == 0 {
		return 0, 0, errors.New("lambda = 0: the minimizer has no data-independent sensitivity bound")
	}
	c, err := sim.Loss.Constants(labelDomain(kappa, sim.LabelBound, sim.Lambda, 0))
	if errors.Is(err, losses.ErrDomain) {
		return 0, 0, fmt.Errorf("the %s loss is not Lipschitz on an unbounded domain: give a label bound (labels clipped into [-B, B]) for a bound: %w", sim.Loss.Name(), err)
	}
	if err != nil {
		return 0, 0, err
	}
	n, _ := x.Dims()
	if !sim.Bias && !sim.Standardize {
		// Rows are not clipped: the bound holds only if they are in the ball.
		for i := range n {
			if r := mat.Norm(x.RowView(i), 2); r > kappa {
				return 0, 0, fmt.Errorf("the rows are kept as they are (no standardization, no bias) and some have ||x|| > kappa = %g", kappa)
			}
		}
	}
	return pdp.WorstCaseSensitivity(c.Lz, kappa, sim.Lambda, n)
}

// extras are the parts of an analysis beyond the training rows.
type extras struct {
	// addBound is a data-independent bound on how far adding any row of the
	// domain moves the minimizer, L/(n lambda) (0: none).
	addBound float64
	// testX, testY and testIDs are the held-out rows (nil: none), added as
	// targets and drawn as fresh rows for the on-average KL-privacy.
	testX   *mat.Dense
	testY   []float64
	testIDs []int
	// seed pairs the training rows with fresh rows (pdp.OnAverageKLFresh).
	seed uint64
}

// analyse computes every training row's leave-one-out difference (the
// exact one for the ExactTop most exposed rows, an upper bound or an
// estimate for the others, pdp.Diff.Kind), their per-instance epsilons under m
// at the upper bounds, the replace-one bounds and the label-flipped
// replacements, the held-out targets (refined the same way), the
// on-average KL-privacy of a Gaussian release, the data-dependent pDP for
// all targets, and the report. It returns the refined rows too.
func analyse(a *pdp.Analysis, m pdp.PrivacyLoss, lambda float64, ids []int, opts Rows, ex extras) (*Result, []int, error) {
	// The label-flipped copies come from the same batch (each row's point
	// solved once for both).
	diffs, flips, err := a.RemoveNormsFlips()
	if err != nil {
		return nil, nil, err
	}
	one := make([]float64, len(diffs))
	for i, d := range diffs {
		one[i] = d.L2
	}
	refined, err := a.RefineTop(diffs, opts.ExactTop)
	if err != nil {
		return nil, nil, err
	}
	eps, err := m.UpperEpsilons(diffs)
	if err != nil {
		return nil, nil, err
	}
	rep, err := NewReport(a, m, lambda, ids, diffs, eps, opts.Top)
	if err != nil {
		return nil, nil, err
	}
	for _, i := range refined {
		if diffs[i].L2 > 0 {
			rep.MaxRelOneStepError = math.Max(rep.MaxRelOneStepError, math.Abs(one[i]-diffs[i].L2)/diffs[i].L2)
		}
		if g := diffs[i].IdentityGap; !math.IsNaN(g) {
			rep.IdentityGap = &g
		}
	}
	res := &Result{Report: rep, IDs: ids, Diffs: diffs, Epsilons: eps, FlipSensitivities: flips, a: a}

	// Replace-one: the label-flipped copies, and the bound over every
	// replacement.
	var ratios []float64
	for i, f := range res.FlipSensitivities {
		if one[i] > 0 {
			ratios = append(ratios, f/one[i])
		}
	}
	if s, err := pdp.Summarize(ratios); err == nil {
		rep.FlipToRemove = &s
	}
	if ex.addBound > 0 {
		res.Replace = make([]float64, len(diffs))
		l1s := make([]float64, len(diffs))
		for i, d := range diffs {
			res.Replace[i], l1s[i] = pdp.ReplaceBound(d, ex.addBound)
		}
		if res.ReplaceEpsilons, err = m.EpsilonsAt(res.Replace, l1s); err != nil {
			return nil, nil, err
		}
		s, err := pdp.Summarize(res.ReplaceEpsilons)
		if err != nil {
			return nil, nil, err
		}
		rep.ReplaceEpsilon = &s
		// Data-dependent pDP for all targets.
		if sens, err := a.AddBoundAll(ex.addBound * a.Reg()); err == nil {
			// Both bound every target's sensitivity; the data-dependent one is
			// the smaller but for the solver's tolerance.
			sens = math.Min(sens, ex.addBound)
			e, err := m.EpsilonAt(sens, math.Sqrt(float64(len(a.Solution().W)))*sens)
			if err != nil {
				return nil, nil, err
			}
			rep.PDPForAllSensitivity, rep.PDPForAllEpsilon = &sens, &e
		}
	}

	// Held-out rows: targets, and fresh rows for the on-average KL.
	if ex.testX != nil {
		if res.TargetDiffs, err = a.AddNorms(ex.testX, ex.testY); err != nil {
			return nil, nil, err
		}
		if _, err := a.RefineTopTargets(res.TargetDiffs, ex.testX, ex.testY, opts.ExactTop); err != nil {
			return nil, nil, err
		}
		if res.TargetEpsilons, err = m.UpperEpsilons(res.TargetDiffs); err != nil {
			return nil, nil, err
		}
		res.TargetIDs = ex.testIDs
		ts, err := pdp.Summarize(res.TargetEpsilons)
		if err != nil {
			return nil, nil, err
		}
		rep.Targets, rep.TargetKinds = &ts, kinds(res.TargetDiffs)
		if !m.Kind.Pure() {
			kl, err := pdp.OnAverageKLFresh(a, ex.testX, ex.testY, m.Scale, ex.seed)
			if err != nil {
				return nil, nil, err
			}
			rep.OnAverageKL = &kl
		}
	}
	return res, refined, nil
}

// refinedNote states how the sensitivities were computed.
func refinedNote(refined int, k map[string]int) string {
	s := fmt.Sprintf("sensitivities: one-step values (Lemma 13 with the Hessian at the solution, Sherman-Morrison/Woodbury), the %d most exposed rows refined to the exact leave-one-out solution", refined)
	if k[pdp.KindBound] > 0 {
		s += fmt.Sprintf("; %d rows report a proven upper bound (the one-step value plus its error bound: the loss's third derivative over the strong convexity n lambda)", k[pdp.KindBound])
	}
	if k[pdp.KindEstimate] > 0 {
		s += fmt.Sprintf("; %d rows report a one-step ESTIMATE without a bound (the loss's curvature is not Lipschitz, or lambda = 0): their epsilons may be low by a few percent", k[pdp.KindEstimate])
	}
	return s
}

// rowNumbers returns the data row numbers (from 1, the first row after the
// header) of the rows at the positions idx (from 0) among the data rows:
// the ids of a Result.
func rowNumbers(idx []int) []int {
	if idx == nil {
		return nil
	}
	out := make([]int, len(idx))
	for i, k := range idx {
		out[i] = k + 1
	}
	return out
}
