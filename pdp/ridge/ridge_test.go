package ridge

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestRidgeClosedForm checks the closed form against the general analysis
// with the squared loss and against retraining: leverage, leave-one-out
// residuals (Wang, eq. 4) and sensitivities.
func TestRidgeClosedForm(t *testing.T) {
	const n, d, lambda = 200, 4, 1e-2
	x, y := pdptest.Synth(n, d, losses.Squared{}, 0, 2)
	r, err := FitRidge(x, y, lambda)
	if err != nil {
		t.Fatal(err)
	}
	a, err := pdp.New(x, y, pdp.Config{Loss: losses.Squared{}, Lambda: lambda})
	if err != nil {
		t.Fatal(err)
	}
	if e := pdptest.Dist(r.W, a.Solution().W); e > 1e-10 {
		t.Fatalf("ridge and Newton solutions differ by %g", e)
	}
	all, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if e := math.Abs(r.Sensitivity[i] - all[i].L2); e > 1e-12 {
			t.Fatalf("row %d: sensitivity %g vs %g", i, r.Sensitivity[i], all[i].L2)
		}
		if e := math.Abs(r.Leverage[i] - all[i].Leverage); e > 1e-12 {
			t.Fatalf("row %d: leverage %g vs %g", i, r.Leverage[i], all[i].Leverage)
		}
	}
	for _, i := range []int{0, 99, n - 1} {
		xo, yo := pdptest.Without(x, y, i)
		ref, err := fitRidge(xo, yo, float64(n)*lambda)
		if err != nil {
			t.Fatal(err)
		}
		var pred float64
		for j, v := range x.RawRowView(i) {
			pred += v * ref.W[j]
		}
		if e := math.Abs(y[i] - pred - r.LOOResidual[i]); e > 1e-10 {
			t.Errorf("row %d: leave-one-out residual %g, retrained %g", i, r.LOOResidual[i], y[i]-pred)
		}
		if e := math.Abs(pdptest.Dist(ref.W, r.W) - r.Sensitivity[i]); e > 1e-10 {
			t.Errorf("row %d: sensitivity %g, retrained %g", i, r.Sensitivity[i], pdptest.Dist(ref.W, r.W))
		}
		// Adding the row back to Z without it is the same neighbour pair:
		// the bounds from either side must agree.
		mu, _, sens, err := ref.Target(x.RawRowView(i), y[i])
		if err != nil {
			t.Fatal(err)
		}
		if e := math.Abs(sens - r.Sensitivity[i]); e > 1e-10 {
			t.Errorf("row %d: add sensitivity %g, remove %g", i, sens, r.Sensitivity[i])
		}
		if e := math.Abs(mu/(1+mu) - r.Leverage[i]); e > 1e-10 {
			t.Errorf("row %d: mu/(1+mu) = %g, mu' = %g", i, mu/(1+mu), r.Leverage[i])
		}
		out, _ := r.OPSEpsilon(2, 1e-6)
		in, err := ref.OPSEpsilonTarget(x.RawRowView(i), y[i], 2, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if e := math.Abs(out[i] - in); e > 1e-9*in {
			t.Errorf("row %d: Theorem 14 eq. 8 gives %g, eq. 7 %g", i, out[i], in)
		}
	}
}

// TestOPSBoundHolds checks Theorem 14 exactly: the privacy loss of OPS
// between Z and Z without row i depends on theta only through u = x_i^T
// theta, a quadratic in u, so P(|loss| > eps) has a closed form under each
// of the two posteriors; both must be at most delta at the bound.
func TestOPSBoundHolds(t *testing.T) {
	const n, d, lambda, delta = 60, 3, 1e-2, 1e-4
	x, y := pdptest.Synth(n, d, losses.Squared{}, 0, 9)
	r, err := FitRidge(x, y, lambda)
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.5, 5, 50} {
		bounds, err := r.OPSEpsilon(gamma, delta)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 7, 33} {
			xo, yo := pdptest.Without(x, y, i)
			small, err := fitRidge(xo, yo, r.Reg)
			if err != nil {
				t.Fatal(err)
			}
			xi, yi := x.RawRowView(i), y[i]
			mu, res, _, _ := small.Target(xi, yi)
			var predBig float64
			for j, v := range xi {
				predBig += v * r.W[j]
			}
			// loss(u) = log p_small(theta) - log p_big(theta)
			//         = -log(1+mu)/2 + (gamma/2)[(yi-u)^2 - res^2/(1+mu)].
			c := -math.Log1p(mu)/2 - gamma/2*res*res/(1+mu)
			eps := bounds[i]
			// |loss| > eps iff (yi-u)^2 > 2(eps-c)/gamma or < 2(-eps-c)/gamma.
			tail := func(mean, sd float64) float64 {
				nd := distuv.Normal{Mu: mean, Sigma: sd}
				var p float64
				if hi := 2 * (eps - c) / gamma; hi > 0 {
					s := math.Sqrt(hi)
					p += nd.CDF(yi-s) + nd.Survival(yi+s)
				} else {
					p = 1
				}
				if lo := 2 * (-eps - c) / gamma; lo > 0 {
					s := math.Sqrt(lo)
					p += nd.CDF(yi+s) - nd.CDF(yi-s)
				}
				return p
			}
			pSmall := tail(yi-res, math.Sqrt(mu/gamma))
			pBig := tail(predBig, math.Sqrt(r.Leverage[i]/gamma))
			if pSmall > delta || pBig > delta {
				t.Errorf("gamma %g row %d: P(|loss| > %g) = %g, %g, want <= %g", gamma, i, eps, pSmall, pBig, delta)
			}
		}
	}
}

