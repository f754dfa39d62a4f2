package glm

import "math"

// The clipped scalar loss of Config.Clip: clipping the per-example
// gradient l'(z) x to norm G clamps the margin derivative to [-c, c], c =
// G/||x||, and the loss whose derivative that is continues l linearly
// beyond the points where the clamp starts (a Huberized loss).

// deriv returns the margin derivative of the clipped scalar loss: l'
// clamped to [-c, c].
func (o *Objective) deriv(z, y, c float64) float64 {
	return math.Max(-c, math.Min(c, o.margin.Deriv(z, y)))
}

// deriv2 returns the second margin derivative of the clipped scalar loss:
// that of l where |l'| <= c, 0 where the clamp is active.
func (o *Objective) deriv2(z, y, c float64) float64 {
	if math.Abs(o.margin.Deriv(z, y)) > c {
		return 0
	}
	return o.margin.Deriv2(z, y)
}

// value1 returns the clipped scalar loss: l(z) where |l'(z)| <= c, and
// beyond the point b where the clamp starts (l'(b) = c for l'(z) > c, -c
// for l'(z) < -c, found by bisection on the monotone l'), its linear
// extension l(b) + l'_c (z - b). It is NaN when no such b exists within
// 2^64 of z, which a convex smooth loss with a minimizer never gives: its
// derivative takes every value strictly between its infimum and supremum,
// and 0 lies between them.
func (o *Objective) value1(z, y, c float64) float64 {
	g := o.margin.Deriv(z, y)
	if math.Abs(g) <= c {
		return o.margin.Value1(z, y)
	}
	level := math.Copysign(c, g)
	// b lies on the side of z where l' moves towards the level: below z
	// for g > c (l' non-decreasing), above for g < -c. The points on that
	// side of b form a half-line, {l' <= c} or {l' >= -c}, which the
	// doubling steps reach even where the band |l'| <= c is narrow (a
	// Huber or squared loss, whose l' crosses it within 2c).
	dir := -1.0
	inside := func(t float64) bool { return o.margin.Deriv(t, y) <= c }
	if g < 0 {
		dir = 1
		inside = func(t float64) bool { return o.margin.Deriv(t, y) >= -c }
	}
	near, far := z, z
	found := false
	for s := 1.0; s < 0x1p64; s *= 2 {
		far = z + dir*s
		if inside(far) {
			found = true
			break
		}
		near = far
	}
	if !found {
		return math.NaN()
	}
	// Bisect between near (clamped) and far (inside) to the last float.
	for {
		mid := near + (far-near)/2
		if mid == near || mid == far {
			break
		}
		if inside(mid) {
			far = mid
		} else {
			near = mid
		}
	}
	return o.margin.Value1(far, y) + level*(z-far)
}
