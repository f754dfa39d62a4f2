package pdp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
)

// PrivacyLoss is the privacy loss of output-perturbation noise of a fixed
// scale, w~ = w_hat + noise (the mechanism Kind at Scale). Its
// per-instance epsilon at a neighbour is the epsilon of the two output
// distributions it gives on Z and on that neighbour (Wang, Per-instance
// DP, Definition 2, both directions): the noise's privacy loss at the
// per-instance difference instead of at the worst-case sensitivity.
type PrivacyLoss struct {
	// Kind is perturb.Laplace (independent Laplace noise of scale b per
	// coordinate), perturb.Gamma (density proportional to
	// exp(-||b||_2/theta)), or perturb.Gaussian or perturb.AnalyticGaussian
	// (N(0, sigma^2) per coordinate; the two differ only in how sigma was
	// calibrated, not in their pDP).
	Kind dp.Mechanism
	// Scale is b, theta or sigma (Kind.ScaleName()), finite > 0.
	Scale float64
	// Delta is the delta of a Gaussian mechanism's (eps, delta)-pDP, in
	// (0, 1); it must be 0 for Laplace and gamma (pure pDP).
	Delta float64
}

// NewPrivacyLoss checks and returns the privacy loss of the noise of
// mechanism kind at the scale.
func NewPrivacyLoss(kind dp.Mechanism, scale, delta float64) (PrivacyLoss, error) {
	m := PrivacyLoss{Kind: kind, Scale: scale, Delta: delta}
	if _, err := perturb.ParseMechanism(string(kind)); err != nil {
		return PrivacyLoss{}, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if !check.Positive(scale) {
		return PrivacyLoss{}, fmt.Errorf("%w: noise scale %s = %v, want finite > 0", ErrInput, kind.ScaleName(), scale)
	}
	if kind.Pure() && delta != 0 {
		return PrivacyLoss{}, fmt.Errorf("%w: delta = %v with the pure mechanism %s, want 0", ErrInput, delta, kind)
	}
	if !kind.Pure() && !(delta > 0 && delta < 1) {
		return PrivacyLoss{}, fmt.Errorf("%w: delta = %v with the Gaussian mechanism, want in (0, 1)", ErrInput, delta)
	}
	return m, nil
}

// CalibratedLoss returns the privacy loss of the noise that perturb.Calibrate gives for
// (eps, delta)-DP at the worst-case L2 sensitivity sens in dimension dim:
// the noise of a DP release, whose pDP this package then evaluates. The
// sensitivity is for replace-one neighbours (docs/DESIGN.md, section 1: DP certificates are
// replace-one); see WorstCaseSensitivity.
func CalibratedLoss(kind dp.Mechanism, eps, delta, sens float64, dim int) (PrivacyLoss, error) {
	c, err := perturb.Calibrate(kind, eps, delta, perturb.Sensitivity{L2: sens}, dim)
	if err != nil {
		return PrivacyLoss{}, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return PrivacyLoss{Kind: kind, Scale: c.Scale, Delta: delta}, nil
}

// Epsilon returns the per-instance epsilon of the mechanism at the
// difference d (at delta = m.Delta for the Gaussian mechanisms):
//
//	laplace:  ||V||_1 / b. The log density ratio of the two outputs is
//	          sum_k (|u_k - a_k| - |u_k - b_k|)/b <= ||a - b||_1/b,
//	          attained where every coordinate lies beyond both means: exact.
//	gamma:    ||V||_2 / theta, by the triangle inequality, attained along V:
//	          exact.
//	Gaussian: the smallest eps with (eps, delta) on the exact privacy curve of
//	          two Gaussians N(a, sigma^2 I), N(b, sigma^2 I), which depends on
//	          ||a - b||_2/sigma only (Balle & Wang 2018, Theorem 8;
//	          perturb.AnalyticGaussianEpsilon): exact up to its 1e-12
//	          bisection, never below.
//
// A zero difference has epsilon 0.
func (m PrivacyLoss) Epsilon(d Diff) (float64, error) {
	switch m.Kind {
	case perturb.Laplace:
		return d.L1 / m.Scale, nil
	case perturb.Gamma:
		return d.L2 / m.Scale, nil
	case perturb.Gaussian, perturb.AnalyticGaussian:
		if d.L2 == 0 {
			return 0, nil
		}
		e, err := gaussianEpsilon(m.Scale, m.Delta, d.L2, 0)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrInput, err)
		}
		return e, nil
	}
	return 0, fmt.Errorf("%w: mechanism %q", ErrInput, m.Kind)
}

