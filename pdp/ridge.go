package pdp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
)

// Ridge is ridge regression in closed form, the setting of Wang's
// Section 4: w = H^{-1} X^T y with H = X^T X + reg I, reg = N lambda,
// the minimizer of J(w) = (1/2)||y - X w||^2 + (reg/2)||w||^2 (the squared
// loss (z - y)^2/2 of the losses package). Wang's ridge parameter, the
// lambda of Theorem 14 and Algorithm 1, is reg.
//
// Every quantity is exact: the Hessian of J is H whatever w, so the
// one-step update of Lemma 13 is the leave-one-out solution itself.
type Ridge struct {
	// W is the ridge solution.
	W []float64
	// Reg is the ridge weight N lambda (Wang's lambda).
	Reg float64
	// Leverage[i] = x_i^T H^{-1} x_i, the in-sample leverage score of row i
	// (Wang's mu' in Theorem 14), in [0, 1).
	Leverage []float64
	// Residual[i] = y_i - x_i^T w.
	Residual []float64
	// LOOResidual[i] = y_i - x_i^T w_{-i} = Residual[i] / (1 - Leverage[i]),
	// the leave-one-out prediction error (w_{-i} fitted without row i, the
	// weight reg kept).
	LOOResidual []float64
	// Sensitivity[i] = ||w_{-i} - w||_2 = |Residual[i]| ||H^{-1} x_i|| /
	// (1 - Leverage[i]): Wang's eq. 4 with A = I.
	Sensitivity []float64

	x    *mat.Dense
	y    []float64
	chol *mat.Cholesky
}

// FitRidge fits ridge regression on (x, y) with the penalty
// (n lambda / 2)||w||^2, n the number of rows (lambda >= 0; lambda = 0 is
// least squares, which needs rows spanning R^d).
func FitRidge(x *mat.Dense, y []float64, lambda float64) (*Ridge, error) {
	if !check.NonNegative(lambda) {
		return nil, fmt.Errorf("%w: lambda = %v, want finite >= 0", ErrInput, lambda)
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows", ErrInput)
	}
	n, _ := x.Dims()
	return fitRidge(x, y, float64(n)*lambda)
}

// fitRidge fits with the ridge weight reg.
func fitRidge(x *mat.Dense, y []float64, reg float64) (*Ridge, error) {
	n, d := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d rows but %d labels", ErrInput, n, len(y))
	}
	for i := 0; i < n; i++ {
		if j := check.FirstNonFinite(x.RawRowView(i)); j >= 0 {
			return nil, fmt.Errorf("%w: X[%d,%d] = %v", ErrInput, i, j, x.At(i, j))
		}
		if !check.Finite(y[i]) {
			return nil, fmt.Errorf("%w: y[%d] = %v", ErrInput, i, y[i])
		}
	}
	h := mat.NewSymDense(d, nil)
	h.SymOuterK(1, x.T())
	for j := 0; j < d; j++ {
		h.SetSym(j, j, h.At(j, j)+reg)
	}
	chol, err := factor(h, "X^T X + lambda I")
	if err != nil {
		return nil, err
	}
	var xty, w mat.VecDense
	xty.MulVec(x.T(), mat.NewVecDense(n, y))
	if err := chol.SolveVecTo(&w, &xty); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	r := &Ridge{
		W: append([]float64(nil), w.RawVector().Data...), Reg: reg,
		Leverage: make([]float64, n), Residual: make([]float64, n),
		LOOResidual: make([]float64, n), Sensitivity: make([]float64, n),
		x: x, y: y, chol: chol,
	}
	// H^{-1} X^T, one column per row.
	var hx mat.Dense
	if err := chol.SolveTo(&hx, x.T()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	col := make([]float64, d)
	for i := 0; i < n; i++ {
		xi := x.RawRowView(i)
		mat.Col(col, i, &hx)
		var lev, pred, nn float64
		for j, v := range xi {
			lev += v * col[j]
			pred += v * r.W[j]
			nn += col[j] * col[j]
		}
		if !(lev < 1) {
			return nil, fmt.Errorf("%w: row %d has leverage %v: with lambda = 0 no other row spans its direction", ErrSingular, i, lev)
		}
		res := y[i] - pred
		r.Leverage[i], r.Residual[i] = lev, res
		r.LOOResidual[i] = res / (1 - lev)
		r.Sensitivity[i] = math.Abs(res) * math.Sqrt(nn) / (1 - lev)
	}
	return r, nil
}

