// Package losstest is the conformance kit of the losses: the checks that
// every losses.Loss must pass, run by the tests on every built-in loss
// (losses.All) and usable on any other.
//
// Check runs, on a grid of margins and labels in the loss's domain plus
// seeded random points (deterministic: the same points on every run):
//
//   - grad: Grad against central differences of Value, and Grad's return
//     value equal to Value;
//   - hess: Hess against central differences of Grad, and symmetric;
//   - constants: Constants on the domain exists and is finite, every sampled
//     gradient norm is at most L_z, every sampled curvature v^T H v (unit v:
//     the axes, their differences and random directions) is at most S_z in
//     absolute value (S_z is sup |l”|), and at least 0 when the loss says
//     it is convex; Rank and RankSz, when set, bound the number of nonzero
//     eigenvalues of every sampled Hessian and their sum;
//   - smooth: for a loss that says it is Smooth, the gradient is S_z
//     Lipschitz between points from 1e-6 to 1 apart along every axis and
//     along random directions (a derivative that jumps, at a kink of a
//     hinge, fails);
//   - liphess: for a loss that says LipHess (and then C2), the margin
//     Hessian moves by at most Tz t in the spectral norm between points t
//     apart, from 1e-6 to 1, along the axes and random directions, and
//     some pair comes within a factor 3 of it (a Tz stated far too large
//     is caught too, to keep pdp's bounds useful: softmax's proven 1/sqrt 2
//     is 2.6 times what K = 2 reaches);
//   - c2: for a loss that says it is C2 (and then Smooth), the Hessian does
//     not jump between the two points of any finite difference (a Huber
//     loss claimed C2 fails at the ends of its quadratic piece);
//   - labels: CheckLabel accepts the labels of the task and rejects, with an
//     error wrapping losses.ErrLabel, NaN, infinities and the labels just
//     outside the task (0 and 2 for a binary loss, -1, K and 1/2 for a
//     multiclass one, any label with fewer than 2 classes);
//   - outputs: Outputs is 1 for a scalar loss and K for a multiclass one;
//   - margin: for K = 1, the Margin fast path (Value1, Deriv, Deriv2), and
//     Parts1 where the loss has the capability losses.LogisticParts
//     (losses.Logistic, and any type that embeds it: plus + log1p(e),
//     Deriv, Deriv2), equal Value, Grad and Hess bit for bit.
//
// Finite differences skip a coordinate where the Hessian jumps between the
// two difference points (a kink of a piecewise loss); a C2 loss has none. Every failure is an
// error whose text starts with the name of its check.
package losstest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
)

// Case is a loss with the number of classes and the domain it is checked on.
type Case struct {
	// Name names the case in test output.
	Name string
	Loss losses.Loss
	// Classes is passed to Outputs and CheckLabel: K for a multiclass loss,
	// ignored by scalar losses.
	Classes int
	// Domain is the domain of Constants; the margins and the labels are drawn
	// inside it (|z| <= Radius*Kappa and |y| <= LabelBound when set). Cases
	// sets its Classes to the Classes of a multiclass case.
	Domain losses.Domain
}

// Cases returns a Case for every built-in loss (losses.All): a multiclass
// loss with K = 2, 3 and 5, a scalar loss once. The domain has Kappa = 1;
// a loss without constants there (the squared loss) gets a bounded domain,
// Kappa = 1.5, Radius = 2 and LabelBound = 4.
func Cases() []Case {
	var cs []Case
	for _, l := range losses.All() {
		cs = append(cs, CasesOf(l)...)
	}
	return cs
}

// CasesOf returns the cases of one loss, as Cases builds them.
func CasesOf(l losses.Loss) []Case {
	dom := losses.Domain{Kappa: 1}
	if _, err := l.Constants(dom); errors.Is(err, losses.ErrDomain) {
		dom = losses.Domain{Kappa: 1.5, Radius: 2, LabelBound: 4}
	}
	name := fmt.Sprintf("%s(%+v)", l.Name(), l)
	if l.Task() != losses.Multiclass {
		return []Case{{Name: name, Loss: l, Domain: dom}}
	}
	var cs []Case
	for _, k := range []int{2, 3, 5} {
		dk := dom
		dk.Classes = k
		cs = append(cs, Case{Name: fmt.Sprintf("%s/K=%d", name, k), Loss: l, Classes: k, Domain: dk})
	}
	return cs
}

