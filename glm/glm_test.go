package glm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
)

// variant is an objective's configuration beyond the loss: ridge, linear
// term, clipping, and a neighbour (row skip left out, extra rows added).
type variant struct {
	name   string
	lambda float64
	linear bool
	clip   float64
	skip   int // -1: none
	extra  int // extra rows
}

var variants = []variant{
	{"plain", 0, false, 0, -1, 0},
	{"ridge-linear", 0.05, true, 0, -1, 0},
	{"clip", 0.01, false, 0.2, -1, 0},
	{"neighbour", 0.02, true, 0, 7, 3},
	{"neighbour-clip", 0.02, false, 0.3, 0, 2},
}

// build returns the objective of the case and the variant on n rows of
// d features.
func build(tb testing.TB, lc lossCase, v variant, n, d int, seed uint64) *Objective {
	tb.Helper()
	X, y := rows(n, d, lc.loss, lc.classes, seed)
	cfg := Config{Loss: lc.loss, Classes: lc.classes, Lambda: v.lambda, Clip: v.clip}
	if v.linear {
		cfg.Linear = randVec(rand.New(rand.NewPCG(seed, 9)), lc.loss.Outputs(lc.classes)*d, 3)
	}
	o := mustNew(tb, X, y, cfg)
	if v.skip < 0 && v.extra == 0 {
		return o
	}
	var ex *mat.Dense
	var ey []float64
	if v.extra > 0 {
		ex, ey = rows(v.extra, d, lc.loss, lc.classes, seed+100)
	}
	nb, err := o.Neighbour(v.skip, ex, ey)
	if err != nil {
		tb.Fatal(err)
	}
	return nb
}

// TestDerivatives checks, for every built-in loss and every variant,
// FuncGrad against central differences of Func, HessVec against central
// differences of FuncGrad, Hess against HessVec, and Func against the
// value FuncGrad returns and Grad against its gradient (bit for bit).
func TestDerivatives(t *testing.T) {
	for _, lc := range allLosses() {
		for _, v := range variants {
			if v.clip > 0 && lc.classes > 0 {
				continue // clipping is for scalar losses
			}
			t.Run(lc.name+"/"+v.name, func(t *testing.T) {
				const n, d = 60, 5
				o := build(t, lc, v, n, d, 3)
				p := o.Dim()
				r := rand.New(rand.NewPCG(4, 5))
				w, dir := randVec(r, p, 1), randVec(r, p, 1)
				g := make([]float64, p)
				f := o.FuncGrad(g, w)
				if fv := o.Func(w); math.Float64bits(fv) != math.Float64bits(f) {
					t.Errorf("Func %v, FuncGrad's value %v", fv, f)
				}
				g2 := make([]float64, p)
				if o.Grad(g2, w); !slices.Equal(g2, g) {
					t.Errorf("Grad %v, FuncGrad's gradient %v", g2, g)
				}
				const h = 1e-6
				for i := range p {
					wp, wm := slices.Clone(w), slices.Clone(w)
					wp[i] += h
					wm[i] -= h
					if fd := (o.Func(wp) - o.Func(wm)) / (2 * h); math.Abs(fd-g[i]) > 1e-7*(1+math.Abs(g[i])) {
						t.Errorf("gradient %d = %v, finite difference %v", i, g[i], fd)
					}
				}
				hv := make([]float64, p)
				o.HessVec(hv, w, dir)
				const hh = 1e-7
				gp, gm := make([]float64, p), make([]float64, p)
				wp, wm := slices.Clone(w), slices.Clone(w)
				floats.AddScaled(wp, hh, dir)
				floats.AddScaled(wm, -hh, dir)
				o.FuncGrad(gp, wp)
				o.FuncGrad(gm, wm)
				for i := range p {
					if fd := (gp[i] - gm[i]) / (2 * hh); math.Abs(fd-hv[i]) > 1e-6*(1+math.Abs(hv[i])) {
						t.Errorf("H v [%d] = %v, finite difference %v", i, hv[i], fd)
					}
				}
				want := mat.NewVecDense(p, nil)
				want.MulVec(hess(o, w), mat.NewVecDense(p, dir))
				if e := floats.Distance(hv, want.RawVector().Data, math.Inf(1)); e > 1e-13*(1+floats.Norm(hv, math.Inf(1))) {
					t.Errorf("HessVec and Hess differ by %v", e)
				}
			})
		}
	}
}

