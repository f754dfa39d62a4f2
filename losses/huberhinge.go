package losses

// DefaultHuberHingeH is the width h that ByName uses for "huber-hinge".
const DefaultHuberHingeH = 0.5

// HuberHinge is the smoothed (Huberized) hinge loss of width h > 0 for labels
// y in {-1, +1} (Chapelle 2007, "Training a support vector machine in the
// primal", Neural Computation 19(5); the loss of the Huber SVM of Wu et al.
// 2017, "Bolt-on Differential Privacy for Scalable Stochastic Gradient
// Descent-based Analytics", SIGMOD). In the margin m = y z,
//
//	l = 0                   if m > 1+h,
//	l = (1+h-m)^2 / (4h)    if |1-m| <= h,
//	l = 1-m                 if m < 1-h.
//
// It is convex and continuously differentiable, with |dl/dz| <= 1 = L_z and
// 0 <= d2l/dz2 <= 1/(2h) = S_z: the derivative in m is -clamp((1+h-m)/(2h), 0, 1),
// and the curvature 1/(2h) is attained on the band. A smaller h is closer to
// the hinge loss but less smooth, which shortens the admissible SGD step.
//
// The zero value is not usable: H must be finite and > 0. NewHuberHinge
// checks it, and so does Constants, which the trainer calls before any
// training, so a literal with a bad H is rejected there; the other methods
// do not check H.
type HuberHinge struct {
	// H > 0 is the half-width of the quadratic band around m = 1.
	H float64
}

// NewHuberHinge returns the smoothed hinge of width h, or an error wrapping
// ErrParam if h is not finite and positive.
func NewHuberHinge(h float64) (HuberHinge, error) {
	if err := checkParam("huber-hinge", "h", h); err != nil {
		return HuberHinge{}, err
	}
	return HuberHinge{H: h}, nil
}

// q is the loss as a function of u = 1+h-m: a parabola u^2/(4h) on [0, 2h],
// zero to the left and the line u-h to the right.
func (l HuberHinge) q() quadLin { return quadLin{lo: 0, hi: 2 * l.H, a: 1 / (4 * l.H)} }

// Name returns "huber-hinge".
func (HuberHinge) Name() string { return "huber-hinge" }

// Task returns Binary.
func (HuberHinge) Task() Task { return Binary }

// Outputs returns 1.
func (HuberHinge) Outputs(int) int { return 1 }

// CheckLabel accepts -1 and +1.
func (HuberHinge) CheckLabel(y float64, _ int) error { return checkSign(y) }

// Value1 returns l(z, y).
func (l HuberHinge) Value1(z, y float64) float64 { return l.q().value(1 + l.H - y*z) }

// Deriv returns dl/dz = -y q'(1+h-yz).
func (l HuberHinge) Deriv(z, y float64) float64 { return -y * l.q().deriv(1+l.H-y*z) }

// Deriv2 returns d2l/dz2: 1/(2h) on the closed band |1-yz| <= h, else 0.
func (l HuberHinge) Deriv2(z, y float64) float64 { return l.q().deriv2(1 + l.H - y*z) }

// Value returns l(z[0], y). It panics if len(z) != 1.
func (l HuberHinge) Value(z []float64, y float64) float64 { return scalarValue(l, z, y) }

// Grad writes dl/dz into dst and returns l(z, y).
func (l HuberHinge) Grad(dst, z []float64, y float64) float64 { return scalarGrad(l, dst, z, y) }

// Hess writes d2l/dz2 into dst.
func (l HuberHinge) Hess(dst, z []float64, y float64) { scalarHess(l, dst, z, y) }

// Constants returns L_z = 1, S_z = 1/(2h), convex and smooth (the
// derivative is piecewise linear and continuous) but not C^2 (l” jumps at
// the ends of the band), on any domain, or an error wrapping ErrParam if H
// is not finite and positive.
func (l HuberHinge) Constants(Domain) (Constants, error) {
	if err := checkParam("huber-hinge", "h", l.H); err != nil {
		return Constants{}, err
	}
	return Constants{Lz: 1, Sz: 1 / (2 * l.H), Convex: true, Smooth: true}, nil
}
