package pdp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
)

// posterior returns the mean and covariance of posterior sampling for
// linear regression, p(h | Z) proportional to
// exp(-(gamma/2)(||y - X h||^2 + lambda ||h||^2)).
func posterior(x *mat.Dense, y []float64, gamma, lambda float64) (*mat.VecDense, *mat.SymDense) {
	_, d := x.Dims()
	h := mat.NewSymDense(d, nil)
	h.SymOuterK(1, x.T())
	for j := 0; j < d; j++ {
		h.SetSym(j, j, h.At(j, j)+lambda)
	}
	var c mat.Cholesky
	c.Factorize(h)
	var xty, mu mat.VecDense
	xty.MulVec(x.T(), mat.NewVecDense(len(y), y))
	_ = c.SolveVecTo(&mu, &xty)
	var cov mat.SymDense
	_ = c.InverseTo(&cov)
	cov.ScaleSym(1/gamma, &cov)
	return &mu, &cov
}

// TestOnAverageKLEqualsGeneralization reproduces Wang, Lei & Fienberg
// (On-Average KL-Privacy), Theorem 4, by simulation, with the library's
// on-average KL of posterior sampling (Ridge.OPSOnAverageKL): for posterior
// sampling with loss l(z, h) = (gamma/2)(y - x^T h)^2 and prior
// exp(-(gamma lambda/2)||h||^2), the on-average KL-privacy (the expected KL
// divergence between the posteriors on Z and on Z with one row replaced by
// a fresh draw) equals the on-average generalization gap (expected
// population risk minus empirical risk of the sample). Data: x uniform on
// [-1, 1]^d, y = x^T theta0 + N(0, s^2). Both sides are computed exactly
// for each Z (Gaussian posteriors, population risk in closed form:
// E xx^T = I/3), so only Z and the fresh rows are simulated. The test
// rejects when the mean paired difference exceeds 4.5 standard errors:
// false-rejection probability about 7e-6 (normal approximation, 3000
// replications).
func TestOnAverageKLEqualsGeneralization(t *testing.T) {
	const (
		n, d          = 20, 2
		gamma, lambda = 2.0, 1.0
		s             = 0.5
		reps          = 3000
	)
	theta0 := []float64{1, -0.5}
	rng := rand.New(rand.NewPCG(42, 1))
	draw := func(row []float64) float64 {
		var m float64
		for j := range row {
			row[j] = 2*rng.Float64() - 1
			m += row[j] * theta0[j]
		}
		return m + s*rng.NormFloat64()
	}
	var sumDiff, sumDiff2, sumKL, sumGen float64
	for r := 0; r < reps; r++ {
		x := mat.NewDense(n, d, nil)
		y := make([]float64, n)
		for i := 0; i < n; i++ {
			y[i] = draw(x.RawRowView(i))
		}
		mu, cov := posterior(x, y, gamma, lambda)
		// Generalization gap of the posterior sample, in closed form.
		var pop float64
		for j := 0; j < d; j++ {
			e := theta0[j] - mu.AtVec(j)
			pop += e*e/3 + cov.At(j, j)/3
		}
		pop = gamma / 2 * (pop + s*s)
		var emp float64
		for i := 0; i < n; i++ {
			xi := mat.NewVecDense(d, x.RawRowView(i))
			res := y[i] - mat.Dot(xi, mu)
			emp += res*res + mat.Inner(xi, cov, xi)
		}
		emp = gamma / 2 * emp / float64(n)
		gen := pop - emp
		// On-average KL: every row in turn replaced by a fresh draw, by the
		// library (Ridge.OPSOnAverageKL).
		fx := mat.NewDense(n, d, nil)
		fy := make([]float64, n)
		rows := make([]int, n)
		for i := 0; i < n; i++ {
			fy[i], rows[i] = draw(fx.RawRowView(i)), i
		}
		r, err := fitRidge(x, y, lambda)
		if err != nil {
			t.Fatal(err)
		}
		kl, err := r.OPSOnAverageKL(gamma, rows, fx, fy)
		if err != nil {
			t.Fatal(err)
		}
		sumKL += kl
		sumGen += gen
		sumDiff += kl - gen
		sumDiff2 += (kl - gen) * (kl - gen)
	}
	mean := sumDiff / reps
	se := math.Sqrt((sumDiff2/reps - mean*mean) / reps)
	t.Logf("on-average KL %.5f, generalization gap %.5f, difference %.5f (standard error %.5f)", sumKL/reps, sumGen/reps, mean, se)
	if math.Abs(mean) > 4.5*se {
		t.Errorf("on-average KL %.5f and generalization gap %.5f differ by %.2f standard errors", sumKL/reps, sumGen/reps, math.Abs(mean)/se)
	}
	if !(sumKL/reps > 10*se) {
		t.Errorf("on-average KL %.5f is not resolved by the simulation (standard error %.5f)", sumKL/reps, se)
	}
}

