package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// objectiveMethod is a training-time mechanism of package objpert:
// objective perturbation (pure eps) or AMP ((eps, delta)). The weights are
// the minimizer of the ridge-regularized objective plus a random linear
// term, not the output of an SGD run, so there is no stability route: the
// certificate's SensitivityRoute states the mechanism's own analysis and
// its constants, Stability is nil, and the run record holds the constants
// of the objective (loss, n, d, K, L, beta_s, lambda) and of the solver.
// Prepare checks the settings and the rows and calibrates the noise; each
// Release minimizes the objective perturbed by fresh noise
// (docs/DESIGN.md, section 11). The solver factors the Hessian of the
// K x d weights, so at most glm.MaxHessianWeights of them: project wider
// rows first, or release by output perturbation (gamma).
type objectiveMethod struct{ name dp.Mechanism }

func (m objectiveMethod) Name() dp.Mechanism { return m.name }

// SGD is false: the method minimizes its perturbed objective exactly.
func (m objectiveMethod) SGD() bool { return false }

func (m objectiveMethod) CheckBudget(b dp.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if err := objpert.CheckBudget(m.name, b.Epsilon, b.Delta); err != nil {
		return fmt.Errorf("%w: %w", dp.ErrBudget, err)
	}
	return nil
}

// CheckConfig refuses the settings that change the objective (the SGD
// knobs, an L1 term) and a loss that is not twice continuously
// differentiable.
func (m objectiveMethod) CheckConfig(cfg trainer.Config) error {
	if cfg.Loss != nil {
		if err := objpert.CheckLoss(cfg.Loss); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return objectiveKnobs(cfg, m.name)
}

// Auto sets lambda by objpert.AutoLambda.
func (m objectiveMethod) Auto(cfg trainer.Config, n, dim int, b dp.Budget) (trainer.Config, string, error) {
	return m.AutoScaled(cfg, n, dim, b, 1)
}

// AutoScaled sets lambda to scale times objpert.AutoLambda's, raised to
// the mechanism's floor at b when it falls below (objpert.RaiseToFloor:
// Chaudhuri et al.'s extra ridge, a function of public constants).
func (m objectiveMethod) AutoScaled(cfg trainer.Config, n, dim int, b dp.Budget, scale float64) (trainer.Config, string, error) {
	if err := checkScale(scale); err != nil {
		return cfg, "", err
	}
	pr, err := objectiveProblem(cfg, n, dim)
	if err != nil {
		return cfg, "", err
	}
	lambda, rule, err := objpert.AutoLambda(m.name, b.Epsilon, b.Delta, pr)
	if err != nil {
		return cfg, "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if scale != 1 {
		pr.Lambda = lambda * scale
		raised, extra, err := objpert.RaiseToFloor(m.name, b.Epsilon, b.Delta, pr)
		if err != nil {
			return cfg, "", fmt.Errorf("%w: %w", ErrConfig, err)
		}
		lambda = raised.Lambda
		what := fmt.Sprintf("%g times the rule's lambda", scale)
		if extra > 0 {
			what += ", raised to the floor"
		}
		rule = what + ": " + rule
	}
	cfg.Reg = regularizers.ElasticNet{Lambda: lambda}
	return cfg, rule, nil
}

// NoiseRatio returns objpert.NoiseRatio: E||b||/(n L), the noise's pull
// ||b||/(n lambda) on the minimizer over the bound L/lambda on the
// noiseless minimizer's norm.
func (m objectiveMethod) NoiseRatio(cfg trainer.Config, n, dim int, b dp.Budget) (float64, error) {
	pr, err := objectiveProblem(cfg, n, dim)
	if err != nil {
		return 0, err
	}
	pr.Lambda = 1 // ignored
	r, err := objpert.NoiseRatio(m.name, b.Epsilon, b.Delta, pr)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", dp.ErrBudget, err)
	}
	return r, nil
}

