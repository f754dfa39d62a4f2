package losses

import (
	"fmt"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Squared is the squared loss l(z, y) = (z - y)^2 / 2 for real labels.
//
// It is convex and 1-smooth (d2l/dz2 = 1), but not Lipschitz: dl/dz = z - y
// is unbounded. Its constants therefore exist only on a bounded domain: the
// weights projected onto ||w|| <= R (Domain.Radius, set by the trainer's
// Radius) and the labels bounded by |y| <= B (Domain.LabelBound, set by the
// trainer's LabelBound). With rows ||x|| <= kappa, Cauchy-Schwarz gives
// |z| = |<w, x>| <= R kappa, so |dl/dz| <= |z| + |y| <= R kappa + B = L_z
// (DESIGN.md). Huber is the Lipschitz alternative that needs neither bound.
//
// The zero value is ready to use.
type Squared struct{}

// Name returns "squared".
func (Squared) Name() string { return "squared" }

// Task returns Regression.
func (Squared) Task() Task { return Regression }

// Outputs returns 1.
func (Squared) Outputs(int) int { return 1 }

// CheckLabel accepts any finite y; the bound |y| <= B is the trainer's.
func (Squared) CheckLabel(y float64, _ int) error { return checkFinite(y) }

// Value1 returns (z - y)^2 / 2.
func (Squared) Value1(z, y float64) float64 {
	r := z - y
	return r * r / 2
}

// Deriv returns dl/dz = z - y.
func (Squared) Deriv(z, y float64) float64 { return z - y }

// Deriv2 returns d2l/dz2 = 1.
func (Squared) Deriv2(float64, float64) float64 { return 1 }

// Value returns l(z[0], y). It panics if len(z) != 1.
func (l Squared) Value(z []float64, y float64) float64 { return scalarValue(l, z, y) }

// Grad writes dl/dz into dst and returns l(z, y).
func (l Squared) Grad(dst, z []float64, y float64) float64 { return scalarGrad(l, dst, z, y) }

// Hess writes d2l/dz2 into dst.
func (l Squared) Hess(dst, z []float64, y float64) { scalarHess(l, dst, z, y) }

// Constants returns L_z = Radius*Kappa + LabelBound, S_z = 1, convex,
// smooth and C^2 (l” = 1). It returns an error wrapping ErrDomain unless
// dom.Radius (the weight radius R), dom.LabelBound (B) and dom.Kappa (the
// row bound) are all positive and finite: without them the loss is not
// Lipschitz. The huber loss is Lipschitz without them.
func (Squared) Constants(dom Domain) (Constants, error) {
	if !(dom.Radius > 0 && dom.LabelBound > 0 && dom.Kappa > 0) {
		return Constants{}, fmt.Errorf("%w: squared loss needs radius R, label bound B, row bound kappa > 0 (have %v, %v, %v); or use huber",
			ErrDomain, dom.Radius, dom.LabelBound, dom.Kappa)
	}
	lz := dom.Radius*dom.Kappa + dom.LabelBound
	if !check.Finite(lz) {
		return Constants{}, fmt.Errorf("%w: squared loss needs finite R, B and kappa (have R = %v, B = %v, kappa = %v)", ErrDomain, dom.Radius, dom.LabelBound, dom.Kappa)
	}
	return Constants{Lz: lz, Sz: 1, Convex: true, Smooth: true, C2: true, LipHess: true}, nil
}