// objectiveByRow is FuncGrad one row at a time, the loops the kernels
// stand for: for K = 1 each margin from four partial sums in gonum Ddot's
// order and each addition into the gradient with its product fused; for K
// > 1 sums in column and row order with each product rounded; the losses
// in row order.
func objectiveByRow(X *mat.Dense, y []float64, l losses.Loss, k int, w []float64) (float64, []float64) {
	n, d := X.Dims()
	grad, z, gz := make([]float64, k*d), make([]float64, k), make([]float64, k)
	var f float64
	for i := range n {
		x := X.RawRowView(i)
		for c := range k {
			var s float64
			if k == 1 {
				var q [4]float64
				m := d &^ 3
				for j := range m {
					q[j%4] = math.FMA(w[j], x[j], q[j%4])
				}
				for j := m; j < d; j++ {
					q[0] = math.FMA(w[j], x[j], q[0])
				}
				s = (q[0] + q[2]) + (q[1] + q[3])
			} else {
				for j, v := range w[c*d : (c+1)*d] {
					s += float64(v * x[j])
				}
			}
			z[c] = s
		}
		f += l.Grad(gz, z, y[i])
		for c := range k {
			g := gz[c] / float64(n)
			row := grad[c*d : (c+1)*d]
			for j, v := range x {
				if k == 1 {
					row[j] = math.FMA(g, v, row[j])
				} else {
					row[j] += float64(g * v)
				}
			}
		}
	}
	return f / float64(n), grad
}

// TestFuncGradRowOrder checks FuncGrad's arithmetic (no ridge, no linear
// term) against objectiveByRow bit for bit, for every loss, on row counts
// around multiples of 4 and weights that put the logistic margins past the
// kernel's range; and Grad's gradient too.
func TestFuncGradRowOrder(t *testing.T) {
	for _, lc := range allLosses() {
		for _, n := range []int{1, 3, 4, 5, 11, 64, 65, 131} {
			for _, d := range []int{1, 4, 7, 33} {
				X, y := rows(n, d, lc.loss, lc.classes, uint64(n*d))
				o := mustNew(t, X, y, Config{Loss: lc.loss, Classes: lc.classes})
				for _, s := range []float64{1, 2000} {
					w := make([]float64, o.Dim())
					for j := range w {
						w[j] = s * math.Sin(float64(3*j+1))
					}
					g := make([]float64, o.Dim())
					f := o.FuncGrad(g, w)
					wf, wg := objectiveByRow(X, y, lc.loss, o.Outputs(), w)
					if math.Float64bits(f) != math.Float64bits(wf) || !sameBits(g, wg) {
						t.Errorf("%s %dx%d, w x %v: FuncGrad (%v, %v), row by row (%v, %v)", lc.name, n, d, s, f, g, wf, wg)
					}
					// Grad, without the values (for logistic on labels -1
					// and +1, the kernel's coefficients alone).
					if o.Grad(g, w); !sameBits(g, wg) {
						t.Errorf("%s %dx%d, w x %v: Grad %v, row by row %v", lc.name, n, d, s, g, wg)
					}
				}
			}
		}
	}
}

