package losstest

import (
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
)

// TestBuiltinLossesConform runs the kit on every built-in loss.
func TestBuiltinLossesConform(t *testing.T) {
	cs := Cases()
	if len(cs) < len(losses.All()) {
		t.Fatalf("%d cases for %d losses", len(cs), len(losses.All()))
	}
	for _, c := range cs {
		Run(t, c)
	}
}

// The broken losses below are the logistic loss with one defect each; the
// kit must find every defect, in the check named.

// gradOff scales the derivative by 1.01, in Grad and Deriv alike.
type gradOff struct{ losses.Logistic }

func (l gradOff) Deriv(z, y float64) float64 { return 1.01 * l.Logistic.Deriv(z, y) }
func (l gradOff) Grad(dst, z []float64, y float64) float64 {
	v := l.Logistic.Grad(dst, z, y)
	dst[0] *= 1.01
	return v
}

// hessOff doubles the second derivative, in Hess and Deriv2 alike.
type hessOff struct{ losses.Logistic }

func (l hessOff) Deriv2(z, y float64) float64 { return 2 * l.Logistic.Deriv2(z, y) }
func (l hessOff) Hess(dst, z []float64, y float64) {
	l.Logistic.Hess(dst, z, y)
	dst[0] *= 2
}

// lzLow states L_z = 0.9 < 1.
type lzLow struct{ losses.Logistic }

func (l lzLow) Constants(d losses.Domain) (losses.Constants, error) {
	c, err := l.Logistic.Constants(d)
	c.Lz = 0.9
	return c, err
}

// szLow states S_z = 0.2 < 1/4.
type szLow struct{ losses.Logistic }

func (l szLow) Constants(d losses.Domain) (losses.Constants, error) {
	c, err := l.Logistic.Constants(d)
	c.Sz = 0.2
	return c, err
}

// concave is logistic - z^2/10, consistent in every method, claimed convex
// (with constants that would hold otherwise).
type concave struct{ losses.Logistic }

func (l concave) Value1(z, y float64) float64 { return l.Logistic.Value1(z, y) - z*z/10 }
func (l concave) Deriv(z, y float64) float64  { return l.Logistic.Deriv(z, y) - z/5 }
func (l concave) Deriv2(z, y float64) float64 { return l.Logistic.Deriv2(z, y) - 0.2 }
func (l concave) Value(z []float64, y float64) float64 {
	return l.Value1(z[0], y)
}
func (l concave) Grad(dst, z []float64, y float64) float64 {
	dst[0] = l.Deriv(z[0], y)
	return l.Value1(z[0], y)
}
func (l concave) Hess(dst, z []float64, y float64) { dst[0] = l.Deriv2(z[0], y) }
func (l concave) Constants(d losses.Domain) (losses.Constants, error) {
	return losses.Constants{Lz: math.Inf(1), Sz: 0.25, Convex: true}, nil
}

// anyLabel accepts every label.
type anyLabel struct{ losses.Logistic }

func (anyLabel) CheckLabel(float64, int) error { return nil }

// marginOff returns from Value1 a value one ulp above Value's.
type marginOff struct{ losses.Logistic }

func (l marginOff) Value1(z, y float64) float64 {
	return math.Nextafter(l.Logistic.Value1(z, y), math.Inf(1))
}

// allOff returns from Parts1 a second derivative one ulp above Deriv2's.
type allOff struct{ losses.Logistic }

func (l allOff) Parts1(z, y float64) (float64, float64, float64, float64) {
	plus, e, d1, d2 := l.Logistic.Parts1(z, y)
	return plus, e, d1, math.Nextafter(d2, math.Inf(1))
}

// c2Claim is the Huber loss claimed twice continuously differentiable.
type c2Claim struct{ losses.Huber }

func (l c2Claim) Constants(d losses.Domain) (losses.Constants, error) {
	c, err := l.Huber.Constants(d)
	c.C2 = true
	return c, err
}

// hingeSmooth is the hinge loss max(0, 1 - y z), consistent in every
// method (its curvature is 0 off the kink), claimed smooth.
type hingeSmooth struct{}

