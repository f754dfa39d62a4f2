package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// outputMethod is output perturbation with one noise of package perturb:
// Prepare trains by SGD and analyzes the run's stability (TrainRows), and
// Release adds the noise calibrated to the chosen route's Delta (Weights).
type outputMethod struct{ noise perturb.Noise }

// OutputStep names the ledger entry of a release by output perturbation.
const OutputStep = "release of the weights (output perturbation)"

func (m outputMethod) Name() dp.Mechanism { return m.noise.Name() }

// SGD is true: the method releases the weights of an SGD run.
func (m outputMethod) SGD() bool { return true }

func (m outputMethod) CheckBudget(b dp.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if err := m.noise.CheckBudget(b.Epsilon, b.Delta); err != nil {
		return fmt.Errorf("%w: %w", dp.ErrBudget, err)
	}
	return nil
}

// CheckConfig refuses a user graph model, whose sensitivity no route
// bounds, and a tolerance, which stops a run at a data-dependent pass.
func (m outputMethod) CheckConfig(cfg trainer.Config) error {
	if cfg.Model != nil {
		return fmt.Errorf("%w: a user graph model has no certified sensitivity", ErrConfig)
	}
	if cfg.Tolerance != 0 {
		return fmt.Errorf("%w: a tolerance stops the run at a data-dependent pass, which no route certifies", ErrConfig)
	}
	return nil
}

// Auto sets the knobs of autoknobs.Choose: lambda, the clipping norm, l1 ratio 0
// and the bounded inverse-t schedule.
func (m outputMethod) Auto(cfg trainer.Config, n, dim int, b dp.Budget) (trainer.Config, string, error) {
	return m.AutoScaled(cfg, n, dim, b, 1)
}

// AutoScaled is Auto with autoknobs.Choose's lambda multiplied by scale (every
// lambda > 0 is certified).
func (m outputMethod) AutoScaled(cfg trainer.Config, n, dim int, b dp.Budget, scale float64) (trainer.Config, string, error) {
	if cfg.Loss == nil {
		return cfg, "", fmt.Errorf("%w: no loss", ErrConfig)
	}
	if err := checkScale(scale); err != nil {
		return cfg, "", err
	}
	k, err := autoknobs.Choose(n, dim, cfg.Loss.Outputs(cfg.Classes), m.Name(), b)
	if err != nil {
		return cfg, "", err
	}
	if scale != 1 {
		k.Lambda *= scale
		k.Rule = fmt.Sprintf("%g times the rule's lambda: %s", scale, k.Rule)
	}
	k.Apply(&cfg)
	return cfg, k.Rule, nil
}

// NoiseRatio returns 2 nu/n: with the automatic knobs (clipping to G,
// the strongly convex route) Delta = 2G/(mu n) and the trained weights lie
// in the ball of radius G/mu (docs/DESIGN.md, section 6, the support of
// the noise), so the expected noise norm nu Delta over that radius is
// 2 nu/n, nu the noise's expected norm at unit sensitivity in dimension
// K*dim.
func (m outputMethod) NoiseRatio(cfg trainer.Config, n, dim int, b dp.Budget) (float64, error) {
	if cfg.Loss == nil || n < 1 || dim < 1 {
		return 0, fmt.Errorf("%w: noise ratio for n = %d, dim = %d", ErrConfig, n, dim)
	}
	p := cfg.Loss.Outputs(cfg.Classes) * dim
	cal, err := perturb.Calibrate(m.Name(), b.Epsilon, b.Delta, perturb.Sensitivity{L2: 1}, p)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", dp.ErrBudget, err)
	}
	noise, err := perturb.LookupTuning(m.Name())
	if err != nil {
		return 0, err
	}
	return 2 * noise.ExpectedNorm(cal) / float64(n), nil
}

func (m outputMethod) Prepare(ctx context.Context, rows Rows, b dp.Budget) (Prepared, error) {
	if err := m.CheckBudget(b); err != nil {
		return nil, err
	}
	tr, err := TrainRows(ctx, rows.X, rows.Y, rows.Config, rows.Notes)
	if err != nil {
		return nil, err
	}
	return tr.Prepared(m.Name(), b)
}

// Prepared returns the release of t's weights by the output-perturbation
// mechanism mech at budget b, for a caller that trained once and releases
// at several budgets (each release spends its own budget, and the weights
// are used up by the first that is not seeded). It fails when mech is not
// an output-perturbation mechanism, b is not a budget it can spend, or no
// sensitivity route applies to the run.
func (t *Trained) Prepared(mech dp.Mechanism, b dp.Budget) (Prepared, error) {
	if _, err := t.state(); err != nil {
		return nil, err
	}
	noise, err := perturb.Lookup(mech)
	if err != nil {
		return nil, err
	}
	if err := (outputMethod{noise}).CheckBudget(b); err != nil {
		return nil, err
	}
	sens, err := t.Sensitivity()
	if err != nil {
		return nil, err
	}
	if _, err := perturb.Calibrate(mech, b.Epsilon, b.Delta, sens, t.s.run.K*t.s.run.D); err != nil {
		return nil, err
	}
	return &outputPrepared{tr: t, mech: mech, budget: b}, nil
}

