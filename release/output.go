package release

import (
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// Config sets up a release by output perturbation (Weights, OneVsRest).
type Config struct {
	// Mechanism is a registered output-perturbation mechanism
	// (perturb.Mechanisms: Laplace, Gamma, Gaussian, AnalyticGaussian).
	// The zero value is invalid.
	Mechanism dp.Mechanism
	// Epsilon > 0 is the privacy parameter. The zero value is invalid.
	Epsilon float64
	// Delta in [0, 1) is the privacy parameter: 0 for the pure mechanisms,
	// positive for the Gaussian ones.
	Delta float64
	// Source supplies the noise. Nil means perturb.Secure().
	Source perturb.Source
	// Notes are extra assumptions not covered by the certificate, added to
	// its list (e.g. "preprocessing statistics fitted on the training data
	// are not privatized"). Nil means none.
	Notes []string
}

// checkModel validates a model and its run.
func checkModel(m *trainer.Model, run *trainer.Run) error {
	if m == nil || run == nil {
		return fmt.Errorf("%w: nil model or run", perturb.ErrModel)
	}
	if run.UserModel {
		return fmt.Errorf("%w: the run trained a user-supplied graph model, whose sensitivity is not certified", perturb.ErrNotCertified)
	}
	if !run.Convex {
		return fmt.Errorf("%w: loss %q is not convex, and every sensitivity route needs convexity", perturb.ErrNotCertified, run.Loss)
	}
	if m.K < 1 || m.D < 1 || len(m.W) != m.K*m.D {
		return fmt.Errorf("%w: model is %dx%d with %d weights", perturb.ErrModel, m.K, m.D, len(m.W))
	}
	if run.D != m.D || (run.K != 0 && run.K != m.K) {
		return fmt.Errorf("%w: model is %dx%d but the run records %dx%d", perturb.ErrModel, m.K, m.D, run.K, run.D)
	}
	if i := check.FirstNonFinite(m.W); i >= 0 {
		return fmt.Errorf("%w: weight %d is %v", perturb.ErrModel, i, m.W[i])
	}
	return nil
}

// Weights returns a differentially private copy of the trained model m and
// its certificate. m itself is not modified.
//
// Mechanism: output perturbation, w~ = w + noise, with the noise of
// cfg.Mechanism calibrated by perturb.Calibrate to (cfg.Epsilon, cfg.Delta)
// and the sensitivity sens, in dimension K*D: a multiclass (softmax) model
// is one release of the whole K x D matrix, with sens.L2 bounding the
// Frobenius norm of the change of the matrix, and one certificate.
//
// Neighbouring relation: replace-one (S and S' of equal size differ in one
// example). Sensitivity assumption: ||w_S - w_S'||_2 <= sens.L2 (and
// ||.||_1 <= the L1 bound for Laplace) for the training run described by
// run, as established by the stability package; it is taken as given.
//
// Claim: the released weights are (cfg.Epsilon, cfg.Delta)-DP, by the
// theorem the certificate cites, provided the sensitivity bound holds and
// the trained weights are released only once. Weights is the primitive and
// cannot know about other releases of the same numbers: once-only is the
// caller's to keep (Trained keeps it, wiping the weights).
//
// Runs of a user-supplied graph model or a non-convex loss are refused with
// perturb.ErrNotCertified. A nil cfg.Source means perturb.Secure().
func Weights(m *trainer.Model, run *trainer.Run, sens perturb.Sensitivity, cfg Config) (*trainer.Model, *Certificate, error) {
	if err := checkModel(m, run); err != nil {
		return nil, nil, err
	}
	cal, err := perturb.Calibrate(cfg.Mechanism, cfg.Epsilon, cfg.Delta, sens, m.K*m.D)
	if err != nil {
		return nil, nil, err
	}
	src := cfg.Source
	if src == nil {
		src = perturb.Secure()
	}
	out, err := noisyCopy(m, cal, src)
	if err != nil {
		return nil, nil, err
	}
	dp.PositiveZeros(out.W)
	c := newOutputCertificate(cal, sens, run, perturb.SourceName(src), cfg.Notes, nil)
	c.NoiseSeed = perturb.NoiseSeed(src)
	c.WeightsSHA256 = dp.WeightsSHA256(out.W)
	return out, c, nil
}

// OneVsRest releases K >= 2 one-vs-rest binary models, trained on the same
// data set, with a total budget of (cfg.Epsilon, cfg.Delta): each model is
// released by Weights's mechanism with (cfg.Epsilon/K, cfg.Delta/K), and by
// basic composition (Dwork & Roth 2014, Theorem 3.16) the K releases
// together are (cfg.Epsilon, cfg.Delta)-DP for replace-one neighbours. Each
// certificate states its share and the total. A softmax model released by
// Weights needs no split and is usually preferable.
//
// models[k], runs[k] and sens[k] describe the k-th binary model. All models
// are checked before any noise is drawn: either all are released or none is.
func OneVsRest(models []*trainer.Model, runs []*trainer.Run, sens []perturb.Sensitivity, cfg Config) ([]*trainer.Model, []*Certificate, error) {
	k := len(models)
	if k < 2 || len(runs) != k || len(sens) != k {
		return nil, nil, fmt.Errorf("%w: one-vs-rest needs K >= 2 models with as many runs and sensitivities, have %d, %d, %d", perturb.ErrModel, k, len(runs), len(sens))
	}
	noise, err := perturb.Lookup(cfg.Mechanism)
	if err != nil {
		return nil, nil, err
	}
	if err := noise.CheckBudget(cfg.Epsilon, cfg.Delta); err != nil {
		return nil, nil, err
	}
	// Each share is rounded down (dp.Part), so that the K shares add up to
	// at most the budget in exact arithmetic.
	share := Config{Mechanism: cfg.Mechanism, Epsilon: dp.Part(cfg.Epsilon, k), Delta: dp.Part(cfg.Delta, k)}
	cals := make([]perturb.Calibration, k)
	for i := range models {
		if err := checkModel(models[i], runs[i]); err != nil {
			return nil, nil, fmt.Errorf("model %d: %w", i, err)
		}
		c, err := perturb.Calibrate(share.Mechanism, share.Epsilon, share.Delta, sens[i], models[i].K*models[i].D)
		if err != nil {
			return nil, nil, fmt.Errorf("model %d: %w", i, err)
		}
		cals[i] = c
	}
	src := cfg.Source
	if src == nil {
		src = perturb.Secure()
	}
	outs := make([]*trainer.Model, k)
	certs := make([]*Certificate, k)
	for i, m := range models {
		out, err := noisyCopy(m, cals[i], src)
		if err != nil {
			return nil, nil, fmt.Errorf("model %d: %w", i, err)
		}
		dp.PositiveZeros(out.W)
		outs[i] = out
		comp := &dp.Composition{
			Rule:         "basic composition (Dwork & Roth 2014, Theorem 3.16): eps and delta split evenly across the one-vs-rest releases",
			Parts:        k,
			Index:        i,
			TotalEpsilon: cfg.Epsilon,
			TotalDelta:   cfg.Delta,
		}
		certs[i] = newOutputCertificate(cals[i], sens[i], runs[i], perturb.SourceName(src), cfg.Notes, comp)
		certs[i].WeightsSHA256 = dp.WeightsSHA256(out.W)
	}
	return outs, certs, nil
}

// noisyCopy returns a copy of the model m with the noise of cal added,
// drawn from src (perturb.Add); m is not modified.
func noisyCopy(m *trainer.Model, cal perturb.Calibration, src perturb.Source) (*trainer.Model, error) {
	out := &trainer.Model{Loss: m.Loss, Task: m.Task, K: m.K, D: m.D, W: append([]float64(nil), m.W...)}
	if err := perturb.Add(out.W, cal, src); err != nil {
		return nil, err
	}
	return out, nil
}
