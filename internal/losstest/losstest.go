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

	"github.com/stabpriv/stabpriv/internal/check"
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

func checkGrad(c Case, k int, pts []point) []error {
	l := c.Loss
	var errs []error
	g := make([]float64, k)
	checked := 0
	for _, p := range pts {
		z := append([]float64(nil), p.z...)
		if v := l.Grad(g, z, p.y); v != l.Value(z, p.y) {
			errs = append(errs, fmt.Errorf("grad: Grad returns %v, Value %v at z = %v, y = %v", v, l.Value(z, p.y), z, p.y))
		}
		for j := range z {
			h := step(z[j])
			if kink(l, z, p.y, j, h) {
				continue
			}
			checked++
			zj := z[j]
			z[j] = zj + h
			vp := l.Value(z, p.y)
			z[j] = zj - h
			vm := l.Value(z, p.y)
			z[j] = zj
			if fd := (vp - vm) / (2 * h); !near(g[j], fd, 1e-6) {
				errs = append(errs, fmt.Errorf("grad: dl/dz_%d = %v, finite difference %v at z = %v, y = %v", j, g[j], fd, z, p.y))
			}
		}
	}
	if checked < len(pts)/2 {
		errs = append(errs, fmt.Errorf("grad: only %d coordinates away from kinks, of %d points", checked, len(pts)))
	}
	return errs
}

func checkHess(c Case, k int, pts []point) []error {
	l := c.Loss
	var errs []error
	hs := make([]float64, k*k)
	gp, gm := make([]float64, k), make([]float64, k)
	for _, p := range pts {
		z := append([]float64(nil), p.z...)
		l.Hess(hs, z, p.y)
		for i := 0; i < k; i++ {
			for j := 0; j < i; j++ {
				if !near(hs[i*k+j], hs[j*k+i], 1e-12) {
					errs = append(errs, fmt.Errorf("hess: H[%d,%d] = %v, H[%d,%d] = %v at z = %v: not symmetric", i, j, hs[i*k+j], j, i, hs[j*k+i], z))
				}
			}
		}
		for j := range z {
			h := step(z[j])
			if kink(l, z, p.y, j, h) {
				continue
			}
			zj := z[j]
			z[j] = zj + h
			l.Grad(gp, z, p.y)
			z[j] = zj - h
			l.Grad(gm, z, p.y)
			z[j] = zj
			for i := 0; i < k; i++ {
				if fd := (gp[i] - gm[i]) / (2 * h); !near(hs[i*k+j], fd, 1e-6) {
					errs = append(errs, fmt.Errorf("hess: H[%d,%d] = %v, finite difference %v at z = %v, y = %v", i, j, hs[i*k+j], fd, z, p.y))
				}
			}
		}
	}
	return errs
}

// directions returns unit vectors of length k: the axes, the normalized
// differences of two axes and 8 seeded random directions.
func directions(k int) [][]float64 {
	var vs [][]float64
	for i := 0; i < k; i++ {
		v := make([]float64, k)
		v[i] = 1
		vs = append(vs, v)
		for j := 0; j < i; j++ {
			v := make([]float64, k)
			v[i], v[j] = math.Sqrt2/2, -math.Sqrt2/2
			vs = append(vs, v)
		}
	}
	r := rand.New(rand.NewPCG(7, uint64(k)))
	for n := 0; n < 8 && k > 1; n++ {
		v := make([]float64, k)
		var s float64
		for i := range v {
			v[i] = r.NormFloat64()
			s += v[i] * v[i]
		}
		for i := range v {
			v[i] /= math.Sqrt(s)
		}
		vs = append(vs, v)
	}
	return vs
}

