package losses

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The tests below are deterministic: every random point comes from a fixed
// seed, and every bound that must be approached is approached by a fixed
// extreme point, so their false-rejection probability is 0. The sampled
// points only widen the coverage.

// scalarCase is a K = 1 loss with a domain and a generator of (z, y) points
// in it, plus fixed points at its kinks and extremes.
type scalarCase struct {
	loss    Loss
	dom     Domain
	label   func(r *rand.Rand) float64
	margin  func(r *rand.Rand, y float64) float64
	special [][2]float64 // (z, y)
}

func binaryLabel(r *rand.Rand) float64 { return float64(2*r.IntN(2) - 1) }
func realLabel(r *rand.Rand) float64   { return 3 * r.NormFloat64() }

// wideMargin draws margins on scales from 1e-3 to 1e3.
func wideMargin(r *rand.Rand, _ float64) float64 {
	scales := []float64{1e-3, 1, 3, 30, 1e3}
	return scales[r.IntN(len(scales))] * r.NormFloat64()
}

// hingeSpecial returns, for both labels, the margins m = y z at the kinks
// 1 -+ h, in the band and far out.
func hingeSpecial(h float64) [][2]float64 {
	var pts [][2]float64
	for _, y := range []float64{-1, 1} {
		for _, m := range []float64{1 - h, 1 + h, 1, 0, 1 - h/2, -1e3, 1e3, -40} {
			pts = append(pts, [2]float64{m * y, y})
		}
	}
	return pts
}

// huberSpecial returns residuals at the kinks +-delta, at 0 and far out.
func huberSpecial(delta float64) [][2]float64 {
	var pts [][2]float64
	for _, y := range []float64{0, 1.5, -7} {
		for _, r := range []float64{delta, -delta, 0, 1e3, -1e3, delta / 2} {
			pts = append(pts, [2]float64{y + r, y})
		}
	}
	return pts
}

// squaredDom is a bounded domain for the squared loss: |z| <= 2*1.5, |y| <= 4.
var squaredDom = Domain{Kappa: 1.5, Radius: 2, LabelBound: 4}

// scalarCases lists the scalar losses by hand, not by ranging over All: the
// tightness checks need each loss's kinks and extreme points, and a second
// width or threshold of the parametrized ones. The conformance kit
// (internal/losstest, TestConformance) covers every loss of All without
// them, and TestScalarCasesCoverAll fails for a loss missing here.
func scalarCases() []scalarCase {
	return []scalarCase{
		{
			loss: Logistic{}, label: binaryLabel, margin: wideMargin,
			special: [][2]float64{{0, 1}, {0, -1}, {-40, 1}, {40, -1}, {1e3, 1}, {-1e3, 1}, {40, 1}},
		},
		{loss: HuberHinge{H: 0.5}, label: binaryLabel, margin: wideMargin, special: hingeSpecial(0.5)},
		{loss: HuberHinge{H: 0.05}, label: binaryLabel, margin: wideMargin, special: hingeSpecial(0.05)},
		{loss: Huber{Delta: 1}, label: realLabel, margin: wideMargin, special: huberSpecial(1)},
		{loss: Huber{Delta: 0.3}, label: realLabel, margin: wideMargin, special: huberSpecial(0.3)},
		{
			loss: Squared{}, dom: squaredDom,
			label: func(r *rand.Rand) float64 { return squaredDom.LabelBound * (2*r.Float64() - 1) },
			margin: func(r *rand.Rand, _ float64) float64 {
				return squaredDom.Radius * squaredDom.Kappa * (2*r.Float64() - 1)
			},
			special: [][2]float64{{3, -4}, {-3, 4}, {0, 0}, {1, 1}},
		},
	}
}

// TestScalarCasesCoverAll checks that every built-in loss has a
// hand-written case: scalarCases for a scalar loss, the softmax case of
// TestConstantsHoldAndAreTight for the multiclass one.
func TestScalarCasesCoverAll(t *testing.T) {
	have := map[string]bool{Softmax{}.Name(): true}
	for _, c := range scalarCases() {
		have[c.loss.Name()] = true
	}
	for _, l := range All() {
		if !have[l.Name()] {
			t.Errorf("loss %q has no case in scalarCases: add its kinks and extreme points", l.Name())
		}
	}
}

func (c scalarCase) name() string {
	switch l := c.loss.(type) {
	case HuberHinge:
		return fmt.Sprintf("%s(h=%v)", l.Name(), l.H)
	case Huber:
		return fmt.Sprintf("%s(delta=%v)", l.Name(), l.Delta)
	}
	return c.loss.Name()
}