// hessianReference is the direct construction of the Hessian of F at w on
// the rows of X: block (a, c) of the data part is X^T diag(h_ac / n) X,
// one product per pair of classes, plus lambda I.
func hessianReference(X *mat.Dense, y []float64, l losses.Loss, k int, lambda float64, w []float64) *mat.SymDense {
	n, d := X.Dims()
	hz := make([][]float64, n)
	z := make([]float64, k)
	for i := range n {
		hz[i] = make([]float64, k*k)
		for c := range k {
			z[c] = floats.Dot(w[c*d:(c+1)*d], X.RawRowView(i))
		}
		l.Hess(hz[i], z, y[i])
	}
	p := k * d
	H := mat.NewSymDense(p, nil)
	scaled := mat.NewDense(n, d, nil)
	var blk mat.Dense
	for a := range k {
		for c := a; c < k; c++ {
			for i := range n {
				floats.ScaleTo(scaled.RawRowView(i), hz[i][a*k+c]/float64(n), X.RawRowView(i))
			}
			blk.Reset()
			blk.Mul(X.T(), scaled)
			for j := range d {
				for m := range d {
					if r, s := a*d+j, c*d+m; r <= s {
						H.SetSym(r, s, blk.At(j, m))
					}
				}
			}
		}
	}
	for i := range p {
		H.SetSym(i, i, H.At(i, i)+lambda)
	}
	return H
}

// TestHessianStructure checks Hess against the direct construction on
// random problems (logistic and softmax, row counts below, at and above
// one block of rows and the parts on goroutines, weights of several sizes,
// the Gram tiles' remainder columns), entry by entry relative to the
// largest entry.
func TestHessianStructure(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct{ n, d, k int }{
		{50, 4, 1}, {300, 7, 1}, {37, 5, 3}, {hessianRows, 6, 4}, {hessianRows + 1, 3, 2}, {700, 9, 7}, {1000, 33, 18},
		{minPartRows + 3, 9, 1}, // the parts on goroutines
		// gram's tiles: no remainder columns, remainders of 1, 4 and 5
		// (one and two remainder tiles), d below 8, blocks of rows
		{500, 8, 1}, {passRows + 1, 16, 1}, {3*passRows + 5, 33, 1}, {70, 12, 1}, {90, 13, 1}, {40, 2, 1},
	} {
		lc := lossCase{loss: losses.Logistic{}}
		if tt.k > 1 {
			lc = lossCase{loss: losses.Softmax{}, classes: tt.k}
		}
		X, y := rows(tt.n, tt.d, lc.loss, lc.classes, uint64(tt.n))
		for _, s := range []float64{0, 0.3, 3, 30} {
			w := randVec(r, tt.k*tt.d, s)
			lambda := 1e-3 * (1 + r.Float64())
			o := mustNew(t, X, y, Config{Loss: lc.loss, Classes: lc.classes, Lambda: lambda})
			worst, top := maxDiff(hess(o, w), hessianReference(X, y, lc.loss, tt.k, lambda, w))
			if worst > 1e-12*top {
				t.Errorf("n = %d, d = %d, K = %d, |w| scale %v: largest difference %v, relative %v", tt.n, tt.d, tt.k, s, worst, worst/top)
			}
		}
	}
}

// explicit returns the objective of the neighbour of variant v built as a
// data set of its own: the rows without row skip, then the extra rows,
// with the neighbour's lambda.
func explicit(tb testing.TB, lc lossCase, v variant, n, d int, seed uint64, lambda float64) *Objective {
	tb.Helper()
	X, y := rows(n, d, lc.loss, lc.classes, seed)
	var ex *mat.Dense
	var ey []float64
	if v.extra > 0 {
		ex, ey = rows(v.extra, d, lc.loss, lc.classes, seed+100)
	}
	var xs [][]float64
	var ys []float64
	for i := range n {
		if i != v.skip {
			xs, ys = append(xs, X.RawRowView(i)), append(ys, y[i])
		}
	}
	for i := range v.extra {
		xs, ys = append(xs, ex.RawRowView(i)), append(ys, ey[i])
	}
	Xm := mat.NewDense(len(xs), d, nil)
	for i, x := range xs {
		Xm.SetRow(i, x)
	}
	cfg := Config{Loss: lc.loss, Classes: lc.classes, Lambda: lambda, Clip: v.clip}
	if v.linear {
		cfg.Linear = randVec(rand.New(rand.NewPCG(seed, 9)), lc.loss.Outputs(lc.classes)*d, 3)
	}
	return mustNew(tb, Xm, ys, cfg)
}