// Target returns, for a target (x, y) outside the data set, its
// out-of-sample leverage mu = x^T H^{-1} x (Wang's mu in Theorem 14), its
// residual y - x^T w and the sensitivity ||w_{+} - w|| = |residual|
// ||H^{-1} x|| / (1 + mu) of adding it (w_{+} fitted with it, the weight reg
// kept; Wang's eq. 4).
func (r *Ridge) Target(x []float64, y float64) (mu, residual, sens float64, err error) {
	if len(x) != len(r.W) {
		return 0, 0, 0, fmt.Errorf("%w: target of %d features, want %d", ErrInput, len(x), len(r.W))
	}
	var hx mat.VecDense
	if err := r.chol.SolveVecTo(&hx, mat.NewVecDense(len(x), x)); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	var pred float64
	for j, v := range x {
		mu += v * hx.AtVec(j)
		pred += v * r.W[j]
	}
	residual = y - pred
	return mu, residual, math.Abs(residual) * mat.Norm(&hx, 2) / (1 + mu), nil
}

// checkOPS validates gamma and delta for Theorem 14 (its tail bound needs
// delta < 2/e).
func checkOPS(gamma, delta float64) error {
	if !check.Positive(gamma) {
		return fmt.Errorf("%w: gamma = %v, want finite > 0", ErrInput, gamma)
	}
	if !(delta > 0 && delta < 2/math.E) {
		return fmt.Errorf("%w: delta = %v, want in (0, 2/e) (Theorem 14's tail bound)", ErrInput, delta)
	}
	return nil
}

// opsBound is Wang's Theorem 14 bound, corrected, for the pair (Z, Z + z)
// given the out-of-sample leverage mu and residual res of z against the fit
// on Z. Two corrections to the printed statement (Per-instance DP,
// Theorem 14 and its proof):
//
//   - Tail: the proof bounds |x^T theta - x^T theta_hat| by
//     sqrt(mu log(2/delta)/gamma), whose two-sided Gaussian tail is about
//     sqrt(delta), not delta (it reads exp(-s^2/2) as exp(-s^2)). With the
//     threshold sqrt(2 mu log(2/delta)/gamma) the tail is at most
//     delta/(s sqrt(2 pi)) <= delta, which turns the printed
//     (mu/2) log(2/delta) and sqrt(gamma mu log(2/delta)) |r| into
//     mu log(2/delta) and sqrt(2 gamma mu log(2/delta)) |r|.
//   - Both directions: eq. 7 bounds the privacy loss under the output on Z,
//     eq. 8 under the output on Z + z; they are not equal (the theorem
//     prints "="), and (eps, delta)-pDP needs both tails, so the bound is
//     the larger of the two. Eq. 8 uses the in-sample leverage
//     mu' = mu/(1 + mu) and residual res/(1 + mu).
//
// TestOPSBoundHolds checks the result against the exact distribution of the
// privacy loss.
func opsBound(mu, res, gamma, delta float64) float64 {
	l := 2 * math.Log(2/delta)
	e7 := 0.5*math.Abs(-math.Log1p(mu)+gamma*mu/(1+mu)*res*res) + mu/2*l + math.Sqrt(gamma*mu*l)*math.Abs(res)
	mp, rp := mu/(1+mu), res/(1+mu)
	e8 := 0.5*math.Abs(-math.Log1p(-mp)-gamma*mp/(1-mp)*rp*rp) + mp/2*l + math.Sqrt(gamma*mp*l)*math.Abs(rp)
	return math.Max(e7, e8)
}

// OPSEpsilon returns, for every row i, the (eps, delta)-pDP bound of one
// posterior sample (OPS, see SampleOPS) at the neighbour Z without row i:
// Wang, Per-instance DP, Theorem 14 (eq. 8 with mu' = Leverage[i] and the
// residual of the full fit, eq. 7 with the leave-one-out leverage and
// residual), as corrected in opsBound. Theorem 14 is stated for adding or
// removing one row with the ridge weight fixed, the neighbour convention of
// this package.
func (r *Ridge) OPSEpsilon(gamma, delta float64) ([]float64, error) {
	if err := checkOPS(gamma, delta); err != nil {
		return nil, err
	}
	out := make([]float64, len(r.Leverage))
	for i := range out {
		h := r.Leverage[i]
		out[i] = opsBound(h/(1-h), r.LOOResidual[i], gamma, delta)
	}
	return out, nil
}

