package losses

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

var (
	// ErrParam is returned for a loss whose parameter (a width or a
	// threshold) is not finite and positive.
	ErrParam = errors.New("losses: invalid loss parameter")
)

// checkParam returns an error wrapping ErrParam unless v is finite and > 0.
func checkParam(loss, name string, v float64) error {
	if !check.Positive(v) {
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
// both share one value and derivative (and, in package graph, one expression).
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
