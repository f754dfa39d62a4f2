// Package stability computes, from the Run record of a training run, the
// uniform stability beta of the training algorithm and the L2 sensitivity
// Delta of the weights it returned, by every route of DESIGN.md, and chooses
// the tightest route whose conditions hold (Watson, Rozemberczki & Sarkar,
// "Stability Enhanced Privacy and Applications in Private SGD").
//
// Neighbouring data sets are replace-one (same n). The SGD routes couple the
// two runs through the seed: both use the same permutation in every pass and
// the same dropout masks, so Delta bounds ||w_S - w_S'|| for every seed, which
// is what output perturbation needs. beta = L*Delta is the uniform stability
// in the user's loss, L = Lz*kappa.
//
// # Routes
//
//  1. RouteERM: the exact minimizer of the mu-strongly convex objective,
//     Delta <= 2L/(n mu) (ERMDelta), and an SGD iterate that met a gradient
//     tolerance tol fixed in advance adds 2 tol/mu (Remark8Delta).
//  2. RouteTheorem7: Delta <= sqrt(2 beta/mu) for a beta-stable algorithm in
//     the regularized loss that outputs a minimizer (Theorem7Delta), plus the
//     Remark 8 slack. Fed with the exact minimizer's beta it is always looser
//     than route 1; it is listed so that a user sees why.
//  3. RouteConvexSGD: permutation SGD on a convex, beta_s-smooth loss with
//     steps eta_t <= 2/(beta_s + mu): Delta <= (2L/b) sum over passes of the
//     step that uses the differing example (ConvexSGDDelta); 2kL eta/b for a
//     constant step.
//  4. RouteStronglyConvexSGD: with mu > 0 and eta_t <= 2/(beta_s + 2 mu) every
//     step contracts by (1 - eta_t mu): Delta <= (2 eta L/b) sum_j
//     (1 - eta mu)^(j m) for a constant step (StronglyConvexSGDDelta), and
//     Delta <= 2L/(mu b ceil(n/b)) <= 2L/(mu n) for eta_t = min(1/beta,
//     1/(mu t)) (DecreasingStepDelta, where the derivation shows why it is not
//     2L/(mu n b)).
//
// Analyze evaluates routes 3 and 4 by running their growth recursion over
// every step with the step sizes of the run, the differing example at its
// worst position in each pass; with iterate averaging it averages the
// per-step bounds.
//
// # Knobs (Table 1 of the paper)
//
// Each knob enters the routes as follows; an arrow up means a larger Delta
// and beta (less stable), down a smaller one.
//
//	knob                          routes   constant it changes          direction
//	more passes k                 3, 4     sum over passes              up (4: saturates)
//	larger step eta               3, 4     each term 2 eta L/b          up
//	larger minibatch b            3, 4     weight 1/b of the example    down
//	clipping to G < L (K = 1)     3, 4     L -> min(G, L)               down
//	s-dropout, s < 1              3, 4     L -> s L, beta_s -> s^2 beta_s down
//	larger lambda (mu)            1, 2, 4  1/mu; contraction 1 - eta mu down
//	L1 part of the elastic net    all      prox is non-expansive        none (alpha lowers mu)
//	projection onto ||w|| <= R    3, 4     non-expansive                none
//	iterate averaging             3, 4     mean of per-step bounds      down
//	smaller tolerance tol         1, 2     2 tol/mu                     down
//
// Clipping and dropout do not enter routes 1 and 2: the tolerance is checked
// on the gradient of the unclipped, unmasked objective F_S, so the returned
// weights are near the minimizer of F_S, whose sensitivity depends on the
// loss's own L. For a multiclass (K > 1) loss a clipped step is not known to
// be non-expansive, so routes 3 and 4 require G >= s*L (clipping inactive).
//
// # What is not covered
//
// A user-supplied graph model, a non-convex loss, a step above the route's
// limit, mu = 0 for routes 1, 2 and 4, a run that did not converge (routes 1
// and 2) and a run that stopped at a data-dependent pass (routes 3 and 4) are
// reported as *NotApplicableError values, wrapping ErrNotApplicable, next to
// the routes that do apply.
//
// EnhancedEpsilon implements Corollary 13 of the paper: the eps that a pure
// mechanism calibrated to a baseline sensitivity gives at an improved one.
package stability