// TestAdaOPS checks Algorithm 1's regularization (max, not min), the
// guarantee it reports and its refusals.
func TestAdaOPS(t *testing.T) {
	const n, d = 4000, 3
	x, y := pdptest.Synth(n, d, losses.Squared{}, 0, 4)
	for i := range y {
		y[i] = math.Max(-1, math.Min(1, y[i]))
	}
	cfg := AdaOPSConfig{Epsilon: 1, Delta: 1e-6, Cond: 5, Source: perturb.Seeded(3)}
	res, err := AdaOPS(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reg < 0 || res.Gamma <= 0 || len(res.W) != d {
		t.Fatalf("result %+v", res)
	}
	// The regularized Hessian meets the condition of step 2.
	g := mat.NewSymDense(d, nil)
	g.SymOuterK(1, x.T())
	var es mat.EigenSym
	es.Factorize(g, false)
	if lm := es.Values(nil)[0] + res.Reg; lm < float64(n)/(float64(d)*cfg.Cond) {
		t.Errorf("lambda_min + lambda_n = %g < n/(d kappa) = %g", lm, float64(n)/(float64(d)*cfg.Cond))
	}
	if g, _ := adaOPSGamma(n, d, cfg.Epsilon, cfg.Delta, cfg.Cond); res.Gamma != g {
		t.Errorf("gamma %g, adaOPSGamma %g", res.Gamma, g)
	}
	// A small kappa forces regularization: lambda_n > 0.
	small := cfg
	small.Cond = 0.5
	res2, err := AdaOPS(x, y, small)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Reg <= 0 {
		t.Errorf("kappa 0.5: lambda_n = %g, want > 0", res2.Reg)
	}
	for _, bad := range []AdaOPSConfig{
		{Epsilon: 1, Delta: 1e-6, Cond: 1e6, Source: perturb.Seeded(1)},
		{Epsilon: 0, Delta: 1e-6, Cond: 1, Source: perturb.Seeded(1)},
		{Epsilon: 1, Delta: 1e-6, Cond: 1},
	} {
		if _, err := AdaOPS(x, y, bad); !errors.Is(err, pdp.ErrInput) {
			t.Errorf("%+v: error %v, want ErrInput", bad, err)
		}
	}
	big := mat.DenseCopyOf(x)
	big.Set(0, 0, 3)
	if _, err := AdaOPS(big, y, cfg); !errors.Is(err, pdp.ErrInput) {
		t.Errorf("row outside the unit ball: error %v", err)
	}
}

// quadTail returns P(c + b xi + (a/2) xi^2 > t) for xi standard normal,
// exactly (the roots of the quadratic and the normal distribution
// function).
func quadTail(q quadLoss, t float64) float64 {
	if q.a == 0 {
		if q.b == 0 {
			if q.c > t {
				return 1
			}
			return 0
		}
		return distuv.UnitNormal.Survival((t - q.c) / math.Abs(q.b))
	}
	disc := q.b*q.b - 2*q.a*(q.c-t)
	if disc < 0 {
		if q.a > 0 {
			return 1
		}
		return 0
	}
	r1, r2 := (-q.b-math.Sqrt(disc))/q.a, (-q.b+math.Sqrt(disc))/q.a
	lo, hi := math.Min(r1, r2), math.Max(r1, r2)
	if q.a > 0 {
		return distuv.UnitNormal.CDF(lo) + distuv.UnitNormal.Survival(hi)
	}
	return distuv.UnitNormal.CDF(hi) - distuv.UnitNormal.CDF(lo)
}

// gaussLogPDF returns the log density of N(m, c/gamma) at v, c the inverse
// of the Hessian factored in chol.
func gaussLogPDF(v, m []float64, chol *mat.Cholesky, gamma float64) float64 {
	d := len(v)
	dv := make([]float64, d)
	for j := range dv {
		dv[j] = v[j] - m[j]
	}
	// (v - m)^T H (v - m) gamma, H = U^T U.
	var u mat.TriDense
	chol.UTo(&u)
	var uv mat.VecDense
	uv.MulVec(&u, mat.NewVecDense(d, dv))
	q := gamma * mat.Dot(&uv, &uv)
	return -0.5*q + 0.5*chol.LogDet() + float64(d)/2*math.Log(gamma/(2*math.Pi))
}

// TestOPSLossExact checks the two forms of OPS's privacy loss (opsLosses:
// Wang's Theorem 14, eq. 7 and eq. 8 with its sign corrected) against the
// log density ratio of the two Gaussian posteriors, at samples of each:
// the printed sign of eq. 8 would miss it by gamma mu' res'^2/(1 - mu').
func TestOPSLossExact(t *testing.T) {
	const n, d, lambda, gamma = 40, 3, 1e-2, 3.0
	x, y := pdptest.Synth(n, d, losses.Squared{}, 0, 12)
	small, err := FitRidge(x, y, lambda)
	if err != nil {
		t.Fatal(err)
	}
	tx, ty := []float64{0.5, -0.4, 0.5}, 2.0 // a target with a large residual
	xa, ya := pdptest.With(x, y, tx, ty)
	big, err := fitRidge(xa, ya, small.Reg)
	if err != nil {
		t.Fatal(err)
	}
	mu, res, _, err := small.Target(tx, ty)
	if err != nil {
		t.Fatal(err)
	}
	onZ, onZz := opsLosses(mu, res, gamma)
	src := perturb.Seeded(5)
	dot := func(a, b []float64) (s float64) {
		for j := range a {
			s += a[j] * b[j]
		}
		return s
	}
	for _, dir := range []struct {
		name     string
		from, to *Ridge
		q        quadLoss
		lev      float64
	}{{"eq. 7, samples of Z", small, big, onZ, mu}, {"eq. 8, samples of Z + z", big, small, onZz, mu / (1 + mu)}} {
		for range 20 {
			th, err := dir.from.SampleOPS(gamma, src)
			if err != nil {
				t.Fatal(err)
			}
			exact := gaussLogPDF(th, dir.from.W, dir.from.chol, gamma) - gaussLogPDF(th, dir.to.W, dir.to.chol, gamma)
			xi := (dot(tx, dir.from.W) - dot(tx, th)) / math.Sqrt(dir.lev/gamma)
			got := dir.q.c + dir.q.b*xi + dir.q.a/2*xi*xi
			if e := math.Abs(got - exact); e > 1e-9*(1+math.Abs(exact)) {
				t.Fatalf("%s: loss %v, exact %v", dir.name, got, exact)
			}
		}
	}
	// The printed constant of eq. 8 is another number.
	mp, rp := mu/(1+mu), res/(1+mu)
	printed := 0.5 * math.Abs(-math.Log1p(-mp)-gamma*mp/(1-mp)*rp*rp)
	if math.Abs(printed-math.Abs(onZz.c)) < 0.1*math.Abs(onZz.c) {
		t.Errorf("the printed constant %v is close to the exact %v: the case does not show the sign", printed, onZz.c)
	}
}

// TestAdaOPSGammaMaximal checks that AdaOPS's gamma_n is valid (the exact
// tails of OPS's privacy loss, both directions, are at most delta/4 at
// eps/2 over a grid of the leverages and residuals the event allows) and
// maximal for its argument (its tail bound exceeds delta/4 at
// gamma_n (1 + 1e-9)), and that it is above the former choice, the
// printed gamma_n capped by the corrected Remark 15 form.
func TestAdaOPSGammaMaximal(t *testing.T) {
	for _, tc := range []struct {
		n, d         int
		eps, delta   float64
		kappaOfLimit float64 // kappa as a share of Algorithm 1's limit
	}{
		{4000, 3, 1, 1e-6, 1}, {4000, 3, 1, 1e-6, 0.2}, {100000, 20, 0.5, 1e-8, 0.5}, {2000, 2, 4, 1e-5, 1},
	} {
		nf, df := float64(tc.n), float64(tc.d)
		l4 := math.Log(4 / tc.delta)
		kappa := tc.kappaOfLimit * nf * tc.eps / (4 * df * (1 + l4))
		g, err := adaOPSGamma(tc.n, tc.d, tc.eps, tc.delta, kappa)
		if err != nil {
			t.Fatal(err)
		}
		h := nf/(df*kappa) - 1
		muMax, rMax := 1/h, 1+math.Sqrt((nf-1)/h)
		d4 := tc.delta / 4
		tail := adaOPSTail(muMax, rMax, tc.eps/2)
		if p := tail(g); p > d4 {
			t.Errorf("%+v: tail bound %v > delta/4 at gamma %v", tc, p, g)
		}
		if p := tail(g * (1 + 1e-9)); !(p > d4) {
			t.Errorf("%+v: gamma %v not maximal: tail bound %v at 1 + 1e-9 times it", tc, g, p)
		}
		worst := 0.0
		for i := 0; i <= 40; i++ {
			for j := 0; j <= 40; j++ {
				onZ, onZz := opsLosses(muMax*float64(i)/40, rMax*float64(j)/40, g)
				for _, q := range []quadLoss{onZ, onZz} {
					worst = math.Max(worst, quadTail(q, tc.eps/2))
				}
			}
		}
		if worst > d4 {
			t.Errorf("%+v: an exact tail is %v > delta/4", tc, worst)
		}
		// The former choice.
		l8 := math.Log(8 / tc.delta)
		h0 := nf/(df*kappa) - 1
		r0 := 1 + math.Sqrt(2*nf/h0)
		a, b, c := 0.5/h0*r0*r0, math.Sqrt(2/h0*l8)*r0, (0.5+l8)/h0
		s := (-b + math.Sqrt(b*b+4*a*(tc.eps/2-c))) / (2 * a)
		old := math.Min(math.Min(nf*tc.eps*tc.eps/(16*kappa*kappa*df*df*l4), nf*tc.eps/(8*kappa*kappa*df*df)), s*s)
		if !(g > 2*old) {
			t.Errorf("%+v: gamma %v, not twice the former %v", tc, g, old)
		}
		t.Logf("%+v: gamma_n %.4g, former %.4g (%.0f%%); largest exact tail %.3g of delta/4 = %.3g", tc, g, old, 100*old/g, worst, d4)
	}
}

// TestAdaOPSAdversarial checks AdaOPS's sampling step on neighbours built
// to be bad: data sets whose regularized lambda_min is exactly the event's
// n/(d kappa), targets along each eigenvector with the label farthest from
// the prediction, and every removed row. The exact tails of the privacy
// loss at gamma_n (opsLosses, quadTail) must be at most delta/4 at eps/2.
func TestAdaOPSAdversarial(t *testing.T) {
	const n, d, eps, delta = 3000, 3, 1.0, 1e-6
	kappa := float64(n) * eps / (4 * d * (1 + math.Log(4/delta)))
	g, err := adaOPSGamma(n, d, eps, delta, kappa)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(0); seed < 4; seed++ {
		x, y := pdptest.Synth(n, d, losses.Squared{}, 0, 30+seed)
		for i := range y {
			y[i] = math.Max(-1, math.Min(1, 3*y[i]))
		}
		gm := mat.NewSymDense(d, nil)
		gm.SymOuterK(1, x.T())
		var es mat.EigenSym
		es.Factorize(gm, true)
		vals := es.Values(nil)
		reg := math.Max(0, float64(n)/(d*kappa)-vals[0])
		r, err := fitRidge(x, y, reg)
		if err != nil {
			t.Fatal(err)
		}
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		worst := 0.0
		check := func(mu, res float64) {
			onZ, onZz := opsLosses(mu, res, g)
			worst = math.Max(worst, math.Max(quadTail(onZ, eps/2), quadTail(onZz, eps/2)))
		}
		for c := 0; c < d; c++ {
			tx := mat.Col(nil, c, &vecs)
			var pred float64
			for j, v := range tx {
				pred += v * r.W[j]
			}
			mu, res, _, err := r.Target(tx, -math.Copysign(1, pred))
			if err != nil {
				t.Fatal(err)
			}
			check(mu, res)
		}
		for i, lev := range r.Leverage {
			check(lev/(1-lev), r.LOOResidual[i])
		}
		if worst > delta/4 {
			t.Errorf("seed %d: a neighbour's privacy loss exceeds eps/2 with probability %v > delta/4", seed, worst)
		}
		t.Logf("seed %d: largest tail %.3g (delta/4 = %g)", seed, worst, delta/4)
	}
}