// EpsilonAt returns Epsilon for a difference of L2 norm l2 and L1 norm l1.
func (m PrivacyLoss) EpsilonAt(l2, l1 float64) (float64, error) {
	return m.Epsilon(Diff{L2: l2, L1: l1})
}

// Epsilons returns Epsilon for every difference (EpsilonsAt at their
// norms).
func (m PrivacyLoss) Epsilons(diffs []Diff) ([]float64, error) {
	l2, l1 := make([]float64, len(diffs)), make([]float64, len(diffs))
	for i, d := range diffs {
		l2[i], l1[i] = d.L2, d.L1
	}
	return m.EpsilonsAt(l2, l1)
}

// EpsilonsAt returns EpsilonAt(l2[i], l1[i]) for every i, the same bits:
// for the Gaussian mechanisms on GOMAXPROCS goroutines, in increasing
// order of l2, each search started from the previous epsilon
// (gaussianEpsilons).
func (m PrivacyLoss) EpsilonsAt(l2, l1 []float64) ([]float64, error) {
	if len(l1) != len(l2) {
		return nil, fmt.Errorf("%w: %d L2 norms and %d L1 norms", ErrInput, len(l2), len(l1))
	}
	if (m.Kind == perturb.Gaussian || m.Kind == perturb.AnalyticGaussian) && check.Positive(m.Scale) {
		out, err := gaussianEpsilons(m.Scale, m.Delta, l2)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		return out, nil
	}
	out := make([]float64, len(l2))
	for i := range l2 {
		e, err := m.EpsilonAt(l2[i], l1[i])
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// GaussianCov is Gaussian output perturbation with a general covariance,
// w~ ~ N(w_hat, A^{-1}/Gamma) (Wang, Per-instance DP, Section 3, eq. 2).
type GaussianCov struct {
	// A is positive definite, K*d x K*d.
	A *mat.SymDense
	// Gamma > 0 scales the precision.
	Gamma float64
	// Delta in (0, 1) is the delta of the (eps, delta)-pDP.
	Delta float64
}

// NormA returns the A-norm of the difference, Delta_A = sqrt(V^T A V)
// (Wang, Definition 3). With V the one-step difference of Lemma 13, H^{-1}
// times the gradient of the removed loss, it is the quantity under the
// square root of Wang's eq. 3.
func (g GaussianCov) NormA(d Diff) (float64, error) {
	if g.A == nil || g.A.SymmetricDim() != len(d.V) {
		return 0, fmt.Errorf("%w: covariance of dimension %v for a difference of %d", ErrInput, g.A, len(d.V))
	}
	v := mat.NewVecDense(len(d.V), d.V)
	q := mat.Inner(v, g.A, v)
	if q < 0 {
		return 0, fmt.Errorf("%w: A is not positive semi-definite (V^T A V = %v)", ErrInput, q)
	}
	return math.Sqrt(q), nil
}

// Epsilon returns the per-instance epsilon of the release at the difference
// d: the privacy loss of N(a, S) against N(b, S), S = A^{-1}/Gamma, is that
// of a unit Gaussian at the whitened distance sqrt(Gamma) Delta_A, so eps is
// perturb.AnalyticGaussianEpsilon(1, delta, sqrt(Gamma) Delta_A) (Balle &
// Wang 2018, Theorem 8), exact.
//
// Wang's Lemma 4 prints eps = Gamma Delta_A sqrt(log(1.25/delta)). That is
// a misprint, not a looser bound: the classical Gaussian mechanism (noise
// sigma = Delta sqrt(2 log(1.25/delta))/eps, for eps <= 1) at the whitened
// distance sqrt(Gamma) Delta_A gives
// eps = sqrt(Gamma) Delta_A sqrt(2 log(1.25/delta)): the lemma has Gamma
// for sqrt(Gamma) and drops the sqrt 2 (its eq. 3, with Gamma = 1, drops
// the sqrt 2 too). The printed form is below the true value whenever
// Gamma < 2, so it is not a guarantee. The exact curve used here is below
// the corrected classical form, and valid for every eps
// (TestGaussianCovLemma4 checks both).
func (g GaussianCov) Epsilon(d Diff) (float64, error) {
	if !check.Positive(g.Gamma) || !check.OpenUnit(g.Delta) {
		return 0, fmt.Errorf("%w: gamma = %v, delta = %v", ErrInput, g.Gamma, g.Delta)
	}
	na, err := g.NormA(d)
	if err != nil {
		return 0, err
	}
	if na == 0 {
		return 0, nil
	}
	e, err := gaussianEpsilon(1, g.Delta, math.Sqrt(g.Gamma)*na, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return e, nil
}

// UpperEpsilons returns, for every difference, the epsilon at its upper
// bounds (Diff.Upper: the exact value, a proven upper bound, or the
// one-step estimate where there is none), by EpsilonsAt.
func (m PrivacyLoss) UpperEpsilons(diffs []Diff) ([]float64, error) {
	l2, l1 := make([]float64, len(diffs)), make([]float64, len(diffs))
	for i, d := range diffs {
		l2[i], l1[i], _ = d.Upper()
	}
	return m.EpsilonsAt(l2, l1)
}

// OnAverageKL returns the mean over diffs of the KL divergence between the
// Gaussian releases N(w_hat, sigma^2 I) on Z and on each neighbour,
// ||V||^2 / (2 sigma^2), at the upper bounds of the differences
// (Diff.Upper). Wang, Lei & Fienberg ("On-Average KL-Privacy and its
// equivalence to Generalization", Definition 2) define on-average
// KL-privacy as E KL(A(Z) || A(Z')) over Z drawn from the distribution and
// Z' = Z with one row replaced by a fresh draw: diffs must be such
// replace-one differences (OnAverageKLFresh makes them), and their mean is
// the plug-in estimate for one data set. Remove-one differences give
// about half the value for a smooth objective (the replacement adds the
// fresh row's own move) and are not the defined quantity. It is not an
// (eps, delta) guarantee.
func OnAverageKL(diffs []Diff, sigma float64) (float64, error) {
	if !check.Positive(sigma) {
		return 0, fmt.Errorf("%w: sigma = %v", ErrInput, sigma)
	}
	if len(diffs) == 0 {
		return 0, fmt.Errorf("%w: no differences", ErrInput)
	}
	var s float64
	for _, d := range diffs {
		l2, _, _ := d.Upper()
		s += l2 * l2
	}
	return s / float64(len(diffs)) / (2 * sigma * sigma), nil
}

// OnAverage is a plug-in estimate of on-average KL-privacy (OnAverageKL)
// on one data set: an ESTIMATE of the defined expectation, never a bound
// on it.
type OnAverage struct {
	// KL is the mean KL divergence over the pairs; StdErr its standard
	// error (onAverageStdErr).
	KL     float64 `json:"kl"`
	StdErr float64 `json:"std_err"`
	// Pairs counts the (training row, fresh row) replacements averaged:
	// every pair when there are at most onAverageMaxPairs, else Pairings
	// pairings of every training row with one fresh row each.
	Pairs    int `json:"pairs"`
	Pairings int `json:"pairings"`
	// Kind says what each pair's value is: KindBound when every pair's
	// sensitivity is exact or bounded (each value an upper bound for its
	// pair), KindEstimate otherwise. KL is an estimate either way.
	Kind string `json:"kind"`
	// Definition states what was averaged.
	Definition string `json:"definition"`
}

// onAverageMaxPairs bounds the number of replacements OnAverageKLFresh
// computes (each one triangular solve with the factored Hessian).
const onAverageMaxPairs = 1 << 17

// OnAverageKLFresh estimates the on-average KL-privacy of the Gaussian
// release N(w_hat, sigma^2 I) of a (Wang, Lei & Fienberg, Definition 2:
// E KL(A(Z) || A(Z')), Z' = Z with one row replaced by a fresh draw) by
// averaging over replacements of training rows by fresh rows, each
// replace-one difference computed in one step with its bound (ReplaceAll's,
// without copying the rows or keeping the differences) and OnAverageKL
// taken over the pairs. With n training rows and m fresh
// rows it averages over all n m pairs when n m <= onAverageMaxPairs, and
// otherwise over k = onAverageMaxPairs/n pairings (training row i with
// fresh row pi((i + s) mod m), s < k, pi a permutation drawn from seed),
// which reduces the variance of a single pairing k-fold for the fresh
// rows' part. The fresh rows must come from the data's distribution and
// not be in the data set: held-out rows are.
func OnAverageKLFresh(a *Analysis, fx *mat.Dense, fy []float64, sigma float64, seed uint64) (OnAverage, error) {
	if fx == nil || fx.IsEmpty() {
		return OnAverage{}, fmt.Errorf("%w: no fresh rows", ErrInput)
	}
	if !check.Positive(sigma) {
		return OnAverage{}, fmt.Errorf("%w: sigma = %v", ErrInput, sigma)
	}
	m, _ := fx.Dims()
	if len(fy) != m {
		return OnAverage{}, fmt.Errorf("%w: %d fresh rows, %d labels", ErrInput, m, len(fy))
	}
	n := a.p.n
	k := min(m, max(1, onAverageMaxPairs/n))
	perm := rand.New(rand.NewPCG(seed, 0x6f6e6176)).Perm(m)
	for j := range m {
		if err := a.checkTarget(fx.RawRowView(j), fy[j]); err != nil {
			return OnAverage{}, fmt.Errorf("fresh row %d: %w", j, err)
		}
	}
	rowSum := make([]float64, n) // sum over a training row's pairs
	colSum := make([]float64, m) // sum over a fresh row's pairs
	colCount := make([]int, m)
	vals := make([]float64, n) // one pairing's values, summed in row order
	var estimate atomic.Bool
	kind := KindBound
	var total float64
	for s := range k {
		// ReplaceAll of row i by fresh row perm[(i+s) mod m], keeping the
		// upper sensitivities only.
		err := a.batch(n, func(i int) (nbSpec, error) {
			j := perm[(i+s)%m]
			return nbSpec{pts: [][]float64{a.p.x.RawRowView(i), fx.RawRowView(j)}, sets: [][]nbRow{{{0, a.p.y[i], -1}, {1, fy[j], 1}}}}, nil
		}, func(i int, ds []Diff) {
			l2, _, ok := ds[0].Upper()
			if !ok {
				estimate.Store(true)
			}
			vals[i] = l2 * l2 / (2 * sigma * sigma)
		}, false)
		if err != nil {
			return OnAverage{}, err
		}
		for i, v := range vals {
			j := perm[(i+s)%m]
			rowSum[i] += v
			colSum[j] += v
			colCount[j]++
			total += v
		}
	}
	if estimate.Load() {
		kind = KindEstimate
	}
	pairs := n * k
	kl := total / float64(pairs)
	return OnAverage{KL: kl, StdErr: onAverageStdErr(rowSum, colSum, colCount, k), Pairs: pairs, Pairings: k, Kind: kind,
		Definition: "Wang, Lei & Fienberg, Definition 2: E KL(A(Z) || A(Z')), Z' = Z with one row replaced by a fresh draw; " +
			"estimated by the mean over replacements of training rows by held-out rows"}, nil
}

// onAverageStdErr returns the standard error of the mean of the pair
// values f(i, j) over the pairs, from the variation of its two sources,
// the training rows and the fresh rows: the mean is (to first order, its
// Hajek projection) the sum of the average of the row means r_i over n
// training rows and of the column means c_j over m fresh rows, so its
// variance is about Var(r)/n + Var(c)/m' (m' the fresh rows paired). With
// one pairing (k = 1) the two cannot be told apart and the row means,
// one pair each, carry both.
func onAverageStdErr(rowSum, colSum []float64, colCount []int, k int) float64 {
	r := make([]float64, len(rowSum))
	for i, v := range rowSum {
		r[i] = v / float64(k)
	}
	se2 := sampleVar(r) / float64(len(r))
	if k > 1 {
		var c []float64
		for j, v := range colSum {
			if colCount[j] > 0 {
				c = append(c, v/float64(colCount[j]))
			}
		}
		se2 += sampleVar(c) / float64(len(c))
	}
	return math.Sqrt(se2)
}

// sampleVar returns the sample variance of v (0 for fewer than two
// values).
func sampleVar(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	return stat.Variance(v, nil)
}

// ReplaceBound returns upper bounds on the L2 and L1 sensitivity of the
// minimizer to replacing a row by any row of the domain, given the row's
// remove-one difference d and addBound, a bound on how far adding any row
// of the domain moves the minimizer of Z without the row (L/(n lambda) for
// an L-Lipschitz loss, WorstCaseSensitivity's remove-one bound): a
// replacement is a removal followed by an addition, so by the triangle
// inequality ||w(Z) - w(Z - z_i + z)|| <= ||w(Z) - w(Z - z_i)|| + addBound,
// at d's upper bound (Diff.Upper; an estimate where d has none), and
// likewise in L1 with sqrt(K d) addBound.
func ReplaceBound(d Diff, addBound float64) (l2, l1 float64) {
	u2, u1, _ := d.Upper()
	return u2 + addBound, u1 + math.Sqrt(float64(d.dim()))*addBound
}

// WorstCaseSensitivity returns the data-independent bounds on the
// sensitivity of the exact minimizer of J (Config) when the loss is lz
// Lipschitz in the margin (|dl/dz| <= lz, the Euclidean norm for K > 1) on
// the region holding the minimizers, every row has ||x|| <= kappa, and
// lambda > 0:
//
//	replace-one (DP certificates): 2 lz kappa / (n lambda)
//	remove-one or add-one (pDP):   lz kappa / (n lambda)
//
// J is n lambda strongly convex and the gradient of one loss term is at most
// lz kappa; with neighbours differing in one term, strong convexity gives
// n lambda ||w - w'|| <= ||grad of the differing terms|| (Chaudhuri,
// Monteleoni & Sarwate 2011; Bousquet & Elisseeff 2002). The remove-one
// bound is the largest pDP sensitivity any target can have, the "pDP for
// all" of Wang's Figure 1 at this data-independent level.
func WorstCaseSensitivity(lz, kappa, lambda float64, n int) (replace, remove float64, err error) {
	if !check.Positive(lz) || !check.Positive(kappa) || !check.Positive(lambda) {
		return 0, 0, fmt.Errorf("%w: L_z = %v, kappa = %v, lambda = %v: the worst-case sensitivity needs all finite > 0", ErrInput, lz, kappa, lambda)
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("%w: n = %d", ErrInput, n)
	}
	remove = lz * kappa / (float64(n) * lambda)
	return 2 * remove, remove, nil
}

// NoiseRMSNorm returns sqrt(E||b||^2) for the noise b of m in dimension
// dim: sigma sqrt(dim) (Gaussian), b sqrt(2 dim) (Laplace), and
// theta sqrt(dim (dim+1)) (gamma-norm noise, whose norm is Gamma(dim,
// theta)).
func (m PrivacyLoss) NoiseRMSNorm(dim int) float64 {
	p := float64(dim)
	switch m.Kind {
	case perturb.Laplace:
		return m.Scale * math.Sqrt(2*p)
	case perturb.Gamma:
		return m.Scale * math.Sqrt(p*(p+1))
	}
	return m.Scale * math.Sqrt(p)
}
