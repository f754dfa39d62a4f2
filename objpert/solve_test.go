package objpert

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// hessianReference is the direct construction of the Hessian of F at w:
// block (a, c) of the data part is X^T diag(h_ac / n) X, one product per
// pair of classes, plus lambda I.
func hessianReference(o *objective, w []float64) *mat.SymDense {
	o.margins(w)
	k, d, n := o.k, o.d, o.n
	hz := make([][]float64, n)
	for i := range n {
		hz[i] = make([]float64, k*k)
		o.loss.Hess(hz[i], o.z.RawRowView(i), o.y[i])
	}
	p := k * d
	H := mat.NewSymDense(p, nil)
	scaled := mat.NewDense(n, d, nil)
	var blk mat.Dense
	for a := range k {
		for c := a; c < k; c++ {
			for i := range n {
				floats.ScaleTo(scaled.RawRowView(i), hz[i][a*k+c]/float64(n), o.X.RawRowView(i))
			}
			blk.Reset()
			blk.Mul(o.X.T(), scaled)
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
		H.SetSym(i, i, H.At(i, i)+o.lambda)
	}
	return H
}

// TestHessianStructure checks the Hessian against the direct construction
// on random problems (logistic and softmax, row counts below, at and above
// one block of rows, weights of several sizes), entry by entry relative to
// the largest entry.
func TestHessianStructure(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct{ n, d, k int }{
		{50, 4, 1}, {300, 7, 1}, {37, 5, 3}, {hessianRows, 6, 4}, {hessianRows + 1, 3, 2}, {700, 9, 7}, {1000, 33, 18},
		{minPartRows + 3, 9, 1}, // the parts on goroutines
		// gram's tiles: no remainder columns, remainders of 1, 4 and 5
		// (one and two remainder tiles), d below 8, blocks of rows
		{500, 8, 1}, {passRows + 1, 16, 1}, {3*passRows + 5, 33, 1}, {70, 12, 1}, {90, 13, 1}, {40, 2, 1},
	} {
		loss := losses.Loss(losses.Logistic{})
		if tt.k > 1 {
			loss = losses.Softmax{}
		}
		X, y := rows(tt.n, tt.d, tt.k, uint64(tt.n))
		p := tt.k * tt.d
		for _, scale := range []float64{0, 0.3, 3, 30} {
			w := make([]float64, p)
			for i := range w {
				w[i] = scale * r.NormFloat64()
			}
			lambda := 1e-3 * (1 + r.Float64())
			o := newObjective(X, y, loss, tt.k, lambda, nil)
			got, want := o.hessian(w), hessianReference(o, w)
			var top float64
			for i := range p {
				for j := i; j < p; j++ {
					top = math.Max(top, math.Abs(want.At(i, j)))
				}
			}
			var worst float64
			for i := range p {
				for j := i; j < p; j++ {
					worst = math.Max(worst, math.Abs(got.At(i, j)-want.At(i, j)))
				}
			}
			if worst > 1e-12*top {
				t.Errorf("n = %d, d = %d, K = %d, |w| scale %v: largest difference %v, relative %v", tt.n, tt.d, tt.k, scale, worst, worst/top)
			}
		}
	}
}

// TestHessVec checks the Hessian-vector products against the Hessian.
func TestHessVec(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tt := range []struct{ n, d, k int }{{80, 5, 1}, {90, 6, 4}, {300, 11, 9}, {minPartRows + 3, 7, 1}} {
		loss := losses.Loss(losses.Logistic{})
		if tt.k > 1 {
			loss = losses.Softmax{}
		}
		X, y := rows(tt.n, tt.d, tt.k, 9)
		p := tt.k * tt.d
		w, v, got := make([]float64, p), make([]float64, p), make([]float64, p)
		for i := range w {
			w[i], v[i] = 2*r.NormFloat64(), r.NormFloat64()
		}
		o := newObjective(X, y, loss, tt.k, 0.01, nil)
		H := o.hessian(w)
		o.curvature(w)
		o.hessVec(got, v)
		want := mat.NewVecDense(p, nil)
		want.MulVec(H, mat.NewVecDense(p, v))
		if d := floats.Distance(got, want.RawVector().Data, math.Inf(1)); d > 1e-12*floats.Norm(want.RawVector().Data, math.Inf(1)) {
			t.Errorf("n = %d, d = %d, K = %d: H v differs by %v", tt.n, tt.d, tt.k, d)
		}
	}
}

// TestMinimizeReachesThreshold checks that the solver reaches GradTol by
// Newton steps alone (no gradient steps) on softmax and logistic problems
// with the noise of objective and amp, at lambda at the floor and above,
// that the gradient norm it reports is the one at the returned weights,
// and that every Newton iterate is at least as good as the start
// (F(w) <= F(0)), the premise of amp's iteration budget.
func TestMinimizeReachesThreshold(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		n, d, k int
		m       perturb.Mechanism
		eps     float64
		above   float64 // lambda = above * floor
	}{
		{400, 6, 1, perturb.Objective, 1, 1},
		{minPartRows + 1000, 8, 1, perturb.Objective, 0.5, 2}, // row parts on goroutines, the K = 1 refresh
		{400, 6, 1, perturb.AMP, 1, 3},
		{1500, 12, 6, perturb.Objective, 1, 1},
		{1500, 12, 6, perturb.Objective, 5, 30},
		{1500, 12, 6, perturb.AMP, 2, 1},
		{800, 9, 12, perturb.Objective, 0.5, 10},
	} {
		var X *mat.Dense
		var y []float64
		loss := losses.Loss(losses.Logistic{})
		if tt.k > 1 {
			loss = losses.Softmax{}
			X, y = plantedSoftmax(tt.n, tt.d, tt.k, uint64(tt.n))
		} else {
			X, y = rows(tt.n, tt.d, 1, 4)
			X.Scale(0.999, X)
		}
		delta := 0.0
		if tt.m == perturb.AMP {
			delta = 1e-5
		}
		pr := problem(loss, X, tt.k, 1)
		c0, err := Calibrate(tt.m, tt.eps, delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		pr.Lambda = tt.above * c0.LambdaFloor * (1 + 1e-9)
		c, err := Calibrate(tt.m, tt.eps, delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range uint64(3) {
			b := make([]float64, c.P)
			if tt.m == perturb.AMP {
				err = perturb.Seeded(seed).AddGaussian(b, c.Sigma1)
			} else {
				err = perturb.Seeded(seed).AddGammaNorm(b, 2*c.L, c.EpsNoise)
			}
			if err != nil {
				t.Fatal(err)
			}
			o := newObjective(X, y, loss, tt.k, pr.Lambda, b)
			w := make([]float64, c.P)
			f0 := o.eval(w, nil)
			st, err := o.minimize(ctx, w, c.GradTol, maxNewton, 0, c.Step)
			name := fmt.Sprintf("%s n = %d, d = %d, K = %d, eps = %v, lambda = %.3g, seed %d", tt.m, tt.n, tt.d, tt.k, tt.eps, pr.Lambda, seed)
			if err != nil || !st.Reached || st.GradientSteps != 0 || st.NewtonSteps > 30 {
				t.Errorf("%s: %+v, %v", name, st, err)
				continue
			}
			g := make([]float64, c.P)
			f := o.eval(w, g)
			if gn := floats.Norm(g, 2); gn != st.GradNorm || gn > GradTol {
				t.Errorf("%s: gradient norm %v at the weights, reported %v", name, gn, st.GradNorm)
			}
			if f > f0 {
				t.Errorf("%s: F = %v above F(0) = %v", name, f, f0)
			}
		}
	}
}

// TestMinimizeLastFMSized is the LastFM-sized softmax problem (n = 6100, d
// = 33, K = 18) with objective's noise at eps = 1 just above the floor,
// where the minimizer is dominated by the noise (||w|| in the hundreds):
// the decrease of F of the last Newton steps is below the rounding of F,
// and the solver must still reach GradTol by Newton steps.
func TestMinimizeLastFMSized(t *testing.T) {
	if testing.Short() {
		t.Skip("a LastFM-sized solve")
	}
	o, c := lastfmSized(t, 1, 3.1623e-4, 1)
	w := make([]float64, o.k*o.d)
	st, err := o.minimize(context.Background(), w, c.GradTol, maxNewton, 0, c.Step)
	if err != nil || !st.Reached || st.GradientSteps != 0 || st.NewtonSteps > 20 {
		t.Errorf("%+v, %v (||w|| = %.3g)", st, err, floats.Norm(w, 2))
	}
}

// TestRowPassParts checks the K = 1 pass over the rows (eval1, hessVec) on
// both sides of minPartRows against plain loops over the rows, and that
// its bits, and those of the Hessian (gram, TestHessianStructure checks
// its values), do not depend on GOMAXPROCS or on the run.
func TestRowPassParts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{minPartRows - 1, minPartRows, minPartRows + 7} {
		X, y := rows(n, 6, 1, uint64(n))
		b := make([]float64, 6)
		w, v := make([]float64, 6), make([]float64, 6)
		for i := range w {
			b[i], w[i], v[i] = 10*r.NormFloat64(), 3*r.NormFloat64(), r.NormFloat64()
		}
		o := newObjective(X, y, losses.Logistic{}, 1, 0.01, b)
		// The plain loops: F(w), grad F(w) and H(w) v.
		var sum float64
		grad, hv := make([]float64, 6), make([]float64, 6)
		for i := range n {
			x := X.RawRowView(i)
			z := floats.Dot(w, x)
			sum += losses.Logistic{}.Value1(z, y[i])
			floats.AddScaled(grad, losses.Logistic{}.Deriv(z, y[i]), x)
			floats.AddScaled(hv, losses.Logistic{}.Deriv2(z, y[i])*floats.Dot(v, x), x)
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
			g, h := make([]float64, 6), make([]float64, 6)
			f := o.eval(w, g)
			// eval left the margins and their Hessians at w (one
			// exponential per row for logistic): the bits of Hess at each
			// margin.
			for i := range n {
				var hs [1]float64
				losses.Logistic{}.Hess(hs[:], o.z.RawRowView(i), y[i])
				if !floats.Same(o.hzAt, w) || o.hz[i] != hs[0] {
					t.Fatalf("n = %d: row %d: margin Hessian %v after eval, Hess %v", n, i, o.hz[i], hs[0])
				}
			}
			o.curvature(w)
			o.hessVec(h, v)
			H := o.hessian(w).RawSymmetric().Data
			o.xtx = nil
			H0 := o.hessian(make([]float64, 6)).RawSymmetric().Data // X^T X, the rows' curvature all equal
			runtime.GOMAXPROCS(prev)
			if math.Abs(f-wantF) > 1e-12*math.Abs(wantF) {
				t.Errorf("n = %d: F = %v, plain loop %v", n, f, wantF)
			}
			if d := floats.Distance(g, grad, math.Inf(1)); d > 1e-12*floats.Norm(grad, math.Inf(1)) {
				t.Errorf("n = %d: gradient differs by %v", n, d)
			}
			if d := floats.Distance(h, hv, math.Inf(1)); d > 1e-12*floats.Norm(hv, math.Inf(1)) {
				t.Errorf("n = %d: H v differs by %v", n, d)
			}
			got := slices.Concat([]float64{f}, g, h, H, H0)
			if first == nil {
				first = got
			} else if !slices.Equal(got, first) {
				t.Errorf("n = %d, GOMAXPROCS %d: the bits changed: %v, first %v", n, procs, got, first)
			}
		}
	}
}

// TestEvalSumsXTX checks that the gradient pass at w = 0 leaves X^T X with
// the bits of gram's own pass (K = 1, on both sides of minPartRows), and
// that a pass elsewhere leaves none.
func TestEvalSumsXTX(t *testing.T) {
	for _, tt := range []struct{ n, d int }{{100, 5}, {minPartRows + 7, 33}, {3*passRows + 1, 8}} {
		X, y := rows(tt.n, tt.d, 1, uint64(tt.n))
		g := make([]float64, tt.d)
		o := newObjective(X, y, losses.Logistic{}, 1, 0.01, nil)
		w := make([]float64, tt.d)
		w[0] = 1
		o.eval(w, g)
		if o.xtx != nil {
			t.Fatalf("n = %d: X^T X summed at w != 0", tt.n)
		}
		o.eval(make([]float64, tt.d), g)
		if o.xtx == nil {
			t.Fatalf("n = %d: no X^T X after the pass at w = 0", tt.n)
		}
		ref := newObjective(X, y, losses.Logistic{}, 1, 0.01, nil)
		ref.setXTX(func(dst []float64, stride int) { ref.gram(dst, stride, nil, 1) })
		got, want := o.xtx.RawMatrix().Data, ref.xtx.RawMatrix().Data
		if !slices.Equal(got, want) {
			t.Errorf("n = %d, d = %d: X^T X from the pass differs from gram's", tt.n, tt.d)
		}
		var top, worst float64
		for i := range tt.d {
			for j := range tt.d {
				var s float64
				for r := range tt.n {
					s += X.At(r, i) * X.At(r, j)
				}
				top = math.Max(top, math.Abs(s))
				worst = math.Max(worst, math.Abs(s-o.xtx.At(i, j)))
			}
		}
		if worst > 1e-12*top {
			t.Errorf("n = %d, d = %d: X^T X off by %v", tt.n, tt.d, worst)
		}
	}
}
