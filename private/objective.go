package private

import (
	"context"
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// The objective-perturbation family in the certified pipeline.
//
// Options.Mechanism "objective" (pure eps) or "amp" ((eps, delta)) routes
// Fit here: the same schema, split, preprocessing (kappa = 1) and model
// file as output perturbation, but the weights are the minimizer of the
// regularized objective plus a random linear term (package objpert), not
// the output of an SGD run, so there is no stability route: the
// certificate's SensitivityRoute states the mechanism's own analysis and
// its constants, the Stability field is empty, and the run record holds the
// constants of the objective (loss, n, d, K, L, beta_s, lambda) and of the
// solver. objective adds the gamma-norm noise xi of its output part to the
// solver's iterate (the ledger lists the objective part and the output
// part). Verify rebuilds the certificate (route, ledger, assumptions) from
// (n, d, K, loss constants, lambda, eps, delta) exactly as for output
// perturbation, so a file whose text or numbers differ from the rebuild is
// rejected (docs/DESIGN.md, section 11).

// objectiveKnobs refuses the trainer settings that change the objective
// (the mechanism minimizes F exactly, so the SGD knobs do not apply).
func objectiveKnobs(cfg trainer.Config, m perturb.Mechanism) error {
	var bad []string
	if cfg.Clip != 0 {
		bad = append(bad, "clipping (a clipped loss has a second derivative that jumps)")
	}
	if cfg.Dropout != 0 && cfg.Dropout != 1 {
		bad = append(bad, "s-dropout (a random mask is not a fixed objective)")
	}
	if cfg.Radius != 0 {
		bad = append(bad, "a projection radius (a constraint the analysis does not cover)")
	}
	if cfg.Average {
		bad = append(bad, "iterate averaging (an SGD knob)")
	}
	if cfg.Tolerance != 0 {
		bad = append(bad, "a tolerance (the solver's threshold is a constant of the mechanism)")
	}
	if cfg.Reg.L1Ratio != 0 {
		bad = append(bad, fmt.Sprintf("an L1 ratio of %g (the L1 term is not differentiable; the mechanism needs l1 ratio 0)", cfg.Reg.L1Ratio))
	}
	if cfg.Model != nil {
		bad = append(bad, "a user graph model")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %w: %s does not apply to %s, which minimizes the ridge-regularized objective exactly", ErrOptions, objpert.ErrCondition, joinWords(bad), m)
	}
	return nil
}

func joinWords(s []string) string {
	out := ""
	for i, w := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " and "
		default:
			out += ", "
		}
		out += w
	}
	return out
}

// objectiveProblem returns the public problem of a fit.
func objectiveProblem(loss losses.Loss, n, dim, classes int, lambda float64) objpert.Problem {
	return objpert.Problem{Loss: loss, N: n, D: dim, K: loss.Outputs(classes), Kappa: 1, Lambda: lambda}
}

// objectiveCertificate returns the certificate Fit writes for a release
// with cal (without the weights' hash), shared with Verify.
func objectiveCertificate(cal objpert.Calibration, run *trainer.Run, source string, notes []string, noiseSeed *uint64) *perturb.Certificate {
	cert := objpert.NewCertificate(cal, run, source, notes)
	cert.Neighbouring = tableNeighbours
	cert.Ledger = cal.Ledger()
	if noiseSeed != nil {
		s := *noiseSeed
		cert.NoiseSeed = &s
	}
	return cert
}

