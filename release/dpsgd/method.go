package dpsgd

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// How a DP-SGD certificate reaches replace-one neighbours.
const (
	// Neighbours says how a DP-SGD certificate reaches replace-one
	// neighbours from the accountant's add/remove-one guarantee.
	Neighbours = "replace-one by group privacy of two: add/remove (eps', delta') gives replace-one (2 eps', (1 + exp(eps')) delta'); the noise is calibrated to eps' = eps/2, delta' = delta/(1 + exp(eps/2))"
)

// The automatic knobs of DP-SGD (method.Auto).
const (
	autoClip   = 1
	autoPasses = 5
)

// method releases the weights of a DP-SGD run (trainer.TrainDPSGD):
// Poisson sampling at q = trainer.PoissonRate(n, b) (b/n rounded down to a
// multiple of 2^-64: the rate the batches are drawn at, which the
// accountant takes), per-example clipping to C, Gaussian noise of standard
// deviation sigma C on every step's sum, T = passes ceil(n/b) steps. The
// noise multiplier sigma is the smallest that the tighter of two
// accountants (package accountant: the PLD accountant, calibrated to eps/2
// (1 - 1e-7), or RDP of the sampled Gaussian with the improved conversion;
// the PLD one in the usual settings) finds for (eps/2, delta/(1 +
// exp(eps/2))) under add/remove-one neighbours, which gives (eps, delta)
// under replace-one neighbours, the module's relation, by group privacy of
// two (accountant.Guarantee.ReplaceOne). The certificate names the
// accountant (PLDAccountant or RDPAccountant); a file from before the PLD
// accountant names RDP's and certifies as before. The tighter route, the
// sampled Gaussian at sensitivity 2C for replace-one, is not used: it is
// not proven here, and google/differential-privacy's dp_accounting refuses
// Poisson sampling under replace-one in its PLD accountant. (eps,
// delta)-DP, delta > 0.
type method struct{}

// Importing the package registers DP-SGD's release method under the name
// perturb.DPSGD: a program that trains or verifies a DP-SGD release
// (release.Lookup(perturb.DPSGD)) imports it, as the public rule (package
// selection) and the model files (package modelfile) do.
func init() { release.Register(method{}) }

func (method) Name() dp.Mechanism { return perturb.DPSGD }

// SGD is false: the DP-SGD run is not an SGD run whose stability an output
// perturbation certifies, a partitioned fit cannot average it, and its
// knobs (expected batch, passes, clipping norm, step) are its own.
func (method) SGD() bool { return false }

// Knobs are the SGD knobs of a DP-SGD run (release.KnobTaker): the
// expected batch, the passes, the step and its schedule, the clipping norm
// C and the averaging of the iterates. Any choice of them is public, so
// the accountant's calibration covers it.
func (method) Knobs() []release.Knob {
	return []release.Knob{release.KnobPasses, release.KnobBatch, release.KnobStep, release.KnobSchedule, release.KnobClip, release.KnobAverage}
}

// CheckBudget requires a valid budget with delta > 0 (the Gaussian noise
// gives no pure eps) that the accountant can split into its add/remove
// target (addRemoveTarget).
func (method) CheckBudget(b dp.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if b.Pure() {
		return fmt.Errorf("%w: dp-sgd is (eps, delta)-DP with Gaussian noise: give delta > 0 (well below 1/n)", dp.ErrBudget)
	}
	_, err := addRemoveTarget(b)
	return err
}

// CheckConfig refuses what trainer.CheckDPSGD refuses (a user model,
// another engine, dropout, a tolerance, the custom schedule, a clipping
// norm that is not finite and >= 0). A zero Clip means C = 1 (withClip).
func (method) CheckConfig(cfg trainer.Config) error {
	if err := trainer.CheckDPSGD(withClip(cfg)); err != nil {
		return fmt.Errorf("%w: %w", release.ErrConfig, err)
	}
	return nil
}

// autoRule is the sentence of the automatic knobs.
const autoRule = "dp-sgd: clipping norm C = 1 (the gradient bound of the logistic and Huber losses on the unit ball), expected batch b = ceil(sqrt(n)), %d passes (T = %d ceil(n/b) steps), the constant step 1/beta of the loss's smoothness, the average of the iterates; lambda as given"

