package release

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// How a DP-SGD certificate reaches replace-one neighbours.
const (
	// DPSGDNeighbours says how a DP-SGD certificate reaches replace-one
	// neighbours from the accountant's add/remove-one guarantee.
	DPSGDNeighbours = "replace-one by group privacy of two: add/remove (eps', delta') gives replace-one (2 eps', (1 + exp(eps')) delta'); the noise is calibrated to eps' = eps/2, delta' = delta/(1 + exp(eps/2))"
)

// The automatic knobs of DP-SGD (dpsgdMethod.Auto).
const (
	dpsgdAutoClip   = 1
	dpsgdAutoPasses = 5
)

// dpsgdMethod releases the weights of a DP-SGD run (trainer.TrainDPSGD):
// Poisson sampling at q = trainer.PoissonRate(n, b) (b/n rounded down to
// a multiple of 2^-64: the rate the batches are drawn at, which the
// accountant takes), per-example clipping to C, Gaussian noise
// of standard deviation sigma C on every step's sum, T = passes ceil(n/b)
// steps. The noise multiplier sigma is the smallest that the tighter of
// two accountants (package accountant: the PLD accountant, calibrated to
// eps/2 (1 - 1e-7), or RDP of the sampled Gaussian with the improved
// conversion; the PLD one in the usual settings) finds for (eps/2,
// delta/(1 + exp(eps/2))) under add/remove-one neighbours, which gives
// (eps, delta) under replace-one neighbours, the module's relation, by
// group privacy of two (accountant.Guarantee.ReplaceOne). The certificate
// names the accountant (DPSGDPLDAccountant or DPSGDAccountant); a file
// from before the PLD accountant names RDP's and certifies as before. The
// tighter route, the sampled Gaussian at sensitivity 2C for replace-one,
// is not used: it is not proven here, and google/differential-privacy's
// dp_accounting refuses Poisson sampling under replace-one in its PLD
// accountant. (eps, delta)-DP, delta > 0.
type dpsgdMethod struct{}

func (dpsgdMethod) Name() dp.Mechanism { return perturb.DPSGD }

// SGD is false: the DP-SGD run is not an SGD run whose stability an output
// perturbation certifies, a partitioned fit cannot average it, and its
// knobs (expected batch, passes, clipping norm, step) are its own.
func (dpsgdMethod) SGD() bool { return false }

// Knobs are the SGD knobs of a DP-SGD run (KnobTaker): the expected batch,
// the passes, the step and its schedule, the clipping norm C and the
// averaging of the iterates. Any choice of them is public, so the
// accountant's calibration covers it.
func (dpsgdMethod) Knobs() []Knob {
	return []Knob{KnobPasses, KnobBatch, KnobStep, KnobSchedule, KnobClip, KnobAverage}
}

// CheckBudget requires a valid budget with delta > 0 (the Gaussian noise
// gives no pure eps) that the accountant can split into its add/remove
// target (dpsgdTarget).
func (dpsgdMethod) CheckBudget(b dp.Budget) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if b.Pure() {
		return fmt.Errorf("%w: dp-sgd is (eps, delta)-DP with Gaussian noise: give delta > 0 (well below 1/n)", dp.ErrBudget)
	}
	_, err := dpsgdTarget(b)
	return err
}

