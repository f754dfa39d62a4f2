package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/clip"
	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
)

// SamplingPoisson is the Run.Sampling of a DP-SGD run (TrainDPSGD).
const SamplingPoisson = "Poisson: each row in each step independently with probability q, b/n rounded down to a multiple of 2^-64 (exactly, by geometric gaps between the rows drawn); sums divided by the expected batch b"

// GaussianNoise adds the Gaussian noise of a DP-SGD step: every w[i] gets
// an independent N(0, sigma^2) draw. perturb.Source implements it.
type GaussianNoise interface {
	AddGaussian(w []float64, sigma float64) error
}

// NormalFiller is a GaussianNoise that also draws standard normal
// deviates in bulk: FillNormal sets every z[i] to an independent N(0, 1)
// draw. A DP-SGD run whose noise has it adds sigma C z_i to every
// coordinate of a step's sum, z drawn in blocks (the law of AddGaussian,
// without a call per step), and with no L1 part, no projection and the
// last iterate it merges the noise of the steps without rows into the
// next draw (exact in law: see dpsgdRun.mergedStep). perturb.Seeded's
// source has it; the secure source does not (its AddGaussian rounds each
// step's noisy sum to a lattice, part of the mechanism that a merged draw
// would change).
type NormalFiller interface {
	GaussianNoise
	FillNormal(z []float64)
}

// DPSGD is what a DP-SGD run (TrainDPSGD) needs beside its Config: the
// noise multiplier and the two sources of its randomness, both part of the
// mechanism (for a release they must be secure).
type DPSGD struct {
	// NoiseMultiplier is sigma > 0, finite: each step adds N(0, (sigma
	// C)^2) to every coordinate of its sum of clipped gradients, C the
	// Config's Clip.
	NoiseMultiplier float64
	// Noise draws the Gaussian noise of every step. Required. If it is
	// a NormalFiller, the run draws with FillNormal.
	Noise GaussianNoise
	// Coins draws the Poisson sampling: 64 uniform bits per Uint64.
	// Required.
	Coins rand.Source
}