// TestNeighbourIsExplicit checks a neighbour (a row left out, rows added)
// against the smaller or larger data set built explicitly: the same
// rows, its ridge weight kept (lambda n/m), the same value and gradient bit
// for bit below the parts' threshold (the rows are summed in the same
// order), and within rounding above it, the same Hessian, mean Hessian
// along a segment and minimizer within rounding.
func TestNeighbourIsExplicit(t *testing.T) {
	for _, lc := range allLosses() {
		for _, v := range []variant{
			{"remove", 0.02, false, 0, 17, 0},
			{"remove-first", 0.02, true, 0, 0, 0},
			{"add", 0.02, false, 0, -1, 1},
			{"remove-add", 0.03, true, 0, 40, 5},
			{"remove-add-clip", 0.03, false, 0.25, 40, 5},
		} {
			if v.clip > 0 && lc.classes > 0 {
				continue
			}
			for _, n := range []int{120, minPartRows + 9} {
				if n > 1000 && lc.name != "logistic" && lc.name != "softmax" {
					continue // the parts once per K
				}
				name := fmt.Sprintf("%s/%s/n=%d", lc.name, v.name, n)
				t.Run(name, func(t *testing.T) {
					const d = 6
					nb := build(t, lc, v, n, d, 5)
					m := n - min(1, max(0, v.skip+1)) + v.extra
					if nb.Rows() != m || nb.Lambda() != v.lambda*float64(n)/float64(m) {
						t.Fatalf("rows %d, lambda %v; want %d, %v", nb.Rows(), nb.Lambda(), m, v.lambda*float64(n)/float64(m))
					}
					ref := explicit(t, lc, v, n, d, 5, nb.Lambda())
					p := nb.Dim()
					r := rand.New(rand.NewPCG(6, 7))
					w0, w1 := randVec(r, p, 0.5), randVec(r, p, 0.5)
					g, gr := make([]float64, p), make([]float64, p)
					f, fr := nb.FuncGrad(g, w0), ref.FuncGrad(gr, w0)
					if n < minPartRows {
						if math.Float64bits(f) != math.Float64bits(fr) || !sameBits(g, gr) {
							t.Errorf("FuncGrad (%v, %v), explicit (%v, %v)", f, g, fr, gr)
						}
					} else if math.Abs(f-fr) > 1e-14*math.Abs(fr) || floats.Distance(g, gr, math.Inf(1)) > 1e-14*(1+floats.Norm(gr, math.Inf(1))) {
						t.Errorf("FuncGrad (%v, %v), explicit (%v, %v)", f, g, fr, gr)
					}
					if worst, top := maxDiff(hess(nb, w0), hess(ref, w0)); worst > 1e-13*top {
						t.Errorf("Hess differs by %v of %v", worst, top)
					}
					var s, sr mat.SymDense
					nb.SegmentHess(&s, w0, w1)
					ref.SegmentHess(&sr, w0, w1)
					if worst, top := maxDiff(&s, &sr); worst > 1e-13*top {
						t.Errorf("SegmentHess differs by %v of %v", worst, top)
					}
					set := Settings{GradTol: 1e-11}
					wn, wr := make([]float64, p), make([]float64, p)
					if st, err := nb.Minimize(context.Background(), wn, set); err != nil || !st.Reached {
						t.Fatalf("neighbour: %+v, %v", st, err)
					}
					if st, err := ref.Minimize(context.Background(), wr, set); err != nil || !st.Reached {
						t.Fatalf("explicit: %+v, %v", st, err)
					}
					// both within 1e-11/lambda' of the minimizer
					if e := floats.Distance(wn, wr, 2); e > 2*set.GradTol/nb.Lambda() {
						t.Errorf("minimizers %v apart", e)
					}
				})
			}
		}
	}
}