// CheckConfig refuses what trainer.CheckDPSGD refuses (a user model,
// another engine, dropout, a tolerance, the custom schedule, a clipping
// norm that is not finite and >= 0). A zero Clip means C = 1 (dpsgdClip).
func (dpsgdMethod) CheckConfig(cfg trainer.Config) error {
	if err := trainer.CheckDPSGD(dpsgdClip(cfg)); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// dpsgdAutoRule is the sentence of the automatic knobs.
const dpsgdAutoRule = "dp-sgd: clipping norm C = 1 (the gradient bound of the logistic and Huber losses on the unit ball), expected batch b = ceil(sqrt(n)), %d passes (T = %d ceil(n/b) steps), the constant step 1/beta of the loss's smoothness, the average of the iterates; lambda as given"

// Auto sets the knobs of dpsgdAutoRule from n alone: C = 1, b =
// ceil(sqrt(n)), 5 passes, the constant step 1/beta (Eta 0), iterate
// averaging, no dropout, projection or tolerance. lambda is kept: its
// gradient is data-independent and costs no privacy.
func (m dpsgdMethod) Auto(cfg trainer.Config, n, dim int, b dp.Budget) (trainer.Config, string, error) {
	return m.AutoScaled(cfg, n, dim, b, 1)
}

// AutoScaled is Auto with lambda multiplied by scale.
func (dpsgdMethod) AutoScaled(cfg trainer.Config, n, dim int, b dp.Budget, scale float64) (trainer.Config, string, error) {
	if err := checkScale(scale); err != nil {
		return cfg, "", err
	}
	if n < 1 || dim < 1 {
		return cfg, "", fmt.Errorf("%w: automatic knobs for n = %d, dim = %d", ErrConfig, n, dim)
	}
	cfg.Clip = dpsgdAutoClip
	cfg.Batch = min(n, int(math.Ceil(math.Sqrt(float64(n)))))
	cfg.Passes = dpsgdAutoPasses
	cfg.Schedule, cfg.Eta, cfg.StepFunc = trainer.Constant, 0, nil
	cfg.Average = true
	cfg.Dropout, cfg.Radius, cfg.Tolerance = 0, 0, 0
	cfg.Reg.Lambda *= scale
	rule := fmt.Sprintf(dpsgdAutoRule, dpsgdAutoPasses, dpsgdAutoPasses)
	if scale != 1 {
		rule = fmt.Sprintf("%g times the given lambda; ", scale) + rule
	}
	return cfg, rule, nil
}

// NoiseRatio is +Inf: the noise enters every step, and no bound on the
// noiseless weights is at hand, so the forecast of noise against weights
// does not apply; Predict never picks dp-sgd among other methods.
func (dpsgdMethod) NoiseRatio(trainer.Config, int, int, dp.Budget) (float64, error) {
	return math.Inf(1), nil
}

// dpsgdClip returns cfg with the clipping norm C = 1 when Clip is zero:
// DP-SGD always clips, and the trainer's zero means no clipping.
func dpsgdClip(cfg trainer.Config) trainer.Config {
	if cfg.Clip == 0 {
		cfg.Clip = dpsgdAutoClip
	}
	return cfg
}

// dpsgdTarget returns the add/remove-one budget whose replace-one
// consequence is within b: (eps/2, delta/(1 + exp(eps/2))), its delta
// lowered by ulps until (1 + exp(eps/2)) delta' <= delta in floating point.
func dpsgdTarget(b dp.Budget) (dp.Budget, error) {
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
func (m dpsgdMethod) Prepare(ctx context.Context, rows Rows, b dp.Budget) (Prepared, error) {
	n, d, err := checkPrepare(m, rows, b)
	if err != nil {
		return nil, err
	}
	if len(rows.Y) != n {
		return nil, fmt.Errorf("%w: %d training rows, %d labels", ErrConfig, n, len(rows.Y))
	}
	if err := b.CheckRows(n, "row"); err != nil {
		return nil, err
	}
	cfg := dpsgdClip(rows.Config)
	if cfg.Batch == 0 {
		cfg.Batch = 1
	}
	if cfg.Passes == 0 {
		cfg.Passes = 10
	}
	cfg.SkipObjective = true
	cal, err := calibrateDPSGD(b, n, cfg.Batch, cfg.Passes, DPSGDPLDAccountant)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rows.Config = cfg
	p := &dpsgdPrepared{rows: rows, tr: tr, cal: cal, budget: b, k: cfg.Loss.Outputs(cfg.Classes), d: d}
	p.fresh = &fresh{what: "DP-SGD run", run: p.release}
	return p, nil
}

// dpsgdPrepared is a calibrated DP-SGD run waiting for its release.
type dpsgdPrepared struct {
	rows   Rows
	tr     *trainer.Trainer
	cal    dpsgdCalibration
	budget dp.Budget
	k, d   int

	*fresh // Release once, and the holds of a selection
}

func (p *dpsgdPrepared) Mechanism() dp.Mechanism { return perturb.DPSGD }
func (p *dpsgdPrepared) Budget() dp.Budget       { return p.budget }
func (p *dpsgdPrepared) Shape() (int, int)       { return p.k, p.d }
func (p *dpsgdPrepared) Describe() string {
	return "a DP-SGD run (noise in every step) on the training part"
}
func (p *dpsgdPrepared) Stability() *stability.Report { return nil }

// release makes a DP-SGD run with the randomness of src.
func (p *dpsgdPrepared) release(ctx context.Context, src perturb.Source, extra []string) (*Outcome, error) {
	if src == nil {
		src = perturb.Secure()
	}
	coins, err := dpsgdCoins(src)
	if err != nil {
		return nil, err
	}
	model, run, err := p.tr.TrainDPSGD(ctx, p.rows.X, p.rows.Y, trainer.DPSGD{NoiseMultiplier: p.cal.sigma, Noise: src, Coins: coins})
	if err != nil {
		return nil, err
	}
	notes := append(slices.Clone(p.rows.Notes), extra...)
	cert, err := dpsgdCertificate(p.budget, p.cal, run, perturb.SourceName(src), notes)
	if err != nil {
		return nil, err
	}
	return finish(&Outcome{Model: model, Certificate: cert, Stats: run.Stats}, src), nil
}

// coinSalt keys the sampling coins of a seeded release apart from its noise.
const coinSalt = 0x64702d736764_636f // "dp-sgd co"

// dpsgdCoins returns the source of the Poisson coins for src: ChaCha8 (a
// cryptographically strong generator, math/rand/v2) keyed by 32 bytes of
// crypto/rand for the secure source, by the seed for a seeded one.
func dpsgdCoins(src perturb.Source) (rand.Source, error) {
	var key [32]byte
	switch src.Kind() {
	case perturb.SourceSecure:
		if _, err := crand.Read(key[:]); err != nil {
			return nil, err
		}
	case perturb.SourceSeeded:
		seed := perturb.NoiseSeed(src)
		if seed == nil {
			return nil, fmt.Errorf("%w: a seeded source without its seed", ErrConfig)
		}
		binary.LittleEndian.PutUint64(key[:], *seed)
		binary.LittleEndian.PutUint64(key[8:], coinSalt)
	default:
		return nil, fmt.Errorf("%w: dp-sgd draws its sampling coins from the secure or a seeded source, not %q", ErrConfig, src.Kind())
	}
	return rand.NewChaCha8(key), nil
}

// Trained runs SGD without noise with the same knobs (a permutation per
// pass, not Poisson sampling) and calls f with its weights: a non-private
// diagnostic of what the noise costs. It fails after Release.
func (p *dpsgdPrepared) Trained(ctx context.Context, f func(*trainer.Model, trainer.Stats)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return fmt.Errorf("%w: the DP-SGD run was released; no non-private run is made after it", ErrReleased)
	}
	m, run, err := p.tr.Train(ctx, p.rows.X, p.rows.Y)
	if err != nil {
		return err
	}
	f(m, run.Stats)
	return nil
}

// dpsgdCertificate returns the certificate of a DP-SGD release at b with
// the calibration cal and the run record run (its statistics withheld),
// without the weights' hash and the noise seed: a function of published
// constants, which Rebuild calls too.
func dpsgdCertificate(b dp.Budget, cal dpsgdCalibration, run *trainer.Run, source string, notes []string) (*Certificate, error) {
	r := *run
	r.Stats = trainer.Stats{}
	if run.DPSGD == nil {
		return nil, fmt.Errorf("%w: the run record has no DP-SGD constants", ErrConfig)
	}
	rec := *run.DPSGD
	rep := cal.replaceOne()
	rec.Accountant, rec.Conversion, rec.Order = cal.acct, "", 0
	citation := DPSGDPLDCitation
	accounted := fmt.Sprintf("the accountant (%s) gives (%v, %v) for add/remove-one neighbours (the larger of its two directions)", cal.acct, cal.eps, cal.target.Delta)
	if cal.acct == DPSGDAccountant {
		rec.Conversion, rec.Order = dpsgdConversion.String(), cal.order
		citation = DPSGDCitation
		accounted = fmt.Sprintf("the accountant (%s, %s conversion) gives (%v, %v) for add/remove-one neighbours at order %v", cal.acct, rec.Conversion, cal.eps, cal.target.Delta, rec.Order)
	}
	rec.AddRemoveEpsilon, rec.AddRemoveDelta = cal.eps, cal.target.Delta
	rec.ReplaceOneEpsilon, rec.ReplaceOneDelta = rep.Epsilon, rep.Delta
	rec.NeighbouringPolicy = DPSGDNeighbours
	r.DPSGD = &rec
	C := run.Clip
	c := &Certificate{Claim: dp.Claim{
		Version:          dp.CertificateVersion,
		Private:          source == perturb.SourceSecure,
		Mechanism:        perturb.DPSGD,
		Epsilon:          b.Epsilon,
		Delta:            b.Delta,
		Dim:              run.K * run.D,
		L2Sensitivity:    C,
		SensitivityRoute: fmt.Sprintf("per-example clipping: each example's gradient is clipped to L2 norm C = %g, so a step's sum moves by at most C when a row is added or removed (2C when one is replaced), given the earlier steps' outputs", C),
		NoiseScale:       rec.NoiseStd,
		NoiseScaleName:   fmt.Sprintf("the Gaussian noise's standard deviation on every coordinate of each step's sum, sigma C (noise multiplier sigma = %v, clip C = %v)", rec.NoiseMultiplier, C),
		Neighbouring:     perturb.ReplaceOneText,
		Source:           source,
		Citation:         citation,
	}, Run: &r}
	l, err := dp.NewLedger(b, dp.Charge{Step: fmt.Sprintf("DP-SGD: %d steps of the Poisson-subsampled Gaussian (q = %v, sigma = %v)", rec.Steps, rec.SampleRate, rec.NoiseMultiplier), Mechanism: perturb.DPSGD, Epsilon: b.Epsilon, Delta: b.Delta})
	if err != nil {
		return nil, err
	}
	c.Account(l)
	sampling := fmt.Sprintf("Poisson sampling: in each of the T = %d steps every training row is in the batch independently with probability q = %v exactly (b/n = %d/%d rounded down to a multiple of 2^-64; trainer.PoissonSampler), from coins that never read the rows; each step's noisy sum is divided by the expected batch b = %d, never by the realized batch size", rec.Steps, rec.SampleRate, run.Batch, run.N, run.Batch)
	if legacyRate(run) {
		sampling = fmt.Sprintf("Poisson sampling: in each of the T = %d steps every training row is in the batch independently with probability floor(q 2^64)/2^64 <= q = %v, from coins that never read the rows; each step's noisy sum is divided by the expected batch qn = %d, never by the realized batch size", rec.Steps, rec.SampleRate, run.Batch)
	}
	c.Assumptions = []string{
		fmt.Sprintf("%s; %s, (%v, %v) <= (%v, %v)", accounted, DPSGDNeighbours, rep.Epsilon, rep.Delta, b.Epsilon, b.Delta),
		sampling,
		"the released weights are the last iterate, or the average of the iterates when the run record says averaging: post-processing of the noisy steps, as are the L2 decay, the L1 soft thresholding and the projection (data-independent maps)",
		"the claim is about the rows the trainer received: what happened to them before (preprocessing, selection of the settings) is covered only as this list states",
		"the run constants in this certificate (including n) are published in the clear",
		"the run record withholds the training time and the count of rows the trainer scaled to kappa: they are statistics of the data that the claim does not cover",
		"only one DP-SGD run on these rows is covered; another needs its own budget",
		"the running time of a step grows with the size of its batch, a timing channel outside the claim",
	}
	switch {
	case source == perturb.SourceSeeded:
		c.Assumptions = append(c.Assumptions, "the noise and the sampling coins were drawn from seeded generators and can be recomputed from the seed: not for release")
	case source == perturb.SourceSecure:
		c.Assumptions = append(c.Assumptions, perturb.SecureDPSGDNote)
	default:
		c.Assumptions = append(c.Assumptions, "the noise came from a caller-supplied source whose quality is not verified")
	}
	c.Assumptions = append(c.Assumptions, notes...)
	return c, nil
}

// dpsgdConfigOf returns the trainer settings a DP-SGD run record states.
func dpsgdConfigOf(run *trainer.Run, classes int) (trainer.Config, error) {
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return trainer.Config{}, err
	}
	var sched trainer.Schedule
	if err := sched.UnmarshalText([]byte(run.Schedule)); err != nil {
		return trainer.Config{}, err
	}
	eta := run.Eta
	if sched != trainer.Constant {
		eta = 0
	}
	return trainer.Config{
		Loss: loss, Classes: classes, Reg: regularizers.ElasticNet{Lambda: run.Lambda, L1Ratio: run.L1Ratio}, LabelBound: run.LabelBound,
		Kappa: run.Kappa, Schedule: sched, Eta: eta, Passes: run.Passes, Batch: run.Batch, Clip: run.Clip,
		Radius: run.Radius, Average: run.Average, Seed: run.Seed,
	}, nil
}