func checkConstants(c Case, k int, pts []point) []error {
	l := c.Loss
	cons, err := l.Constants(c.Domain)
	if err != nil {
		return []error{fmt.Errorf("constants: Constants(%+v): %w", c.Domain, err)}
	}
	if !check.NonNegative(cons.Lz) || !check.NonNegative(cons.Sz) {
		return []error{fmt.Errorf("constants: L_z = %v, S_z = %v, want finite >= 0", cons.Lz, cons.Sz)}
	}
	rank, rankSz := cons.Rank, cons.RankSz
	if rank == 0 {
		rank = k
	}
	if rankSz == 0 {
		rankSz = cons.Sz
	}
	if rank < 0 || rank > k || !check.NonNegative(rankSz) || rankSz > cons.Sz {
		return []error{fmt.Errorf("constants: Rank = %d, RankSz = %v, want 0 <= Rank <= K = %d and 0 <= RankSz <= S_z = %v", cons.Rank, cons.RankSz, k, cons.Sz)}
	}
	const tol = 1e-12
	var errs []error
	g, hs := make([]float64, k), make([]float64, k*k)
	dirs := directions(k)
	for _, p := range pts {
		l.Grad(g, p.z, p.y)
		var s float64
		for _, v := range g {
			s += v * v
		}
		if n := math.Sqrt(s); n > cons.Lz*(1+tol) {
			errs = append(errs, fmt.Errorf("constants: |dl/dz| = %v > L_z = %v at z = %v, y = %v", n, cons.Lz, p.z, p.y))
		}
		l.Hess(hs, p.z, p.y)
		for _, v := range dirs {
			var q float64
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					q += v[i] * hs[i*k+j] * v[j]
				}
			}
			if math.Abs(q) > cons.Sz*(1+tol)+tol {
				errs = append(errs, fmt.Errorf("constants: curvature %v, |curvature| > S_z = %v at z = %v, y = %v", q, cons.Sz, p.z, p.y))
			}
			if cons.Convex && q < -tol*(1+cons.Sz) {
				errs = append(errs, fmt.Errorf("constants: curvature %v < 0 for a convex loss at z = %v, y = %v", q, p.z, p.y))
			}
		}
		if rank == k && rankSz == cons.Sz {
			continue // nothing beyond S_z, which the directions checked
		}
		nonzero, sum := 0, 0.0
		for _, v := range jacobiEigen(k, hs) {
			if math.Abs(v) > tol*(1+cons.Sz) {
				nonzero++
			}
			sum += v
		}
		if nonzero > rank {
			errs = append(errs, fmt.Errorf("constants: %d nonzero Hessian eigenvalues > Rank = %d at z = %v, y = %v", nonzero, rank, p.z, p.y))
		}
		if sum > float64(rank)*rankSz*(1+tol)+tol {
			errs = append(errs, fmt.Errorf("constants: Hessian eigenvalues sum to %v > Rank*RankSz = %v at z = %v, y = %v", sum, float64(rank)*rankSz, p.z, p.y))
		}
	}
	return errs
}

// jacobiEigen returns the eigenvalues of the symmetric k x k matrix h
// (row-major) by cyclic Jacobi rotations, to about 1e-15 of its largest
// entry: a few sweeps for the small matrices of a margin Hessian, and no
// scaling of tiny entries (where LAPACK's eigensolver may fail).
func jacobiEigen(k int, h []float64) []float64 {
	a := append([]float64(nil), h...)
	for sweep := 0; sweep < 50; sweep++ {
		var off, top float64
		for i := range k {
			for j := range k {
				if i != j {
					off += a[i*k+j] * a[i*k+j]
				}
				top = math.Max(top, math.Abs(a[i*k+j]))
			}
		}
		if off <= 1e-30*top*top {
			break
		}
		for p := 0; p < k; p++ {
			for q := p + 1; q < k; q++ {
				apq := a[p*k+q]
				if apq == 0 {
					continue
				}
				// the rotation that zeroes (p, q) (Golub & Van Loan, 8.5.2)
				theta := (a[q*k+q] - a[p*k+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				sn := t * c
				for r := range k {
					arp, arq := a[r*k+p], a[r*k+q]
					a[r*k+p], a[r*k+q] = c*arp-sn*arq, sn*arp+c*arq
				}
				for r := range k {
					apr, aqr := a[p*k+r], a[q*k+r]
					a[p*k+r], a[q*k+r] = c*apr-sn*aqr, sn*apr+c*aqr
				}
			}
		}
	}
	vals := make([]float64, k)
	for i := range vals {
		vals[i] = a[i*k+i]
	}
	return vals
}

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
