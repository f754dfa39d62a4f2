package losstest

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
)

// The checks of smoothness, continuity, labels, outputs and margins.

// lipschitzSteps are the distances, relative to 1 + |z|, between the two
// points of checkSmooth's differences.
var lipschitzSteps = []float64{1e-6, 1e-3, 0.1, 1}

// checkSmooth checks a Smooth loss's gradient for the Lipschitz constant
// S_z: ||g(z + t v) - g(z - t v)|| <= 2 t S_z along the axes and the
// directions of checkConstants. A derivative that jumps (a kink that is
// not smooth) fails at the steps that straddle it.
func checkSmooth(c Case, k int, pts []point) []error {
	l := c.Loss
	cons, err := l.Constants(c.Domain)
	if err != nil || !cons.Smooth {
		return nil // no constants: the constants check reports it
	}
	var errs []error
	gp, gm, zp, zm := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	dirs := directions(k)
	for _, p := range pts {
		scale := 1.0
		for _, v := range p.z {
			scale = math.Max(scale, 1+math.Abs(v))
		}
		for _, v := range dirs {
			for _, s := range lipschitzSteps {
				t := s * scale
				for i := range zp {
					zp[i], zm[i] = p.z[i]+t*v[i], p.z[i]-t*v[i]
				}
				l.Grad(gp, zp, p.y)
				l.Grad(gm, zm, p.y)
				var d2 float64
				for i := range gp {
					d2 += (gp[i] - gm[i]) * (gp[i] - gm[i])
				}
				// the rounding of z +- t v moves the points by about
				// 2^-52 scale, which the bound allows for
				if bound := cons.Sz * (2*t + 0x1p-48*scale) * (1 + 1e-9); math.Sqrt(d2) > bound+1e-14 {
					errs = append(errs, fmt.Errorf("smooth: ||g(z+tv) - g(z-tv)|| = %v > 2t S_z = %v at z = %v, t = %v, v = %v, y = %v: the derivative is not S_z-Lipschitz", math.Sqrt(d2), 2*t*cons.Sz, p.z, t, v, p.y))
				}
			}
		}
	}
	return errs
}

// checkLipHess checks a loss that says LipHess: C2, Tz finite >= 0, and
// ||H(z + tv) - H(z - tv)|| <= 2t Tz (spectral norm, through jacobiEigen)
// at every point, direction and step of checkSmooth, with the largest ratio
// above Tz/3 (none needed for Tz = 0).
func checkLipHess(c Case, k int, pts []point) []error {
	l := c.Loss
	cons, err := l.Constants(c.Domain)
	if err != nil || !cons.LipHess {
		return nil
	}
	if !cons.C2 || !check.NonNegative(cons.Tz) {
		return []error{fmt.Errorf("liphess: LipHess with C2 = %v and Tz = %v, want a C2 loss and Tz finite >= 0", cons.C2, cons.Tz)}
	}
	var errs []error
	hp, hm, dh := make([]float64, k*k), make([]float64, k*k), make([]float64, k*k)
	zp, zm := make([]float64, k), make([]float64, k)
	var most float64
	for _, p := range pts {
		scale := 1.0
		for _, v := range p.z {
			scale = math.Max(scale, 1+math.Abs(v))
		}
		for _, v := range directions(k) {
			for _, s := range lipschitzSteps {
				t := s * scale
				for i := range zp {
					zp[i], zm[i] = p.z[i]+t*v[i], p.z[i]-t*v[i]
				}
				l.Hess(hp, zp, p.y)
				l.Hess(hm, zm, p.y)
				for i := range dh {
					dh[i] = hp[i] - hm[i]
				}
				var norm float64
				for _, e := range jacobiEigen(k, dh) {
					norm = math.Max(norm, math.Abs(e))
				}
				if norm > cons.Tz*2*t*(1+1e-6)+1e-12 {
					errs = append(errs, fmt.Errorf("liphess: ||H(z+tv) - H(z-tv)|| = %v > 2t Tz = %v at z = %v, t = %v, v = %v, y = %v", norm, 2*t*cons.Tz, p.z, t, v, p.y))
				}
				most = math.Max(most, norm/(2*t))
			}
		}
	}
	if cons.Tz > 0 && most < cons.Tz/3 {
		errs = append(errs, fmt.Errorf("liphess: the Hessian moves by at most %v per unit, below Tz/3 = %v: Tz is far from sharp", most, cons.Tz/3))
	}
	return errs
}

