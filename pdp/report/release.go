package report

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// AnalysedMinimizer states what the pDP of a trained release is computed
// on. Reports of a model file carry it (ReleaseAnalysis.Weights).
const AnalysedMinimizer = "the released weights were trained by SGD (the certificate's run) and then perturbed; " +
	"this analysis is of the exact minimizer w_hat of the same regularized objective on the same training rows, " +
	"as if the release were w_hat plus noise at the certificate's noise scale: the pDP of that idealized release, not of the SGD iterate. " +
	"The distance from the published weights to w_hat is given as context only"

// NeighboursVersusCertificate states how the per-instance epsilons of a
// report relate to the certificate's epsilon. Reports of a model file carry
// it (ReleaseAnalysis.Neighbours).
const NeighboursVersusCertificate = "the per-instance epsilons are for add/remove-one neighbours (Z and Z without one row, as in Wang's paper); " +
	"the certificate's epsilon is for replace-one neighbours (two tables differing in one row). " +
	"The report gives each row's replace-one epsilon too (an upper bound over every replacement, see replace_relation): " +
	"the two kinds of epsilon answer different questions, and the remove-one ones are compared with the certificate here for orientation"

// Certified compares the per-instance epsilons of the rows with the
// certified epsilon of the release.
type Certified struct {
	// Epsilon and Delta are the certificate's claim (replace-one).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Below counts the rows whose per-instance epsilon is strictly below
	// Epsilon; ShareBelow is Below over the rows.
	Below      int     `json:"rows_below"`
	ShareBelow float64 `json:"share_below"`
	// Worst is the row with the largest per-instance epsilon (ties: the
	// smaller id), and WorstRatio its epsilon over Epsilon.
	Worst      Exposed `json:"worst_row"`
	WorstRatio float64 `json:"worst_to_certified"`
}

// CompareCertified returns the comparison of the per-instance epsilons eps
// (row i: ids[i], diffs[i], eps[i]) with the certified epsilon certEps > 0.
func CompareCertified(ids []int, diffs []pdp.Diff, eps []float64, certEps, certDelta float64) (Certified, error) {
	if len(ids) != len(diffs) || len(eps) != len(diffs) || len(eps) == 0 {
		return Certified{}, fmt.Errorf("%w: %d ids, %d differences, %d epsilons", pdp.ErrInput, len(ids), len(diffs), len(eps))
	}
	if !check.Positive(certEps) {
		return Certified{}, fmt.Errorf("%w: certified epsilon %v", pdp.ErrInput, certEps)
	}
	c := Certified{Epsilon: certEps, Delta: certDelta}
	for _, e := range eps {
		if math.IsNaN(e) {
			return Certified{}, fmt.Errorf("%w: NaN epsilon", pdp.ErrInput)
		}
		if e < certEps {
			c.Below++
		}
	}
	c.ShareBelow = float64(c.Below) / float64(len(eps))
	c.Worst = TopExposed(ids, diffs, eps, 1)[0]
	c.WorstRatio = c.Worst.Epsilon / certEps
	return c, nil
}

// ReleaseAnalysis is the part of a report that describes a release read
// from a model file (the train command's output) and compares the
// per-instance epsilons of its training rows with its certificate.
type ReleaseAnalysis struct {
	// ModelFile names the model file; Claim says what its certificate
	// claims (a private release, or no claim and why).
	ModelFile string `json:"model_file"`
	Claim     string `json:"claim"`
	// Route and Sensitivity are the certificate's sensitivity route and
	// its replace-one L2 sensitivity Delta.
	Route       string  `json:"sensitivity_route"`
	Sensitivity float64 `json:"certified_l2_sensitivity"`
	// Certified is the comparison of the rows with the certified epsilon.
	Certified Certified `json:"certified"`
	// RemoveOneBound is the data-independent bound on every row's
	// per-instance sensitivity of the exact minimizer, L/(n lambda), with
	// L = min(G, L_z kappa) the Lipschitz constant of the (clipped) loss;
	// RemoveOneEpsilon the mechanism's epsilon there.
	RemoveOneBound   float64 `json:"remove_one_bound"`
	RemoveOneEpsilon float64 `json:"remove_one_bound_epsilon"`
	// Weights is AnalysedMinimizer; ReleasedToExact = ||w~ - w_hat||_2,
	// the distance from the published weights to the exact minimizer,
	// with ExactNorm = ||w_hat||_2 and NoiseRMSNorm, the root mean square
	// norm of the mechanism's noise, for scale.
	Weights         string  `json:"weights"`
	ReleasedToExact float64 `json:"released_to_exact_l2"`
	ExactNorm       float64 `json:"exact_norm"`
	NoiseRMSNorm    float64 `json:"noise_rms_norm"`
	// Neighbours is NeighboursVersusCertificate.
	Neighbours string `json:"neighbours"`
	// NullRows counts the training rows whose label was not declared: the
	// zero vector, whose per-instance epsilon is 0.
	NullRows int `json:"null_rows"`
}

