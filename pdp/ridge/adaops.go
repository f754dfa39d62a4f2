package ridge

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
	"github.com/stabpriv/stabpriv/perturb"
)

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
// error otherwise: clip rows and labels first, a per-row map). A kappa
// that leaves no room for the sampling step (even gamma -> 0 gives a
// privacy loss above eps/2 with probability above delta/4) is refused. Steps, with the changes made here to keep the
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
		return nil, fmt.Errorf("%w: eps = %v, delta = %v, want eps > 0 and delta in (0, 2/e)", pdp.ErrInput, eps, delta)
	}
	if cfg.Source == nil {
		return nil, fmt.Errorf("%w: no noise source", pdp.ErrInput)
	}
	if x == nil || x.IsEmpty() {
		return nil, fmt.Errorf("%w: no rows", pdp.ErrInput)
	}
	n, d := x.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d rows but %d labels", pdp.ErrInput, n, len(y))
	}
	nf, df := float64(n), float64(d)
	kmax := nf * eps / (4 * df * (1 + math.Log(4/delta)))
	if !(kappa > 0 && kappa <= kmax) {
		return nil, fmt.Errorf("%w: %w", pdp.ErrInput, &CondError{Cond: kappa, Max: kmax, N: n, D: d})
	}
	// gamma_n depends on (n, d, eps, delta, kappa) only.
	gamma, err := adaOPSGamma(n, d, eps, delta, kappa)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		if nr := linalg.Norm2(x.RawRowView(i)); !(nr <= 1) || !(math.Abs(y[i]) <= 1) {
			return nil, fmt.Errorf("%w: row %d has ||x|| = %v, |y| = %v; AdaOPS needs ||x|| <= 1 and |y| <= 1: clip rows and labels first", pdp.ErrInput, i, nr, math.Abs(y[i]))
		}
	}
	// Step 1.
	g := mat.NewSymDense(d, nil)
	g.SymOuterK(1, x.T())
	var es mat.EigenSym
	if !es.Factorize(g, false) {
		return nil, fmt.Errorf("%w: eigenvalues of X^T X did not converge", pdp.ErrSingular)
	}
	lmin := es.Values(nil)[0]
	sigma, err := perturb.AnalyticGaussianSigma(eps/2, delta/2, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pdp.ErrInput, err)
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
		return 0, fmt.Errorf("%w: kappa = %v: n/(d kappa) - 1 = %.4g, want >= 2 (a leverage bound 1/h <= 1/2)", pdp.ErrInput, kappa, h)
	}
	tail := adaOPSTail(1/h, 1+math.Sqrt((nf-1)/h), eps/2)
	if !(tail(0) <= delta/4) {
		return 0, fmt.Errorf("%w: kappa = %v leaves no room for the sampling step: P(loss > eps/2) = %.3g > delta/4 at gamma -> 0", pdp.ErrInput, kappa, tail(0))
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