// points returns the special points followed by n random ones.
func (c scalarCase) points(seed uint64, n int) [][2]float64 {
	r := rand.New(rand.NewPCG(seed, 0x1055))
	pts := append([][2]float64(nil), c.special...)
	for i := 0; i < n; i++ {
		y := c.label(r)
		pts = append(pts, [2]float64{c.margin(r, y), y})
	}
	return pts
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*(1+math.Abs(want)) }

func TestScalarDerivativesFiniteDifference(t *testing.T) {
	for _, c := range scalarCases() {
		t.Run(c.name(), func(t *testing.T) {
			m := c.loss.(Margin)
			checked := 0
			for _, p := range c.points(1, 2000) {
				z, y := p[0], p[1]
				h := 1e-4 * (1 + math.Abs(z))
				// A kink of l'' inside [z-h, z+h] spoils both differences.
				if math.Abs(m.Deriv2(z-h, y)-m.Deriv2(z+h, y)) > 1e-3 {
					continue
				}
				checked++
				fd1 := (m.Value1(z+h, y) - m.Value1(z-h, y)) / (2 * h)
				if d := m.Deriv(z, y); !near(d, fd1, 1e-6) {
					t.Errorf("l'(%v, %v) = %v, finite difference %v", z, y, d, fd1)
				}
				fd2 := (m.Deriv(z+h, y) - m.Deriv(z-h, y)) / (2 * h)
				if d2 := m.Deriv2(z, y); !near(d2, fd2, 1e-6) {
					t.Errorf("l''(%v, %v) = %v, finite difference %v", z, y, d2, fd2)
				}
				// The vector methods agree with the scalar ones.
				var g, hs [1]float64
				v := c.loss.Grad(g[:], []float64{z}, y)
				c.loss.Hess(hs[:], []float64{z}, y)
				if v != m.Value1(z, y) || v != c.loss.Value([]float64{z}, y) || g[0] != m.Deriv(z, y) || hs[0] != m.Deriv2(z, y) {
					t.Errorf("vector and scalar methods disagree at (%v, %v)", z, y)
				}
			}
			if checked < 1500 {
				t.Errorf("only %d points away from kinks checked", checked)
			}
		})
	}
}

// sups holds the extremes of the derivatives over a sample.
type sups struct{ grad, curv, minCurv float64 }

// checkConstants returns an error if the sample violates the constants:
// a gradient norm above Lz, a curvature above Sz, or a negative curvature
// (up to rounding) when the loss is said to be convex.
func checkConstants(c Constants, s sups) error {
	const tol = 1e-12
	var errs []error
	if s.grad > c.Lz*(1+tol) {
		errs = append(errs, fmt.Errorf("sup |l'| = %v > L_z = %v", s.grad, c.Lz))
	}
	if s.curv > c.Sz*(1+tol) {
		errs = append(errs, fmt.Errorf("sup l'' = %v > S_z = %v", s.curv, c.Sz))
	}
	if c.Convex && s.minCurv < -tol {
		errs = append(errs, fmt.Errorf("inf l'' = %v < 0 for a convex loss", s.minCurv))
	}
	return errors.Join(errs...)
}

func scalarSups(c scalarCase) sups {
	m := c.loss.(Margin)
	s := sups{minCurv: math.Inf(1)}
	for _, p := range c.points(2, 5000) {
		s.grad = math.Max(s.grad, math.Abs(m.Deriv(p[0], p[1])))
		d2 := m.Deriv2(p[0], p[1])
		s.curv = math.Max(s.curv, d2)
		s.minCurv = math.Min(s.minCurv, d2)
	}
	return s
}

