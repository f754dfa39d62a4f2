package regularizers

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrInvalid is returned for a regularizer whose settings are out of range.
var ErrInvalid = errors.New("regularizers: invalid setting")

// ElasticNet is the penalty
//
//	R(w) = Lambda * ((1-L1Ratio)/2 * ||w||_2^2 + L1Ratio * ||w||_1),
//
// the glmnet and scikit-learn convention of docs/DESIGN.md, section 1. The paper writes
// lambda*(gamma*||w||^2 + eta*||w||_1); it maps to Lambda = lambda*(2*gamma + eta)
// and L1Ratio = eta/(2*gamma + eta).
//
// The zero value is no regularization. L2 is ElasticNet{Lambda: l}, L1 is
// ElasticNet{Lambda: l, L1Ratio: 1}.
type ElasticNet struct {
	// Lambda >= 0 is the overall strength.
	Lambda float64
	// L1Ratio in [0, 1] is the share of the L1 part (alpha).
	L1Ratio float64
}

// L2 returns the ridge penalty lambda/2 ||w||^2.
func L2(lambda float64) ElasticNet { return ElasticNet{Lambda: lambda} }

// L1 returns the lasso penalty lambda ||w||_1.
func L1(lambda float64) ElasticNet { return ElasticNet{Lambda: lambda, L1Ratio: 1} }

// Validate returns an error wrapping ErrInvalid if Lambda is negative or not
// finite, or L1Ratio is outside [0, 1].
func (r ElasticNet) Validate() error {
	if !check.NonNegative(r.Lambda) {
		return fmt.Errorf("%w: lambda = %v, want finite >= 0", ErrInvalid, r.Lambda)
	}
	if math.IsNaN(r.L1Ratio) || r.L1Ratio < 0 || r.L1Ratio > 1 {
		return fmt.Errorf("%w: l1 ratio = %v, want in [0, 1]", ErrInvalid, r.L1Ratio)
	}
	return nil
}

// L2Weight returns the weight of the smooth part, Lambda*(1-L1Ratio): the
// gradient of the smooth part at w is L2Weight()*w.
func (r ElasticNet) L2Weight() float64 { return r.Lambda * (1 - r.L1Ratio) }

// L1Weight returns the weight of the L1 part, Lambda*L1Ratio.
func (r ElasticNet) L1Weight() float64 { return r.Lambda * r.L1Ratio }

// StrongConvexity returns mu = Lambda*(1-L1Ratio), the modulus of strong
// convexity of R (the L1 part is convex but adds nothing to mu).
func (r ElasticNet) StrongConvexity() float64 { return r.L2Weight() }

// Value returns R(w).
func (r ElasticNet) Value(w []float64) float64 {
	var sq, abs float64
	for _, v := range w {
		sq += v * v
		abs += math.Abs(v)
	}
	return r.L2Weight()/2*sq + r.L1Weight()*abs
}

// AddSmoothGrad adds the gradient of the smooth (L2) part at w to dst.
// It panics if the lengths differ.
func (r ElasticNet) AddSmoothGrad(dst, w []float64) {
	if len(dst) != len(w) {
		panic("regularizers: length mismatch")
	}
	c := r.L2Weight()
	if c == 0 {
		return
	}
	for i, v := range w {
		dst[i] += c * v
	}
}

// Prox applies, in place, the proximal operator of step*(L1 part):
// soft thresholding at step*L1Weight(),
//
//	w_i <- sign(w_i) * max(|w_i| - step*L1Weight(), 0).
//
// A proximal operator of a convex function is non-expansive, so it keeps an
// SGD step non-expansive (docs/DESIGN.md, section 4). The L2 part is handled in the gradient.
func (r ElasticNet) Prox(w []float64, step float64) {
	SoftThreshold(w, step*r.L1Weight())
}

// SoftThreshold sets w_i <- sign(w_i) * max(|w_i| - t, 0) for t >= 0.
// A NaN w_i stays NaN, so that a diverged iterate is not hidden.
func SoftThreshold(w []float64, t float64) {
	if t <= 0 {
		return
	}
	for i, v := range w {
		switch {
		case v > t:
			w[i] = v - t
		case v < -t:
			w[i] = v + t
		case v <= t && v >= -t:
			w[i] = 0
		}
	}
}

// MinNormSubgrad writes into dst the minimum-norm element of the
// subdifferential of g + R at w, where g is the gradient of the smooth
// data term at w, and returns its L2 norm. It is the stopping statistic for
// a convergence tolerance fixed in advance (docs/DESIGN.md, section 3, route 1 and Remark 8). A NaN in
// g or w gives a NaN norm, never a norm that passes a tolerance.
func (r ElasticNet) MinNormSubgrad(dst, g, w []float64) float64 {
	if len(dst) != len(w) || len(g) != len(w) {
		panic("regularizers: length mismatch")
	}
	c, a := r.L2Weight(), r.L1Weight()
	var sq float64
	for i, v := range w {
		s := g[i] + c*v
		switch {
		case v > 0:
			s += a
		case v < 0:
			s -= a
		default:
			// 0 is in [s-a, s+a] if |s| <= a; otherwise the closest point.
			switch {
			case s > a:
				s -= a
			case s < -a:
				s += a
			case s <= a && s >= -a:
				s = 0
			}
		}
		dst[i] = s
		sq += s * s
	}
	return math.Sqrt(sq)
}