// TestOnAverageKLGaussian checks the fixed-covariance formula against the
// Gaussian KL divergence.
func TestOnAverageKLGaussian(t *testing.T) {
	diffs := []Diff{{V: []float64{0.3, -0.4}, L2: 0.5}, {V: []float64{0, 1}, L2: 1}}
	got, err := OnAverageKL(diffs, 2)
	if err != nil {
		t.Fatal(err)
	}
	id := mat.NewSymDense(2, []float64{4, 0, 0, 4})
	var want float64
	for _, d := range diffs {
		want += pdptest.KLGauss(mat.NewVecDense(2, nil), id, mat.NewVecDense(2, d.V), id) / 2
	}
	if math.Abs(got-want) > 1e-14 {
		t.Errorf("OnAverageKL = %v, want %v", got, want)
	}
	if _, err := OnAverageKL(diffs, 0); err == nil {
		t.Error("sigma 0 accepted")
	}
}

// TestOPSOnAverageKLClosedForm checks Ridge.OPSOnAverageKL against the
// Gaussian KL divergence of the two posteriors formed densely, and, for
// the Gibbs mechanism whose on-average KL-privacy has a closed form, the
// posterior of a mean (one constant feature: p(h | Z) proportional to
// exp(-(gamma/2)(sum_i (y_i - h)^2 + reg h^2)), KL = gamma (y' - y_i)^2 /
// (2 (n + reg)) per replacement), against it exactly on one data set and
// in expectation, gamma s^2/(n + reg) for labels drawn N(m, s^2). The
// expectation is tested over 200 x 40 pairs, rejecting beyond 4.5 standard
// errors of the scaled chi-square variables: false-rejection probability
// about 7e-6 (normal approximation).
func TestOPSOnAverageKLClosedForm(t *testing.T) {
	const gamma = 2.5
	x, y := pdptest.Synth(30, 3, losses.Squared{}, 0, 41)
	r, err := fitRidge(x, y, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	fx, fy := pdptest.Synth(5, 3, losses.Squared{}, 0, 42)
	rows := []int{0, 3, 3, 17, 29}
	got, err := r.OPSOnAverageKL(gamma, rows, fx, fy)
	if err != nil {
		t.Fatal(err)
	}
	mu, cov := posterior(x, y, gamma, 0.7)
	var want float64
	for q, i := range rows {
		xr := mat.DenseCopyOf(x)
		xr.SetRow(i, fx.RawRowView(q))
		yr := append([]float64(nil), y...)
		yr[i] = fy[q]
		mu2, cov2 := posterior(xr, yr, gamma, 0.7)
		want += pdptest.KLGauss(mu, cov, mu2, cov2) / float64(len(rows))
	}
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("OPSOnAverageKL = %v, dense Gaussian KL %v", got, want)
	}

	// The posterior of a mean.
	const n, reg, m, s = 40, 3.0, 0.5, 0.8
	rng := rand.New(rand.NewPCG(43, 1))
	ones := mat.NewDense(n, 1, nil)
	for i := range n {
		ones.Set(i, 0, 1)
	}
	var sum, sum2 float64
	const reps = 200
	for rep := 0; rep < reps; rep++ {
		y := make([]float64, n)
		fy := make([]float64, n)
		rows := make([]int, n)
		var exact float64
		for i := range n {
			y[i], fy[i], rows[i] = m+s*rng.NormFloat64(), m+s*rng.NormFloat64(), i
		}
		for i := range n {
			exact += gamma * (fy[i] - y[i]) * (fy[i] - y[i]) / (2 * (n + reg)) / n
		}
		r, err := fitRidge(ones, y, reg)
		if err != nil {
			t.Fatal(err)
		}
		kl, err := r.OPSOnAverageKL(gamma, rows, ones, fy)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(kl-exact) > 1e-12*exact {
			t.Fatalf("mean posterior: OPSOnAverageKL %v, closed form %v", kl, exact)
		}
		for i := range n {
			v := gamma * (fy[i] - y[i]) * (fy[i] - y[i]) / (2 * (n + reg))
			sum += v
			sum2 += v * v
		}
	}
	total := float64(n * reps)
	mean := sum / total
	se := math.Sqrt((sum2/total - mean*mean) / total)
	expect := gamma * s * s / (n + reg)
	t.Logf("on-average KL %.5g, closed form %.5g (standard error %.2g)", mean, expect, se)
	if math.Abs(mean-expect) > 4.5*se {
		t.Errorf("on-average KL %v, closed form %v: %.1f standard errors apart", mean, expect, math.Abs(mean-expect)/se)
	}
}