// OPSEpsilonTarget returns the Theorem 14 bound (see opsBound) for a target
// (x, y) outside the data set.
func (r *Ridge) OPSEpsilonTarget(x []float64, y, gamma, delta float64) (float64, error) {
	if err := checkOPS(gamma, delta); err != nil {
		return 0, err
	}
	mu, res, _, err := r.Target(x, y)
	if err != nil {
		return 0, err
	}
	return opsBound(mu, res, gamma, delta), nil
}

// SampleOPS draws one sample from the scaled posterior
// p(w | X, y) proportional to exp(-(gamma/2)(||y - X w||^2 + reg ||w||^2)),
// the OPS mechanism of Wang's Section 4 (eq. 6 with the ridge term of
// Theorem 14): w~ = w + U^{-1} xi / sqrt(gamma), H = U^T U, xi standard
// normal from src, so that w~ ~ N(w, H^{-1}/gamma).
func (r *Ridge) SampleOPS(gamma float64, src perturb.Source) ([]float64, error) {
	if !check.Positive(gamma) {
		return nil, fmt.Errorf("%w: gamma = %v, want finite > 0", ErrInput, gamma)
	}
	if src == nil {
		return nil, fmt.Errorf("%w: no noise source", ErrInput)
	}
	d := len(r.W)
	xi := mat.NewVecDense(d, nil)
	for j := 0; j < d; j++ {
		xi.SetVec(j, src.Normal())
	}
	var u mat.TriDense
	r.chol.UTo(&u)
	var s mat.VecDense
	if err := s.SolveVec(&u, xi); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	out := make([]float64, d)
	for j := range out {
		out[j] = r.W[j] + s.AtVec(j)/math.Sqrt(gamma)
	}
	return out, nil
}

// AdaOPSConfig configures AdaOPS.
type AdaOPSConfig struct {
	// Epsilon > 0 and Delta in (0, 2/e) are the (eps, delta)-DP target.
	Epsilon, Delta float64
	// Cond is Algorithm 1's kappa, the largest acceptable condition number:
	// the algorithm regularizes until lambda_min(X^T X + lambda I) >= n/(d
	// Cond). It must be fixed independently of the data and lie in
	// (0, n eps / (4 d (1 + log(4/delta)))].
	Cond float64
	// Source supplies the noise. Required (perturb.Secure() for a release).
	Source perturb.Source
}

// AdaOPSResult is the output of AdaOPS.
type AdaOPSResult struct {
	// W is the released sample.
	W []float64
	// LambdaMinNoisy is the released noisy smallest eigenvalue of X^T X.
	LambdaMinNoisy float64
	// Reg is the ridge weight lambda_n used (Wang's lambda), Gamma the
	// posterior scale gamma_n.
	Reg, Gamma float64
	// Epsilon and Delta are the (eps, delta)-DP guarantee of the whole
	// release (both outputs), for add-or-remove-one neighbours of rows with
	// ||x|| <= 1 and |y| <= 1.
	Epsilon, Delta float64
	// Sigma is the standard deviation of the noise on lambda_min.
	Sigma float64
}

