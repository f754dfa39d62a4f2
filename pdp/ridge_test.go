package pdp

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestRidgeClosedForm checks the closed form against the general analysis
// with the squared loss and against retraining: leverage, leave-one-out
// residuals (Wang, eq. 4) and sensitivities.
func TestRidgeClosedForm(t *testing.T) {
	const n, d, lambda = 200, 4, 1e-2
	x, y := synth(n, d, losses.Squared{}, 0, 2)
	r, err := FitRidge(x, y, lambda)
	if err != nil {
		t.Fatal(err)
	}
	a := mustAnalysis(t, x, y, Config{Loss: losses.Squared{}, Lambda: lambda})
	if e := dist(r.W, a.Solution().W); e > 1e-10 {
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
		xo, yo := without(x, y, i)
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
		if e := math.Abs(dist(ref.W, r.W) - r.Sensitivity[i]); e > 1e-10 {
			t.Errorf("row %d: sensitivity %g, retrained %g", i, r.Sensitivity[i], dist(ref.W, r.W))
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
	x, y := synth(n, d, losses.Squared{}, 0, 9)
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
			xo, yo := without(x, y, i)
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
	x, y := synth(n, d, losses.Squared{}, 0, 4)
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
	paper := math.Min(float64(n)/(16*25*9*math.Log(4e6)), float64(n)/(8*25*9))
	if res.Gamma > paper {
		t.Errorf("gamma %g above Algorithm 1's %g", res.Gamma, paper)
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
		if _, err := AdaOPS(x, y, bad); !errors.Is(err, ErrInput) {
			t.Errorf("%+v: error %v, want ErrInput", bad, err)
		}
	}
	big := mat.DenseCopyOf(x)
	big.Set(0, 0, 3)
	if _, err := AdaOPS(big, y, cfg); !errors.Is(err, ErrInput) {
		t.Errorf("row outside the unit ball: error %v", err)
	}
}