// Release names a model file for AnalyzeRelease.
type Release struct {
	Rows
	// File names the model file and Source the table, for the report.
	File, Source string
}

// AnalyzeRelease analyses the release of a model file r over its training
// rows: the rows are rebuilt from the table t it was fitted on
// (modelfile.Released.TrainingRows), the objective (loss, lambda,
// clipping) and the noise (mechanism, scale, delta) come from its
// certificate, which must verify, and each row's per-instance epsilon is
// compared with the certified epsilon. The analysis is of the exact
// minimizer of the objective the run optimized (AnalysedMinimizer), for
// add/remove-one neighbours (NeighboursVersusCertificate).
//
// Refused (with the reason) are: a model file without a certificate
// (trained without a mechanism, its weights published as trained: there
// is no noise whose per-instance privacy could be analysed); a decision
// stump (permute-and-flip over a finite class: no minimizer's objective
// and no noise on weights for the Hessian identity); a release that adds
// no noise to a minimizer's weights (objective perturbation, AMP, DP-SGD); a run that projected
// onto ||w|| <= R where the exact minimizer or a neighbour's reaches the
// boundary (the constrained problem is not smooth there); and a run whose
// objective the Hessian identity (Wang's Lemma 13) does not cover: an L1
// term, s-dropout (each step used a randomly masked row, so the run
// minimizes no fixed empirical objective whose exact minimizer could stand
// for it), a loss with a parameter other than the default one (it cannot
// be rebuilt from the certificate), or per-example clipping of a
// multiclass loss below its Lipschitz constant (scaling a multiclass
// gradient by its norm is not the gradient of any loss).
func AnalyzeRelease(r *modelfile.Released, t *datasets.Table, opts Release) (*Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if r == nil || t == nil {
		return nil, fmt.Errorf("%w: no model file or no table", pdp.ErrInput)
	}
	c := r.Certificate
	if c == nil {
		return nil, fmt.Errorf("%w: the model file has no certificate: it was trained without a mechanism, so there is no noise to analyse", pdp.ErrInput)
	}
	if c.Mechanism == perturb.Stump {
		return nil, fmt.Errorf("%w: the model file releases a decision stump: no minimizer's objective and no noise on weights to analyse", pdp.ErrInput)
	}
	if _, err := perturb.Lookup(c.Mechanism); err != nil {
		// Objective perturbation, AMP and DP-SGD add no noise to the
		// weights of a minimizer: the Hessian identity has nothing to
		// measure.
		return nil, fmt.Errorf("%w: pdp analyses output perturbation, not %s: train with --mechanism gamma or gaussian-analytic", pdp.ErrInput, c.Mechanism)
	}
	verdict, why, err := modelfile.Verify(r)
	if err != nil {
		return nil, fmt.Errorf("the analysis takes the objective and the noise from the certificate, which must verify: %w", err)
	}
	claim := fmt.Sprintf("private release: (%g, %g)-DP for replace-one neighbours of the table (certificate verified)", c.Epsilon, c.Delta)
	if verdict == modelfile.NotPrivate {
		claim = "NO privacy claim: " + why + "; the calibration of its noise is analysed as if the noise were secret"
	}
	cfg, lip, notes, err := releaseObjective(r)
	if err != nil {
		return nil, err
	}
	X, y, ids, err := r.TrainingRows(t)
	if err != nil {
		return nil, fmt.Errorf("rebuilding the training rows: %w", err)
	}
	ids = rowNumbers(ids)
	n, d := X.Dims()
	run := c.Run
	if n != run.N || d != run.D {
		return nil, fmt.Errorf("%w: the rebuilt training rows are %d x %d, the certificate's run trained on %d x %d", pdp.ErrInput, n, d, run.N, run.D)
	}
	nulls := 0
	for i := range n {
		if mat.Norm(X.RowView(i), 2) == 0 {
			nulls++
		}
	}
	cfg.LabelBound = run.LabelBound
	a, err := pdp.New(X, y, cfg)
	if err != nil {
		return nil, fmt.Errorf("the exact minimizer of the run's objective: %w", err)
	}
	sol := a.Solution()
	m, err := pdp.NewPrivacyLoss(c.Mechanism, c.NoiseScale, c.Delta)
	if err != nil {
		return nil, err
	}
	ex := extras{seed: r.Split.Seed}
	if run.Lambda > 0 {
		ex.addBound = lip / (float64(n) * run.Lambda)
	}
	if ex.testX, ex.testY, ex.testIDs, err = r.HeldOutRows(t); err != nil {
		return nil, fmt.Errorf("rebuilding the held-out rows: %w", err)
	}
	ex.testIDs = rowNumbers(ex.testIDs)
	res, refined, err := analyse(a, m, run.Lambda, ids, opts.Rows, ex)
	if err != nil {
		return nil, err
	}
	if run.Radius > 0 {
		// The trainer projected onto ||w|| <= R. The unconstrained minimizers
		// of Z and of its neighbours are the constrained ones when they lie
		// inside the ball.
		var maxV float64
		for _, v := range res.Diffs {
			maxV = math.Max(maxV, v.L2)
		}
		wn := floats.Norm(sol.W, 2)
		if !(wn+maxV < run.Radius) {
			return nil, fmt.Errorf("%w: the exact minimizer (norm %.4g) or a neighbour's (up to %.4g further) reaches the run's ball ||w|| <= %g", pdp.ErrNotSmooth, wn, maxV, run.Radius)
		}
		notes = append(notes, fmt.Sprintf("the run projected onto ||w|| <= %g; the exact minimizer (norm %.4g) and its neighbours (at most %.4g away) lie inside, where the projection does not act", run.Radius, wn, maxV))
	}
	res.public, res.publicErr = releasePublicConstants(cfg, run, n, len(sol.W), m, r.Preprocessing.Mode.Inside())
	if res.public != nil {
		res.public.Binding = bindingOf(c)
	}
	rep := res.Report
	certEps, certSens := c.Epsilon, c.L2Sensitivity
	rep.DPEpsilon, rep.DPSensitivity, rep.DPNeighbours = &certEps, &certSens, c.Neighbouring
	cmp, err := CompareCertified(ids, res.Diffs, res.Epsilons, c.Epsilon, c.Delta)
	if err != nil {
		return nil, err
	}
	rel := &ReleaseAnalysis{
		ModelFile: opts.File, Claim: claim, Route: c.SensitivityRoute, Sensitivity: c.L2Sensitivity,
		Certified: cmp, Weights: AnalysedMinimizer,
		ReleasedToExact: floats.Distance(r.Model.W, sol.W, 2), ExactNorm: floats.Norm(sol.W, 2),
		NoiseRMSNorm: m.NoiseRMSNorm(len(sol.W)), Neighbours: NeighboursVersusCertificate, NullRows: nulls,
	}
	if run.Lambda > 0 {
		// J_{-i} is n lambda strongly convex and its gradient at w_hat is
		// minus the gradient of the removed loss, of norm at most L.
		rel.RemoveOneBound = lip / (float64(n) * run.Lambda)
		if rel.RemoveOneEpsilon, err = m.EpsilonAt(rel.RemoveOneBound, math.Sqrt(float64(len(sol.W)))*rel.RemoveOneBound); err != nil {
			return nil, err
		}
		worst := rel.RemoveOneEpsilon
		rep.WorstCaseEpsilon = &worst
	} else {
		notes = append(notes, "lambda = 0: no data-independent bound on the per-instance sensitivity")
	}
	rep.Release = rel
	stratified := ""
	if r.Split.Stratified {
		stratified = ", stratified"
	}
	rep.Notes = append([]string{
		"data: " + opts.Source,
		fmt.Sprintf("training rows rebuilt from the model file: %d of the table's %d data rows (split: test fraction %g, seed %d%s), %d null rows (undeclared label: the zero vector, eps 0); ids are data row numbers, from 1 after the header",
			n, r.Split.Rows, r.Split.TestFrac, r.Split.Seed, stratified, nulls),
		"preprocessing (the model file's): " + r.Preprocessing.Words,
	}, notes...)
	if !r.Preprocessing.Mode.Inside() {
		rep.Notes = append(rep.Notes, "the standardization statistics were fitted on the training rows: removing a row would change them too, which this analysis (like the certificate) does not cover")
	}
	rep.Notes = append(rep.Notes, refinedNote(len(refined), rep.Kinds))
	rep.Notes = append(rep.Notes, analysisNotes(res)...)
	rep.Notes = append(rep.Notes, "mechanism and noise scale from the certificate; Gaussian per-instance epsilons on the exact (Balle & Wang) curve at the certificate's delta, Laplace and gamma exact")
	return res, nil
}

