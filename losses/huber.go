package losses

// DefaultHuberDelta is the threshold delta that ByName uses for "huber".
const DefaultHuberDelta = 1.0

// Huber is the Huber regression loss of the residual r = z - y with
// threshold delta > 0 (Huber 1964, "Robust estimation of a location
// parameter", Ann. Math. Statist. 35(1)):
//
//	l = r^2/2                  if |r| <= delta,
//	l = delta(|r| - delta/2)   otherwise.
//
// It is convex, with dl/dz = clamp(r, -delta, delta), so |dl/dz| <= delta =
// L_z, and 0 <= d2l/dz2 <= 1 = S_z. Unlike Squared it is Lipschitz on the
// whole space, so it needs neither a weight radius nor a label bound
// (DESIGN.md). Labels may be any finite real number.
//
// The zero value is not usable: Delta must be finite and > 0. NewHuber
// checks it, and so does Constants, which the trainer calls before any
// training; the other methods do not check Delta.
type Huber struct {
	// Delta > 0 is the residual beyond which the loss grows linearly.
	Delta float64
}

// NewHuber returns the Huber loss with threshold delta, or an error wrapping
// ErrParam if delta is not finite and positive.
func NewHuber(delta float64) (Huber, error) {
	if err := checkParam("huber", "delta", delta); err != nil {
		return Huber{}, err
	}
	return Huber{Delta: delta}, nil
}

func (l Huber) q() quadLin { return quadLin{lo: -l.Delta, hi: l.Delta, a: 0.5} }

// Name returns "huber".
func (Huber) Name() string { return "huber" }

// Task returns Regression.
func (Huber) Task() Task { return Regression }

// Outputs returns 1.
func (Huber) Outputs(int) int { return 1 }

// CheckLabel accepts any finite y.
func (Huber) CheckLabel(y float64, _ int) error { return checkFinite(y) }

// Value1 returns l(z, y).
func (l Huber) Value1(z, y float64) float64 { return l.q().value(z - y) }

// Deriv returns dl/dz = clamp(z-y, -delta, delta).
func (l Huber) Deriv(z, y float64) float64 { return l.q().deriv(z - y) }

// Deriv2 returns d2l/dz2: 1 if |z-y| <= delta, else 0.
func (l Huber) Deriv2(z, y float64) float64 { return l.q().deriv2(z - y) }

// Value returns l(z[0], y). It panics if len(z) != 1.
func (l Huber) Value(z []float64, y float64) float64 { return scalarValue(l, z, y) }

// Grad writes dl/dz into dst and returns l(z, y).
func (l Huber) Grad(dst, z []float64, y float64) float64 { return scalarGrad(l, dst, z, y) }

// Hess writes d2l/dz2 into dst.
func (l Huber) Hess(dst, z []float64, y float64) { scalarHess(l, dst, z, y) }

// Constants returns L_z = delta, S_z = 1, convex and smooth (the clamp is
// 1-Lipschitz) but not C^2 (l” jumps from 1 to 0 at |z - y| = delta), on
// any domain, or an error wrapping ErrParam if Delta is not finite and
// positive.
func (l Huber) Constants(Domain) (Constants, error) {
	if err := checkParam("huber", "delta", l.Delta); err != nil {
		return Constants{}, err
	}
	return Constants{Lz: l.Delta, Sz: 1, Convex: true, Smooth: true}, nil
}
