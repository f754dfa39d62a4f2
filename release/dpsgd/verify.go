package dpsgd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// certificate returns the certificate of a DP-SGD release at b with
// the calibration cal and the run record run (its statistics withheld),
// without the weights' hash and the noise seed: a function of published
// constants, which Rebuild calls too.
func certificate(b dp.Budget, cal calibration, run *trainer.Run, source string, notes []string) (*release.Certificate, error) {
	r := *run
	r.Stats = trainer.Stats{}
	if run.DPSGD == nil {
		return nil, fmt.Errorf("%w: the run record has no DP-SGD constants", release.ErrConfig)
	}
	rec := *run.DPSGD
	rep := cal.replaceOne()
	rec.Accountant, rec.Conversion, rec.Order = cal.acct, "", 0
	citation := PLDCitation
	accounted := fmt.Sprintf("the accountant (%s) gives (%v, %v) for add/remove-one neighbours (the larger of its two directions)", cal.acct, cal.eps, cal.target.Delta)
	if cal.acct == RDPAccountant {
		rec.Conversion, rec.Order = conversion.String(), cal.order
		citation = RDPCitation
		accounted = fmt.Sprintf("the accountant (%s, %s conversion) gives (%v, %v) for add/remove-one neighbours at order %v", cal.acct, rec.Conversion, cal.eps, cal.target.Delta, rec.Order)
	}
	rec.AddRemoveEpsilon, rec.AddRemoveDelta = cal.eps, cal.target.Delta
	rec.ReplaceOneEpsilon, rec.ReplaceOneDelta = rep.Epsilon, rep.Delta
	rec.NeighbouringPolicy = Neighbours
	r.DPSGD = &rec
	C := run.Clip
	c := &release.Certificate{Claim: dp.Claim{
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
		fmt.Sprintf("%s; %s, (%v, %v) <= (%v, %v)", accounted, Neighbours, rep.Epsilon, rep.Delta, b.Epsilon, b.Delta),
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

// configOf returns the trainer settings a DP-SGD run record states.
func configOf(run *trainer.Run, classes int) (trainer.Config, error) {
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
func (m method) Rebuild(c *release.Certificate, pub release.Public) (*release.Certificate, *stability.Report, error) {
	if c == nil || c.Run == nil {
		return nil, nil, fmt.Errorf("%w: the certificate has no run record", release.ErrConfig)
	}
	run := c.Run
	if run.DPSGD == nil {
		return nil, nil, errors.New("a dp-sgd run record without its dp_sgd constants")
	}
	cfg, err := configOf(run, pub.Classes)
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
		auto, _, err := m.AutoScaled(cfg, run.N, pub.D, b, scaleOf(pub))
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
	cal, err := calibrateAt(b, run.N, cfg.Batch, cfg.Passes, run.DPSGD.Accountant, q)
	if err != nil {
		return nil, nil, err
	}
	if cal, err = cal.matchFile(run.DPSGD.NoiseMultiplier, run.DPSGD.AddRemoveEpsilon); err != nil {
		return nil, nil, err
	}
	want, err := runRecord(cfg, run.N, run.D, cal.sigma)
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
	cert, err := certificate(b, cal, want, c.Source, notes)
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

// runRecord returns the run record that trainer.TrainDPSGD writes
// for cfg on n rows of d inputs at the noise multiplier sigma (without the
// accountant's fields): the loss constants, the steps of every pass and
// the DP-SGD constants, from public values alone.
func runRecord(cfg trainer.Config, n, d int, sigma float64) (*trainer.Run, error) {
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
func (method) CheckWeights(_ *release.Certificate, pub release.Public, w []float64) error {
	if len(w) != pub.K*pub.D {
		return fmt.Errorf("%w: %d weights for %d x %d", release.ErrConfig, len(w), pub.K, pub.D)
	}
	if i := check.FirstNonFinite(w); i >= 0 {
		return fmt.Errorf("%w: weight %d is %v", release.ErrConfig, i, w[i])
	}
	return nil
}

// scaleOf returns pub's AutoScale, 1 when it is 0.
func scaleOf(pub release.Public) float64 {
	if pub.AutoScale == 0 {
		return 1
	}
	return pub.AutoScale
}