// Auto sets the knobs of autoRule from n alone: C = 1, b =
// ceil(sqrt(n)), 5 passes, the constant step 1/beta (Eta 0), iterate
// averaging, no dropout, projection or tolerance. lambda is kept: its
// gradient is data-independent and costs no privacy.
func (m method) Auto(cfg trainer.Config, n, dim int, b dp.Budget) (trainer.Config, string, error) {
	return m.AutoScaled(cfg, n, dim, b, 1)
}

// AutoScaled is Auto with lambda multiplied by scale.
func (method) AutoScaled(cfg trainer.Config, n, dim int, b dp.Budget, scale float64) (trainer.Config, string, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return cfg, "", fmt.Errorf("%w: lambda scale %v, want finite > 0", release.ErrConfig, scale)
	}
	if n < 1 || dim < 1 {
		return cfg, "", fmt.Errorf("%w: automatic knobs for n = %d, dim = %d", release.ErrConfig, n, dim)
	}
	cfg.Clip = autoClip
	cfg.Batch = min(n, int(math.Ceil(math.Sqrt(float64(n)))))
	cfg.Passes = autoPasses
	cfg.Schedule, cfg.Eta, cfg.StepFunc = trainer.Constant, 0, nil
	cfg.Average = true
	cfg.Dropout, cfg.Radius, cfg.Tolerance = 0, 0, 0
	cfg.Reg.Lambda *= scale
	rule := fmt.Sprintf(autoRule, autoPasses, autoPasses)
	if scale != 1 {
		rule = fmt.Sprintf("%g times the given lambda; ", scale) + rule
	}
	return cfg, rule, nil
}

// NoiseRatio is +Inf: the noise enters every step, and no bound on the
// noiseless weights is at hand, so the forecast of noise against weights
// does not apply; Predict never picks dp-sgd among other methods.
func (method) NoiseRatio(trainer.Config, int, int, dp.Budget) (float64, error) {
	return math.Inf(1), nil
}

// withClip returns cfg with the clipping norm C = 1 when Clip is zero:
// DP-SGD always clips, and the trainer's zero means no clipping.
func withClip(cfg trainer.Config) trainer.Config {
	if cfg.Clip == 0 {
		cfg.Clip = autoClip
	}
	return cfg
}

// addRemoveTarget returns the add/remove-one budget whose replace-one
// consequence is within b: (eps/2, delta/(1 + exp(eps/2))), its delta
// lowered by ulps until (1 + exp(eps/2)) delta' <= delta in floating point.
func addRemoveTarget(b dp.Budget) (dp.Budget, error) {
	t := dp.Budget{Epsilon: b.Epsilon / 2, Delta: b.Delta / (1 + math.Exp(b.Epsilon/2))}
	for t.Delta > 0 && (1+math.Exp(t.Epsilon))*t.Delta > b.Delta {
		t.Delta = math.Nextafter(t.Delta, 0)
	}
	if !(t.Delta > 0) || !(t.Epsilon > 0) {
		return t, fmt.Errorf("%w: eps = %v, delta = %v leave no add/remove budget for dp-sgd's accountant", dp.ErrBudget, b.Epsilon, b.Delta)
	}
	return t, nil
}

// Prepare checks the budget, the settings and the rows' shape, and finds
// the noise multiplier; the run itself is made by Release, from its source.
func (m method) Prepare(ctx context.Context, rows release.Rows, b dp.Budget) (release.Prepared, error) {
	n, d, err := release.CheckPrepare(m, rows, b)
	if err != nil {
		return nil, err
	}
	if len(rows.Y) != n {
		return nil, fmt.Errorf("%w: %d training rows, %d labels", release.ErrConfig, n, len(rows.Y))
	}
	if err := b.CheckRows(n, "row"); err != nil {
		return nil, err
	}
	cfg := withClip(rows.Config)
	if cfg.Batch == 0 {
		cfg.Batch = 1
	}
	if cfg.Passes == 0 {
		cfg.Passes = 10
	}
	cfg.SkipObjective = true
	cal, err := calibrate(b, n, cfg.Batch, cfg.Passes, PLDAccountant)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", release.ErrConfig, err)
	}
	rows.Config = cfg
	p := &prepared{rows: rows, tr: tr, cal: cal, budget: b, k: cfg.Loss.Outputs(cfg.Classes), d: d}
	p.Fresh = release.NewFresh("DP-SGD run", p.draw)
	return p, nil
}