// TestMinimize checks Newton's method on every loss (ridge, with and
// without a linear term): it reaches the tolerance from w = 0 by Newton
// steps alone, in few of them, with every iterate at least as good as the
// start, the gradient norm it reports that of its evaluation at the
// returned weights bit for bit, and FuncGrad's within rounding. With
// Newton's method off (NewtonDim below K*d) the fallback gradient steps
// reach the tolerance too.
func TestMinimize(t *testing.T) {
	for _, lc := range allLosses() {
		for _, linear := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/linear=%v", lc.name, linear), func(t *testing.T) {
				o := build(t, lc, variant{lambda: 1e-2, linear: linear, skip: -1}, 500, 8, 11)
				w := make([]float64, o.Dim())
				f0 := o.Func(w)
				st, err := o.Minimize(context.Background(), w, Settings{GradTol: 1e-10})
				if err != nil || !st.Reached || st.GradientSteps != 0 || st.NewtonSteps > 20 {
					t.Fatalf("%+v, %v", st, err)
				}
				g := make([]float64, o.Dim())
				if f := o.eval(w, g); f > f0 {
					t.Errorf("F = %v above F(0) = %v", f, f0)
				}
				if gn := floats.Norm(g, 2); math.Float64bits(gn) != math.Float64bits(st.GradNorm) {
					t.Errorf("gradient norm %v at the weights, reported %v", gn, st.GradNorm)
				}
				if o.FuncGrad(g, w); floats.Norm(g, 2) > 1e-10+1e-14 {
					t.Errorf("FuncGrad's gradient norm %v at the weights, reported %v", floats.Norm(g, 2), st.GradNorm)
				}
				// gradient steps alone, from w = 0
				cons, err := lc.loss.Constants(losses.Domain{Kappa: 1, Radius: 1, LabelBound: 1, Classes: lc.classes})
				if err != nil {
					t.Fatal(err)
				}
				wg := make([]float64, o.Dim())
				sg, err := o.Minimize(context.Background(), wg, Settings{GradTol: 1e-6, NewtonDim: 1, Fallback: -1, Step: 1 / (cons.Sz + o.Lambda())})
				if err != nil || !sg.Reached || sg.NewtonSteps != 0 {
					t.Fatalf("gradient steps: %+v, %v", sg, err)
				}
				if e := floats.Distance(w, wg, 2); e > 1e-6/o.Lambda()*(1+1e-9) {
					t.Errorf("gradient steps end %v from Newton's minimizer", e)
				}
			})
		}
	}
}

// TestSegmentHess checks the mean Hessian along a segment: the gradient
// identity grad F(w1) - grad F(w0) = SegmentHess(w0, w1) (w1 - w0) that
// Wang's Lemma 13 rests on, for every loss (clipped too), and the Hessian
// itself on a segment of length zero.
func TestSegmentHess(t *testing.T) {
	for _, lc := range allLosses() {
		for _, v := range variants {
			if v.clip > 0 && lc.classes > 0 {
				continue
			}
			t.Run(lc.name+"/"+v.name, func(t *testing.T) {
				o := build(t, lc, v, 80, 5, 13)
				p := o.Dim()
				r := rand.New(rand.NewPCG(8, 9))
				w0, w1 := randVec(r, p, 1), randVec(r, p, 1)
				var s mat.SymDense
				o.SegmentHess(&s, w0, w1)
				g0, g1 := make([]float64, p), make([]float64, p)
				o.FuncGrad(g0, w0)
				o.FuncGrad(g1, w1)
				dw := slices.Clone(w1)
				floats.Sub(dw, w0)
				got := mat.NewVecDense(p, nil)
				got.MulVec(&s, mat.NewVecDense(p, dw))
				floats.Sub(g1, g0)
				// the quadrature is exact for the piecewise-quadratic losses'
				// secants and to about 1e-8 for the smooth ones' short
				// segments (5 Lobatto nodes)
				if e := floats.Distance(got.RawVector().Data, g1, math.Inf(1)); e > 1e-6*(1+floats.Norm(g1, math.Inf(1))) {
					t.Errorf("mean Hessian times w1 - w0 misses the gradient difference by %v", e)
				}
				// SegmentHessVec is the same matrix, applied without forming it
				// (twice: the second product reuses the segment's curvature).
				for range 2 {
					hv := make([]float64, p)
					o.SegmentHessVec(hv, w0, w1, dw)
					if e := floats.Distance(hv, got.RawVector().Data, math.Inf(1)); e > 1e-12*(1+floats.Norm(hv, math.Inf(1))) {
						t.Errorf("SegmentHessVec differs from SegmentHess times the vector by %v", e)
					}
				}
				var s0 mat.SymDense
				o.SegmentHess(&s0, w0, w0)
				if worst, top := maxDiff(&s0, hess(o, w0)); worst > 1e-13*top {
					t.Errorf("on a point: differs from Hess by %v of %v", worst, top)
				}
			})
		}
	}
}

