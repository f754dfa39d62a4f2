package graph

import (
	"errors"
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/stabpriv/stabpriv/losses"
)

// ErrExpr is returned when a loss expression cannot be built: a loss with no
// expression, a margin or label node of the wrong shape, or an invalid loss
// parameter (then the error also wraps losses.ErrParam).
var ErrExpr = errors.New("graph: cannot build expression")

// Expresser is the optional interface of a loss that builds itself as a
// Gorgonia expression. The graph engine uses it for a loss that is not one of
// the built-in losses of package losses; a loss with neither is trained by
// the native engine only.
type Expresser interface {
	// Expr builds l(z, y) from the margin node z (a float64 vector of
	// length K) and the label node y (a float64 scalar for K = 1, the
	// one-hot float64 vector of length K for multiclass losses).
	Expr(z, y *gorgonia.Node) (*gorgonia.Node, error)
}

// Expr builds the loss l as a Gorgonia expression of the margin node z and
// the label node y, with the shapes of Expresser.Expr: for the built-in
// losses of package losses (selected by their type) the expression of this
// package, for any other loss its Expr method. The graph engine
// differentiates it, so both engines share one definition of every built-in
// loss: the tests check value and derivative against Grad to 1e-10, also at
// the kinks.
//
// Expr never panics: a loss without an expression, shape errors and invalid
// parameters are errors wrapping ErrExpr.
func Expr(l losses.Loss, z, y *gorgonia.Node) (*gorgonia.Node, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil loss", ErrExpr)
	}
	return buildExpr(l.Name(), func() (*gorgonia.Node, error) {
		if z == nil || y == nil {
			return nil, errors.New("nil margin or label node")
		}
		switch l := l.(type) {
		case losses.Logistic:
			return logisticExpr(z, y)
		case losses.HuberHinge:
			return huberHingeExpr(l, z, y)
		case losses.Huber:
			return huberExpr(l, z, y)
		case losses.Squared:
			return squaredExpr(z, y)
		case losses.Softmax:
			return softmaxExpr(z, y)
		case Expresser:
			return l.Expr(z, y)
		}
		return nil, fmt.Errorf("loss %T implements neither a built-in loss nor graph.Expresser", l)
	})
}

// hasExpr reports whether Expr knows l.
func hasExpr(l losses.Loss) bool {
	switch l.(type) {
	case losses.Logistic, losses.HuberHinge, losses.Huber, losses.Squared, losses.Softmax, Expresser:
		return true
	}
	return false
}

// logisticExpr builds softplus(-y z) (see logisticOp for why not Gorgonia's op).
func logisticExpr(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	return logisticOf(gorgonia.Must(scalarInputs(z, y)), y)
}

// logisticOf builds softplus(-y z) elementwise, for nodes of one shape.
func logisticOf(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	g := gorgonia.Must
	return gorgonia.ApplyOp(softplusOp, g(gorgonia.HadamardProd(g(gorgonia.Neg(y)), z)))
}

// huberHingeExpr builds q(1 + h - y z), with q the parabola-and-line of
// losses.HuberHinge built from Rectify (see quadLin.expr for its derivative
// at the kinks m = 1-h and m = 1+h).
func huberHingeExpr(l losses.HuberHinge, z, y *gorgonia.Node) (*gorgonia.Node, error) {
	if _, err := l.Constants(losses.Domain{}); err != nil {
		return nil, err
	}
	return huberHingeOf(l, gorgonia.Must(scalarInputs(z, y)), y), nil
}

// huberHingeOf builds the smoothed hinge elementwise, for nodes of one
// shape and a checked width.
func huberHingeOf(l losses.HuberHinge, z, y *gorgonia.Node) *gorgonia.Node {
	g := gorgonia.Must
	m := g(gorgonia.HadamardProd(y, z))
	q := quadLin{lo: 0, hi: 2 * l.H, a: 1 / (4 * l.H)}
	return q.expr(g(gorgonia.Sub(constant(1+l.H), m)))
}