// fitObjective is Fit for the mechanisms of package objpert.
func fitObjective(ctx context.Context, t *Table, schema Schema, budget Budget, opts Options) (*Released, error) {
	loss, task, err := resolveLoss(opts.Trainer.Loss, schema)
	if err != nil {
		return nil, err
	}
	if err := objpert.CheckBudget(opts.Mechanism, budget.Epsilon, budget.Delta); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBudget, err)
	}
	if err := objpert.CheckLoss(loss); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if err := objectiveKnobs(opts.Trainer, opts.Mechanism); err != nil {
		return nil, err
	}
	if err := schema.validate(task); err != nil {
		return nil, err
	}
	mode := opts.Preprocess
	if mode == "" {
		if schema.Bounds == nil {
			return nil, fmt.Errorf("%w: a private fit needs declared feature bounds (preprocessing bounds) or the preprocessing none; standardize is available outside the guarantee", ErrOptions)
		}
		mode = Bounds
	}
	if err := mode.validate(); err != nil {
		return nil, err
	}
	if err := checkTestFrac(opts.TestFrac); err != nil {
		return nil, err
	}
	if opts.Stratify {
		return nil, fmt.Errorf("%w: a stratified split depends on the labels and is refused for a private fit", ErrOptions)
	}
	if schema.Classes == nil {
		return nil, fmt.Errorf("%w: a private fit needs the classes declared in advance (reading them from the rows would leak them)", ErrSchema)
	}
	rows, err := prepareRows(t, schema, task, mode, opts)
	if err != nil {
		return nil, err
	}
	enc, trainIdx, testIdx, prep := rows.enc, rows.trainIdx, rows.testIdx, rows.prep
	Xtr, ytr, nullTr := rows.X, rows.y, rows.null
	n := len(trainIdx)
	pr := objectiveProblem(loss, n, prep.Dim(), len(schema.Classes), opts.Trainer.Reg.Lambda)
	if opts.Auto {
		if pr.Lambda, _, err = objpert.AutoLambda(opts.Mechanism, budget.Epsilon, budget.Delta, pr); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOptions, err)
		}
	}
	cal, err := objpert.Calibrate(opts.Mechanism, budget.Epsilon, budget.Delta, pr)
	if err != nil {
		if errors.Is(err, objpert.ErrBudget) {
			return nil, fmt.Errorf("%w: %w", ErrBudget, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	cons, err := loss.Constants(losses.Domain{Kappa: 1})
	if err != nil {
		return nil, err
	}
	src := opts.Noise
	if src == nil {
		src = perturb.Secure()
	}
	if log := opts.Logger; log != nil {
		log.WithFields(logrus.Fields{"rows": enc.n, "train": n, "d": prep.Dim(), "preprocess": mode, "mechanism": opts.Mechanism}).Debug("private: rows prepared")
	}
	model, stats, err := objpert.Release(ctx, Xtr, ytr, pr, cal, src)
	if err != nil {
		return nil, err
	}
	var seed *uint64
	if perturb.SourceName(src) == perturb.SourceSeeded {
		s := opts.NoiseSeed
		seed = &s
	}
	kind := perturb.SourceSecure
	if src != nil {
		kind = perturb.SourceName(src)
	}
	run := objpert.Run(cal, pr, cons, schema.LabelBound, opts.Seed)
	cert := objectiveCertificate(cal, run, kind, fitNotes(mode, prep, task), seed)
	cert.WeightsSHA256 = perturb.WeightsSHA256(model.W)
	out := &Released{
		Private:       cert.Private && mode.inside(),
		Model:         model,
		Certificate:   cert,
		Schema:        publicSchema(schema),
		Preprocessing: prep,
		Split:         SplitInfo{TestFrac: opts.TestFrac, Seed: opts.Seed, Stratified: false, Rows: enc.n, TrainRows: n},
	}
	if opts.Diagnostics {
		diag := &Diagnostics{NullRows: countTrue(nullTr)}
		diag.Stats = trainer.Stats{PassesDone: stats.NewtonSteps + stats.GradientSteps, GradNorm: stats.GradNorm, Converged: stats.Reached}
		trained := &trainer.Model{Loss: model.Loss, Task: model.Task, K: model.K, D: model.D}
		if trained.W, _, err = objpert.Minimize(ctx, Xtr, ytr, pr, cal); err != nil {
			return nil, err
		}
		diag.TrainedTrain = evaluate(trained, task, Xtr, ytr, nullTr)
		diag.ReleasedTrain = evaluate(model, task, Xtr, ytr, nullTr)
		if len(testIdx) > 0 {
			Xte, yte, nullTe, err := apply(prep, enc, testIdx)
			if err != nil {
				return nil, err
			}
			diag.TrainedTest = evaluate(trained, task, Xte, yte, nullTe)
			diag.ReleasedTest = evaluate(model, task, Xte, yte, nullTe)
		}
		out.Diagnostics = diag
	}
	return out, nil
}

// verifyObjective is Verify for a certificate of package objpert: it checks
// the published constants, rebuilds the file from them and requires
// equality.
func verifyObjective(r *Released) (Verdict, string, error) {
	c := r.Certificate
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	checkHeader(r, bad)
	if r.Partitions != nil {
		bad("a partitioned fit with %s: partitioned training releases by output perturbation only", c.Mechanism)
	}
	if r.Stability != nil {
		bad("a stability analysis in a release by %s, which has no stability route", c.Mechanism)
	}
	if c.Run == nil {
		bad("the certificate has no run record")
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	run := c.Run
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, err)
	}
	if run.Loss != r.Model.Loss || run.K != r.Model.K || run.D != r.Model.D {
		bad("the run (%s, %d x %d) is not the model (%s, %d x %d)", run.Loss, run.K, run.D, r.Model.Loss, r.Model.K, r.Model.D)
	}
	if run.N != r.Split.TrainRows || run.N < 1 {
		bad("the run has n = %d training rows, the split %d", run.N, r.Split.TrainRows)
	}
	if tr, err := trainRows(r.Split); err != nil || tr != r.Split.TrainRows {
		bad("split of %d rows at test fraction %v has %d training rows, the file says %d (%v)", r.Split.Rows, r.Split.TestFrac, tr, r.Split.TrainRows, err)
	}
	if r.Split.Seed != run.Seed || r.Split.Stratified {
		bad("split seed %d (stratified %v), run seed %d: a release splits by position with the run's seed", r.Split.Seed, r.Split.Stratified, run.Seed)
	}
	if run.LabelBound != r.Schema.LabelBound {
		bad("label bound %v in the run, %v in the schema", run.LabelBound, r.Schema.LabelBound)
	}
	if len(errs) > 0 {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	task := loss.Task()
	pr := objectiveProblem(loss, run.N, r.Model.D, len(r.Schema.Classes), run.Lambda)
	if pr.K != r.Model.K {
		return 0, "", fmt.Errorf("%w: %d outputs for %d classes, the model has %d", ErrVerify, pr.K, len(r.Schema.Classes), r.Model.K)
	}
	cal, err := objpert.Calibrate(c.Mechanism, c.Epsilon, c.Delta, pr)
	if err != nil {
		return 0, "", fmt.Errorf("%w: the published constants do not calibrate: %w", ErrVerify, err)
	}
	cons, err := loss.Constants(losses.Domain{Kappa: 1})
	if err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, err)
	}
	if c.Source == perturb.SourceSeeded && c.NoiseSeed == nil {
		return 0, "", fmt.Errorf("%w: a seeded release without its noise seed", ErrVerify)
	}
	var seed *uint64
	if c.Source == perturb.SourceSeeded {
		seed = c.NoiseSeed
	}
	p := *r.Preprocessing
	p.Map = preprocessingMap(p.Mode)
	cert := objectiveCertificate(cal, objpert.Run(cal, pr, cons, r.Schema.LabelBound, run.Seed), c.Source, fitNotes(p.Mode, &p, task), seed)
	cert.WeightsSHA256 = perturb.WeightsSHA256(r.Model.W)
	want := &Released{
		Private:       cert.Private && p.Mode.inside(),
		Model:         r.Model,
		Certificate:   cert,
		Schema:        publicSchema(r.Schema),
		Preprocessing: &p,
		Split:         r.Split,
	}
	if diffs := diffJSON(want, r); len(diffs) > 0 {
		return 0, "", fmt.Errorf("%w: the file differs from the release its published constants give: %s", ErrVerify, diffs)
	}
	switch {
	case c.Source == perturb.SourceSeeded:
		return NotPrivate, fmt.Sprintf("the noise was drawn from a seeded generator whose seed (%d) is published: anyone can subtract it", *c.NoiseSeed), nil
	case !r.Preprocessing.Mode.inside():
		return NotPrivate, "the features were standardized with means and scales fitted on the training split, written in the file and not private: the claim covers the standardized rows, not the table", nil
	}
	return PrivateRelease, "", nil
}