// outputPrepared is a trained run waiting for its release.
type outputPrepared struct {
	tr     *Trained
	mech   dp.Mechanism
	budget dp.Budget
}

func (p *outputPrepared) Mechanism() dp.Mechanism      { return p.mech }
func (p *outputPrepared) Budget() dp.Budget            { return p.budget }
func (p *outputPrepared) Shape() (int, int)            { return p.tr.s.run.K, p.tr.s.run.D }
func (p *outputPrepared) Describe() string             { return "output perturbation" }
func (p *outputPrepared) Stability() *stability.Report { return p.tr.Report() }

func (p *outputPrepared) Release(_ context.Context, src perturb.Source, extra ...string) (*Outcome, error) {
	if src == nil {
		src = perturb.Secure()
	}
	stats := p.tr.s.run.Stats
	model, cert, err := p.tr.Release(p.mech, p.budget.Epsilon, p.budget.Delta, src, extra...)
	if err != nil {
		return nil, err
	}
	if err := accountOutput(cert, p.mech, p.budget); err != nil {
		return nil, err
	}
	return finish(&Outcome{Model: model, Certificate: cert, Stats: stats}, src), nil
}

func (p *outputPrepared) Trained(_ context.Context, f func(*trainer.Model, trainer.Stats)) error {
	stats := p.tr.s.run.Stats
	if _, ok := p.tr.metric(func(m *trainer.Model) float64 { f(m, stats); return 0 }); !ok {
		return fmt.Errorf("%w: the weights were released and wiped", ErrReleased)
	}
	return nil
}

// Rebuild checks the run constants that follow from the loss and the
// settings, analyzes the run's stability from its constants alone, and
// returns the certificate Weights writes for that analysis. With pub.Auto
// the run's knobs must be those autoknobs.Choose gives for its n, dim, K,
// mechanism and budget (lambda scaled by the published scale, no L1 term,
// the bounded-inverse-t schedule).
func (m outputMethod) Rebuild(c *Certificate, pub Public) (*Certificate, *stability.Report, error) {
	cr, err := certRun(c)
	if err != nil {
		return nil, nil, err
	}
	run := *cr
	errs := []error{checkRun(&run)}
	if pub.Auto {
		k, err := autoknobs.Choose(run.N, run.D, run.K, c.Mechanism, dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta})
		if err == nil {
			err = checkScale(pub.scaleOf())
			k.Lambda *= pub.scaleOf()
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("automatic knobs: %w", err))
		case run.Lambda != k.Lambda || run.Clip != k.Clip || run.L1Ratio != 0 || run.Schedule != trainer.BoundedInverseT.String():
			errs = append(errs, fmt.Errorf("the automatic knobs: lambda %v, clip %v, l1 ratio 0, bounded-inverse-t; the run's: lambda %v, clip %v, l1 ratio %v, %s",
				k.Lambda, k.Clip, run.Lambda, run.Clip, run.L1Ratio, run.Schedule))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	rep, err := stability.Analyze(&run)
	if err != nil {
		return nil, nil, fmt.Errorf("the run record does not analyze: %w", err)
	}
	var sens perturb.Sensitivity
	var notes []string
	if pub.Sensitivity != nil {
		sens, notes = *pub.Sensitivity, pub.SensitivityNotes
	} else if sens, notes, err = FromReport(rep); err != nil {
		return nil, nil, err
	}
	cal, err := perturb.Calibrate(c.Mechanism, c.Epsilon, c.Delta, sens, pub.K*pub.D)
	if err != nil {
		return nil, nil, fmt.Errorf("the privacy parameters are invalid: %w", err)
	}
	all := append(append(append([]string(nil), pub.Notes...), notes...), pub.Extra...)
	cert := newOutputCertificate(cal, sens, &run, c.Source, all, nil)
	if err := accountOutput(cert, c.Mechanism, dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}); err != nil {
		return nil, nil, err
	}
	if c.Source == perturb.SourceSeeded {
		if c.NoiseSeed == nil {
			return nil, nil, errors.New("a seeded release without its noise seed")
		}
		seed := *c.NoiseSeed
		cert.NoiseSeed = &seed
	}
	return cert, rep, nil
}