func (m objectiveMethod) Prepare(ctx context.Context, rows Rows, b dp.Budget) (Prepared, error) {
	n, d, err := CheckPrepare(m, rows, b)
	if err != nil {
		return nil, err
	}
	if k := max(1, rows.Config.Loss.Outputs(rows.Config.Classes)); k*d > glm.MaxHessianWeights {
		return nil, fmt.Errorf("%w: %s solves for %d weights (%d x %d), over %d (glm.MaxHessianWeights): project the rows (--project k) or use gamma", ErrConfig, m.name, k*d, k, d, glm.MaxHessianWeights)
	}
	pr, err := objectiveProblem(rows.Config, n, d)
	if err != nil {
		return nil, err
	}
	if len(rows.Y) != n {
		return nil, fmt.Errorf("%w: %d training rows, %d labels", ErrConfig, n, len(rows.Y))
	}
	if err := objpert.CheckRows(rows.X, rows.Y, pr); err != nil {
		return nil, err
	}
	cal, err := objpert.Calibrate(m.name, b.Epsilon, b.Delta, pr)
	if err != nil {
		if errors.Is(err, objpert.ErrBudget) {
			return nil, fmt.Errorf("%w: %w", dp.ErrBudget, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	cons, err := pr.Loss.Constants(losses.Domain{Kappa: pr.Kappa})
	if err != nil {
		return nil, err
	}
	run := objpert.Run(cal, pr, cons, rows.Config.LabelBound, rows.Config.Seed)
	p := &objectivePrepared{rows: rows, pr: pr, cal: cal, run: run, budget: b}
	p.Fresh = NewFresh("release", p.release)
	return p, nil
}

// objectivePrepared is a calibrated objective waiting for its release.
type objectivePrepared struct {
	rows   Rows
	pr     objpert.Problem
	cal    objpert.Calibration
	run    *trainer.Run
	budget dp.Budget

	*Fresh // Release once, and the holds of a selection
}

func (p *objectivePrepared) Mechanism() dp.Mechanism { return p.cal.Mechanism }
func (p *objectivePrepared) Budget() dp.Budget       { return p.budget }
func (p *objectivePrepared) Shape() (int, int)       { return p.pr.K, p.pr.D }
func (p *objectivePrepared) Describe() string {
	return "the perturbed objective minimized on the training part"
}
func (p *objectivePrepared) Stability() *stability.Report { return nil }

// release minimizes the objective perturbed by fresh noise from src.
func (p *objectivePrepared) release(ctx context.Context, src perturb.Source, extra []string) (*Outcome, error) {
	if src == nil {
		src = perturb.Secure()
	}
	notes := append(append([]string(nil), p.rows.Notes...), extra...)
	cert, err := objectiveCertificate(p.cal, p.run, perturb.SourceName(src), notes)
	if err != nil {
		return nil, err
	}
	model, st, err := objpert.Release(ctx, p.rows.X, p.rows.Y, p.pr, p.cal, src)
	if err != nil {
		return nil, err
	}
	return finish(&Outcome{Model: model, Certificate: cert, Stats: solverStats(st)}, src), nil
}

// Trained minimizes the objective without noise and calls f with the
// minimizer; it fails after Release (or a Hold that used the release up),
// as the Prepared interface states: the rows were released.
func (p *objectivePrepared) Trained(ctx context.Context, f func(*trainer.Model, trainer.Stats)) error {
	released := fmt.Errorf("%w: the release was made; its non-private weights are no longer available", ErrReleased)
	return p.IfUnreleased(released, func() error {
		w, st, err := objpert.Minimize(ctx, p.rows.X, p.rows.Y, p.pr, p.cal)
		if err != nil {
			return err
		}
		f(&trainer.Model{Loss: p.pr.Loss.Name(), Task: p.pr.Loss.Task(), K: p.pr.K, D: p.pr.D, W: w}, solverStats(st))
		return nil
	})
}

// solverStats are the solver's statistics in the trainer's terms.
func solverStats(st objpert.SolveStats) trainer.Stats {
	return trainer.Stats{PassesDone: st.NewtonSteps + st.GradientSteps, GradNorm: st.GradNorm, Converged: st.Reached}
}

// Rebuild recomputes the calibration from the published problem (loss, n,
// d, K, kappa, lambda) and budget, and the certificate from it.
func (m objectiveMethod) Rebuild(c *Certificate, pub Public) (*Certificate, *stability.Report, error) {
	run, err := certRun(c)
	if err != nil {
		return nil, nil, err
	}
	cal, err := m.calibration(c, pub)
	if err != nil {
		return nil, nil, err
	}
	loss, _ := losses.ByName(run.Loss) // calibration read it
	cfg := trainer.Config{Loss: loss, Classes: pub.Classes, Kappa: run.Kappa, Reg: regularizers.ElasticNet{Lambda: run.Lambda}}
	pr, _ := objectiveProblem(cfg, run.N, pub.D)
	if pub.Auto {
		auto, _, err := m.AutoScaled(cfg, run.N, pub.D, dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, pub.scaleOf())
		if err != nil {
			return nil, nil, fmt.Errorf("automatic knobs: %w", err)
		}
		if auto.Reg.Lambda != run.Lambda {
			return nil, nil, fmt.Errorf("the run has lambda = %v, want %v, the automatic lambda of %s for n = %d, dim = %d, K = %d at (%g, %g)", run.Lambda, auto.Reg.Lambda, m.name, run.N, pub.D, pr.K, c.Epsilon, c.Delta)
		}
	}
	cons, err := loss.Constants(losses.Domain{Kappa: pr.Kappa})
	if err != nil {
		return nil, nil, err
	}
	if c.Source == perturb.SourceSeeded && c.NoiseSeed == nil {
		return nil, nil, errors.New("a seeded release without its noise seed")
	}
	notes := append(append([]string(nil), pub.Notes...), pub.Extra...)
	cert, err := objectiveCertificate(cal, objpert.Run(cal, pr, cons, run.LabelBound, run.Seed), c.Source, notes)
	if err != nil {
		return nil, nil, err
	}
	if c.Source == perturb.SourceSeeded {
		seed := *c.NoiseSeed
		cert.NoiseSeed = &seed
	}
	return cert, nil, nil
}

// calibration returns the calibration of the published problem of c (loss,
// n, d, K, kappa, lambda) and budget.
func (m objectiveMethod) calibration(c *Certificate, pub Public) (objpert.Calibration, error) {
	run, err := certRun(c)
	if err != nil {
		return objpert.Calibration{}, err
	}
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return objpert.Calibration{}, err
	}
	cfg := trainer.Config{Loss: loss, Classes: pub.Classes, Kappa: run.Kappa, Reg: regularizers.ElasticNet{Lambda: run.Lambda}}
	pr, err := objectiveProblem(cfg, run.N, pub.D)
	if err != nil {
		return objpert.Calibration{}, err
	}
	if pr.K != pub.K {
		return objpert.Calibration{}, fmt.Errorf("%d outputs for %d classes, the model has %d", pr.K, pub.Classes, pub.K)
	}
	cal, err := objpert.Calibrate(c.Mechanism, c.Epsilon, c.Delta, pr)
	if err != nil {
		return objpert.Calibration{}, fmt.Errorf("the published constants do not calibrate: %w", err)
	}
	return cal, nil
}

// objectiveProblem returns the public problem of n rows of dim inputs with
// the settings of cfg (kappa 1 when zero).
func objectiveProblem(cfg trainer.Config, n, dim int) (objpert.Problem, error) {
	if cfg.Loss == nil {
		return objpert.Problem{}, fmt.Errorf("%w: no loss", ErrConfig)
	}
	if err := objpert.CheckLoss(cfg.Loss); err != nil {
		return objpert.Problem{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	kappa := cfg.Kappa
	if kappa == 0 {
		kappa = 1
	}
	return objpert.Problem{Loss: cfg.Loss, N: n, D: dim, K: cfg.Loss.Outputs(cfg.Classes), Kappa: kappa, Lambda: cfg.Reg.Lambda}, nil
}

// objectiveCertificate returns the certificate of a release with cal,
// without the weights' hash, with the mechanism's ledger: its parts taken
// from the budget of cal.
func objectiveCertificate(cal objpert.Calibration, run *trainer.Run, source string, notes []string) (*Certificate, error) {
	r := *run
	r.Stats = trainer.Stats{}
	cert := &Certificate{Claim: *objpert.NewClaim(cal, source, notes), Run: &r}
	l, err := dp.NewLedger(dp.Budget{Epsilon: cal.Epsilon, Delta: cal.Delta}, cal.Ledger()...)
	if err != nil {
		return nil, err
	}
	cert.Account(l)
	return cert, nil
}

// objectiveKnobs refuses the trainer settings that change the objective
// (the mechanism minimizes F exactly, so the SGD knobs do not apply).
func objectiveKnobs(cfg trainer.Config, m dp.Mechanism) error {
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
		return fmt.Errorf("%w: %w: %s does not apply to %s, which minimizes the ridge-regularized objective exactly", ErrConfig, objpert.ErrCondition, joinWords(bad), m)
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