// DPSGDRecord holds the constants of a DP-SGD run in its Run record
// (Run.DPSGD): the sample rate q = PoissonRate(n, b) (b/n rounded down to
// a multiple of 2^-64, the probability the batches are drawn with), the
// noise multiplier sigma, the
// standard deviation sigma*C of the noise on each step's sum, and the
// number of steps T = passes * ceil(n/b). The accountant's fields are set
// by the release that accounts for the run (package release); the trainer
// leaves them empty. Every field is public: a function of the settings, n
// and the budget.
type DPSGDRecord struct {
	SampleRate      float64 `json:"sample_rate"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	NoiseStd        float64 `json:"noise_std"`
	Steps           int     `json:"steps"`
	// Accountant names the accountant and its orders, Conversion its
	// conversion to (eps, delta), and AddRemove the (eps, delta) it gives
	// for add/remove-one neighbours at the order Order.
	Accountant         string  `json:"accountant,omitempty"`
	Conversion         string  `json:"conversion,omitempty"`
	Order              float64 `json:"order,omitempty"`
	AddRemoveEpsilon   float64 `json:"add_remove_epsilon,omitempty"`
	AddRemoveDelta     float64 `json:"add_remove_delta,omitempty"`
	ReplaceOneEpsilon  float64 `json:"replace_one_epsilon,omitempty"`
	ReplaceOneDelta    float64 `json:"replace_one_delta,omitempty"`
	NeighbouringPolicy string  `json:"neighbouring_policy,omitempty"`
}

// CheckDPSGD returns an error wrapping ErrConfig for the settings of cfg
// that a DP-SGD run does not take: no loss (a user graph model), an engine
// other than Native, no clipping norm (Clip must be > 0: it bounds every
// example's gradient), s-dropout, a tolerance (its stopping pass depends
// on the data) and the Custom schedule (its steps cannot be recomputed
// from a file).
func CheckDPSGD(cfg Config) error {
	var bad []string
	switch {
	case cfg.Loss == nil || cfg.Model != nil:
		bad = append(bad, "a user graph model (DP-SGD runs the built-in GLM losses)")
	case cfg.Engine != Native:
		bad = append(bad, "the "+cfg.Engine.String()+" engine (DP-SGD runs on the native engine)")
	}
	if !check.Positive(cfg.Clip) {
		bad = append(bad, fmt.Sprintf("clip G = %v (DP-SGD needs a finite clipping norm C > 0)", cfg.Clip))
	}
	if cfg.Dropout != 0 && cfg.Dropout != 1 {
		bad = append(bad, "s-dropout")
	}
	if cfg.Tolerance != 0 {
		bad = append(bad, "a tolerance (its stopping pass depends on the data)")
	}
	if cfg.Schedule == Custom {
		bad = append(bad, "the custom schedule (a file's steps could not be recomputed)")
	}
	if len(bad) == 0 {
		return nil
	}
	s := bad[0]
	for _, b := range bad[1:] {
		s += ", " + b
	}
	return fmt.Errorf("%w: DP-SGD does not take %s", ErrConfig, s)
}

// TrainDPSGD runs DP-SGD (Abadi et al. 2016, "Deep Learning with
// Differential Privacy", Algorithm 1) on the rows of X with labels y: T =
// Passes * ceil(n/b) steps, b = Batch the expected batch. Step t
//
//   - includes each row independently with probability q =
//     PoissonRate(n, b), b/n rounded down to a multiple of 2^-64 (Poisson
//     sampling by PoissonSampler, from priv.Coins: exactly that law, in
//     expected O(qn + 1) time, and the coins never depend on the rows);
//   - sums the included examples' gradients l'(<w, x_i>, y_i) x_i^T, each
//     clipped to L2 norm C = Clip: the exact norm of the rounded products
//     the sum adds is at most C (internal/clip, which lowers the scale
//     C/||g x|| until a bound on that norm holds);
//   - adds N(0, (sigma C)^2) to every coordinate of the sum (priv.Noise;
//     a NormalFiller's noise of the steps without rows may come merged
//     into one draw, with the same law of the weights returned);
//   - makes the Config's step (Step.Update): the decay of the L2 part, the
//     sum divided by b, the expected batch (b is public; dividing by the
//     realized batch size would publish it), the L1 part's soft
//     thresholding and the projection onto ||w|| <= R, all data-independent
//     maps of the noisy sum.
//
// It returns the last iterate, or the average of the iterates with
// Average (post-processing either way), and the Run record with
// Run.Sampling = SamplingPoisson and Run.DPSGD filled but for the
// accountant. Given the outputs of steps 1..t-1, the sum of step t
// changes by at most C in L2 norm when a row is added or removed, and by
// at most 2C when one is replaced: the privacy of the run is that of T
// adaptive steps of the Poisson-subsampled Gaussian mechanism (package
// accountant). The rows are clipped to Kappa first, as Train clips them.
// Errors wrap ErrConfig (CheckDPSGD, sigma, missing sources) or ErrData.
func (t *Trainer) TrainDPSGD(ctx context.Context, X mat.Matrix, y []float64, priv DPSGD) (*Model, *Run, error) {
	return t.trainDPSGD(ctx, X, y, priv, nil)
}

// dpsgdHook is a test-only hook: called after the clipped sum of step t
// is computed and before its noise, with the weights the gradients were
// taken at, the indices of the batch and the sum (all read only).
type dpsgdHook func(t int, w []float64, batch []int, sum []float64)

func (t *Trainer) trainDPSGD(ctx context.Context, X mat.Matrix, y []float64, priv DPSGD, hook dpsgdHook) (*Model, *Run, error) {
	start := time.Now()
	if err := CheckDPSGD(t.cfg); err != nil {
		return nil, nil, err
	}
	switch {
	case !check.Positive(priv.NoiseMultiplier):
		return nil, nil, fmt.Errorf("%w: noise multiplier %v, want finite > 0", ErrConfig, priv.NoiseMultiplier)
	case priv.Noise == nil || priv.Coins == nil:
		return nil, nil, fmt.Errorf("%w: DP-SGD needs a noise source and a source of sampling coins", ErrConfig)
	}
	p, err := t.newProblem(X, y)
	if err != nil {
		return nil, nil, err
	}
	r := newDPSGDRun(p, priv)
	r.hook = hook
	if hook != nil {
		r.merge = false // the hook reads the weights of every step
	}
	for step := 1; step <= r.steps; step++ {
		if step%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if err := r.step(step); err != nil {
			return nil, nil, err
		}
	}
	r.settle()
	run := p.run
	run.Sampling = SamplingPoisson
	run.DPSGD = &DPSGDRecord{SampleRate: r.q, NoiseMultiplier: priv.NoiseMultiplier, NoiseStd: r.std, Steps: r.steps}
	run.PassMaxStep, run.PassMinStep = make([]float64, run.Passes), make([]float64, run.Passes)
	m := run.StepsPerPass
	for j := range run.Passes {
		// The schedules other than Custom are non-increasing in t.
		run.PassMaxStep[j], _ = p.sgd.Eta(j*m + 1)
		run.PassMinStep[j], _ = p.sgd.Eta((j + 1) * m)
	}
	run.Stats.PassesDone = run.Passes
	run.Stats.Duration = time.Since(start)
	w := r.w
	if r.avg != nil {
		w = r.avg
	}
	return &Model{Loss: run.Loss, Task: p.loss.Task(), K: p.k, D: p.d, W: w}, run, nil
}

// dpsgdRun is the state of a DP-SGD run.
type dpsgdRun struct {
	p       *problem
	coins   *PoissonSampler
	noise   GaussianNoise
	normal  NormalFiller // noise as a NormalFiller, or nil
	zbuf    []float64    // a block of standard normals from normal
	zpos    int          // the first of zbuf not used yet
	unfused bool         // test-only: step by step (clippedSum, addNoise, Step.Update), not the fused steps
	// merge: the noise waits while the batches are empty (mergedStep);
	// the weights are then scale w + N(0, v) on every coordinate.
	merge    bool
	scale, v float64
	hook     dpsgdHook     // test-only, nil in a run
	margin   losses.Margin // the scalar view of a K = 1 loss, nil for K > 1
	bound    clip.Bound    // C for the K d products of a gradient
	q        float64       // PoissonRate(n, b)
	std      float64       // sigma*C
	steps    int           // T
	batch    []int         // the rows of the current step
	ahead    [][]int       // the batches of the next aheadSteps steps (1 above aheadBatch), a ring
	head     int           // the ring's slot of the next step
	w, avg   []float64
	sum      []float64
	z, g     []float64
	gb       []float64 // marginSum's margins and derivatives of a chunk
}

func newDPSGDRun(p *problem, priv DPSGD) *dpsgdRun {
	b := p.cfg.Batch
	coins := NewPoissonSampler(priv.Coins, p.n, b)
	r := &dpsgdRun{
		p: p, coins: coins, noise: priv.Noise, q: coins.Rate(),
		std:   priv.NoiseMultiplier * p.cfg.Clip,
		steps: p.cfg.Passes * p.run.StepsPerPass,
		batch: make([]int, 0, 2*b+64),
		w:     make([]float64, p.k*p.d), sum: make([]float64, p.k*p.d),
		z: make([]float64, p.k), g: make([]float64, p.k),
		bound: clip.New(p.cfg.Clip, p.k*p.d),
	}
	// The batches are drawn steps ahead, in the coins' order: the same
	// batches, with time to hint their rows (step). Above aheadBatch one
	// step ahead is time enough and a ring of aheadSteps batches would
	// hold many rows.
	r.ahead = make([][]int, aheadSteps)
	if b > aheadBatch {
		r.ahead = r.ahead[:1]
	}
	for j := range r.ahead {
		r.ahead[j] = coins.Sample(make([]int, 0, 2*b+64))
	}
	if nf, ok := priv.Noise.(NormalFiller); ok {
		r.normal = nf
		r.zbuf = make([]float64, max(normalBlock, len(r.sum)))
		r.zpos = len(r.zbuf)
		// The update is affine in w (no L1 part, no projection) and only
		// the last iterate is released: the noise can wait (mergedStep).
		r.merge = p.sgd.l1 == 0 && p.sgd.radius == 0 && !p.cfg.Average
		r.scale = 1
	}
	if p.k == 1 {
		r.margin, _ = p.loss.(losses.Margin)
		r.gb = make([]float64, dpsgdChunk)
	}
	if p.cfg.Average {
		r.avg = make([]float64, len(r.w))
	}
	return r
}

// step makes step t of the run: the batch, its clipped sum, the noise
// and the update.
func (r *dpsgdRun) step(t int) error {
	p := r.p
	d := p.d
	// This step's batch was drawn len(r.ahead) steps ago; draw the one
	// len(r.ahead) steps on in its slot and hint its first dpsgdChunk
	// rows: all of them at b <= aheadBatch, where a step is too short for
	// a row to arrive in time; above it, marginSum hints the others a
	// chunk ahead.
	next := r.coins.Sample(r.batch)
	r.batch, r.ahead[r.head] = r.ahead[r.head], next
	if r.head++; r.head == len(r.ahead) {
		r.head = 0
	}
	for _, i := range next[:min(len(next), dpsgdChunk)] {
		kernel.PrefetchExample(&p.x[i*d], d, &p.norm[i], &p.y[i])
	}
	eta, err := p.sgd.Eta(t)
	if err != nil {
		return err
	}
	switch {
	case r.merge && !r.unfused:
		r.mergedStep(eta)
		return nil
	case r.normal != nil && !r.unfused && r.hook == nil && r.margin != nil && len(r.batch) == 1:
		r.noisyOneRow(eta)
	default:
		r.clippedSum()
		if r.hook != nil {
			r.hook(t, r.w, r.batch, r.sum)
		}
		switch {
		case r.normal != nil && !r.unfused:
			r.noisyUpdate(eta, r.normals())
		case r.unfused:
			if err := r.addNoise(); err != nil {
				return fmt.Errorf("trainer: the noise of DP-SGD step %d: %w", t, err)
			}
			p.sgd.Update(r.w, eta, r.sum)
		default:
			if err := r.addNoise(); err != nil {
				return fmt.Errorf("trainer: the noise of DP-SGD step %d: %w", t, err)
			}
			r.update(eta)
		}
	}
	if r.avg != nil {
		p.sgd.Average(r.avg, r.w, t)
	}
	return nil
}

// At an expected batch b <= aheadBatch a run draws its batches aheadSteps
// steps ahead of the step that uses them, above it one step ahead
// (dpsgdRun.ahead).
const (
	aheadBatch = 4
	aheadSteps = 8
)

// normalBlock is how many standard normals a run draws at a time from a
// NormalFiller (more if a step's sum is longer).
const normalBlock = 1024

// addNoise adds N(0, (sigma C)^2) to every coordinate of the sum: sigma C
// z_i, z_i the next standard normals of the block, from a NormalFiller
// (a fresh block when fewer are left than the sum has coordinates: the
// ones left are never used), else by AddGaussian.
func (r *dpsgdRun) addNoise() error {
	if r.normal == nil {
		return r.noise.AddGaussian(r.sum, r.std)
	}
	z := r.normals()
	std := r.std
	for i := range r.sum {
		r.sum[i] += float64(std * z[i])
	}
	return nil
}

// normals returns the next len(r.sum) standard normals of the block of a
// NormalFiller (see addNoise).
func (r *dpsgdRun) normals() []float64 {
	if len(r.zbuf)-r.zpos < len(r.sum) {
		r.normal.FillNormal(r.zbuf)
		r.zpos = 0
	}
	z := r.zbuf[r.zpos : r.zpos+len(r.sum)]
	r.zpos += len(r.sum)
	return z
}

// mergedStep makes a step of size eta of a run that merges the noise of
// the steps without rows (dpsgdRun.merge: a NormalFiller, no L1 part, no
// projection, the last iterate released). The weights are held as scale w
// + sqrt(v) zeta, zeta a standard normal vector not drawn yet. A step
// whose batch is empty only updates the constants: the step maps the
// weights to a (scale w + sqrt(v) zeta) - c sigma C z' (a = 1 - eta mu
// the decay, c = eta/b, z' its noise), so scale becomes a scale and v
// becomes a^2 v + (c sigma C)^2. A step with rows first draws the waiting
// noise (settle), then takes the clipped sum at those weights and moves
// them by Step.Update without noise, whose part (c sigma C)^2 starts the
// next wait.
//
// The law is exact: between two steps with rows the update is affine in
// the weights with constants fixed in advance (the schedule's step, b,
// the decay; with no L1 part the soft thresholding is the identity and
// there is no projection), so the weights that the next step with rows
// reads, or the run returns, are the deterministic part plus a sum of the
// noises drawn since, each scaled by a constant: a Gaussian vector with
// independent coordinates of variance v, independent of everything
// before, since those noises are read nowhere else. Drawing it as one
// normal per coordinate gives the same joint law of the batches (the
// coins never see the noise), the weights every gradient is taken at and
// the weights returned as the step-by-step run, in exact arithmetic. Only
// the last iterate is released, and the run record holds no iterate and
// no batch size (its time grows with the batches, a timing channel the
// certificates already leave out), so the release has the law of the
// step-by-step run and its accountant's guarantee (TestDPSGDMergedLaw). A
// step without rows costs no pass over the weights; a step with one row
// and a K = 1 loss costs two (oneRow).
func (r *dpsgdRun) mergedStep(eta float64) {
	s := &r.p.sgd
	c := float64(s.sumScale(eta) * r.std)
	if len(r.batch) == 0 {
		a, _ := s.decay(eta)
		r.scale *= a
		r.v = float64(float64(a*a)*r.v) + float64(c*c)
		return
	}
	if len(r.batch) == 1 && r.margin != nil {
		r.oneRow(eta)
	} else {
		r.settle()
		r.clippedSum()
		r.update(eta)
	}
	r.v = c * c
}

// oneRow is the settle, clipped sum and Update of mergedStep for a batch
// of one row and a K = 1 loss, in two passes over the weights: the
// settling with the row's margin, then the move. It makes the operations
// of clippedSum and Update on each weight (the product g x_j rounded, then
// the decay and the move; the soft thresholding at 0 is the identity),
// but for the margin, whose products are summed in four chains.
func (r *dpsgdRun) oneRow(eta float64) {
	p := r.p
	i, d := r.batch[0], p.d
	x := p.x[i*d : (i+1)*d]
	w := r.w[:d]
	var m0, m1, m2, m3 float64
	if r.v == 0 && r.scale == 1 {
		m0 = dot(w, x)
	} else {
		z := r.normals()[:d]
		sd, a := math.Sqrt(r.v), r.scale
		j := 0
		for ; j+4 <= d; j += 4 {
			w0 := float64(a*w[j]) + float64(sd*z[j])
			w1 := float64(a*w[j+1]) + float64(sd*z[j+1])
			w2 := float64(a*w[j+2]) + float64(sd*z[j+2])
			w3 := float64(a*w[j+3]) + float64(sd*z[j+3])
			w[j], w[j+1], w[j+2], w[j+3] = w0, w1, w2, w3
			m0 += float64(w0 * x[j])
			m1 += float64(w1 * x[j+1])
			m2 += float64(w2 * x[j+2])
			m3 += float64(w3 * x[j+3])
		}
		for ; j < d; j++ {
			w[j] = float64(a*w[j]) + float64(sd*z[j])
			m0 += float64(w[j] * x[j])
		}
		r.scale, r.v = 1, 0
	}
	g := r.margin.Deriv((m0+m1)+(m2+m3), p.y[i])
	if !r.bound.Fast(math.Abs(g) * p.norm[i]) {
		g = r.scaleMargin(g, x)
	}
	s := &p.sgd
	a, _ := s.decay(eta)
	c := s.sumScale(eta)
	for j, xj := range x {
		w[j] = float64(a*w[j]) - float64(c*float64(g*xj))
	}
}

// settle draws the noise a merging run has deferred: w = scale w +
// sqrt(v) z, z the next standard normals of the block. It does nothing
// otherwise.
func (r *dpsgdRun) settle() {
	if !r.merge || r.v == 0 && r.scale == 1 {
		return
	}
	z := r.normals()
	sd, a := math.Sqrt(r.v), r.scale
	w := r.w[:len(z)]
	for j := range w {
		w[j] = float64(a*w[j]) + float64(sd*z[j])
	}
	r.scale, r.v = 1, 0
}

// noisyUpdate is addNoise with the normals z followed by Step.Update of
// size eta, with the same operations on each weight
// (TestDPSGDNoisyUpdateBits): the noisy coordinate sum_j + sigma C z_j,
// then update's decay, move, soft thresholding and projection.
func (r *dpsgdRun) noisyUpdate(eta float64, z []float64) {
	std := r.std
	z = z[:len(r.sum)]
	for j := range r.sum {
		r.sum[j] += float64(std * z[j])
	}
	r.update(eta)
}

// noisyOneRow is clippedSum, noisyUpdate and their bits for a batch of
// one row, a K = 1 loss and a NormalFiller (TestDPSGDNoisyUpdateBits):
// the row's margin by dot, its derivative clipped as clippedSum clips it,
// the sum 0 + g x_j (the clear, then axpy's product added) with the noise
// sigma C z_j in one pass, then update.
func (r *dpsgdRun) noisyOneRow(eta float64) {
	p := r.p
	i, d := r.batch[0], p.d
	x := p.x[i*d : (i+1)*d]
	g := r.margin.Deriv(dot(r.w[:d], x), p.y[i])
	if !r.bound.Fast(math.Abs(g) * p.norm[i]) {
		g = r.scaleMargin(g, x)
	}
	z := r.normals()[:d]
	sum, std := r.sum[:d], r.std
	for j, xj := range x {
		var zero float64 // the cleared sum: 0 + (-0) is +0
		sum[j] = float64(zero+float64(g*xj)) + float64(std*z[j])
	}
	r.update(eta)
}

// update is Step.Update(r.w, eta, r.sum) with its bits: the decay, the
// move by the sum and the soft thresholding by kernel.ShrinkDot (whose
// weights are kernel.Shrink's, four at a time; the margin it returns is
// not needed), then the projection.
func (r *dpsgdRun) update(eta float64) {
	s := &r.p.sgd
	a, thr := s.decay(eta)
	kernel.ShrinkDot(r.w, r.sum, a, s.sumScale(eta), thr, r.sum)
	s.project(r.w)
}

// dpsgdAhead is how many examples ahead clippedSum hints the rows.
const dpsgdAhead = 8

// clippedSum sets r.sum to the sum over the batch of the gradients of the
// loss at r.w, each clipped to norm C: the margin gradient g is taken as
// is when clip.Bound.Fast accepts ||g|| ||x|| (from the row's norm), and
// scaled by clip.Bound.Scale otherwise, so that the products g_k x_j added
// have exact norm at most C.
func (r *dpsgdRun) clippedSum() {
	p := r.p
	clear(r.sum)
	if r.margin != nil && gonumDdotPairs {
		r.marginSum()
		return
	}
	d := p.d
	for j, i := range r.batch {
		if j+dpsgdAhead < len(r.batch) {
			// The batch is spread over the rows: hint the row, norm and
			// label a few examples ahead (kernel.PrefetchExample).
			a := r.batch[j+dpsgdAhead]
			kernel.PrefetchExample(&p.x[a*d], d, &p.norm[a], &p.y[a])
		}
		x := p.x[i*d : (i+1)*d]
		if r.margin != nil {
			g := r.margin.Deriv(dot(r.w, x), p.y[i])
			if !r.bound.Fast(math.Abs(g) * p.norm[i]) {
				g = r.scaleMargin(g, x)
			}
			axpy(g, x, r.sum)
			continue
		}
		for k := range r.z {
			r.z[k] = dot(r.w[k*d:(k+1)*d], x)
		}
		p.loss.Grad(r.g, r.z, p.y[i])
		if !r.bound.Fast(math.Sqrt(sqNorm(r.g)) * p.norm[i]) {
			r.bound.Scale(r.g, x)
		}
		for k, gk := range r.g {
			axpy(gk, x, r.sum[k*d:(k+1)*d])
		}
	}
}

// marginSum is clippedSum for a K = 1 loss where kernel.DotsAt gives the
// bits of dot (gonumDdotPairs), a chunk of dpsgdChunk rows at a time: the
// margins of the chunk (kernel.DotsAt, which hints the next chunk's rows),
// their derivatives, each clipped as clippedSum clips it, and the sum
// (kernel.AddRowsAt, the bits of axpy row after row in the batch's
// order). The margins and derivatives of a chunk do not wait on each
// other, and the result has clippedSum's bits.
func (r *dpsgdRun) marginSum() {
	p := r.p
	d, n := p.d, len(r.batch)
	w, x, norm, y := r.w[:d], p.x, p.norm, p.y
	for c0 := 0; c0 < n; c0 += dpsgdChunk {
		c1 := min(c0+dpsgdChunk, n)
		rows := r.batch[c0:c1]
		ahead := r.batch[c1:min(c1+dpsgdChunk, n)]
		g := r.gb[:len(rows)]
		kernel.DotsAt(g, w, x, d, rows, ahead)
		kernel.HintAt(norm, ahead)
		kernel.HintAt(y, ahead)
		for q, i := range rows {
			gq := r.margin.Deriv(g[q], y[i])
			if !r.bound.Fast(math.Abs(gq) * norm[i]) {
				gq = r.scaleMargin(gq, x[i*d:(i+1)*d])
			}
			g[q] = gq
		}
		kernel.AddRowsAt(r.sum[:d], g, x, d, rows)
	}
}

// dpsgdChunk is how many rows marginSum takes through the margins, the
// derivatives and the sum at once.
const dpsgdChunk = 16

// scaleMargin returns the margin derivative g of the row x scaled by
// clip.Bound.Scale, so that the products g x_j have exact norm at most C:
// the clipping of g where clip.Bound.Fast does not accept |g| ||x||.
func (r *dpsgdRun) scaleMargin(g float64, x []float64) float64 {
	r.g[0] = g
	r.bound.Scale(r.g[:1], x)
	return r.g[0]
}