// releaseObjective returns the configuration of the objective the run of a
// model file's certificate optimized and its Lipschitz constant, or why it
// has none that the Hessian identity covers.
func releaseObjective(r *modelfile.Released) (pdp.Config, float64, []string, error) {
	run := r.Certificate.Run
	if run == nil {
		return pdp.Config{}, 0, nil, fmt.Errorf("%w: the certificate has no run record: the objective is unknown", pdp.ErrInput)
	}
	switch {
	case run.UserModel:
		return pdp.Config{}, 0, nil, fmt.Errorf("%w: the run trained a user-supplied graph model: its loss is not one whose smoothness is verified", pdp.ErrNotSmooth)
	case run.L1Ratio > 0:
		return pdp.Config{}, 0, nil, fmt.Errorf("l1_ratio = %g: %w; the per-instance analysis covers ridge releases (l1_ratio 0) only", run.L1Ratio, pdp.ErrNotSmooth)
	case run.Dropout < 1:
		return pdp.Config{}, 0, nil, fmt.Errorf("%w: s-dropout (s = %g): the run minimizes no fixed empirical objective", pdp.ErrNotSmooth, run.Dropout)
	}
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return pdp.Config{}, 0, nil, fmt.Errorf("%w: %w", pdp.ErrInput, err)
	}
	// The run records the loss by name; a loss with a parameter (huber's
	// delta, huber-hinge's width) must be the default one, which its
	// constants confirm.
	cons, err := loss.Constants(losses.Domain{Kappa: run.Kappa, Radius: run.Radius, LabelBound: run.LabelBound})
	if err != nil || cons.Lz != run.Lz || cons.Sz != run.Sz {
		return pdp.Config{}, 0, nil, fmt.Errorf("%w: the run's loss constants (L_z = %g, S_z = %g) are not the default %s loss's: it cannot be rebuilt", pdp.ErrInput, run.Lz, run.Sz, run.Loss)
	}
	var notes []string
	cfg := pdp.Config{Loss: loss, Classes: len(r.Schema.Classes), Lambda: run.Lambda}
	lip := run.L
	if run.Clip > 0 {
		switch {
		case run.Clip >= run.L:
			notes = append(notes, fmt.Sprintf("per-example clipping G = %g is at least the loss's Lipschitz constant L = %g: it never acts, and the objective is the unclipped one", run.Clip, run.L))
		case run.K > 1:
			return pdp.Config{}, 0, nil, fmt.Errorf("per-example clipping (G = %g < L = %g) of the %s loss: %w; a clipped multiclass gradient is no loss's gradient", run.Clip, run.L, run.Loss, pdp.ErrNotSmooth)
		default:
			cfg.Clip, lip = run.Clip, run.Clip
			notes = append(notes, fmt.Sprintf("per-example clipping G = %g: the objective is the Huberized %s loss the clipped trainer minimizes, its margin derivative clamped to [-G/||x||, G/||x||] (convex, with a Lipschitz derivative, so Lemma 13 applies)", run.Clip, run.Loss))
		}
	}
	return cfg, lip, notes, nil
}
