package clip

import "math"

// Bound is a clipping norm C > 0 for gradients of n products.
type Bound struct {
	c    float64 // C
	down float64 // 1 - slack(n)
	fast float64 // C (1 - slack(n)), 0 for a C too small for it
	n    int
}

// New returns the bound of norm C > 0 (finite) for gradients of n >= 1
// products. It panics otherwise (a programmer's error: the callers check
// their settings first).
func New(C float64, n int) Bound {
	if !(C > 0 && C <= math.MaxFloat64) || n < 1 {
		panic("clip: a clipping norm must be finite and > 0 for at least one product")
	}
	b := Bound{c: C, down: 1 - slack(n), n: n}
	if C >= 0x1p-900 {
		b.fast = C * b.down
	}
	return b
}

// slack is the relative allowance of a norm of n products computed by
// within: eight times its rounding error bound (n+2)/2 ulps of the sum of
// squares and the square root, plus a margin.
func slack(n int) float64 { return float64(n+16) * 0x1p-50 }

// Fast reports whether a gradient whose norm the caller computed as est
// needs no scaling: est at most C (1 - 8(n+16) 2^-53). It is exact (a
// gradient it accepts has norm at most C) when est is within a relative
// 4(n+16) 2^-53 of the exact norm of the rounded products, as the norm of
// a row summed in float64 times a scalar is. A NaN est is not accepted.
func (b Bound) Fast(est float64) bool { return est <= b.fast }

// Scale scales a, when needed, so that the rounded products a_k x_j
// (len(a) len(x) of them, at most n) have exact L2 norm at most C, and
// reports whether it scaled. It scales each a_k by c = C (1 - slack)^2 /
// (||a|| ||x||), rounded, and then, until the bound on the norm of the
// products holds (once, but for rounding), by factors 1 - slack, its
// square, and so on: a subnormal scale may make the gradient zero, within
// C too. a and x must be finite (a NaN or infinite element is the
// caller's to count: Scale panics).
func (b Bound) Scale(a, x []float64) bool {
	if len(a)*len(x) > b.n {
		panic("clip: more products than the bound was made for")
	}
	if b.within(a, x) {
		return false
	}
	ra, ea := scaledNorm(a)
	rx, ex := scaledNorm(x)
	fc, ec := math.Frexp(b.c)
	c := math.Ldexp(fc*b.down*b.down/(ra*rx), ec-ea-ex)
	if !(c < 1) {
		c = b.down // the products are within rounding of C
	}
	for k := range a {
		a[k] *= c
	}
	for f := b.down; !b.within(a, x); f *= f {
		for k := range a {
			a[k] *= f
		}
	}
	return true
}

// within reports whether the products a_k x_j, each rounded, have a norm
// computed at most C (1 - slack(n)) in units of the largest product's
// power of two, which bounds their exact norm by C.
func (b Bound) within(a, x []float64) bool {
	m := 0.0
	for _, ak := range a {
		for _, xj := range x {
			m = max(m, math.Abs(float64(ak*xj)))
		}
	}
	switch {
	case m == 0:
		return true
	case !(m <= b.c):
		return false // a product above C, or NaN
	}
	// m <= C: 2^-e m and 2^-e C are at least 1/2, exact.
	_, e := math.Frexp(m)
	s := 0.0
	for _, ak := range a {
		for _, xj := range x {
			q := math.Ldexp(float64(ak*xj), -e)
			s += q * q
		}
	}
	return math.Sqrt(s) <= math.Ldexp(b.c, -e)*b.down
}

// scaledNorm returns the L2 norm of v as r 2^e, r in [1/2, sqrt(len(v))],
// without overflow or underflow. It panics for a zero, infinite or NaN v.
func scaledNorm(v []float64) (r float64, e int) {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	if m == 0 || !(m <= math.MaxFloat64) {
		panic("clip: a zero, infinite or NaN vector scaled")
	}
	_, e = math.Frexp(m)
	s := 0.0
	for _, x := range v {
		q := math.Ldexp(x, -e)
		s += q * q
	}
	return math.Sqrt(s), e
}
