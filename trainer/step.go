package trainer

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/kernel"
)

// Step is the update of one SGD step of a Config, given the per-example
// gradients of its minibatch B_t:
//
//	v     = w - eta_t * ( (1/b) sum_{i in B_t} clip_G(g_i) + mu*w )
//	w_t+1 = proj_R( prox_{eta_t * lambda * alpha * ||.||_1}(v) )
//
// followed, when the iterates are averaged, by the running mean of the
// iterates. Its pieces, in the order of a step, are the step size eta_t of
// the schedule (Eta), the clipping of each example's gradient (ClipScale,
// Clip), the minibatch sum (Add), the move of the decay 1 - eta_t mu, the
// gradient and the soft thresholding with the projection (Update on the sum
// of a minibatch, UpdateOne on the one example of a b = 1 step), and the
// average of the iterates (Average). Each map is non-expansive for a convex
// GLM loss (docs/DESIGN.md, section 4), which the stability routes need.
// What comes before the pieces, drawing the minibatches and the s-dropout
// masks and computing the gradients, is the caller's.
//
// Every engine of the trainer makes its update with a Step, and so does
// graph.Solver in a user's own Gorgonia loop. The native engine computes
// the same update in two fused forms, with the same operations on each
// weight in the same order: for K = 1 and b = 1 without dropout or
// projection (passFused) the move of the step is fused with the margin of
// the next example (kernel.ShrinkDot), and for K = 1 and b > 1 without
// dropout (batchStep) the margins, the clipped derivatives and the sum are
// taken in parts of 16 examples and the sum is applied with
// kernel.ShrinkDot. TestStepReplaysEveryPath holds every path of the native
// engine, fused or not, to the bits of Step's pieces given the clipped
// per-example gradients the path reports; TestBatchStepBitIdentical holds
// batchStep's gradients to the bits of the example-by-example step. On
// rows of up to 256 features the margins of passFused are summed in
// ShrinkDot's order, not in dot's, so its gradients agree with the unfused
// step's within rounding (TestNativeMatchesReference), and a seeded run's
// weights are pinned by the model files of package cmd/stabpriv; on longer
// rows they are summed in dot's order (kernel.ShrinkDdot), and passFused
// gives the unfused step's bits (TestPassFusedWideMatchesStep). TestSolverMatchesTrainer in
// package graph holds graph.Solver to the weights of the trainer's runs of
// a user model bit for bit.
//
// A Step is made by NewStep and does not change afterwards: it is safe for
// concurrent use if Config.StepFunc is.
type Step struct {
	schedule Schedule
	eta      float64 // the constant step: Config.Eta, or 1/beta when it is zero
	stepFunc func(t int) float64
	beta     float64 // smoothness of the per-example objective, 0: unknown
	batch    int     // b
	clip     float64 // G, 0: none
	mu       float64 // lambda*(1-alpha)
	l1       float64 // lambda*alpha
	radius   float64 // R, 0: none
}

// NewStep returns the Step of the step knobs of cfg: Schedule, Eta,
// StepFunc, Batch, Clip, Reg and Radius, with the zero values documented on
// Config; the other fields are ignored. beta is the smoothness of the
// per-example objective, S_z*Kappa^2 + mu: the Constant schedule's step is
// 1/beta when Eta is zero, and BoundedInverseT's steps are at most 1/beta.
// beta = 0 means unknown (graph.Solver knows no loss constants): a
// Constant schedule then needs Eta > 0, and BoundedInverseT is InverseT.
// Errors wrap ErrConfig.
func NewStep(cfg Config, beta float64) (*Step, error) {
	s, err := newStep(cfg, beta)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// newStep is NewStep returning the Step itself, which a problem holds
// without an allocation of its own.
func newStep(cfg Config, beta float64) (Step, error) {
	if err := cfg.validateStep(); err != nil {
		return Step{}, err
	}
	if !check.NonNegative(beta) {
		return Step{}, fmt.Errorf("%w: smoothness beta = %v, want finite >= 0", ErrConfig, beta)
	}
	s := Step{
		schedule: cfg.Schedule, eta: cfg.Eta, stepFunc: cfg.StepFunc, beta: beta,
		batch: max(cfg.Batch, 1), clip: cfg.Clip,
		mu: cfg.Reg.StrongConvexity(), l1: cfg.Reg.L1Weight(), radius: cfg.Radius,
	}
	if s.schedule == Constant && s.eta == 0 {
		if beta == 0 {
			return Step{}, fmt.Errorf("%w: no smoothness constant to default the step size; set Eta", ErrConfig)
		}
		s.eta = 1 / beta
	}
	return s, nil
}

// validateStep checks the knobs of Config that NewStep reads.
func (c *Config) validateStep() error {
	if err := c.Reg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"eta", c.Eta}, {"clip", c.Clip}, {"radius", c.Radius}} {
		if !check.NonNegative(f.v) {
			return fmt.Errorf("%w: %s = %v, want finite >= 0", ErrConfig, f.name, f.v)
		}
	}
	if c.Batch < 0 {
		return fmt.Errorf("%w: batch = %d, want >= 0", ErrConfig, c.Batch)
	}
	switch c.Schedule {
	case Constant:
	case InverseT, BoundedInverseT:
		if c.Reg.StrongConvexity() <= 0 {
			return fmt.Errorf("%w: schedule %v needs mu = lambda*(1-l1 ratio) > 0", ErrConfig, c.Schedule)
		}
	case Custom:
		if c.StepFunc == nil {
			return fmt.Errorf("%w: custom schedule without StepFunc", ErrConfig)
		}
	default:
		return fmt.Errorf("%w: unknown schedule %v", ErrConfig, c.Schedule)
	}
	return nil
}