// Run runs Check on c as a subtest and reports every failure.
func Run(t *testing.T, c Case) {
	t.Helper()
	t.Run(c.Name, func(t *testing.T) {
		if err := Check(c); err != nil {
			t.Error(err)
		}
	})
}

// Check runs every check of the kit on c and returns the failures joined,
// or nil when the loss conforms.
func Check(c Case) error {
	k := c.Loss.Outputs(c.Classes)
	var errs []error
	if k < 1 {
		return fmt.Errorf("outputs: Outputs(%d) = %d, want >= 1", c.Classes, k)
	}
	pts := points(c, k)
	for _, check := range []func(Case, int, []point) []error{checkGrad, checkHess, checkConstants, checkSmooth, checkLipHess, checkC2, checkLabels, checkOutputs, checkMargin} {
		e := check(c, k, pts)
		if len(e) > maxErrs {
			e = append(e[:maxErrs], fmt.Errorf("... and %d more", len(e)-maxErrs))
		}
		errs = append(errs, e...)
	}
	return errors.Join(errs...)
}

// maxErrs is the number of failures reported per check.
const maxErrs = 5

type point struct {
	z []float64
	y float64
}

// labels returns the labels of the task inside the domain.
func labels(c Case, k int) []float64 {
	switch c.Loss.Task() {
	case losses.Binary:
		return []float64{-1, 1}
	case losses.Multiclass:
		ys := make([]float64, k)
		for i := range ys {
			ys[i] = float64(i)
		}
		return ys
	}
	ys := []float64{0, 0.3, 1.5, -7, 40}
	if b := c.Domain.LabelBound; b > 0 {
		ys = []float64{0, 0.3, b / 2, -b, b}
	}
	return ys
}

// points returns the fixed grid and 2000 seeded random points.
func points(c Case, k int) []point {
	bound := math.Inf(1)
	if c.Domain.Radius > 0 && c.Domain.Kappa > 0 {
		bound = c.Domain.Radius * c.Domain.Kappa
	}
	clamp := func(z []float64) []float64 {
		var s float64
		for _, v := range z {
			s += v * v
		}
		if n := math.Sqrt(s); n > bound {
			for i := range z {
				z[i] *= bound / n
			}
		}
		return z
	}
	ys := labels(c, k)
	var pts []point
	grid := []float64{0, 1e-3, 0.3, 0.5, 1, 1.05, 2, 3, 30, 1e3}
	for _, y := range ys {
		for _, v := range grid {
			for _, s := range []float64{-1, 1} {
				z := make([]float64, k)
				z[0] = s * v
				if k == 1 && c.Loss.Task() == losses.Regression {
					z[0] += y // residuals z - y on the grid
				}
				pts = append(pts, point{clamp(z), y})
			}
		}
		if k > 1 { // equal margins, and one other class far ahead
			eq, far := make([]float64, k), make([]float64, k)
			for i := range eq {
				eq[i] = 3
			}
			far[(int(y)+1)%k] = 50
			pts = append(pts, point{clamp(eq), y}, point{clamp(far), y})
		}
	}
	r := rand.New(rand.NewPCG(0x1055, uint64(k)))
	scales := []float64{1e-3, 0.3, 1, 3, 30, 1e3}
	for i := 0; i < 2000; i++ {
		z := make([]float64, k)
		s := scales[r.IntN(len(scales))]
		for j := range z {
			z[j] = s * r.NormFloat64()
		}
		pts = append(pts, point{clamp(z), ys[r.IntN(len(ys))]})
	}
	return pts
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*(1+math.Abs(want)) }

// kink reports whether the Hessian jumps between z - h e_j and z + h e_j.
func kink(l losses.Loss, z []float64, y float64, j int, h float64) bool {
	k := len(z)
	hp, hm := make([]float64, k*k), make([]float64, k*k)
	zj := z[j]
	z[j] = zj + h
	l.Hess(hp, z, y)
	z[j] = zj - h
	l.Hess(hm, z, y)
	z[j] = zj
	for i := range hp {
		if math.Abs(hp[i]-hm[i]) > 1e-3*(1+math.Abs(hp[i])) {
			return true
		}
	}
	return false
}

// step is the finite-difference step at z: relative to z, but at most 1e-4,
// since a large margin may sit next to another as large (softmax), where the
// curvature changes on the scale of their difference.
func step(z float64) float64 { return 1e-5 * math.Min(1+math.Abs(z), 10) }
