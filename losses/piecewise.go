package losses

import (
	"errors"
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
)

var (
	// ErrParam is returned for a loss whose parameter (a width or a
	// threshold) is not finite and positive.
	ErrParam = errors.New("losses: invalid loss parameter")
	// ErrExpr is returned when a loss expression cannot be built, for
	// example for a margin or label node of the wrong shape.
	ErrExpr = errors.New("losses: cannot build expression")
)

// checkParam returns an error wrapping ErrParam unless v is finite and > 0.
func checkParam(loss, name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fmt.Errorf("%w: %s %s = %v, want finite > 0", ErrParam, loss, name, v)
	}
	return nil
}

// quadLin is the C^1 function of one variable that is the parabola a*x^2 on
// [lo, hi] (lo <= 0 <= hi, a > 0) and continues linearly outside it with the
// slopes 2a*hi (right) and 2a*lo (left):
//
//	q(x) = a*c^2 + 2a*hi*(x-hi)_+ + 2a*(-lo)*(lo-x)_+,  c = clamp(x, lo, hi).
//
// It is convex, with |q'| <= 2a*max(hi, -lo) and 0 <= d2q/dx2 <= 2a. The Huber
// loss (lo = -delta, hi = delta, a = 1/2) and the smoothed hinge of Chapelle
// (2007) (lo = 0, hi = 2h, a = 1/(4h), in u = 1+h-m) are both of this form, so
// both share one value, derivative and expression.
type quadLin struct{ lo, hi, a float64 }

func (q quadLin) value(x float64) float64 {
	switch {
	case x > q.hi:
		return q.a*q.hi*q.hi + 2*q.a*q.hi*(x-q.hi)
	case x < q.lo:
		return q.a*q.lo*q.lo + 2*q.a*q.lo*(x-q.lo)
	}
	return q.a * x * x
}

func (q quadLin) deriv(x float64) float64 {
	return 2 * q.a * math.Max(q.lo, math.Min(x, q.hi))
}

// deriv2 returns the second derivative of q at x, taking the curvature 2a
// on the closed interval [lo, hi] (it jumps at lo and hi; either one-sided
// value is a valid bound).
func (q quadLin) deriv2(x float64) float64 {
	if x >= q.lo && x <= q.hi {
		return 2 * q.a
	}
	return 0
}

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