// Eta returns the step size eta_t of step t >= 1 (counted over the whole
// run, a short last minibatch of a pass included): Eta, 1/(mu t),
// min(1/beta, 1/(mu t)) or StepFunc(t), by the schedule. A step size that
// is not finite and positive (StepFunc's, or 1/(mu t) for t < 1) is an error
// wrapping ErrConfig.
func (s *Step) Eta(t int) (float64, error) {
	var eta float64
	switch s.schedule {
	case Constant:
		eta = s.eta
	case InverseT:
		eta = 1 / (s.mu * float64(t))
	case BoundedInverseT:
		eta = 1 / (s.mu * float64(t))
		if s.beta > 0 {
			eta = math.Min(eta, 1/s.beta)
		}
	case Custom:
		eta = s.stepFunc(t)
	}
	if !check.Positive(eta) {
		return 0, fmt.Errorf("%w: step size %v at step %d, want finite > 0", ErrConfig, eta, t)
	}
	return eta, nil
}

// ClipScale returns the factor in (0, 1] that scales a per-example gradient
// of L2 norm gnorm to norm at most G: G/gnorm if gnorm > G > 0, else 1 (no
// clipping, or a NaN norm). For a GLM the gradient is g x^T, of norm
// ||g|| ||x||.
func (s *Step) ClipScale(gnorm float64) float64 {
	if s.clip > 0 && gnorm > s.clip {
		return s.clip / gnorm
	}
	return 1
}

// Clip returns the clip scale of the per-example gradient g, ClipScale of
// its norm, and the norm ||g||, computed as every engine computes it.
func (s *Step) Clip(g []float64) (scale, norm float64) {
	norm = math.Sqrt(sqNorm(g))
	return s.ClipScale(norm), norm
}

// Add adds the per-example gradient g with clip scale c to the minibatch
// sum: sum += c*g, each product rounded before its addition (no fused
// multiply-add), so the bits do not depend on the build. len(sum) >= len(g).
func (s *Step) Add(sum []float64, c float64, g []float64) {
	axpy(c, g, sum)
}

// Update applies the step of size eta to w, given sum, the sum of the
// clipped gradients of the minibatch: the decay, the gradient move with
// the sum divided by b (Config.Batch, also for a short last minibatch) and
// the soft thresholding, then the projection,
//
//	w = proj_R( prox_{eta*lambda*alpha*||.||_1}( (1 - eta*mu)*w - (eta/b)*sum ) ).
//
// len(sum) = len(w).
func (s *Step) Update(w []float64, eta float64, sum []float64) {
	s.move(w, eta, s.sumScale(eta), sum)
	s.project(w)
}

// UpdateOne is Update for b = 1 on the gradient g of the step's one
// example with its clip scale c, which it folds into the step:
//
//	w = proj_R( prox_{eta*lambda*alpha*||.||_1}( (1 - eta*mu)*w - (eta*c)*g ) ).
//
// It rounds differently from Update(w, eta, c*g). len(g) = len(w).
func (s *Step) UpdateOne(w []float64, eta, c float64, g []float64) {
	s.move(w, eta, eta*c, g)
	s.project(w)
}

// Average folds the iterate w, the t-th (t >= 1), into the running mean of
// the iterates avg: avg += (w - avg)/t.
func (s *Step) Average(avg, w []float64, t int) {
	f := 1 / float64(t)
	for i, v := range w {
		avg[i] += (v - avg[i]) * f
	}
}

// updateOneGLM is UpdateOne for a linear model with K rows of d weights
// (w, K x d, row-major) at b = 1: the example's clipped gradient is g x^T,
// g in R^K its clipped margin gradient, and row k of W moves by
// (eta*g_k)*x, the scale folded into the step as UpdateOne folds it.
func (s *Step) updateOneGLM(w []float64, eta float64, g, x []float64) {
	d := len(x)
	a, thr := s.decay(eta)
	for k, gk := range g {
		kernel.Shrink(w[k*d:(k+1)*d], x, a, eta*gk, thr) // move
	}
	s.project(w)
}

// decay returns the constants of the move of a step of size eta: the decay
// a = 1 - eta*mu of the L2 part and the threshold thr = eta*lambda*alpha of
// the L1 part's soft thresholding. The fused paths pass them to the kernels.
func (s *Step) decay(eta float64) (a, thr float64) {
	return 1 - eta*s.mu, eta * s.l1
}

// sumScale returns eta/b, the coefficient of the minibatch sum in the move.
func (s *Step) sumScale(eta float64) float64 {
	return eta / float64(s.batch)
}

// move sets w = prox_{eta*lambda*alpha*||.||_1}((1 - eta*mu)*w - c*dir), the
// move of a step without the projection: c is eta/b for the sum of a
// minibatch, eta*c for one example's gradient with clip scale c, and eta*g_k
// for row k of W at b = 1, whose gradient is g_k x. len(w) >= len(dir); the
// first len(dir) weights move.
func (s *Step) move(w []float64, eta, c float64, dir []float64) {
	a, thr := s.decay(eta)
	kernel.Shrink(w, dir, a, c, thr)
}

// project scales w onto the ball ||w|| <= R (R = 0: no projection). It
// inlines to the check of R; the scaling is projectBall's.
func (s *Step) project(w []float64) {
	if s.radius > 0 {
		s.projectBall(w)
	}
}

// projectBall is project for R > 0.
func (s *Step) projectBall(w []float64) {
	if n := math.Sqrt(sqNorm(w)); n > s.radius {
		f := s.radius / n
		for i := range w {
			w[i] *= f
		}
	}
}