// prepared is a calibrated DP-SGD run waiting for its release.
type prepared struct {
	rows   release.Rows
	tr     *trainer.Trainer
	cal    calibration
	budget dp.Budget
	k, d   int

	*release.Fresh // Release once, and the holds of a selection
}

func (p *prepared) Mechanism() dp.Mechanism { return perturb.DPSGD }
func (p *prepared) Budget() dp.Budget       { return p.budget }
func (p *prepared) Shape() (int, int)       { return p.k, p.d }
func (p *prepared) Describe() string {
	return "a DP-SGD run (noise in every step) on the training part"
}
func (p *prepared) Stability() *stability.Report { return nil }

// draw makes a DP-SGD run with the randomness of src.
func (p *prepared) draw(ctx context.Context, src perturb.Source, extra []string) (*release.Outcome, error) {
	if src == nil {
		src = perturb.Secure()
	}
	coins, err := coins(src)
	if err != nil {
		return nil, err
	}
	model, run, err := p.tr.TrainDPSGD(ctx, p.rows.X, p.rows.Y, trainer.DPSGD{NoiseMultiplier: p.cal.sigma, Noise: src, Coins: coins})
	if err != nil {
		return nil, err
	}
	notes := append(slices.Clone(p.rows.Notes), extra...)
	cert, err := certificate(p.budget, p.cal, run, perturb.SourceName(src), notes)
	if err != nil {
		return nil, err
	}
	// As every release: the weights' hash with every zero +0 (a verifier
	// refuses a -0), the noise seed of a seeded source.
	dp.PositiveZeros(model.W)
	cert.NoiseSeed = perturb.NoiseSeed(src)
	cert.WeightsSHA256 = dp.WeightsSHA256(model.W)
	return &release.Outcome{Model: model, Certificate: cert, Stats: run.Stats}, nil
}

// coinSalt keys the sampling coins of a seeded release apart from its noise.
const coinSalt = 0x64702d736764_636f // "dp-sgd co"

// coins returns the source of the Poisson coins for src: ChaCha8 (a
// cryptographically strong generator, math/rand/v2) keyed by 32 bytes of
// crypto/rand for the secure source, by the seed for a seeded one.
func coins(src perturb.Source) (rand.Source, error) {
	var key [32]byte
	switch src.Kind() {
	case perturb.SourceSecure:
		if _, err := crand.Read(key[:]); err != nil {
			return nil, err
		}
	case perturb.SourceSeeded:
		seed := perturb.NoiseSeed(src)
		if seed == nil {
			return nil, fmt.Errorf("%w: a seeded source without its seed", release.ErrConfig)
		}
		binary.LittleEndian.PutUint64(key[:], *seed)
		binary.LittleEndian.PutUint64(key[8:], coinSalt)
	default:
		return nil, fmt.Errorf("%w: dp-sgd draws its sampling coins from the secure or a seeded source, not %q", release.ErrConfig, src.Kind())
	}
	return rand.NewChaCha8(key), nil
}

// Trained runs SGD without noise with the same knobs (a permutation per
// pass, not Poisson sampling) and calls f with its weights: a non-private
// diagnostic of what the noise costs. It fails after Release.
func (p *prepared) Trained(ctx context.Context, f func(*trainer.Model, trainer.Stats)) error {
	released := fmt.Errorf("%w: the DP-SGD run was released; no non-private run is made after it", release.ErrReleased)
	return p.IfUnreleased(released, func() error {
		m, run, err := p.tr.Train(ctx, p.rows.X, p.rows.Y)
		if err != nil {
			return err
		}
		f(m, run.Stats)
		return nil
	})
}