// checkRun checks the run constants of an SGD run that follow from the loss
// and the settings: the loss constants, mu, the sampling, the engine, the
// batch and the step of every pass.
func checkRun(run *trainer.Run) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return err
	}
	if run.Task != loss.Task().String() {
		bad("the run's loss %s is %s, the run says %s", run.Loss, loss.Task(), run.Task)
	}
	cons, err := loss.Constants(losses.Domain{Kappa: run.Kappa, Radius: run.Radius, LabelBound: run.LabelBound})
	if err != nil {
		bad("the loss has no constants on the run's domain: %v", err)
	} else if run.Lz != cons.Lz || run.Sz != cons.Sz || run.Convex != cons.Convex || run.L != cons.Lz*run.Kappa || run.BetaS != cons.Sz*run.Kappa*run.Kappa {
		bad("loss constants L_z = %v, S_z = %v, L = %v, beta_s = %v, convex %v; the %s loss has L_z = %v, S_z = %v at kappa = %v", run.Lz, run.Sz, run.L, run.BetaS, run.Convex, run.Loss, cons.Lz, cons.Sz, run.Kappa)
	}
	if !(run.Lambda >= 0) || math.IsInf(run.Lambda, 0) || !(run.L1Ratio >= 0 && run.L1Ratio <= 1) || run.Mu != run.Lambda*(1-run.L1Ratio) {
		bad("lambda = %v, l1 ratio = %v, mu = %v: want mu = lambda (1 - l1 ratio)", run.Lambda, run.L1Ratio, run.Mu)
	}
	if run.Sampling != trainer.SamplingPermutation || run.UserModel || run.Tolerance != 0 ||
		run.Engine != trainer.Native.String() && run.Engine != trainer.Graph.String() {
		bad("sampling %q, engine %q, user model %v, tolerance %v: not a run the trainer certifies", run.Sampling, run.Engine, run.UserModel, run.Tolerance)
	}
	if run.Batch < 1 || run.Batch > run.N || run.StepsPerPass != (run.N+run.Batch-1)/run.Batch || run.Passes < 1 || run.Passes > trainer.MaxPasses {
		bad("batch %d, %d steps per pass, %d passes for n = %d", run.Batch, run.StepsPerPass, run.Passes, run.N)
	} else if err := checkSteps(run); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkSteps recomputes the first step and the largest and smallest step of
// every pass from the schedule (trainer.Run.OnRows, which evaluates each
// non-increasing schedule at the ends of the pass), as the trainer computes
// them.
func checkSteps(run *trainer.Run) error {
	switch run.Schedule {
	case trainer.Constant.String(), trainer.InverseT.String(), trainer.BoundedInverseT.String():
	default:
		return fmt.Errorf("schedule %q cannot be recomputed: a certified release uses constant, inverse-t or bounded-inverse-t", run.Schedule)
	}
	want, err := run.OnRows(run.N, run.Seed)
	if err != nil {
		return err
	}
	if len(run.PassMaxStep) != run.Passes || len(run.PassMinStep) != run.Passes {
		return fmt.Errorf("%d passes but %d and %d step records", run.Passes, len(run.PassMaxStep), len(run.PassMinStep))
	}
	if e := want.PassMaxStep[0]; e != run.Eta || !(e > 0) || math.IsInf(e, 0) {
		return fmt.Errorf("first step %v, the %s schedule gives %v", run.Eta, run.Schedule, e)
	}
	for j := range run.Passes {
		if run.PassMaxStep[j] != want.PassMaxStep[j] || run.PassMinStep[j] != want.PassMinStep[j] {
			return fmt.Errorf("pass %d steps in [%v, %v], the %s schedule gives [%v, %v]", j+1, run.PassMinStep[j], run.PassMaxStep[j], run.Schedule, want.PassMinStep[j], want.PassMaxStep[j])
		}
	}
	return nil
}

// The Hold of a selection over output-perturbation releases: the trained
// state is marked held by the Hold, and only the Hold releases it.

func (p *outputPrepared) acquire(h *Hold, seeded bool) error {
	s := p.tr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.hold != nil && s.hold != h:
		return ErrHeld
	case s.model == nil:
		return fmt.Errorf("%w: the weights were released and wiped", ErrReleased)
	case !seeded && s.revealed:
		return fmt.Errorf("%w: the weights were revealed in the clear", ErrReleased)
	}
	s.hold = h
	return nil
}

// releaseCopy releases a copy of the weights that h holds.
func (p *outputPrepared) releaseCopy(_ context.Context, h *Hold, src perturb.Source) (*Outcome, error) {
	s := p.tr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != h || s.model == nil {
		return nil, fmt.Errorf("%w: the hold does not hold these weights", ErrReleased)
	}
	cp := *s.model
	cp.W = slices.Clone(s.model.W)
	model, cert, err := s.release(&cp, p.mech, p.budget.Epsilon, p.budget.Delta, src, nil)
	if err != nil {
		return nil, err
	}
	if err := accountOutput(cert, p.mech, p.budget); err != nil {
		return nil, err
	}
	return finish(&Outcome{Model: model, Certificate: cert}, src), nil
}

// unhold ends h's hold on the weights and, with usedUp, wipes them.
func (p *outputPrepared) unhold(h *Hold, usedUp bool) {
	s := p.tr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != h {
		return
	}
	s.hold = nil
	if usedUp && s.model != nil {
		clear(s.model.W)
		s.model = nil
	}
}

// accountOutput writes the ledger of an output-perturbation release at b
// into its certificate: one charge, the noise of mech, taking all of b.
func accountOutput(c *Certificate, mech dp.Mechanism, b dp.Budget) error {
	l, err := dp.NewLedger(b, dp.Charge{Step: OutputStep, Mechanism: mech, Epsilon: b.Epsilon, Delta: b.Delta})
	if err != nil {
		return err
	}
	c.Account(l)
	return nil
}
