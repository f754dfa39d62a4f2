// Package stability computes, from the Run record of a training run, the
// uniform stability beta of the training algorithm and the L2 sensitivity
// Delta of the weights it returned, by every route of docs/DESIGN.md
// (section 3, "Sensitivity routes", with the derivations), and chooses
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
//     Delta <= 2L/(n mu) (ERMDelta), plus 2 delta_conv (Remark 8,
//     Remark8Delta) for the last iterate of k full-batch proximal gradient
//     passes (b = n, constant step eta <= 1/(beta_s + mu), from w = 0),
//     delta_conv(k) = (1 - eta mu)^k L/mu (ProxGDConvergence). k is a
//     setting (ProxGDPasses chooses it for a relative accuracy), so the
//     bound, and whether a release happens, never depends on whether the
//     run converged.
//  2. RouteTheorem7: Delta <= sqrt(2 beta/mu) for a beta-stable algorithm in
//     the regularized loss that outputs a minimizer (Theorem7Delta), plus the
//     same 2 delta_conv. Fed with the exact minimizer's beta it is always
//     looser than route 1; it is listed so that a user sees why, and never
//     chosen.
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
// per-step bounds. For a full-batch run route 4 gives
// (1 - (1 - eta mu)^k) 2L/(mu n), below route 1 for every k, so route 1 is
// chosen only where route 4 does not apply.
//
// Each route is one file, route_<name>.go, holding its RouteID constant, its
// closed-form bounds, its conditions and its evaluation on a run, and one
// entry of the route table that Analyze iterates. A new route is a new file
// (a constant with the next RouteID, the closed form with its derivation, an
// evaluation method returning c.ok or c.fail, and a table entry with its
// name, citation, formula and assumptions) plus its line in routeTable; the
// report, the JSON and RouteID's text form follow from the table. A derivation
// goes into docs/DESIGN.md, section 3.
//
// Every Delta in a Report is the exact-arithmetic value of its formula times
// 1 + RoundingSlack (1e-9), an allowance for the float64 rounding by which
// neighbouring runs exceeded attained bounds (about 1e-15 relative) in the
// neighbour tests.
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
//	more full-batch passes k      1, 2     2 (1 - eta mu)^k L/mu        down
//
// Clipping to G enters routes 1 and 2 as L -> min(G, L) (K = 1): the
// full-batch passes minimize the objective of the clipped (Huberized) loss,
// which is convex and beta_s-smooth, and the bounds hold for its minimizer.
// s-dropout draws new masks in every pass, so the passes have no fixed
// minimizer, and averaging returns a mean that the contraction bound does not
// cover: routes 1 and 2 refuse both. For a multiclass (K > 1) loss a clipped
// step is not known to be non-expansive, so every route requires G >= s*L
// (clipping inactive).
//
// # What is not covered
//
// A user-supplied graph model, a non-convex loss, a step above the route's
// limit, mu = 0 for routes 1, 2 and 4, a minibatch b < n, a schedule that is
// not constant, averaging or dropout for routes 1 and 2, and a run with a
// Tolerance (for every route: a tolerance stops at a data-dependent pass) are
// reported as *NotApplicableError values, wrapping ErrNotApplicable, next to
// the routes that do apply. A reason names settings only, never a statistic
// of the data, and Analyze never reads the run's Stats: the report, and so
// the decision to release, is the same for every data set of the same size.
//
// EnhancedEpsilon implements Corollary 13 of the paper: the eps that a pure
// mechanism calibrated to a baseline sensitivity gives at an improved one.
package stability