// SimulateObjective trains and releases in one step by the training-time
// mechanism mech (objective or amp) on rows X, each of norm at most
// cfg.Kappa (1 when zero), with labels y and the ridge cfg.Reg.Lambda,
// drawing the noise from a seeded generator: the experiments' stand-in for
// a release by objective perturbation, as Trained.Simulate is for output
// perturbation. The certificate (source seeded, Private false, the seed in
// NoiseSeed) says it is not private. The conditions are Fit's: a smooth
// loss, no L1 term, clipping, dropout, projection, averaging or tolerance,
// lambda at or above the floor (objpert.RaiseToFloor gives the lambda of
// Chaudhuri et al.'s extra-ridge step). notes are added to the
// certificate's assumptions.
func SimulateObjective(ctx context.Context, X *mat.Dense, y []float64, cfg trainer.Config, mech perturb.Mechanism, eps, delta float64, noiseSeed uint64, notes []string) (*trainer.Model, *perturb.Certificate, error) {
	pr, cons, err := simulatedProblem(X, cfg, mech)
	if err != nil {
		return nil, nil, err
	}
	if err := objpert.CheckBudget(mech, eps, delta); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBudget, err)
	}
	cal, err := objpert.Calibrate(mech, eps, delta, pr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	model, _, err := objpert.Release(ctx, X, y, pr, cal, perturb.Seeded(noiseSeed))
	if err != nil {
		return nil, nil, err
	}
	cert := objectiveCertificate(cal, objpert.Run(cal, pr, cons, 0, cfg.Seed), perturb.SourceSeeded, notes, &noiseSeed)
	cert.WeightsSHA256 = perturb.WeightsSHA256(model.W)
	return model, cert, nil
}