func (hingeSmooth) Name() string                           { return "hinge" }
func (hingeSmooth) Task() losses.Task                      { return losses.Binary }
func (hingeSmooth) Outputs(int) int                        { return 1 }
func (hingeSmooth) CheckLabel(y float64, c int) error      { return losses.Logistic{}.CheckLabel(y, c) }
func (hingeSmooth) Value1(z, y float64) float64            { return math.Max(0, 1-y*z) }
func (hingeSmooth) Deriv2(float64, float64) float64        { return 0 }
func (l hingeSmooth) Value(z []float64, y float64) float64 { return l.Value1(z[0], y) }
func (hingeSmooth) Hess(dst, _ []float64, _ float64)       { dst[0] = 0 }
func (hingeSmooth) Deriv(z, y float64) float64 {
	if y*z < 1 {
		return -y
	}
	return 0
}
func (l hingeSmooth) Grad(dst, z []float64, y float64) float64 {
	dst[0] = l.Deriv(z[0], y)
	return l.Value1(z[0], y)
}
func (hingeSmooth) Constants(losses.Domain) (losses.Constants, error) {
	return losses.Constants{Lz: 1, Sz: 0.25, Convex: true, Smooth: true}, nil
}

// rankLow is softmax with its Hessian's rank claimed K - 2.
type rankLow struct{ losses.Softmax }

func (l rankLow) Constants(d losses.Domain) (losses.Constants, error) {
	c, err := l.Softmax.Constants(d)
	c.Rank--
	return c, err
}

// traceLow is softmax with RankSz claimed 0.9/K.
type traceLow struct{ losses.Softmax }

func (l traceLow) Constants(d losses.Domain) (losses.Constants, error) {
	c, err := l.Softmax.Constants(d)
	c.RankSz *= 0.9
	return c, err
}

// noMargin hides the Margin methods of a K = 1 loss.
type noMargin struct{ l losses.Loss }

func (n noMargin) Name() string                                        { return n.l.Name() }
func (n noMargin) Task() losses.Task                                   { return n.l.Task() }
func (n noMargin) Outputs(c int) int                                   { return n.l.Outputs(c) }
func (n noMargin) CheckLabel(y float64, c int) error                   { return n.l.CheckLabel(y, c) }
func (n noMargin) Value(z []float64, y float64) float64                { return n.l.Value(z, y) }
func (n noMargin) Grad(dst, z []float64, y float64) float64            { return n.l.Grad(dst, z, y) }
func (n noMargin) Hess(dst, z []float64, y float64)                    { n.l.Hess(dst, z, y) }
func (n noMargin) Constants(d losses.Domain) (losses.Constants, error) { return n.l.Constants(d) }

// TestBrokenLossesFail is the kit's negative control: every defect fails
// the check that looks for it.
func TestBrokenLossesFail(t *testing.T) {
	cases := []struct {
		loss    losses.Loss
		check   string
		classes int
	}{
		{gradOff{}, "grad:", 0},
		{hessOff{}, "hess:", 0},
		{lzLow{}, "constants:", 0},
		{szLow{}, "constants:", 0},
		{concave{}, "constants:", 0},
		{anyLabel{}, "labels:", 0},
		{marginOff{}, "margin:", 0},
		{allOff{}, "margin:", 0},
		{noMargin{losses.Logistic{}}, "margin:", 0},
		{c2Claim{losses.Huber{Delta: 1}}, "c2:", 0},
		{hingeSmooth{}, "smooth:", 0},
		{rankLow{}, "constants:", 3},
		{traceLow{}, "constants:", 3},
	}
	for _, c := range cases {
		err := Check(Case{Name: "broken", Loss: c.loss, Classes: c.classes, Domain: losses.Domain{Kappa: 1, Classes: c.classes}})
		if err == nil || !strings.Contains(err.Error(), c.check) {
			t.Errorf("%T: Check = %v, want a failure of %s", c.loss, err, strings.TrimSuffix(c.check, ":"))
		}
	}
}