// softmaxSups samples K in {2, 3, 5, 10}, margins on scales 1e-2 to 1e3, and
// fixed extremes: equal margins (the largest curvature 1/2 for K = 2) and one
// wrong class far ahead (gradient norm -> sqrt(2)).
func softmaxSups(t *testing.T) sups {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 0x50f7))
	s := sups{minCurv: math.Inf(1)}
	add := func(z []float64, y float64) {
		k := len(z)
		g := make([]float64, k)
		Softmax{}.Grad(g, z, y)
		s.grad = math.Max(s.grad, math.Sqrt(sqNorm(g)))
		h := make([]float64, k*k)
		Softmax{}.Hess(h, z, y)
		vals, ok := symEigenvalues(h, k)
		if !ok {
			t.Fatalf("eigen decomposition failed at z = %v", z)
		}
		s.curv = math.Max(s.curv, vals[k-1])
		s.minCurv = math.Min(s.minCurv, vals[0])
	}
	add([]float64{0, 0}, 0)
	add([]float64{-50, 50, 0}, 0)
	add([]float64{3, 3, 3, 3, 3}, 4)
	for i := 0; i < 3000; i++ {
		k := []int{2, 3, 5, 10}[r.IntN(4)]
		scale := []float64{1e-2, 1, 5, 50, 1e3}[r.IntN(5)]
		z := make([]float64, k)
		for j := range z {
			z[j] = scale * r.NormFloat64()
		}
		add(z, float64(r.IntN(k)))
	}
	return s
}

// symEigenvalues returns the eigenvalues, ascending, of the symmetric k x k
// matrix a (row-major). gonum v0.14.0's tridiagonal solvers mis-scale blocks
// of tiny norm (the values-only Dsterf panics, Dsteqr returns wrong values),
// which the Hessian of a nearly one-hot softmax produces. So a is scaled to
// largest entry 1 and entries below 1e-60 are set to zero, which moves each
// eigenvalue by at most k*1e-60 times the largest entry (Weyl's inequality).
func symEigenvalues(a []float64, k int) ([]float64, bool) {
	var amax float64
	for _, v := range a {
		amax = math.Max(amax, math.Abs(v))
	}
	if amax == 0 {
		return make([]float64, k), true
	}
	b := make([]float64, len(a))
	for i, v := range a {
		if v = v / amax; math.Abs(v) >= 1e-60 {
			b[i] = v
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(k, b), false) {
		return nil, false
	}
	vals := eig.Values(nil)
	for i := range vals {
		vals[i] *= amax
	}
	return vals, true
}

func sqNorm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

// TestConstantsHoldAndAreTight checks that the stated constants bound the
// derivatives on every sampled point, and that the sample comes within 1% of
// them, so that a constant stated too small would fail the first check (see
// TestWrongConstantIsCaught) and the bound is not vacuous.
func TestConstantsHoldAndAreTight(t *testing.T) {
	type tc struct {
		name string
		loss Loss
		dom  Domain
		sups func() sups
	}
	var cases []tc
	for _, c := range scalarCases() {
		cases = append(cases, tc{c.name(), c.loss, c.dom, func() sups { return scalarSups(c) }})
	}
	cases = append(cases, tc{"softmax", Softmax{}, Domain{}, func() sups { return softmaxSups(t) }})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cons, err := c.loss.Constants(c.dom)
			if err != nil {
				t.Fatal(err)
			}
			if !cons.Convex {
				t.Errorf("loss not reported convex")
			}
			s := c.sups()
			if err := checkConstants(cons, s); err != nil {
				t.Error(err)
			}
			if s.grad < 0.99*cons.Lz || s.curv < 0.99*cons.Sz {
				t.Errorf("constants not approached: sup |l'| = %v of L_z = %v, sup l'' = %v of S_z = %v", s.grad, cons.Lz, s.curv, cons.Sz)
			}
		})
	}
}

// TestWrongConstantIsCaught shows that checkConstants detects a constant
// stated 5% too small for every loss, and a non-convex curvature.
func TestWrongConstantIsCaught(t *testing.T) {
	for _, c := range scalarCases() {
		cons, err := c.loss.Constants(c.dom)
		if err != nil {
			t.Fatal(err)
		}
		s := scalarSups(c)
		if checkConstants(Constants{Lz: 0.95 * cons.Lz, Sz: cons.Sz}, s) == nil {
			t.Errorf("%s: L_z stated 5%% too small was not caught", c.name())
		}
		if checkConstants(Constants{Lz: cons.Lz, Sz: 0.95 * cons.Sz}, s) == nil {
			t.Errorf("%s: S_z stated 5%% too small was not caught", c.name())
		}
	}
	if checkConstants(Constants{Lz: 1, Sz: 1, Convex: true}, sups{grad: 1, curv: 1, minCurv: -1e-3}) == nil {
		t.Error("negative curvature of a convex loss was not caught")
	}
	s := softmaxSups(t)
	if checkConstants(Constants{Lz: 0.95 * math.Sqrt2, Sz: 0.5}, s) == nil || checkConstants(Constants{Lz: math.Sqrt2, Sz: 0.475}, s) == nil {
		t.Error("softmax: a constant stated 5% too small was not caught")
	}
}