// TestRowPassParts checks the K = 1 passes over the rows (the solver's
// eval, FuncGrad, hessVec, Hess) on both sides of minPartRows against
// plain loops over the rows, and that their bits do not depend on
// GOMAXPROCS or on the run.
func TestRowPassParts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	l := losses.Logistic{}
	for _, n := range []int{minPartRows - 1, minPartRows, minPartRows + 7} {
		X, y := rows(n, 6, l, 0, uint64(n))
		b, w, v := randVec(r, 6, 10), randVec(r, 6, 3), randVec(r, 6, 1)
		o := mustNew(t, X, y, Config{Loss: l, Lambda: 0.01, Linear: b})
		// The plain loops: F(w), grad F(w) and H(w) v.
		var sum float64
		grad, hv := make([]float64, 6), make([]float64, 6)
		for i := range n {
			x := X.RawRowView(i)
			z := floats.Dot(w, x)
			sum += l.Value1(z, y[i])
			floats.AddScaled(grad, l.Deriv(z, y[i]), x)
			floats.AddScaled(hv, l.Deriv2(z, y[i])*floats.Dot(v, x), x)
		}
		nf := float64(n)
		wantF := sum/nf + 0.005*floats.Dot(w, w) + floats.Dot(b, w)/nf
		floats.Scale(1/nf, grad)
		floats.AddScaled(grad, 0.01, w)
		floats.AddScaled(grad, 1/nf, b)
		floats.Scale(1/nf, hv)
		floats.AddScaled(hv, 0.01, v)

		var first []float64
		for _, procs := range []int{1, 2, 2} {
			prev := runtime.GOMAXPROCS(procs)
			g, g2, h := make([]float64, 6), make([]float64, 6), make([]float64, 6)
			f := o.eval(w, g)
			// eval left the margins and their Hessians at w (one
			// exponential per row for logistic): the bits of Hess at each
			// margin.
			for i := range n {
				var hs [1]float64
				l.Hess(hs[:], o.s.z[i:i+1], y[i])
				if !floats.Same(o.s.hzAt, w) || o.s.hz[i] != hs[0] {
					t.Fatalf("n = %d: row %d: margin Hessian %v after eval, Hess %v", n, i, o.s.hz[i], hs[0])
				}
			}
			f2 := o.FuncGrad(g2, w)
			o.HessVec(h, w, v)
			H := hess(o, w).RawSymmetric().Data
			o.s.xtx = nil
			H0 := hess(o, make([]float64, 6)).RawSymmetric().Data // X^T X, the rows' curvature all equal
			runtime.GOMAXPROCS(prev)
			for _, c := range []struct {
				name      string
				got, want []float64
			}{{"F", []float64{f, f2}, []float64{wantF, wantF}}, {"gradient", g, grad}, {"FuncGrad's gradient", g2, grad}, {"H v", h, hv}} {
				if d := floats.Distance(c.got, c.want, math.Inf(1)); d > 1e-12*floats.Norm(c.want, math.Inf(1)) {
					t.Errorf("n = %d: %s differs by %v", n, c.name, d)
				}
			}
			got := slices.Concat([]float64{f, f2}, g, g2, h, H, H0)
			if first == nil {
				first = got
			} else if !sameBits(got, first) {
				t.Errorf("n = %d, GOMAXPROCS %d: the bits changed", n, procs)
			}
		}
	}
}