// huberExpr builds the Huber function of z - y from Rectify, without Abs
// (whose derivative at 0 would be a choice); see quadLin.expr for the kinks
// r = +-delta.
func huberExpr(l losses.Huber, z, y *gorgonia.Node) (*gorgonia.Node, error) {
	if _, err := l.Constants(losses.Domain{}); err != nil {
		return nil, err
	}
	return huberOf(l, gorgonia.Must(scalarInputs(z, y)), y), nil
}

// huberOf builds the Huber loss elementwise, for nodes of one shape and a
// checked threshold.
func huberOf(l losses.Huber, z, y *gorgonia.Node) *gorgonia.Node {
	q := quadLin{lo: -l.Delta, hi: l.Delta, a: 0.5}
	return q.expr(gorgonia.Must(gorgonia.Sub(z, y)))
}

// squaredExpr builds (z - y)^2 / 2.
func squaredExpr(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	return squaredOf(gorgonia.Must(scalarInputs(z, y)), y)
}

// squaredOf builds (z - y)^2 / 2 elementwise, for nodes of one shape.
func squaredOf(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	g := gorgonia.Must
	return gorgonia.Mul(g(gorgonia.Square(g(gorgonia.Sub(z, y)))), constant(0.5))
}

// batchLosses builds the losses of l on the rows of a minibatch: Z holds
// the margins (a vector of b margins for K = 1, a b x K matrix for K > 1)
// and Y the labels (a vector of b labels, or b one-hot rows). It returns a
// node whose elements sum to the minibatch's loss: for the built-in losses
// the vector of the b per-row losses, built as whole-batch operations
// (elementwise for K = 1, row reductions for softmax), a graph whose size
// does not grow with b; for a user loss the scalar sum of its
// Expresser.Expr on row slices, a graph b times the size of one example's.
// The loss of row i depends on row i of Z alone, so row i of the gradient of
// the sum in Z is the margin gradient of example i.
func batchLosses(l losses.Loss, Z, Y *gorgonia.Node) (*gorgonia.Node, error) {
	return buildExpr(l.Name(), func() (*gorgonia.Node, error) {
		g := gorgonia.Must
		switch l := l.(type) {
		case losses.Logistic:
			return logisticOf(Z, Y)
		case losses.HuberHinge:
			if _, err := l.Constants(losses.Domain{}); err != nil {
				return nil, err
			}
			return huberHingeOf(l, Z, Y), nil
		case losses.Huber:
			if _, err := l.Constants(losses.Domain{}); err != nil {
				return nil, err
			}
			return huberOf(l, Z, Y), nil
		case losses.Squared:
			return squaredOf(Z, Y)
		case losses.Softmax:
			// Row maxima, the shifted exponentials summed per row, and
			// the margin of the label of each row.
			zmax := g(gorgonia.Max(Z, 1))
			sh := g(gorgonia.BroadcastSub(Z, zmax, nil, []byte{1}))
			lse := g(gorgonia.Add(zmax, g(gorgonia.Log(g(gorgonia.Sum(g(gorgonia.Exp(sh)), 1))))))
			zy := g(gorgonia.Sum(g(gorgonia.HadamardProd(Z, Y)), 1))
			return gorgonia.Sub(lse, zy)
		case Expresser:
			rows := Z.Shape()[0]
			var sum *gorgonia.Node
			for i := 0; i < rows; i++ {
				li, err := l.Expr(g(gorgonia.Slice(Z, gorgonia.S(i))), g(gorgonia.Slice(Y, gorgonia.S(i))))
				if err != nil {
					return nil, err
				}
				if sum == nil {
					sum = li
				} else {
					sum = g(gorgonia.Add(sum, li))
				}
			}
			return sum, nil
		}
		return nil, fmt.Errorf("loss %T implements neither a built-in loss nor graph.Expresser", l)
	})
}

