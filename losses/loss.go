package losses

import (
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Task says which labels a loss accepts.
type Task int

const (
	// Binary losses take labels y in {-1, +1}.
	Binary Task = iota
	// Regression losses take any finite real label; a loss whose constants
	// need a label bound says so through Domain.LabelBound.
	Regression
	// Multiclass losses take labels y in {0, 1, ..., K-1}, stored as float64.
	Multiclass
)

// String returns the name of the task.
func (t Task) String() string {
	switch t {
	case Binary:
		return "binary"
	case Regression:
		return "regression"
	case Multiclass:
		return "multiclass"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// Domain bounds the quantities that the constants of a loss may depend on.
// A zero field means "unbounded".
type Domain struct {
	// Kappa bounds the rows: ||x|| <= Kappa. The trainer enforces it by clipping.
	Kappa float64
	// Radius bounds the weights: ||w|| <= Radius (Frobenius norm for K > 1).
	// The trainer enforces it by projection. Zero means no projection.
	Radius float64
	// LabelBound bounds regression labels: |y| <= LabelBound. Zero means unbounded.
	LabelBound float64
	// Classes is the number of classes K of a multiclass loss, for the
	// constants that depend on it (softmax's Rank and RankSz). Zero means
	// not given: those constants are then the ones that hold for every K.
	// Scalar losses ignore it.
	Classes int
}

// Constants are the constants of a loss in margin form, z = <w, x> (z = W x for
// K > 1 outputs). In the weights, the loss is L = Lz*Kappa Lipschitz and
// S_z*Kappa^2 smooth (DESIGN.md).
//
// Lz and Sz may depend on the domain; the other fields are properties of
// the loss alone, the same on every domain on which Constants succeeds.
// Callers read them instead of switching on a loss's type or name.
type Constants struct {
	// Lz bounds the margin derivative: |l'(z, y)| <= Lz for every z in the
	// domain (for K > 1, the L2 norm of the margin gradient).
	Lz float64
	// Sz is the curvature bound: |l''(z, y)| <= Sz wherever l'' exists (for
	// K > 1, the spectral norm of the margin Hessian), that is sup |l''|
	// in the margin. For a convex loss l'' >= 0, so 0 <= l'' <= Sz. For a
	// Smooth loss Sz is also a Lipschitz constant of l'.
	Sz float64
	// Convex reports whether l(., y) is convex in z for every label y.
	Convex bool
	// Smooth reports that l(., y) is differentiable in z for every label y,
	// with a derivative that is Sz-Lipschitz, hence absolutely continuous:
	// in the margin, the smoothness that the Hessian identity of Wang,
	// "Per-instance Differential Privacy", Lemma 13 (its assumptions A.1
	// and A.2) asks of the loss. Package pdp refuses a loss without it (a
	// hinge or an absolute loss, whose derivative jumps).
	Smooth bool
	// C2 reports that l(., y) is twice continuously differentiable in z for
	// every label y (its second derivative bounded by Sz): the condition of
	// objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011,
	// Theorem 9), whose change of variables needs a continuous Jacobian of
	// the map from the noise to the minimizer. A C2 loss is Smooth; the
	// Huber losses are Smooth but not C2 (l'' jumps where the quadratic
	// piece ends).
	C2 bool
	// Rank and RankSz bound the spectrum of the margin Hessian beyond Sz:
	// at most Rank of its eigenvalues are nonzero, and they sum to at most
	// Rank*RankSz (RankSz <= Sz). Zero values mean no bound beyond Sz:
	// Rank = K and RankSz = Sz. Softmax over Domain.Classes = K classes has
	// Rank = K - 1 (its Hessian annihilates the all-ones vector) and
	// RankSz = 1/K (trace 1 - ||p||^2 <= 1 - 1/K). Objective perturbation's
	// Jacobian factor reads them (package objpert, docs/DESIGN.md,
	// section 11).
	Rank   int
	RankSz float64
	// LipHess reports that the margin Hessian is Tz-Lipschitz:
	// ||H(z1, y) - H(z0, y)|| <= Tz ||z1 - z0|| for every label y (the
	// spectral norm and the Euclidean norm of the margins; for K = 1,
	// |l''(z1) - l''(z0)| <= Tz |z1 - z0|), so that the gradient's Taylor
	// remainder is at most (Tz/2)||z1 - z0||^2. Package pdp bounds the error
	// of its one-step sensitivities with it. Logistic: Tz = max |l'''| =
	// 1/(6 sqrt 3); softmax: Tz = 1/sqrt 2 (below); squared: Tz = 0. The
	// Huber losses, whose l'' jumps, have none (false).
	//
	// Softmax: the third derivative of log-sum-exp at z is
	// T[u, u, v] = E[(U - EU)^2 (V - EV)], U = u_C, V = v_C, C drawn from
	// the softmax probabilities; for unit u, v, Var U <= (max u - min u)^2/4
	// <= 1/2 and |V - EV| <= max v - min v <= sqrt 2, so |T[u, u, v]| <=
	// 1/sqrt 2, a Lipschitz constant of the Hessian in the spectral norm.
	LipHess bool
	Tz      float64
}

// Loss is a per-example loss l(z, y) of the margin vector z = W x in R^K,
// where W is the K x d weight matrix. Scalar losses have K = 1 and also
// implement Margin, which the native engine uses on its fast path.
//
// The graph engine (package graph) differentiates a Gorgonia expression of
// the loss: it has one for each built-in loss, and uses the optional
// graph.Expresser interface of any other loss.
//
// Implementations must be safe for concurrent use.
type Loss interface {
	// Name returns the loss name used on the command line and in records,
	// for example "logistic".
	Name() string
	// Task returns the labels the loss accepts.
	Task() Task
	// Outputs returns K, the number of margins, for a problem with the given
	// number of classes (1 for scalar losses).
	Outputs(classes int) int
	// CheckLabel returns a non-nil error wrapping ErrLabel if y is not a valid
	// label for a problem with the given number of classes.
	CheckLabel(y float64, classes int) error
	// Value returns l(z, y). It panics if len(z) != K.
	Value(z []float64, y float64) float64
	// Grad writes the gradient dl/dz into dst and returns l(z, y).
	// It panics if len(dst) != len(z).
	Grad(dst, z []float64, y float64) float64
	// Hess writes the K x K margin Hessian, row-major, into dst.
	// It panics if len(dst) != K*K.
	Hess(dst, z []float64, y float64)
	// Constants returns the constants of the loss on the domain, or an error
	// wrapping ErrDomain when they do not exist there (for example, squared
	// loss without a weight radius and a label bound).
	Constants(dom Domain) (Constants, error)
}

// Margin is the scalar view of a loss with K = 1: l(z, y) and its first and
// second derivatives in z.
type Margin interface {
	Value1(z, y float64) float64
	Deriv(z, y float64) float64
	Deriv2(z, y float64) float64
}

// LogisticParts is the capability of the fused logistic path: the loss is
// the binary logistic loss l(z, y) = log(1 + exp(-y z)) (Logistic, or a
// type that embeds it without changing its values), and Parts1 returns, from
// one exponential, the parts of its value and its first two derivatives at
// (z, y) for y = -1 or +1: with m = -y z, plus = max(m, 0) and e =
// exp(-|m|), Value1 = plus + log1p(e) (added in that order), d1 = Deriv and
// d2 = Deriv2, each with the bits of the Margin methods. Callers find it by
// an interface assertion and then compute the same parts four rows at a
// time (internal/kernel.LogisticParts, with those bits), so a type must
// not implement it for any other loss; the conformance kit
// (internal/losstest) checks Parts1 against Value, Grad and Hess bit for
// bit.
type LogisticParts interface {
	Margin
	Parts1(z, y float64) (plus, e, d1, d2 float64)
}

var (
	// ErrLabel is returned for a label a loss cannot use.
	ErrLabel = errors.New("losses: invalid label")
	// ErrDomain is returned when a loss has no finite constants on a domain.
	ErrDomain = errors.New("losses: loss constants need a bounded domain")
)

// checkFinite returns an error wrapping ErrLabel if y is NaN or infinite.
func checkFinite(y float64) error {
	if !check.Finite(y) {
		return fmt.Errorf("%w: %v is not finite", ErrLabel, y)
	}
	return nil
}
