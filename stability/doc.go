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
// docs/DESIGN.md, section 3, states each route's bound and conditions and
// derives it; here, what implements each:
//
//  1. RouteERM (ERMDelta, Remark8Delta, ProxGDConvergence, ProxGDPasses):
//     the exact minimizer of the mu-strongly convex objective, 2L/(n mu),
//     plus 2 delta_conv(k) for the last of k full-batch proximal gradient
//     passes, k fixed in advance (the paper's Remark 8).
//  2. RouteTheorem7 (Theorem7Delta): the paper's Theorem 7, sqrt(2 beta/mu)
//     plus the same 2 delta_conv. Always looser than route 1: listed so
//     that a user sees why, never chosen.
//  3. RouteConvexSGD (ConvexSGDDelta): permutation SGD on a convex smooth
//     loss, (2L/b) times the sum over passes of the step that uses the
//     differing example.
//  4. RouteStronglyConvexSGD (StronglyConvexSGDDelta, DecreasingStepDelta):
//     with mu > 0 every step contracts by (1 - eta_t mu); 2L/(mu b
//     ceil(n/b)) <= 2L/(mu n) for bounded inverse-t steps.
//
// Analyze evaluates routes 3 and 4 by their growth recursion over every
// step of the run, with iterate averaging averaging the per-step bounds
// (section 3, "How Analyze evaluates routes 3 and 4").
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
// How each knob (passes, step, minibatch, clipping, s-dropout, lambda, the
// L1 part, projection, averaging) changes the constants of each route, and
// why routes 1 and 2 refuse dropout and averaging and every route refuses
// clipping of a multiclass loss, is in docs/DESIGN.md, section 4.
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
