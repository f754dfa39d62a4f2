// Package glm is the objective of a ridge-regularized generalized linear
// model and its minimizer: the one home of the passes over the rows that
// objective perturbation (package objpert), per-instance DP (package pdp)
// and the trainer's statistics share.
//
// # The objective
//
// With the margins z_i = W x_i of the rows (W the K x d weights, w their
// row-major flattening; K = 1 for a scalar loss, z_i = <w, x_i>),
//
//	F(w) = (1/m) sum_i l(z_i, y_i) + (lambda/2) ||w||^2 + <b, w>/m
//
// over the m rows of the data set (Config). Its gradient is (1/m) sum_i
// l'(z_i) x_i^T + lambda w + b/m and its Hessian (1/m) sum_i l”(z_i) kron
// x_i x_i^T + lambda I, with l' and l” the margin gradient and Hessian of
// the loss (package losses). Objective gives F (Func), its gradient (Grad,
// FuncGrad), its Hessian (Hess), Hessian-vector products (HessVec) and the
// mean Hessian along a segment (SegmentHess), with gonum optimize's
// signatures where it has them, and minimizes F by Newton's method with
// conjugate gradients (Minimize).
//
// The optional parts are what the callers need:
//
//   - the linear term <b, w>/m (Config.Linear) of objective perturbation
//     (Chaudhuri, Monteleoni & Sarwate 2011, Section 3.2; docs/DESIGN.md,
//     section 11), whose privacy argument needs the exact minimizer;
//   - per-example gradient clipping (Config.Clip) as the Huberized loss a
//     clipping trainer minimizes (docs/DESIGN.md, sections 4 and 8);
//   - neighbours (Objective.Neighbour): the data set without one row and
//     with extra rows, keeping the unnormalized ridge weight, which Wang's
//     "Per-instance Differential Privacy" (Lemma 13) compares;
//   - softmax and any other loss with K > 1 outputs.
//
// # Passes over the rows
//
// Every pass reads the rows in blocks of 64 that stay in cache between
// their margins and their sum (kernel.FusedDots and FusedAddRows for K =
// 1, SeqDots4 and AddRows4 for K > 1); Hessians sum 4 x 8 tiles of the
// Gram matrix over the same blocks (kernel.GramTile), and the logistic
// loss, found by its capability losses.LogisticParts, takes its value and
// two derivatives from one exponential, four rows at a time
// (kernel.LogisticParts). From 16384 rows on, a pass runs in two fixed
// parts of the rows on two goroutines, added in part order, so that its
// bits depend on the rows and their number alone, not on GOMAXPROCS.
// Grads takes the gradients of several neighbours at their own points in
// one pass, each block of rows read once for all of them, with the bits of
// each one's Grad (pdp refines its most exposed rows so, in lockstep).
//
// The package imports only losses, internal/kernel and internal/check of
// this module: none of the packages that use it.
package glm