// TestOnAverageKLFresh checks the on-average KL-privacy of a Gaussian
// release (OnAverageKLFresh) against retraining: with one fresh row, every
// training row is replaced by it, and the mean of ||w(Z') - w(Z)||^2 /
// (2 sigma^2) over the retrained Z' must equal the estimate (exact for
// the squared loss, whose one-step differences are exact) and lie below it
// for the logistic loss (the estimate is at the upper bounds). The
// remove-one differences' mean, a different and smaller quantity, is
// logged beside it.
func TestOnAverageKLFresh(t *testing.T) {
	const n, d, sigma = 120, 3, 0.05
	for _, loss := range []losses.Loss{losses.Squared{}, losses.Logistic{}} {
		x, y := pdptest.Synth(n, d, loss, 0, 44)
		fx, fy := pdptest.Synth(1, d, loss, 0, 45)
		cfg := Config{Loss: loss, Lambda: 1e-2}
		a := mustAnalysis(t, x, y, cfg)
		got, err := OnAverageKLFresh(a, fx, fy, sigma, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want float64
		for i := range n {
			xr := mat.DenseCopyOf(x)
			xr.SetRow(i, fx.RawRowView(0))
			yr := append([]float64(nil), y...)
			yr[i] = fy[0]
			cfg.N = n
			sol, err := Solve(xr, yr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			dd := pdptest.Dist(sol.W, a.Solution().W)
			want += dd * dd / (2 * sigma * sigma) / n
		}
		if got.Pairs != n || got.Kind != KindBound {
			t.Errorf("%s: %d pairs of kind %s", loss.Name(), got.Pairs, got.Kind)
		}
		switch loss.Name() {
		case "squared":
			if math.Abs(got.KL-want) > 1e-9*want {
				t.Errorf("squared: on-average KL %v, retrained %v", got.KL, want)
			}
		default:
			if !(got.KL >= want) || got.KL > 2*want {
				t.Errorf("%s: on-average KL bound %v, retrained %v", loss.Name(), got.KL, want)
			}
		}
		rm, err := a.RemoveAll()
		if err != nil {
			t.Fatal(err)
		}
		half, err := OnAverageKL(rm, sigma)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: on-average KL %.4g (retrained %.4g); with remove-one neighbours %.4g", loss.Name(), got.KL, want, half)
	}
}

// TestOnAverageKLAllPairs checks OnAverageKLFresh against brute force on a
// tiny ridge problem: with n m below the pair limit it must average over
// every (training row, fresh row) pair, and for the squared loss (exact
// one-step differences) equal the mean over all n m retrained data sets
// of ||w(Z') - w(Z)||^2 / (2 sigma^2). Its standard error must be positive
// and below the spread of the pair values.
func TestOnAverageKLAllPairs(t *testing.T) {
	const n, m, d, sigma = 12, 5, 2, 0.1
	loss := losses.Squared{}
	x, y := pdptest.Synth(n, d, loss, 0, 7)
	fx, fy := pdptest.Synth(m, d, loss, 0, 8)
	cfg := Config{Loss: loss, Lambda: 0.1}
	a := mustAnalysis(t, x, y, cfg)
	got, err := OnAverageKLFresh(a, fx, fy, sigma, 3)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	for i := range n {
		for j := range m {
			xr := mat.DenseCopyOf(x)
			xr.SetRow(i, fx.RawRowView(j))
			yr := append([]float64(nil), y...)
			yr[i] = fy[j]
			cfg.N = n
			sol, err := Solve(xr, yr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			dd := pdptest.Dist(sol.W, a.Solution().W)
			vals = append(vals, dd*dd/(2*sigma*sigma))
		}
	}
	var want float64
	for _, v := range vals {
		want += v / float64(len(vals))
	}
	if got.Pairs != n*m || got.Pairings != m {
		t.Errorf("%d pairs in %d pairings, want all %d", got.Pairs, got.Pairings, n*m)
	}
	if math.Abs(got.KL-want) > 1e-9*want {
		t.Errorf("on-average KL %v, brute force over all pairs %v", got.KL, want)
	}
	if sd := math.Sqrt(sampleVar(vals)); !(got.StdErr > 0 && got.StdErr < sd) {
		t.Errorf("standard error %v, pair values' standard deviation %v", got.StdErr, sd)
	}
	t.Logf("on-average KL %.4g +- %.2g (brute force %.4g)", got.KL, got.StdErr, want)
}