// checkC2 checks that a loss that says it is C2 is also Smooth, and that
// its Hessian does not jump between the two points of any finite
// difference of checkHess (kink).
func checkC2(c Case, k int, pts []point) []error {
	l := c.Loss
	cons, err := l.Constants(c.Domain)
	if err != nil || !cons.C2 {
		return nil
	}
	var errs []error
	if !cons.Smooth {
		errs = append(errs, errors.New("c2: a C2 loss must be Smooth"))
	}
	for _, p := range pts {
		z := append([]float64(nil), p.z...)
		for j := range z {
			if kink(l, z, p.y, j, step(z[j])) {
				errs = append(errs, fmt.Errorf("c2: the Hessian jumps across z_%d at z = %v, y = %v", j, z, p.y))
			}
		}
	}
	return errs
}

func checkLabels(c Case, k int, _ []point) []error {
	l := c.Loss
	var errs []error
	for _, y := range labels(c, k) {
		if err := l.CheckLabel(y, c.Classes); err != nil {
			errs = append(errs, fmt.Errorf("labels: CheckLabel(%v, %d) = %v, want nil", y, c.Classes, err))
		}
	}
	type bad struct {
		y       float64
		classes int
	}
	bads := []bad{{math.NaN(), c.Classes}, {math.Inf(1), c.Classes}, {math.Inf(-1), c.Classes}}
	switch l.Task() {
	case losses.Binary:
		bads = append(bads, bad{0, c.Classes}, bad{2, c.Classes}, bad{-0.5, c.Classes})
	case losses.Multiclass:
		bads = append(bads, bad{-1, c.Classes}, bad{float64(c.Classes), c.Classes}, bad{0.5, c.Classes}, bad{0, 1}, bad{0, 0})
	}
	for _, b := range bads {
		if err := l.CheckLabel(b.y, b.classes); !errors.Is(err, losses.ErrLabel) {
			errs = append(errs, fmt.Errorf("labels: CheckLabel(%v, %d) = %v, want an error wrapping losses.ErrLabel", b.y, b.classes, err))
		}
	}
	return errs
}

func checkOutputs(c Case, k int, _ []point) []error {
	l := c.Loss
	if l.Task() == losses.Multiclass {
		if k != c.Classes {
			return []error{fmt.Errorf("outputs: Outputs(%d) = %d for a multiclass loss", c.Classes, k)}
		}
		return nil
	}
	for _, classes := range []int{0, 1, 2, 5} {
		if got := l.Outputs(classes); got != 1 {
			return []error{fmt.Errorf("outputs: Outputs(%d) = %d for a scalar loss, want 1", classes, got)}
		}
	}
	return nil
}

func checkMargin(c Case, k int, pts []point) []error {
	if k != 1 {
		return nil
	}
	m, ok := c.Loss.(losses.Margin)
	if !ok {
		return []error{errors.New("margin: a K = 1 loss does not implement losses.Margin")}
	}
	var errs []error
	var g, hs [1]float64
	for _, p := range pts {
		z, y := p.z[0], p.y
		v := c.Loss.Grad(g[:], p.z, y)
		c.Loss.Hess(hs[:], p.z, y)
		if v1 := m.Value1(z, y); v1 != v || v1 != c.Loss.Value(p.z, y) {
			errs = append(errs, fmt.Errorf("margin: Value1 = %v, Grad returns %v, Value %v at z = %v, y = %v", v1, v, c.Loss.Value(p.z, y), z, y))
		}
		if d := m.Deriv(z, y); d != g[0] {
			errs = append(errs, fmt.Errorf("margin: Deriv = %v, Grad %v at z = %v, y = %v", d, g[0], z, y))
		}
		if d2 := m.Deriv2(z, y); d2 != hs[0] {
			errs = append(errs, fmt.Errorf("margin: Deriv2 = %v, Hess %v at z = %v, y = %v", d2, hs[0], z, y))
		}
		if a, ok := c.Loss.(losses.LogisticParts); ok {
			plus, e, ad, ad2 := a.Parts1(z, y)
			if av := plus + math.Log1p(e); !sameBits(av, v) || !sameBits(ad, g[0]) || !sameBits(ad2, hs[0]) {
				errs = append(errs, fmt.Errorf("margin: Parts1 = (%v + log1p(%v), %v, %v), Grad and Hess (%v, %v, %v) at z = %v, y = %v", plus, e, ad, ad2, v, g[0], hs[0], z, y))
			}
		}
	}
	return errs
}

// sameBits reports whether a and b are the same float64, signed zeros
// apart.
func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
