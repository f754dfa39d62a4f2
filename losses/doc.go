// Package losses provides the per-example losses of stabpriv and the
// constants that its stability bounds consume.
//
// # Margin form
//
// A linear model with K outputs has weights W in R^{K x d}; on a row x its
// margins are z = W x in R^K (z = <w, x> for K = 1). Every loss is written as
// l(z, y), a function of the margins and the label, so the gradient in the
// weights is the outer product (dl/dz) x^T and the Hessian is
// (d2l/dz2) kron x x^T. Scalar losses (K = 1) also implement Margin, the
// fast path of the native engine.
//
// # Constants
//
// Constants are stated in the margin: |dl/dz| <= L_z (the L2 norm of the
// gradient for K > 1) and 0 <= d2l/dz2 <= S_z (the largest Hessian eigenvalue
// for K > 1). With rows clipped to ||x|| <= kappa, the loss in the weights is
// L = L_z*kappa Lipschitz and beta_s = S_z*kappa^2 smooth (DESIGN.md). Each
// loss's doc comment derives or cites its constants:
//
//	loss         task        L_z               S_z     needs
//	logistic     binary      1                 1/4     -
//	huber-hinge  binary      1                 1/(2h)  h > 0
//	softmax      multiclass  sqrt(2)           1/2     K >= 2
//	huber        regression  delta             1       delta > 0
//	squared      regression  R*kappa + B       1       ||w|| <= R, |y| <= B
//
// The squared loss is not Lipschitz: its Constants returns an error wrapping
// ErrDomain unless the domain bounds the weights and the labels.
//
// Constants also says what a loss is, so that no caller switches on its
// type or name: Smooth (l' is Sz-Lipschitz, what Wang's Lemma 13 needs for
// per-instance DP), C2 (l” is continuous, what objective perturbation
// needs), and, for softmax, the rank and trace of its Hessian (Rank,
// RankSz; they depend on K, passed as Domain.Classes). Sz is the curvature
// bound sup |l”|:
//
//	loss         smooth  C2   rank, RankSz
//	logistic     yes     yes  1, 1/4
//	huber-hinge  yes     no   1, 1/(2h)
//	softmax      yes     yes  K-1, 1/K
//	huber        yes     no   1, 1
//	squared      yes     yes  1, 1
//
// The fused logistic path is the capability interface LogisticParts, which
// Logistic implements; callers find it by an interface assertion.
//
// # Parameters
//
// HuberHinge (width h) and Huber (threshold delta) have one parameter each,
// which must be finite and > 0. NewHuberHinge and NewHuber validate it; a
// struct literal is validated by Constants, which the trainer
// calls before training, so an invalid parameter is an error wrapping
// ErrParam and never a run. ByName uses DefaultHuberHingeH and
// DefaultHuberDelta.
//
// # Labels
//
// Binary losses take y in {-1, +1}; regression losses any finite y;
// multiclass losses the class index y in {0, ..., K-1}, stored as float64.
// CheckLabel reports any other label with an error wrapping ErrLabel; the
// other methods assume a checked label.
//
// # Registry and conformance
//
// All returns one value of every built-in loss (the registry behind Names
// and ByName). The conformance kit, internal/losstest, checks every loss of
// All: Grad and Hess against finite differences, the constants on a grid of
// margins and labels (the bounds L_z and S_z on the first and second
// derivatives, convexity, Smooth and C2 against differences of the
// derivatives, Rank and RankSz against the Hessian's eigenvalues),
// CheckLabel, Outputs, and the Margin fast path (and Parts1) against Value,
// Grad and Hess for K = 1.
// A new built-in loss is a file, a line in the registry (byname.go), and its
// Gorgonia expression in package graph; the kit and every test that ranges
// over All then cover it.
//
// # Expressions
//
// This package imports no Gorgonia. The Gorgonia expression of every
// built-in loss, which the graph engine differentiates, is in package graph
// (graph.Expr), keyed by the loss type; a user loss may implement the
// optional graph.Expresser interface to be trained by that engine. The
// piecewise losses are composed there from Rectify at points where they are
// continuously differentiable, so the graph derivative agrees with Grad also
// at the kinks; the tests check this to 1e-10.
package losses