// Rebuild recomputes a DP-SGD certificate from the published run
// constants (loss, n, d, K, the knobs, the seed), the budget and the
// source: the loss constants and the steps of every pass, the noise
// multiplier by the accountant at the budget, and from it the
// accountant's eps; an edited noise multiplier, step count, sample rate
// or clipping norm makes the rebuilt certificate differ from the file's.
func (m dpsgdMethod) Rebuild(c *Certificate, pub Public) (*Certificate, *stability.Report, error) {
	run, err := certRun(c)
	if err != nil {
		return nil, nil, err
	}
	if run.DPSGD == nil {
		return nil, nil, errors.New("a dp-sgd run record without its dp_sgd constants")
	}
	cfg, err := dpsgdConfigOf(run, pub.Classes)
	if err != nil {
		return nil, nil, err
	}
	if err := m.CheckConfig(cfg); err != nil {
		return nil, nil, err
	}
	if k := cfg.Loss.Outputs(pub.Classes); k != pub.K || run.K != k || run.D != pub.D {
		return nil, nil, fmt.Errorf("%d outputs for %d classes, the run has %d x %d, the model %d x %d", k, pub.Classes, run.K, run.D, pub.K, pub.D)
	}
	b := dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	if err := m.CheckBudget(b); err != nil {
		return nil, nil, err
	}
	if pub.Auto {
		auto, _, err := m.AutoScaled(cfg, run.N, pub.D, b, pub.scaleOf())
		if err != nil {
			return nil, nil, fmt.Errorf("automatic knobs: %w", err)
		}
		if auto.Clip != cfg.Clip || auto.Batch != cfg.Batch || auto.Passes != cfg.Passes || auto.Schedule != cfg.Schedule || auto.Average != cfg.Average || auto.Radius != 0 {
			return nil, nil, fmt.Errorf("knobs C = %v, b = %d, %d passes, %s, avg %v; dp-sgd's automatic ones for n = %d: C = %v, b = %d, %d passes, %s, avg %v",
				cfg.Clip, cfg.Batch, cfg.Passes, cfg.Schedule, cfg.Average, run.N, auto.Clip, auto.Batch, auto.Passes, auto.Schedule, auto.Average)
		}
	}
	// The file's accountant calibrates again (RDP for a file without
	// one); the file's noise multiplier and eps are kept where another
	// build's rounding explains their difference (matchFile).
	q := trainer.PoissonRate(run.N, cfg.Batch)
	if legacyRate(run) {
		q = run.DPSGD.SampleRate
	}
	cal, err := calibrateDPSGDAt(b, run.N, cfg.Batch, cfg.Passes, run.DPSGD.Accountant, q)
	if err != nil {
		return nil, nil, err
	}
	if cal, err = cal.matchFile(run.DPSGD.NoiseMultiplier, run.DPSGD.AddRemoveEpsilon); err != nil {
		return nil, nil, err
	}
	want, err := dpsgdRunRecord(cfg, run.N, run.D, cal.sigma)
	if err != nil {
		return nil, nil, err
	}
	if legacyRate(run) {
		want.Sampling, want.DPSGD.SampleRate = samplingPoissonV1, q
	}
	if c.Source == perturb.SourceSeeded && c.NoiseSeed == nil {
		return nil, nil, errors.New("a seeded release without its noise seed")
	}
	notes := append(slices.Clone(pub.Notes), pub.Extra...)
	cert, err := dpsgdCertificate(b, cal, want, c.Source, notes)
	if err != nil {
		return nil, nil, err
	}
	if c.Source == perturb.SourceSeeded {
		seed := *c.NoiseSeed
		cert.NoiseSeed = &seed
	}
	// The accountant's eps at the rebuilt noise multiplier, recomputed
	// from the published constants alone.
	g, err := cal.epsilonAt(cal.sigma)
	if err != nil {
		return nil, nil, err
	}
	if r := g.replaceOne(); r.Epsilon > b.Epsilon || r.Delta > b.Delta {
		return nil, nil, fmt.Errorf("the accountant gives (%v, %v) under replace-one at the published constants, above the claim (%v, %v)", r.Epsilon, r.Delta, b.Epsilon, b.Delta)
	}
	return cert, nil, nil
}