// TestEvalSumsXTX checks that the solver's gradient pass at w = 0 leaves
// X^T X with the bits of gram's own pass (K = 1, on both sides of
// minPartRows), and that a pass elsewhere leaves none.
func TestEvalSumsXTX(t *testing.T) {
	for _, tt := range []struct{ n, d int }{{100, 5}, {minPartRows + 7, 33}, {3*passRows + 1, 8}} {
		X, y := rows(tt.n, tt.d, losses.Logistic{}, 0, uint64(tt.n))
		g := make([]float64, tt.d)
		o := mustNew(t, X, y, Config{Loss: losses.Logistic{}, Lambda: 0.01})
		w := make([]float64, tt.d)
		w[0] = 1
		o.eval(w, g)
		if o.s.xtx != nil {
			t.Fatalf("n = %d: X^T X summed at w != 0", tt.n)
		}
		o.eval(make([]float64, tt.d), g)
		if o.s.xtx == nil {
			t.Fatalf("n = %d: no X^T X after the pass at w = 0", tt.n)
		}
		ref := mustNew(t, X, y, Config{Loss: losses.Logistic{}, Lambda: 0.01})
		ref.setXTX(func(dst []float64, stride int) { ref.gram(dst, stride, nil, 1) })
		if !sameBits(o.s.xtx, ref.s.xtx) {
			t.Errorf("n = %d, d = %d: X^T X from the pass differs from gram's", tt.n, tt.d)
		}
		var want mat.SymDense
		want.SymOuterK(1, X.T())
		var top, worst float64
		for i := range tt.d {
			for j := range tt.d {
				top = math.Max(top, math.Abs(want.At(i, j)))
				worst = math.Max(worst, math.Abs(want.At(i, j)-o.s.xtx[i*tt.d+j]))
			}
		}
		if worst > 1e-12*top {
			t.Errorf("n = %d, d = %d: X^T X off by %v", tt.n, tt.d, worst)
		}
	}
}

// TestClippedLoss checks the clipped scalar loss of Config.Clip against its
// definition: its value is finite (the clamp's start is found also where
// the band |l'| <= c is narrow), its derivative (central differences of
// the value) is l' clamped to [-c, c], its second derivative is that of l
// inside and 0 where the clamp acts, and the value is continuous where the
// clamp starts.
func TestClippedLoss(t *testing.T) {
	for _, lc := range allLosses() {
		if lc.classes > 0 {
			continue // clipping is for scalar losses
		}
		l := lc.loss
		y := 1.0
		if l.Task() == losses.Regression {
			y = 0.7
		}
		for _, c := range []float64{0.05, 0.3, 0.9, 3} {
			x := []float64{1} // ||x|| = 1: the cap is c itself
			o := mustNew(t, mat.NewDense(1, 1, x), []float64{y}, Config{Loss: l, Clip: c})
			value := func(z float64) float64 { return o.MarginGrad([]float64{0}, []float64{z}, x, y) }
			deriv := func(z float64) float64 {
				g := []float64{0}
				o.MarginGrad(g, []float64{z}, x, y)
				return g[0]
			}
			for z := -8.0; z <= 8; z += 0.37 {
				want := math.Max(-c, math.Min(c, l.(losses.Margin).Deriv(z, y)))
				if g := deriv(z); g != want {
					t.Fatalf("%s c=%g z=%g: derivative %g, want %g", l.Name(), c, z, g, want)
				}
				const h = 1e-5
				if v := value(z); !check.Finite(v) {
					t.Fatalf("%s c=%g z=%g: value %v", l.Name(), c, z, v)
				}
				if fd := (value(z+h) - value(z-h)) / (2 * h); !(math.Abs(fd-want) <= 1e-6) {
					t.Errorf("%s c=%g z=%g: value slope %g, derivative %g", l.Name(), c, z, fd, want)
				}
				hs := []float64{0}
				o.MarginHess(hs, []float64{z}, x, y)
				d2 := (deriv(z+h) - deriv(z-h)) / (2 * h)
				if math.Abs(hs[0]-d2) > 1e-4 && math.Abs(math.Abs(l.(losses.Margin).Deriv(z, y))-c) > 1e-3 {
					t.Errorf("%s c=%g z=%g: second derivative %g, differences %g", l.Name(), c, z, hs[0], d2)
				}
			}
		}
	}
}

