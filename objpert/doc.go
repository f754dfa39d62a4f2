// Package objpert releases linear models by the objective-perturbation
// family: objective perturbation (pure eps; Chaudhuri, Monteleoni & Sarwate
// 2011, Section 3.2, Algorithm 2 and Theorem 9; Kifer, Smith & Thakurta
// 2012, Theorem 2) and Approximate Minima Perturbation ((eps, delta);
// Iyengar et al. 2019, Algorithm 1).
//
// Unlike output perturbation (package perturb), the noise is not added to
// trained weights: a random vector b enters the objective as the linear term
// <b, w>/n, and the release is the minimizer of
//
//	F(w) = (1/n) sum_i l(<w, x_i>, y_i) + (lambda/2) ||w||^2 + <b, w>/n
//
// (for softmax, w is the K x d matrix and <w, x_i> its K margins: one
// release of K d numbers, no one-vs-rest split of the budget). The privacy
// argument is a change of variables from b to the minimizer, so it needs
// the exact minimizer of a smooth, strongly convex F; Calibrate states the
// conditions, derives every constant (docs/DESIGN.md, section 11) and
// refuses where a condition fails (ErrCondition): a loss that is not twice
// continuously differentiable with a bounded second derivative (logistic
// and softmax qualify, the Huber losses and the squared loss do not), an L1
// term, clipping, dropout or a projection, and lambda below its floor.
//
// The solver (glm.Objective.Minimize) drives ||grad F|| below GradTol:
// Newton's method (conjugate gradients with exact Hessian-vector products,
// preconditioned by the factored Hessian of an earlier iterate, the
// Hessian built afresh when they slow down), with backtracking that keeps
// every iterate at F <= F(0) and accepts, where F cannot tell two points
// apart in float64, a step that shrinks the gradient norm; then a
// gradient-descent fallback with an iteration budget fixed from public
// constants. The number of steps and the
// path are never published. AMP's output part adds Gaussian noise that
// covers every iterate within that threshold, and its ledger charges the
// event on which the fixed budget may miss it; the pure variant adds
// gamma-norm output noise that covers the distance from an iterate within
// the threshold to the exact minimizer (docs/DESIGN.md, section 11).
//
// The mechanisms are named "objective" and "amp" (perturb.Objective,
// perturb.AMP). They are training-time mechanisms, listed by
// perturb.TrainingMechanisms and not in perturb's Noise registry, since
// Noise.Add has no meaning for them; private.Fit routes them here and
// modelfile.Verify rebuilds their certificates from the published constants.
package objpert