// dpsgdRunRecord returns the run record that trainer.TrainDPSGD writes
// for cfg on n rows of d inputs at the noise multiplier sigma (without the
// accountant's fields): the loss constants, the steps of every pass and
// the DP-SGD constants, from public values alone.
func dpsgdRunRecord(cfg trainer.Config, n, d int, sigma float64) (*trainer.Run, error) {
	kappa := cfg.Kappa
	if kappa == 0 {
		kappa = 1
	}
	cons, err := cfg.Loss.Constants(losses.Domain{Kappa: kappa, Radius: cfg.Radius, LabelBound: cfg.LabelBound})
	if err != nil {
		return nil, err
	}
	mu := cfg.Reg.StrongConvexity()
	st, err := trainer.NewStep(cfg, cons.Sz*kappa*kappa+mu)
	if err != nil {
		return nil, err
	}
	eta, err := st.Eta(1)
	if err != nil {
		return nil, err
	}
	r := trainer.Run{
		Loss: cfg.Loss.Name(), Task: cfg.Loss.Task().String(), N: n, D: d, K: cfg.Loss.Outputs(cfg.Classes), Kappa: kappa,
		Lz: cons.Lz, Sz: cons.Sz, L: cons.Lz * kappa, BetaS: cons.Sz * kappa * kappa, Convex: cons.Convex,
		Lambda: cfg.Reg.Lambda, LabelBound: cfg.LabelBound, L1Ratio: cfg.Reg.L1Ratio, Mu: mu,
		Schedule: cfg.Schedule.String(), Eta: eta, Passes: cfg.Passes, Batch: cfg.Batch,
		Clip: cfg.Clip, Dropout: 1, Radius: cfg.Radius, Average: cfg.Average, Sampling: trainer.SamplingPoisson,
		Seed: cfg.Seed, Engine: trainer.Native.String(),
	}
	r, err = r.OnRows(n, cfg.Seed)
	if err != nil {
		return nil, err
	}
	r.DPSGD = &trainer.DPSGDRecord{SampleRate: trainer.PoissonRate(n, cfg.Batch), NoiseMultiplier: sigma, NoiseStd: sigma * cfg.Clip, Steps: cfg.Passes * r.StepsPerPass}
	return &r, nil
}

// CheckWeights requires K x D finite weights: the Gaussian noise of every
// step has full support, so every finite vector is a possible release.
func (dpsgdMethod) CheckWeights(_ *Certificate, pub Public, w []float64) error {
	if len(w) != pub.K*pub.D {
		return fmt.Errorf("%w: %d weights for %d x %d", ErrConfig, len(w), pub.K, pub.D)
	}
	if i := check.FirstNonFinite(w); i >= 0 {
		return fmt.Errorf("%w: weight %d is %v", ErrConfig, i, w[i])
	}
	return nil
}