// TestErrors checks the refusals of New, Neighbour and Minimize: each
// wraps ErrConfig.
func TestErrors(t *testing.T) {
	X, y := rows(10, 3, losses.Logistic{}, 0, 1)
	Xs, ys := rows(10, 3, losses.Softmax{}, 3, 1)
	o := mustNew(t, X, y, Config{Loss: losses.Logistic{}, Lambda: 0.1})
	nb, err := o.Neighbour(2, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := mustNew(t, X.Slice(0, 1, 0, 3).(*mat.Dense), y[:1], Config{Loss: losses.Logistic{}})
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"no loss", func() error { _, err := New(X, y, Config{}); return err }},
		{"no rows", func() error { _, err := New(&mat.Dense{}, nil, Config{Loss: losses.Logistic{}}); return err }},
		{"labels", func() error { _, err := New(X, y[:9], Config{Loss: losses.Logistic{}}); return err }},
		{"negative lambda", func() error { _, err := New(X, y, Config{Loss: losses.Logistic{}, Lambda: -1}); return err }},
		{"NaN lambda", func() error { _, err := New(X, y, Config{Loss: losses.Logistic{}, Lambda: math.NaN()}); return err }},
		{"linear length", func() error {
			_, err := New(X, y, Config{Loss: losses.Logistic{}, Linear: make([]float64, 2)})
			return err
		}},
		{"infinite clip", func() error { _, err := New(X, y, Config{Loss: losses.Logistic{}, Clip: math.Inf(1)}); return err }},
		{"softmax clipped", func() error {
			_, err := New(Xs, ys, Config{Loss: losses.Softmax{}, Classes: 3, Clip: 1})
			return err
		}},
		{"softmax of one class", func() error { _, err := New(Xs, ys, Config{Loss: losses.Softmax{}, Classes: 1}); return err }},
		{"neighbour of a neighbour", func() error { _, err := nb.Neighbour(1, nil, nil); return err }},
		{"neighbour row", func() error { _, err := o.Neighbour(10, nil, nil); return err }},
		{"neighbour without rows", func() error { _, err := one.Neighbour(0, nil, nil); return err }},
		{"neighbour width", func() error { _, err := o.Neighbour(-1, mat.NewDense(1, 2, nil), []float64{1}); return err }},
		{"tolerance", func() error { _, err := o.Minimize(context.Background(), make([]float64, 3), Settings{}); return err }},
		{"fallback step", func() error {
			_, err := o.Minimize(context.Background(), make([]float64, 3), Settings{GradTol: 1, Fallback: 3})
			return err
		}},
	} {
		if err := tc.err(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want an error wrapping ErrConfig", tc.name, err)
		}
	}
}

// TestNeighbourCopiesNoRows checks that a neighbour with an added row
// (clipped, so with its cap) allocates a few words for it, not a copy of
// the n labels or caps (the pdp analysis makes one per target).
func TestNeighbourCopiesNoRows(t *testing.T) {
	const n, d = 100_000, 4
	lc := allLosses()[0]
	X, y := rows(n, d, lc.loss, lc.classes, 8)
	o := mustNew(t, X, y, Config{Loss: lc.loss, Classes: lc.classes, Lambda: 0.01, Clip: 0.5})
	ex, ey := rows(1, d, lc.loss, lc.classes, 9)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const calls = 10
	for range calls {
		if _, err := o.Neighbour(3, ex, ey); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if b := (after.TotalAlloc - before.TotalAlloc) / calls; b > n {
		t.Errorf("Neighbour allocated %d bytes per call on %d rows, want a few hundred", b, n)
	}
}
