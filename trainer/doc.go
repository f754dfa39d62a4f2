// Package trainer trains linear models by stochastic gradient descent with
// the knobs that make SGD uniformly stable, and records every constant a
// stability bound needs.
//
// # Training
//
// New validates a Config and returns a Trainer; Trainer.Train fits the rows
// of a matrix X (n x d) with labels y and returns a Model (K rows of d
// weights: K = 1 for binary and regression losses, K = Classes for
// multiclass ones) and a Run record. The objective is
//
//	F_S(w) = (1/n) sum_i l(<w, x_i>, y_i) + lambda*((1-alpha)/2 ||w||^2 + alpha ||w||_1)
//
// (the glmnet convention, alpha = Reg.L1Ratio), with strong convexity
// mu = lambda*(1-alpha). Before training, each row with ||x|| > Kappa is
// scaled to norm Kappa, on a copy: the bound is enforced, never estimated.
//
// The caller's matrix is never modified. Train reads it in place, without a
// copy, when it is a *mat.Dense with contiguous rows (Stride = d), every row
// has ||x|| <= Kappa (checked) and no user model is trained: no engine
// writes the rows, so the matrix must only not change while Train runs.
// Otherwise the rows are copied. At the end Train computes the objective
// and the gradient norm of Run.Stats, one more pass over the data, unless
// Config.SkipObjective says they are not needed.
//
// # The step
//
// Each pass visits the examples in a fresh permutation drawn from the seed,
// in minibatches of b. Step t = 1, 2, ... (counted over the whole run) on
// minibatch B_t is
//
//	v       = w - eta_t * ( (1/b) sum_{i in B_t} clip_G( grad l(<w, M_t,i x_i>, y_i) ) + mu*w )
//	w_{t+1} = proj_R( prox_{eta_t*lambda*alpha*||.||_1}(v) )
//
// in this order, for every engine:
//
//   - for each example of the minibatch, in order, the s-dropout mask M is
//     drawn (coordinates of x are zeroed in a random order until
//     ||M x|| <= s ||x||; the mask is keyed by seed, pass and position, so
//     two runs on neighbouring data sets share it);
//   - the per-example gradient g (M x)^T (g = dl/dz in R^K) is clipped to
//     Frobenius norm G, which is ||g|| ||M x||;
//   - the clipped gradients are summed and divided by b, also for a short
//     last minibatch of n mod b examples;
//   - the L2 part enters the gradient, the L1 part by soft thresholding (its
//     proximal map), then the weights are projected onto ||w|| <= R;
//   - with Average, the running mean of the iterates is updated after every
//     step, and returned.
//
// Each of these maps is non-expansive for a convex GLM loss, which is what
// the stability routes of the stability package need. Step (NewStep) is
// this update: every engine makes it, and graph.Solver makes it with the
// same bits in a user's own Gorgonia loop.
//
// # Knobs
//
// Schedule and Eta (or StepFunc) give eta_t: a constant (zero means 1/beta,
// beta = S_z Kappa^2 + mu), 1/(mu t), min(1/beta, 1/(mu t)), or a custom
// function. Passes (k), Batch (b), Clip (G), Dropout (s), Radius (R), Average
// and Tolerance are documented on Config with their zero values. A positive
// Tolerance stops training after the first pass whose end point has a
// minimum-norm subgradient of F_S of norm <= Tolerance. That stop depends on
// the data, so a tolerance run is for non-private use only: no stability
// route certifies it. Full-batch passes (Batch = n, constant step) are
// proximal gradient descent, whose distance to the minimizer after k passes
// is bounded from the settings alone; the stability package's exact-minimizer
// route uses that, with k fixed in advance (stability.ProxGDPasses).
//
// # Engines
//
// The Native engine (the default) computes the gradients of the built-in
// losses with a fused kernel that allocates nothing per step. For K = 1 it
// uses the scalar derivative of losses.Margin. For b = 1 it updates each row of W in place in one loop
// that applies the decay (1 - eta mu), the gradient move and the soft
// thresholding; for b > 1 it takes, in parts of 16 examples read where
// they lie, the margins (they all use the weights of the start of the
// step, so they do not wait on each other; four rows at a time), then the
// clipped derivatives, then adds the clipped per-example gradients to a
// buffer, eight rows at a time, and applies the sum in one loop with the
// decay and the soft thresholding; each part hints the rows, norms and
// labels of the examples 16 positions ahead to the cache. Both give the
// bits of the example-by-example step. For K > 1 it forms the K margins,
// the loss's Grad and the rank-one update row by row.
//
// Dot products call gonum's native BLAS (gonum.org/v1/gonum/blas/gonum)
// directly: its assembly kernel ties a plain Go loop with four partial sums
// on rows of 33 features and is faster from 64 on (BenchmarkDot*), and
// calling it directly, not through blas64, keeps a program that swaps in a
// cgo BLAS from paying a cgo call per step. The row updates are plain loops,
// because the soft thresholding is fused into them. For b = 1 the fused step
// reads the rows in place and hints the rows of the examples ahead in the
// pass order to the cache (kernel.PrefetchExample), so that fetching rows
// from random places in memory overlaps instead of stalling the chain of
// dependent operations a step is; from 256 MiB of rows on, it copies the
// rows, norms and labels of the next block of examples of the pass order
// (64 kB of rows) into the other of two buffers, hinting the first line of
// every row of the block at once, which overlaps the TLB misses of rows
// that large better; its extra memory is two blocks, whatever n. In a run
// of more than one pass it also draws the next pass's order between its
// steps, work that their wait on the chain hides (one order of n ints
// more). The unfused paths copy the rows of the next examples into a small
// buffer.
//
// A b = 1 step is such a chain (the margin needs the previous step's
// weights, the update needs the loss derivative of that margin), so its
// time is a latency, not a throughput, and the exponential of the logistic
// derivative is a large part of it. BenchmarkNativePass3600x33 (rows in
// cache) and BenchmarkNativePass36000x33 (rows fetched from memory) time a
// pass of the logistic loss with an elastic net on 33 features;
// docs/PERFORMANCE.md holds their current figures.
//
// One pass driver serves every engine: it draws the permutations and the
// s-dropout masks, takes the step sizes, clips each example's gradient, sums
// the minibatch, divides by b and applies the decay, the prox, the
// projection and the averaging. An engine only computes per-example
// gradients. The native kernel is inline in the driver (the fused b = 1 loop
// above, and the minibatch step); any other engine is a kernel behind an
// interface of this package: a MarginKernel gives the margin gradients
// g_i = dl/dz of a whole minibatch in one call (the per-example gradient of
// a linear model is g_i x_i^T, clipped by ||g_i|| ||x_i||), and the
// ExampleKernel of a UserModel gives one example's whole gradient, for
// models whose per-example gradients cannot be taken from a batch. So every
// engine makes the same update, and a seeded run gives the same weights
// with every engine up to rounding.
//
// The Graph engine is the Gorgonia engine of package graph, which registers
// itself (RegisterEngine) when a program imports it; this package imports no
// Gorgonia. It computes the margin gradients of a minibatch with one run of
// a batched graph, and also trains graph.Model, a user's Gorgonia model. A
// Config with Engine Graph in a program that does not link package graph is
// an error of New. A kernel engine checks the context at every step.
//
// # The Run record
//
// Run holds every constant of the run (n, d, K, Kappa and the rows clipped,
// the loss constants L_z, S_z and L = L_z Kappa, beta_s = S_z Kappa^2,
// lambda, alpha, mu, the schedule with the largest and smallest step of each
// pass, k, b, G, s, R, averaging, the seed and the engine) and its outcome
// (passes done, the objective and the minimum-norm subgradient norm at the
// returned weights, whether the tolerance was met). The stability package
// computes the uniform stability and the sensitivity of the weights from it.
//
// Train returns errors wrapping ErrConfig for invalid settings and ErrData
// for invalid data (NaN or Inf, empty, ragged, a label the loss cannot use,
// b > n); it never panics on user data. It returns the context's error,
// wrapped, when the context is done: the native engine checks it before every
// pass and every 4096 steps, a kernel engine at every step.
package trainer
