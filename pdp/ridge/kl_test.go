package ridge

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