// MinimizeObjective returns the noise-free minimizer of the objective that
// SimulateObjective perturbs (no floor applies): the non-private baseline
// of an experiment.
func MinimizeObjective(ctx context.Context, X *mat.Dense, y []float64, cfg trainer.Config, mech perturb.Mechanism) (*trainer.Model, error) {
	pr, _, err := simulatedProblem(X, cfg, mech)
	if err != nil {
		return nil, err
	}
	w, _, err := objpert.MinimizeExact(ctx, X, y, pr)
	if err != nil {
		return nil, err
	}
	return &trainer.Model{Loss: pr.Loss.Name(), Task: pr.Loss.Task(), K: pr.K, D: pr.D, W: w}, nil
}

// simulatedProblem checks the settings of SimulateObjective and returns
// the problem and the loss constants.
func simulatedProblem(X *mat.Dense, cfg trainer.Config, mech perturb.Mechanism) (objpert.Problem, losses.Constants, error) {
	if X == nil {
		return objpert.Problem{}, losses.Constants{}, fmt.Errorf("%w: no rows", ErrOptions)
	}
	if !objpert.Handles(mech) {
		return objpert.Problem{}, losses.Constants{}, fmt.Errorf("%w: %w: %q", ErrOptions, objpert.ErrMechanism, string(mech))
	}
	if err := objpert.CheckLoss(cfg.Loss); err != nil {
		return objpert.Problem{}, losses.Constants{}, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if err := objectiveKnobs(cfg, mech); err != nil {
		return objpert.Problem{}, losses.Constants{}, err
	}
	kappa := cfg.Kappa
	if kappa == 0 {
		kappa = 1
	}
	n, d := X.Dims()
	pr := objpert.Problem{Loss: cfg.Loss, N: n, D: d, K: cfg.Loss.Outputs(cfg.Classes), Kappa: kappa, Lambda: cfg.Reg.Lambda}
	cons, err := cfg.Loss.Constants(losses.Domain{Kappa: kappa})
	if err != nil {
		return objpert.Problem{}, losses.Constants{}, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return pr, cons, nil
}
