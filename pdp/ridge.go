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

// FitReg fits ridge regression on (x, y) with the ridge weight reg = N
// lambda given directly (Wang's lambda; AdaOPSResult.Reg, for example):
// the penalty is (reg/2)||w||^2, reg >= 0.
func FitReg(x *mat.Dense, y []float64, reg float64) (*Ridge, error) {
	if !check.NonNegative(reg) {
		return nil, fmt.Errorf("%w: ridge weight %v, want finite >= 0", ErrInput, reg)
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows", ErrInput)
	}
	return fitRidge(x, y, reg)
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

// quadLoss is a privacy loss of the form c + b xi + (a/2) xi^2, xi a
// standard normal variable.
type quadLoss struct{ c, b, a float64 }

// bound returns |c| + |a| s^2/2 + |b| s with s^2 = 2 log(2/delta): the
// loss exceeds it only where |xi| > s, of probability at most
// 2 phi(s)/s = delta/(s sqrt(2 pi)) <= delta (Mills' ratio; s >= 1 for
// delta < 2/e).
func (q quadLoss) bound(delta float64) float64 {
	l := 2 * math.Log(2/delta)
	return math.Abs(q.c) + math.Abs(q.a)*l/2 + math.Abs(q.b)*math.Sqrt(l)
}

// opsLosses returns the privacy loss of one posterior sample (OPS) between
// Z and Z + z in both directions, given the out-of-sample leverage mu and
// residual res of z against the fit on Z (Wang, Per-instance DP,
// Theorem 14 and its proof). With p_Z the posterior N(theta, H^{-1}/gamma)
// and p_Z+ that of Z + z:
//
//	onZ:   log p_Z/p_Z+ at a sample of p_Z,
//	       c = (-log(1 + mu) + gamma mu res^2/(1 + mu))/2,
//	       b = sqrt(gamma mu) res, a = mu (eq. 7);
//	onZz:  log p_Z+/p_Z at a sample of p_Z+, with the in-sample leverage
//	       mu' = mu/(1 + mu) and residual res' = res/(1 + mu),
//	       c = (-log(1 - mu') + gamma mu' res'^2/(1 - mu'))/2,
//	       b = -sqrt(gamma mu') res', a = -mu' (eq. 8).
//
// Eq. 8 of the paper prints its constant as
// (1/2)|-log(1 - mu') - gamma mu' res'^2/(1 - mu')|: the sign of the
// second term is wrong. Both terms come from the same side of the ratio
// (the normalizing constants' log det H'/det H = -log(1 - mu') and the
// difference of the two minimal objectives, gamma mu' res'^2/(1 - mu')
// over 2) and add up; the printed difference can be near zero where the
// true constant is -log(1 - mu') or more. TestOPSLossExact checks both
// forms against the log density ratio of the two Gaussian posteriors.
func opsLosses(mu, res, gamma float64) (onZ, onZz quadLoss) {
	onZ = quadLoss{
		c: 0.5 * (-math.Log1p(mu) + gamma*mu/(1+mu)*res*res),
		b: math.Sqrt(gamma*mu) * res,
		a: mu,
	}
	mp, rp := mu/(1+mu), res/(1+mu)
	onZz = quadLoss{
		c: 0.5 * (-math.Log1p(-mp) + gamma*mp/(1-mp)*rp*rp),
		b: -math.Sqrt(gamma*mp) * rp,
		a: -mp,
	}
	return onZ, onZz
}

// opsBound is Wang's Theorem 14 bound, corrected, for the pair (Z, Z + z)
// given the out-of-sample leverage mu and residual res of z against the fit
// on Z: the larger of the two directions' quadLoss.bound (opsLosses). The
// corrections to the printed statement (Per-instance DP, Theorem 14 and its
// proof):
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
//     the larger of the two.
//   - The sign in eq. 8's constant (see opsLosses).
//
// TestOPSBoundHolds checks the result against the exact distribution of the
// privacy loss.
func opsBound(mu, res, gamma, delta float64) float64 {
	onZ, onZz := opsLosses(mu, res, gamma)
	return math.Max(onZ.bound(delta), onZz.bound(delta))
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
	// (0, n eps / (4 d (1 + log(4/delta)))], with n/(d Cond) >= 3 (so that
	// every leverage is at most 1/2; see adaOPSGamma).
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

// CondError reports an AdaOPS condition number kappa outside Algorithm 1's
// range (0, Max], Max = n eps/(4 d (1 + log(4/delta))) for n rows of d
// features.
type CondError struct {
	Cond, Max float64
	N, D      int
}

// Error states the range.
func (e *CondError) Error() string {
	return fmt.Sprintf("kappa = %v, Algorithm 1 needs 0 < kappa <= n eps/(4 d (1 + log(4/delta))) = %.6g (n = %d, d = %d)", e.Cond, e.Max, e.N, e.D)
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
//  3. One posterior sample with (lambda_n, gamma_n), gamma_n the largest
//     gamma that the argument of the proof allows (adaOPSGamma): with
//     h = n/(d kappa) - 1 (the condition of step 2, less 1 for the row that
//     differs, by Weyl), every pair of neighbours has an out-of-sample
//     leverage mu <= 1/h and a residual |y - x^T w| <= 1 + sqrt((n-1)/h),
//     and the privacy loss of the sample in either direction is at most
//     eps/2 except with probability delta/4. The printed gamma_n =
//     min{n eps^2/(16 kappa^2 d^2 log(4/delta)), n eps/(8 kappa^2 d^2)}
//     comes from the simplified form of Remark 15 with a tail bound that
//     is off by a square root, the residual bound sqrt(2 d kappa) that
//     forgets the 1 and Lemma 18's constant sqrt(2/h) where 1/sqrt(h)
//     holds; it is not used (it is also 2 to 4 times smaller than needed).
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
		return nil, fmt.Errorf("%w: %w", ErrInput, &CondError{Cond: kappa, Max: kmax, N: n, D: d})
	}
	// gamma_n depends on (n, d, eps, delta, kappa) only.
	gamma, err := adaOPSGamma(n, d, eps, delta, kappa)
	if err != nil {
		return nil, err
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

// adaOPSGamma returns AdaOPS's gamma_n (step 3 of AdaOPS), the largest
// gamma for which the following argument shows that one posterior sample is
// (eps/2, delta/4)-pDP for every pair (Z_s, Z_s + z) of neighbours, Z_s the
// smaller, that the event of step 2 allows; it depends on (n, d, eps,
// delta, kappa) only.
//
//  1. lambda_min(X_s^T X_s + lambda_n I) >= h = n/(d kappa) - 1 (the event,
//     and Weyl for the row that Z_s may lack), so the out-of-sample leverage
//     of z is mu <= 1/h, and |y - x^T w_s| <= 1 + ||w_s|| <=
//     1 + ||(X_s^T X_s + lambda_n I)^{-1} X_s^T|| ||y_s|| <= 1 + sqrt((n-1)/h)
//     =: r. The middle norm is max_i sigma_i/(sigma_i^2 + lambda_n) over the
//     singular values of X_s, and sigma/(sigma^2 + lambda) <= 1/sqrt(s)
//     <= 1/sqrt(h) with s = sigma^2 + lambda >= h: Wang's Lemma 18 with
//     1/sqrt(h) for its sqrt(2/h). (Z_s = Z has h + 1 and n rows, which
//     gives smaller bounds.)
//  2. In either direction the privacy loss is c + b xi + (a/2) xi^2 with xi
//     standard normal (opsLosses; TestOPSLossExact), so it exceeds
//     |c| + |b| s + |a| s^2/2 only where |xi| > s, of probability 2 Phi(-s).
//  3. For mu <= 1/2 (required: h >= 2) the pieces are largest at the corner
//     (1/h, r): |a| = mu or mu/(1 + mu), |b| = sqrt(gamma mu)|r| or
//     sqrt(gamma mu)|r|/(1 + mu)^(3/2), and the constants (1/2)(log(1 + mu)
//     + gamma mu r^2/(1 + mu)^2) (eq. 8) and |eq. 7's| <= (1/2) max{log(1 +
//     mu), gamma mu r^2/(1 + mu)} all grow with mu and |r|.
//  4. So the sample is (eps/2, delta/4)-pDP when, at the corner and for both
//     directions, |c| < eps/2 and 2 Phi(-s) <= delta/4 for the s with
//     |c| + |b| s + |a| s^2/2 = eps/2 (tail). The tail grows with gamma;
//     gamma_n is its root, by bisection to a relative 1e-12, stepped down
//     until the condition holds.
//
// This is Theorem 14's argument with the exact Gaussian tail for the
// paper's Mills-ratio bound (see opsBound), so opsBound at gamma_n may
// exceed eps/2; TestAdaOPSGammaMaximal checks the result against the exact
// tails of the privacy loss over a grid of leverages and residuals.
func adaOPSGamma(n, d int, eps, delta, kappa float64) (float64, error) {
	nf, df := float64(n), float64(d)
	h := nf/(df*kappa) - 1
	if !(h >= 2) {
		return 0, fmt.Errorf("%w: kappa = %v: n/(d kappa) - 1 = %.4g, want >= 2 (a leverage bound 1/h <= 1/2)", ErrInput, kappa, h)
	}
	tail := adaOPSTail(1/h, 1+math.Sqrt((nf-1)/h), eps/2)
	if !(tail(0) <= delta/4) {
		return 0, fmt.Errorf("%w: kappa = %v leaves no room for the sampling step: even gamma -> 0 gives a privacy loss above eps/2 with probability %.3g > delta/4", ErrInput, kappa, tail(0))
	}
	lo, hi := 0.0, 1e-6
	for tail(hi) <= delta/4 {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1e-12*hi {
		mid := lo + (hi-lo)/2
		if tail(mid) <= delta/4 {
			lo = mid
		} else {
			hi = mid
		}
	}
	for lo > 0 && !(tail(lo) <= delta/4) {
		lo = math.Nextafter(lo, 0)
	}
	return lo, nil
}

// adaOPSTail returns gamma -> the larger over the two directions of the
// probability that the privacy loss of OPS exceeds t, bounded as in steps
// 2 and 3 of adaOPSGamma at the leverage mu and residual r (1 when a
// constant reaches t).
func adaOPSTail(mu, r, t float64) func(gamma float64) float64 {
	return func(gamma float64) float64 {
		onZ, onZz := opsLosses(mu, r, gamma)
		onZ.c = 0.5 * math.Max(math.Log1p(mu), gamma*mu*r*r/(1+mu))
		var worst float64
		for _, q := range []quadLoss{onZ, onZz} {
			a, b, c := math.Abs(q.a)/2, math.Abs(q.b), math.Abs(q.c)-t
			if c >= 0 {
				return 1
			}
			s := (-b + math.Sqrt(b*b-4*a*c)) / (2 * a)
			worst = math.Max(worst, 2*distuv.UnitNormal.CDF(-s))
		}
		return worst
	}
}

// OPSOnAverageKL returns the on-average KL-privacy of one posterior sample
// (OPS, SampleOPS) on this data set, with replace-one by fresh rows (Wang,
// Lei & Fienberg, "On-Average KL-Privacy and its equivalence to
// Generalization", Definition 2): the mean over t of
// KL(p(. | Z) || p(. | Z with row rows[t] replaced by (x_t, y_t))), both
// posteriors Gaussian, N(w, H^{-1}/gamma) and N(w', H'^{-1}/gamma) with
// H' = H - x_i x_i^T + x x^T. OPS samples from a Gibbs distribution, whose
// on-average KL-privacy equals its on-average generalization gap
// (their Theorem 4).
//
// In closed form, with B = H^{-1}[x_i, x], M = [x_i, x]^T B, C =
// diag(-1, 1), N = C + M and c = (r_i, -r) the residuals y - x^T w of the
// two rows (Woodbury and the matrix determinant lemma, O(d^2) per pair):
//
//	KL = (1/2)[x^T H^{-1} x - x_i^T H^{-1} x_i + gamma c^T (M - M N^{-1} M) c
//	     - log((1 - M_11)(1 + M_22) + M_12^2)],
//
// the trace, mean and log-determinant terms of the Gaussian KL divergence.
func (r *Ridge) OPSOnAverageKL(gamma float64, rows []int, x *mat.Dense, y []float64) (float64, error) {
	if !check.Positive(gamma) {
		return 0, fmt.Errorf("%w: gamma = %v, want finite > 0", ErrInput, gamma)
	}
	if x == nil || x.IsEmpty() {
		return 0, fmt.Errorf("%w: no fresh rows", ErrInput)
	}
	m, d := x.Dims()
	n, _ := r.x.Dims()
	if d != len(r.W) || len(y) != m || len(rows) != m {
		return 0, fmt.Errorf("%w: %d x %d fresh rows, %d labels, %d rows to replace; want %d features", ErrInput, m, d, len(y), len(rows), len(r.W))
	}
	var sum float64
	for t := range m {
		i := rows[t]
		if i < 0 || i >= n {
			return 0, fmt.Errorf("%w: row %d of %d", ErrInput, i, n)
		}
		xf := x.RawRowView(t)
		if j := check.FirstNonFinite(xf); j >= 0 || !check.Finite(y[t]) {
			return 0, fmt.Errorf("%w: fresh row %d is not finite", ErrInput, t)
		}
		u := mat.NewDense(d, 2, nil)
		u.SetCol(0, r.x.RawRowView(i))
		u.SetCol(1, xf)
		var b, mm mat.Dense
		if err := r.chol.SolveTo(&b, u); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrSingular, err)
		}
		mm.Mul(u.T(), &b)
		nm := mat.NewDense(2, 2, []float64{mm.At(0, 0) - 1, mm.At(0, 1), mm.At(1, 0), mm.At(1, 1) + 1})
		var pred float64
		for j, v := range xf {
			pred += v * r.W[j]
		}
		c := mat.NewVecDense(2, []float64{r.Residual[i], -(y[t] - pred)})
		// c^T (M - M N^{-1} M) c = c^T M c - (Mc)^T N^{-1} (Mc).
		var mc, sol mat.VecDense
		mc.MulVec(&mm, c)
		if err := sol.SolveVec(nm, &mc); err != nil {
			return 0, fmt.Errorf("%w: the replaced data set's Hessian is singular: %w", ErrSingular, err)
		}
		quad := mat.Dot(c, &mc) - mat.Dot(&mc, &sol)
		det := (1-mm.At(0, 0))*(1+mm.At(1, 1)) + mm.At(0, 1)*mm.At(0, 1)
		if !(det > 0) {
			return 0, fmt.Errorf("%w: the replaced data set's Hessian is singular (determinant ratio %v)", ErrSingular, det)
		}
		sum += 0.5 * (mm.At(1, 1) - mm.At(0, 0) + gamma*quad - math.Log(det))
	}
	return sum / float64(m), nil
}