// AdaOPS is Wang's Algorithm 1 (Per-instance DP, Section 4.2), OPS with
// adaptive regularization, with its (eps, delta)-DP guarantee
// (Proposition 17) for rows with ||x|| <= 1 and |y| <= 1 (checked; an
// error otherwise). Steps, with the changes made here to keep the
// guarantee exact:
//
//  1. lambda_min = lambda_min(X^T X), whose sensitivity is 1 (Weyl, rows of
//     norm <= 1), released as lambda_min + sigma Z with sigma calibrated by
//     the analytic Gaussian mechanism for (eps/2, delta/2)
//     (perturb.AnalyticGaussianSigma; the printed sigma
//     sqrt(log(4/delta))/(eps/2) is below the classical calibration).
//  2. lambda_n = max{0, n/(d kappa) - lambda~_min + t}, the printed min{0, ...}
//     being a typo for max (with min, lambda_n <= 0 and the algorithm would
//     never regularize). t = sigma Phi^{-1}(1 - delta/4), so that
//     lambda_min(X^T X + lambda_n I) >= n/(d kappa) except with probability
//     delta/4 (the printed t = log(4/delta)/(eps/2) is not a tail bound of
//     the noise of step 1).
//  3. One posterior sample with (lambda_n, gamma_n), gamma_n the printed
//     min{n eps^2/(16 kappa^2 d^2 log(4/delta)), n eps/(8 kappa^2 d^2)}, lowered
//     if needed so that the corrected Theorem 14 bound (opsBound), in the
//     form of Remark 15, is at most eps/2 at delta/4 for every pair of
//     neighbours: with h = n/(d kappa) - 1 (the condition of step 2, less 1
//     for the row that differs, by Weyl), mu <= 1/h and
//     |y - x^T w| <= 1 + sqrt(2n/h) (Lemma 18). The printed proof uses
//     h = n/(d kappa), the uncorrected tail, and bounds the residual by
//     sqrt(2 d kappa), forgetting the 1.
//
// Accounting: step 1 is (eps/2, delta/2)-DP; given the event of step 2
// (probability >= 1 - delta/4), step 3 is (eps/2, delta/4)-pDP for every
// data set and target, hence (eps/2, delta/4)-DP; the event's failure adds
// delta/4. In all (eps, delta)-DP, add-or-remove-one neighbours, with n
// treated as public (as in the paper).
func AdaOPS(x *mat.Dense, y []float64, cfg AdaOPSConfig) (*AdaOPSResult, error) {
	eps, delta, kappa := cfg.Epsilon, cfg.Delta, cfg.Cond
	if !check.Positive(eps) || !(delta > 0 && delta < 2/math.E) {
		return nil, fmt.Errorf("%w: eps = %v, delta = %v, want eps > 0 and delta in (0, 2/e)", ErrInput, eps, delta)
	}
	if cfg.Source == nil {
		return nil, fmt.Errorf("%w: no noise source", ErrInput)
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows", ErrInput)
	}
	n, d := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d rows but %d labels", ErrInput, n, len(y))
	}
	nf, df := float64(n), float64(d)
	kmax := nf * eps / (4 * df * (1 + math.Log(4/delta)))
	if !(kappa > 0 && kappa <= kmax) {
		return nil, fmt.Errorf("%w: kappa = %v, Algorithm 1 needs 0 < kappa <= n eps/(4 d (1 + log(4/delta))) = %.6g", ErrInput, kappa, kmax)
	}
	for i := 0; i < n; i++ {
		if nr := norm2(x.RawRowView(i)); !(nr <= 1) || !(math.Abs(y[i]) <= 1) {
			return nil, fmt.Errorf("%w: row %d has ||x|| = %v, |y| = %v; AdaOPS's guarantee needs ||x|| <= 1 and |y| <= 1 (clip rows and labels first, a per-row map)", ErrInput, i, nr, math.Abs(y[i]))
		}
	}
	// Step 1.
	g := mat.NewSymDense(d, nil)
	g.SymOuterK(1, x.T())
	var es mat.EigenSym
	if !es.Factorize(g, false) {
		return nil, fmt.Errorf("%w: eigenvalues of X^T X did not converge", ErrSingular)
	}
	lmin := es.Values(nil)[0]
	sigma, err := perturb.AnalyticGaussianSigma(eps/2, delta/2, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	noisy := lmin + sigma*cfg.Source.Normal()
	// Step 2.
	t := sigma * distuv.UnitNormal.Quantile(1-delta/4)
	reg := math.Max(0, nf/(df*kappa)-noisy+t)
	// Step 3.
	l4 := math.Log(4 / delta)
	gamma := math.Min(nf*eps*eps/(16*kappa*kappa*df*df*l4), nf*eps/(8*kappa*kappa*df*df))
	h := nf/(df*kappa) - 1
	if !(h > 0) {
		return nil, fmt.Errorf("%w: kappa = %v: n/(d kappa) = %.4g must exceed 1", ErrInput, kappa, nf/(df*kappa))
	}
	mu := 1 / h
	res := 1 + math.Sqrt(2*nf/h)
	l8 := math.Log(8 / delta)
	// bound(gamma) = c + a gamma + b sqrt(gamma) >= opsBound at delta/4.
	a := 0.5 * mu * res * res
	b := math.Sqrt(2*mu*l8) * res
	c := mu * (0.5 + l8)
	if c >= eps/2 {
		return nil, fmt.Errorf("%w: kappa = %v leaves no room for the sampling step (mu (1/2 + log(8/delta)) = %.4g >= eps/2)", ErrInput, kappa, c)
	}
	s := (-b + math.Sqrt(b*b+4*a*(eps/2-c))) / (2 * a)
	gamma = math.Min(gamma, s*s)
	r, err := fitRidge(x, y, reg)
	if err != nil {
		return nil, err
	}
	w, err := r.SampleOPS(gamma, cfg.Source)
	if err != nil {
		return nil, err
	}
	return &AdaOPSResult{W: w, LambdaMinNoisy: noisy, Reg: reg, Gamma: gamma, Epsilon: eps, Delta: delta, Sigma: sigma}, nil
}