// softmaxExpr builds max(z) + log(sum_k exp(z_k - max(z))) - <z, y> for the
// one-hot label vector y. Gorgonia's LogSumExp is not used: in v0.9.18 it
// adds the maximum inside the logarithm. The derivative of max (an indicator
// of the largest margins) cancels between the two terms, up to rounding, so
// the gradient is p - y.
func softmaxExpr(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	if z.Dims() != 1 || y.Dims() != 1 {
		return nil, fmt.Errorf("softmax needs vector margin and one-hot label nodes, have shapes %v and %v", z.Shape(), y.Shape())
	}
	g := gorgonia.Must
	zmax := g(gorgonia.Max(z))
	lse := g(gorgonia.Add(zmax, g(gorgonia.Log(g(gorgonia.Sum(g(gorgonia.Exp(g(gorgonia.Sub(z, zmax))))))))))
	zy := g(gorgonia.Sum(g(gorgonia.HadamardProd(z, y))))
	return gorgonia.Sub(lse, zy)
}

// scalarInputs checks the nodes of a K = 1 loss, a margin of shape (1) or ()
// and a scalar label, and returns the margin as a scalar node.
func scalarInputs(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	if !y.IsScalar() {
		return nil, fmt.Errorf("label node of shape %v, want a scalar", y.Shape())
	}
	if z.IsScalar() {
		return z, nil
	}
	if z.Dims() != 1 || z.Shape()[0] != 1 {
		return nil, fmt.Errorf("margin node of shape %v, want (1)", z.Shape())
	}
	return gorgonia.Sum(z)
}

// quadLin is the C^1 function of one variable that is the parabola a*x^2 on
// [lo, hi] (lo <= 0 <= hi, a > 0) and continues linearly outside it with the
// slopes 2a*hi (right) and 2a*lo (left):
//
//	q(x) = a*c^2 + 2a*hi*(x-hi)_+ + 2a*(-lo)*(lo-x)_+,  c = clamp(x, lo, hi).
//
// The Huber loss (lo = -delta, hi = delta, a = 1/2) and the smoothed hinge
// (lo = 0, hi = 2h, a = 1/(4h), in u = 1+h-m) are both of this form (the
// losses package documents both).
type quadLin struct{ lo, hi, a float64 }

// expr builds q(x) from Rectify, which Gorgonia differentiates as the
// indicator of x >= 0. Every kink of q is a point where q is C^1, so the
// derivative of the expression equals q' there whichever one-sided
// derivative Rectify takes: at x = hi, the term a*c^2 contributes 2a*hi*c'
// and the ramp 2a*hi*r', with c' + r' = 1. It must run inside buildExpr,
// which turns the panics of gorgonia.Must into errors.
func (q quadLin) expr(x *gorgonia.Node) *gorgonia.Node {
	g := gorgonia.Must
	right := g(gorgonia.Rectify(g(gorgonia.Sub(x, constant(q.hi))))) // (x-hi)_+
	c := g(gorgonia.Sub(x, right))                                   // min(x, hi)
	lin := g(gorgonia.Mul(right, constant(2*q.a*q.hi)))
	if q.lo < 0 {
		left := g(gorgonia.Rectify(g(gorgonia.Sub(constant(q.lo), x)))) // (lo-x)_+
		c = g(gorgonia.Add(c, left))
		lin = g(gorgonia.Add(lin, g(gorgonia.Mul(left, constant(-2*q.a*q.lo)))))
	} else {
		c = g(gorgonia.Rectify(c)) // clamp(x, 0, hi)
	}
	quad := g(gorgonia.Mul(g(gorgonia.Square(c)), constant(q.a)))
	return g(gorgonia.Add(quad, lin))
}

// constant returns a float64 scalar constant node.
func constant(v float64) *gorgonia.Node { return gorgonia.NewConstant(v) }

// buildExpr runs a builder of a loss expression and turns an error or a
// Gorgonia panic (Gorgonia panics on some shape errors) into an error
// wrapping ErrExpr, so that no panic crosses the package boundary.
func buildExpr(name string, f func() (*gorgonia.Node, error)) (n *gorgonia.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				n, err = nil, fmt.Errorf("%w: %s: %w", ErrExpr, name, e)
				return
			}
			n, err = nil, fmt.Errorf("%w: %s: %v", ErrExpr, name, r)
		}
	}()
	n, err = f()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrExpr, name, err)
	}
	return n, nil
}
