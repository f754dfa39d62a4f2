package objpert

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// Sentinel errors.
var (
	// ErrCondition reports a condition of a mechanism that fails: the loss
	// is not twice continuously differentiable with a bounded second
	// derivative, lambda is below the floor, a knob changes the objective.
	// Nothing is released.
	ErrCondition = errors.New("objpert: a condition of the mechanism fails")
	// ErrBudget reports an invalid (eps, delta) for the mechanism.
	ErrBudget = errors.New("objpert: invalid budget")
	// ErrMechanism reports a name that is not a training-time mechanism.
	ErrMechanism = errors.New("objpert: not an objective-perturbation mechanism")
)

// Handles reports whether m is a mechanism of this package (objective or
// amp).
func Handles(m dp.Mechanism) bool { return m == perturb.Objective || m == perturb.AMP }

// Constants of the calibration, fixed for every data set.
const (
	// GradTol is gamma, the gradient-norm threshold of the normalized
	// perturbed objective F (a constant of the mechanism, not a statistic:
	// the solver drives ||grad F|| below it and AMP's output part covers
	// every iterate within it).
	GradTol = 1e-9
	// AMPOutputEpsShare is the share of eps that AMP spends on its output
	// part; the objective part gets the rest.
	AMPOutputEpsShare = 0.01
	// AMPOutputDeltaShare is the share of delta of AMP's output part, and
	// AMPFailDeltaShare the share charged for the runs whose noise norm
	// exceeds the bound B under which the iteration budget provably reaches
	// GradTol; the objective part gets the rest (0.8 delta).
	AMPOutputDeltaShare = 0.1
	AMPFailDeltaShare   = 0.1
	// PureOutputEpsShare is the share of eps that objective spends on its
	// output part (the gamma-norm noise xi on the solver's iterate); the
	// objective part gets the rest.
	PureOutputEpsShare = 0.01
	// bLatticeBits bounds the lattice step of b by 2^-bLatticeBits theta:
	// perturb's exact gamma-norm sampler (secure source) returns the
	// lattice point nearest to the exact draw, on a power-of-two lattice
	// of step at most 2^-20 theta (perturb/securegamma.go, gammaLattice).
	bLatticeBits = 20
	// MaxNewtonDim is the largest number of weights K*d solved by Newton's
	// method (a dense (Kd) x (Kd) Hessian); above it, gradient descent alone.
	MaxNewtonDim = glm.DefaultNewtonDim
)

// Problem holds the public constants of a training problem: the loss, n
// rows of norm at most Kappa, D inputs, K outputs, and the ridge strength
// Lambda of the objective
//
//	F(w) = (1/n) sum_i l(<w, x_i>, y_i) + (Lambda/2) ||w||^2 + <b, w>/n.
type Problem struct {
	Loss   losses.Loss
	N      int
	D      int
	K      int
	Kappa  float64
	Lambda float64
}

// Calibration holds every constant of a release by objective perturbation
// or AMP; it follows from (mechanism, eps, delta, Problem) alone. Doc
// comment of Calibrate and docs/DESIGN.md, section 11, derive each field.
type Calibration struct {
	Mechanism dp.Mechanism
	Epsilon   float64
	Delta     float64
	N, P      int // rows and released weights (K*D)
	// L = L_z kappa bounds the per-example gradient (Frobenius for K > 1);
	// Beta = S_z kappa^2 is the smoothness of the loss in w.
	L, Beta float64
	Lambda  float64
	// Jacobian part: the per-example Hessian has rank at most Rank and
	// each of its eigenvalues counts at most Curv in the bound
	// EpsJacobian = Rank * log(1 + Curv/(n Lambda)). LambdaFloor is the
	// lambda at which EpsJacobian is half the objective part's eps.
	Rank        int
	Curv        float64
	EpsJacobian float64
	LambdaFloor float64
	// The objective part spends (EpsObjective, DeltaObjective): EpsNoise =
	// EpsObjective - EpsJacobian goes to the noise b.
	EpsObjective, DeltaObjective float64
	EpsNoise                     float64
	// Pure: ||b|| ~ Gamma(P, Theta), Theta = 2L/EpsNoise, uniform direction.
	Theta float64
	// AMP: b_1 ~ N(0, Sigma1^2 I); the gradient difference of a neighbour
	// pair lies in a subspace of dimension SubspaceDim, and Tail is the
	// chi tail point with P(chi_SubspaceDim > Tail) <= DeltaObjective.
	Sigma1      float64
	SubspaceDim int
	Tail        float64
	// Output part. AMP: iterates within GradTol of stationarity lie within
	// Radius = GradTol/Lambda of the minimizer, so the query has L2
	// sensitivity OutSensitivity = 2 Radius; b_2 ~ N(0, Sigma2^2 I) is the
	// analytic Gaussian calibration for (EpsOutput, DeltaOutput).
	// objective: b is the exact draw rounded to a lattice of step at most
	// BStep = 2^-20 Theta, and the iterate lies within Radius = GradTol/Lambda
	// + sqrt(P) BStep/(2 n Lambda) of the minimizer for the exact draw; xi
	// has density proportional to exp(-||xi||/Theta2), Theta2 =
	// OutSensitivity/EpsOutput, OutSensitivity = 2 Radius.
	GradTol        float64
	BStep          float64
	Radius         float64
	OutSensitivity float64
	EpsOutput      float64
	DeltaOutput    float64
	Sigma2         float64
	Theta2         float64
	// Iteration budget (AMP): if ||b_1|| <= NormBound, FallbackSteps
	// gradient steps of size Step from any point at least as good as w = 0
	// reach GradTol (in exact arithmetic); P(||b_1|| > NormBound) <=
	// DeltaFail, and the ledger charges DeltaFailCharge = (1 + e^eps)
	// DeltaFail. objective: FallbackSteps = -1, the gradient steps run
	// until GradTol is reached.
	NormBound       float64
	FallbackSteps   int
	Step            float64
	DeltaFail       float64
	DeltaFailCharge float64
	// noOutputNoise drops objective's output noise xi (tests only: the
	// construction without it is the one the lattice of b exposes).
	noOutputNoise bool
}

// CheckLoss returns an error wrapping ErrCondition unless the loss meets
// the smoothness condition of both mechanisms, as its constants say
// (losses.Constants): twice continuously differentiable with a bounded
// second derivative (C2), and Lipschitz on the whole space (constants on
// a domain without a weight radius). Logistic and softmax meet it; the
// Huber losses are only once continuously differentiable (their second
// derivative jumps), so the change of variables behind the density of the
// minimizer (the Jacobian of the map from the noise to the minimizer)
// does not hold; the squared loss is Lipschitz only on a bounded
// domain, and a projection is a constraint the analysis does not cover.
// Convexity is checked with the problem's constants (Calibrate).
func CheckLoss(l losses.Loss) error {
	if l == nil {
		return fmt.Errorf("%w: no loss", ErrCondition)
	}
	cons, err := l.Constants(losses.Domain{Kappa: 1})
	if errors.Is(err, losses.ErrDomain) {
		return fmt.Errorf("%w: smoothness: the %s loss is Lipschitz only on a bounded domain, which is not covered; use logistic or softmax (%w)", ErrCondition, l.Name(), err)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCondition, err)
	}
	if !cons.C2 {
		return fmt.Errorf("%w: smoothness: the %s loss is not twice continuously differentiable (C^2); use logistic or softmax", ErrCondition, l.Name())
	}
	return nil
}

// CheckBudget returns an error wrapping ErrBudget or ErrMechanism if (eps,
// delta) is not a budget mechanism m can spend: eps finite > 0, delta = 0
// for objective, delta in (0, 1) for amp.
func CheckBudget(m dp.Mechanism, eps, delta float64) error {
	if !Handles(m) {
		return fmt.Errorf("%w: %q", ErrMechanism, string(m))
	}
	if !check.Positive(eps) {
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrBudget, eps)
	}
	if m == perturb.Objective && delta != 0 {
		return fmt.Errorf("%w: delta = %v with the pure mechanism objective, want 0 (amp is the (eps, delta) variant)", ErrBudget, delta)
	}
	if m == perturb.AMP && !(delta > 0 && delta < 1) {
		return fmt.Errorf("%w: delta = %v with amp, want in (0, 1)", ErrBudget, delta)
	}
	return nil
}

// curvature returns the rank r of the per-example Hessian in w and the
// per-eigenvalue bound a used in the Jacobian factor r log(1 + a/(n Lambda)),
// from the loss's constants (with Domain.Classes = K).
//
// The Hessian in w is H_z kron x x^T, H_z the margin Hessian: its nonzero
// eigenvalues are those of H_z times ||x||^2 <= kappa^2, at most Rank of
// them, summing to at most Rank RankSz kappa^2 (losses.Constants: Rank = K
// and RankSz = S_z when the loss states nothing better). The sum of
// log(1 + a_j/(n Lambda)) over at most r eigenvalues a_j with that sum is
// largest when they are equal (concavity), a_j = RankSz kappa^2. Scalar
// GLM: r = 1, a = S_z kappa^2 (l” x x^T). Softmax (K classes): the
// Hessian diag(p) - p p^T annihilates the all-ones vector (r = K - 1) and
// has trace 1 - ||p||^2 <= 1 - 1/K, so a = kappa^2/K, below the eigenvalue
// bound S_z kappa^2 = kappa^2/2.
func curvature(pr Problem, cons losses.Constants) (int, float64, error) {
	r, a := cons.Rank, cons.RankSz
	if r == 0 {
		r = pr.K
	}
	if a == 0 {
		a = cons.Sz
	}
	if r < 1 || r > pr.K {
		return 0, 0, fmt.Errorf("%w: the %s loss with K = %d outputs has a Hessian of rank %d", ErrCondition, pr.Loss.Name(), pr.K, r)
	}
	return r, a * pr.Kappa * pr.Kappa, nil
}

// jacobianEps returns r log(1 + a/(n lambda)).
func jacobianEps(r int, a float64, n int, lambda float64) float64 {
	return float64(r) * math.Log1p(a/(float64(n)*lambda))
}

// lambdaFloor returns the lambda at which r log(1 + a/(n lambda)) = eps/2.
func lambdaFloor(r int, a float64, n int, eps float64) float64 {
	return a / (float64(n) * math.Expm1(eps/(2*float64(r))))
}

// chiTail returns t with P(||g|| > t) <= delta for g ~ N(0, I_k): exactly
// sqrt(2 ln(1/delta)) for k = 2 (||g||^2 is exponential with mean 2), and
// sqrt(k) + sqrt(2 ln(1/delta)) otherwise (Gaussian concentration of the
// 1-Lipschitz norm around its mean, which is at most sqrt(k)).
func chiTail(k int, delta float64) float64 {
	s := math.Sqrt(2 * math.Log(1/delta))
	if k == 2 {
		return s
	}
	return math.Sqrt(float64(k)) + s
}

// Calibrate returns the constants of a release of pr by mechanism m with
// budget (eps, delta), or an error wrapping ErrCondition or ErrBudget.
//
// Setting (docs/DESIGN.md, section 11): the released weights minimize
// F(w) = (1/n) sum_i l(<w, x_i>, y_i) + (Lambda/2)||w||^2 + <b, w>/n, with
// ||x_i|| <= kappa, |l'| <= L_z, 0 <= l” <= S_z, l twice continuously
// differentiable and convex. F is Lambda-strongly convex, so for fixed data
// the map b -> w* is a C^1 bijection with inverse
// b(w; S) = -(sum_i grad l_i(w) + n Lambda w). For replace-one neighbours
// S, S' (row n replaced) the density of w* under S at w is
// nu(b(w; S)) |det grad_w b(w; S)|, and:
//
//   - Noise part: ||b(w; S) - b(w; S')|| = ||grad l_n(w) - grad l'_n(w)||
//     <= 2L, L = L_z kappa.
//   - Jacobian part: grad_w b(w; S) = -(A + H_n(w)) with A = sum_{i<n} H_i
//   - n Lambda I >= n Lambda I, H the per-example Hessians (PSD). Since
//     det(A + H'_n) >= det(A), the ratio of the determinants for S and S'
//     is at most det(I + A^{-1/2} H_n A^{-1/2}) <= prod_j (1 + a_j/(n
//     Lambda)) over the eigenvalues a_j of H_n, i.e. at most
//     exp(EpsJacobian) with EpsJacobian = Rank log(1 + Curv/(n Lambda))
//     (see curvature). This is the argument of Chaudhuri, Monteleoni &
//     Sarwate (2011), Theorem 9, with the determinant ratio bounded
//     one-sidedly (as Kifer, Smith & Thakurta 2012, Theorem 2, do for
//     rank-one Hessians), which gives the factor once where Chaudhuri et al.
//     square it.
//
// objective (pure eps): the budget is split into the objective part
// (EpsObjective = (1 - 0.01) eps) and the output part (EpsOutput = 0.01
// eps).
//
//   - Objective part: EpsNoise = EpsObjective - EpsJacobian, and the exact
//     draw b^c has density proportional to exp(-EpsNoise ||b|| / (2L)):
//     ||b^c|| ~ Gamma(P, Theta = 2L/EpsNoise), uniform direction. The noise
//     ratio is at most exp(EpsNoise) by the triangle inequality, so the
//     minimizer w* of F with b^c is EpsObjective-DP.
//   - Output part: the solver is given b, the exact draw rounded to the
//     secure sampler's lattice (step at most BStep = 2^-20 Theta, so ||b -
//     b^c|| <= sqrt(P) BStep/2; the seeded source does not round and the
//     same bound holds), and runs until ||grad F|| <= GradTol, with no cap
//     on the steps. Its iterate w~ is within GradTol/Lambda of the
//     minimizer w_b of F with b (strong convexity), and ||w_b - w*|| <=
//     ||b - b^c||/(n Lambda), since grad F_{b^c}(w_b) = (b^c - b)/n. So
//     ||w~ - w*|| <= Radius = GradTol/Lambda + sqrt(P) BStep/(2 n Lambda).
//     b^c = -(sum_i grad l_i(w*) + n Lambda w*) is a function of (S, w*),
//     and the rounding and the solver are deterministic, so w~ = q(S, w*)
//     and ||q(S, w*) - q(S', w*)|| <= 2 Radius = OutSensitivity for each
//     w*. The release w~ + xi, xi of density proportional to exp(-EpsOutput
//     ||xi|| / OutSensitivity) (exact gamma-norm sampler), is EpsOutput-DP
//     given w*; adaptive composition and dropping w* give eps-DP. Without
//     xi the release is not private: b(w~; S) lies on the lattice up to the
//     solver's residual and b(w~; S') does not. The running time depends
//     on the data and the noise (timing is not covered).
//
// The floor: Lambda >= LambdaFloor = Curv / (n (e^{eps/(2 Rank)} -
// 1)), where EpsJacobian = eps/2, so the noise gets at least half the
// budget. Chaudhuri et al.'s Algorithm 2 instead adds the extra ridge
// Delta = LambdaFloor - Lambda when Lambda is below its floor (their floor
// puts the squared factor at eps/2, Curv = c); this package refuses such a
// lambda with an error naming the floor, so the objective minimized is the
// one the caller set, and --lambda auto never falls below it (RaiseToFloor
// is Algorithm 2's step, for a caller that states the extra ridge).
//
// For objective, an eps so small that float64 cannot resolve the solver's
// gradient threshold GradTol at the scale of the noisy gradient's terms is
// refused (ErrBudget), with the smallest eps the check accepts.
//
// amp ((eps, delta)): Iyengar et al. (2019), Algorithm 1. The budget is
// split into the objective part (EpsObjective = (1 - 0.01) eps,
// DeltaObjective = 0.8 delta), the output part (EpsOutput = 0.01 eps,
// DeltaOutput = 0.1 delta) and the iteration budget (0.1 delta).
//
//   - Objective part, b_1 ~ N(0, Sigma1^2 I): at output w the privacy loss
//     is (||b + v||^2 - ||b||^2)/(2 Sigma1^2) + (Jacobian term), with
//     v = b(w; S') - b(w; S), ||v|| <= 2L. v lies in the span of
//     {x_n, x'_n} (kron R^K for softmax, gradients summing to 0): a
//     subspace of dimension SubspaceDim = 2 (K = 1) or 2(K - 1) fixed by the
//     pair, so <b, v> <= ||P b|| 2L with ||P b||/Sigma1 ~ chi_SubspaceDim.
//     With probability at least 1 - DeltaObjective, ||P b|| <= Tail Sigma1
//     (chiTail), and then the noise term is at most 2L Tail/Sigma1 +
//     2L^2/Sigma1^2. Setting it to EpsNoise = EpsObjective - EpsJacobian
//     gives Sigma1 = 2L/a with a = 2 EpsNoise/(Tail + sqrt(Tail^2 + 2
//     EpsNoise)). A privacy loss bounded by EpsObjective except with
//     probability DeltaObjective gives (EpsObjective, DeltaObjective)-DP.
//     Floor as for objective, at EpsObjective.
//   - Output part: the minimizer w* is a function of (S, b_1) and b_1 one of
//     (S, w*): b_1 = -(sum_i grad l_i(w*) + n Lambda w*). The solver is
//     deterministic, so its iterate w~ is a function q(S, w*), and every
//     iterate with ||grad F(w~)|| <= GradTol lies within GradTol/Lambda of
//     w* (strong convexity). For fixed w*, ||q(S, w*) - q(S', w*)|| <=
//     2 GradTol/Lambda = OutSensitivity, and w~ + b_2 with b_2 ~ N(0,
//     Sigma2^2 I), Sigma2 the analytic Gaussian calibration (Balle & Wang
//     2018, Theorem 8) for (EpsOutput, DeltaOutput), is (EpsOutput,
//     DeltaOutput)-DP given w*. Adaptive composition of the release of w*
//     and of q + b_2, then dropping w* (post-processing), gives (EpsObjective
//   - EpsOutput, DeltaObjective + DeltaOutput).
//   - Iteration budget (no data-dependent refusal): the solver runs Newton
//     steps, every iterate of which keeps F <= F(0) (the premise below),
//     then at most FallbackSteps gradient
//     steps of size Step = 1/(Beta + Lambda), stopping at the first iterate
//     within GradTol. From any w0 with F(w0) <= F(0), ||w0 - w*|| <=
//     ||grad F(0)||/Lambda <= (L + ||b_1||/n)/Lambda, each step contracts
//     the distance by 1 - Lambda/(Beta + Lambda), and ||grad F|| <= (Beta +
//     Lambda) ||w - w*||; so if ||b_1|| <= NormBound the budget reaches
//     GradTol. NormBound = Sigma1 (sqrt(P) + sqrt(2 ln(1/DeltaFail))), so
//     P(||b_1|| > NormBound) <= DeltaFail for every data set. A run that
//     ends above GradTol is released as it is: the mechanism differs from
//     one that always meets the threshold only on that event, whose
//     probability is at most DeltaFail under both neighbours, which adds
//     (1 + e^eps) DeltaFail = 0.1 delta to delta.
func Calibrate(m dp.Mechanism, eps, delta float64, pr Problem) (Calibration, error) {
	c, err := constants(m, eps, delta, pr)
	if err != nil {
		return Calibration{}, err
	}
	if pr.Lambda < c.LambdaFloor {
		return Calibration{}, fmt.Errorf("%w: lambda floor: lambda = %g is below the floor %.6g of %s at eps = %g, n = %d: set lambda >= the floor, or auto",
			ErrCondition, pr.Lambda, c.LambdaFloor, m, eps, pr.N)
	}
	c.EpsNoise = c.EpsObjective - c.EpsJacobian
	if !(c.EpsNoise > 0) {
		return Calibration{}, fmt.Errorf("%w: nothing of eps is left for the noise (Jacobian part %v of %v)", ErrCondition, c.EpsJacobian, c.EpsObjective)
	}
	p := float64(c.P)
	n := float64(pr.N)
	switch m {
	case perturb.Objective:
		c.Theta = 2 * c.L / c.EpsNoise
		c.BStep = math.Ldexp(c.Theta, -bLatticeBits)
		c.Radius = c.GradTol/c.Lambda + math.Sqrt(p)*c.BStep/(2*n*c.Lambda)
		c.OutSensitivity = 2 * c.Radius
		c.Theta2 = c.OutSensitivity / c.EpsOutput
		c.FallbackSteps = -1
	case perturb.AMP:
		an := 2 * c.EpsNoise / (c.Tail + math.Sqrt(c.Tail*c.Tail+2*c.EpsNoise))
		c.Sigma1 = 2 * c.L / an
		c.Radius = c.GradTol / c.Lambda
		c.OutSensitivity = 2 * c.Radius
		if c.Sigma2, err = perturb.AnalyticGaussianSigma(c.EpsOutput, c.DeltaOutput, c.OutSensitivity); err != nil {
			return Calibration{}, fmt.Errorf("%w: the output part: %w", ErrBudget, err)
		}
		c.NormBound = c.Sigma1 * (math.Sqrt(p) + math.Sqrt(2*math.Log(1/c.DeltaFail)))
	}
	if check.FirstNonFinite([]float64{c.Theta, c.Theta2, c.Sigma1, c.Sigma2, c.NormBound, c.OutSensitivity}) >= 0 {
		return Calibration{}, fmt.Errorf("%w: a noise scale is not finite at eps = %v, delta = %v", ErrBudget, eps, delta)
	}
	if m == perturb.Objective {
		if !(c.Theta2 > 0) {
			return Calibration{}, fmt.Errorf("%w: the output noise scale is %v at eps = %v", ErrBudget, c.Theta2, eps)
		}
		// The solver runs until the gradient norm is at most GradTol, so
		// float64 must resolve GradTol at the scale of the gradient's
		// terms, about L + ||b||/n with ||b|| ~ Gamma(P, Theta): a
		// data-independent check at ten times the mean norm, with a
		// margin of 10 on the rounding of sqrt(P) sums of 8 terms.
		if scale := c.L + 10*p*c.Theta/n; 8*math.Sqrt(p)*scale*0x1p-52 > GradTol/10 {
			return Calibration{}, fmt.Errorf("%w: eps = %v is too small for the solver (n = %d, %d weights, noise scale %.3g, threshold %g); %s",
				ErrBudget, eps, pr.N, c.P, scale, GradTol, c.smallestEps())
		}
		return c, nil
	}
	// Steps k with (1 - Lambda/M)^k M (L + B/n)/Lambda <= GradTol, M = Beta
	// + Lambda, in logarithms (the product overflows for a huge lambda).
	M := c.Beta + c.Lambda
	logRatio := math.Log(M) + math.Log(c.L+c.NormBound/n) - math.Log(c.Lambda) - math.Log(c.GradTol)
	k := 0.0
	if logRatio > 0 {
		k = math.Ceil(logRatio / -math.Log1p(-c.Lambda/M))
	}
	if k > 1e12 || math.IsNaN(k) {
		return Calibration{}, fmt.Errorf("%w: the iteration budget (%g gradient steps) is out of range: lambda = %g is too small against the smoothness %g", ErrCondition, k, c.Lambda, c.Beta)
	}
	c.FallbackSteps = int(k)
	return c, nil
}

// smallestEps says which eps the solver's check of Calibrate (objective)
// accepts for c's problem: it needs theta = 2L/EpsNoise with
// 8 sqrt(P) (L + 10 P theta/n) 2^-52 <= GradTol/10, so EpsNoise >= E =
// 20 P L/(n A), A = GradTol/(80 sqrt(P) 2^-52) - L; with EpsNoise =
// EpsObjective - EpsJacobian and EpsObjective = (1 - PureOutputEpsShare)
// eps, eps >= (E + EpsJacobian)/(1 - share) at c's lambda, and eps >=
// 2E/(1 - share) at any lambda at or above the floor (where EpsJacobian is
// at most half of EpsObjective). Both are rounded up by a relative 1e-9.
func (c Calibration) smallestEps() string {
	atLambda, anyLambda, ok := c.solverEps()
	if !ok {
		return fmt.Sprintf("no eps is enough for %d weights: reduce the number of features", c.P)
	}
	return fmt.Sprintf("raise eps to at least %.3g (at lambda = %.3g; %.3g whatever lambda)", atLambda, c.Lambda, anyLambda)
}

// solverEps returns the two bounds of smallestEps: the smallest eps the
// solver's check accepts at c's lambda, and one it accepts at any lambda
// at or above the floor; ok is false when none does.
func (c Calibration) solverEps() (atLambda, anyLambda float64, ok bool) {
	p := float64(c.P)
	a := GradTol/(80*math.Sqrt(p)*0x1p-52) - c.L
	if !(a > 0) {
		return 0, 0, false
	}
	e := 20 * p * c.L / (float64(c.N) * a)
	up := (1 + 1e-9) / (1 - PureOutputEpsShare)
	return (e + c.EpsJacobian) * up, 2 * e * up, true
}

// constants checks (m, eps, delta, pr) and returns the part of the
// calibration that does not depend on the noise: the problem's constants,
// the split of the budget, the Jacobian part at pr.Lambda, the floor and
// (AMP) the chi tail. pr.Lambda must be finite and > 0, and may be below
// the floor.
func constants(m dp.Mechanism, eps, delta float64, pr Problem) (Calibration, error) {
	if err := CheckBudget(m, eps, delta); err != nil {
		return Calibration{}, err
	}
	if err := CheckLoss(pr.Loss); err != nil {
		return Calibration{}, err
	}
	if pr.N < 1 || pr.D < 1 || pr.K < 1 || !check.Positive(pr.Kappa) {
		return Calibration{}, fmt.Errorf("%w: problem with n = %d, d = %d, K = %d, kappa = %v", ErrCondition, pr.N, pr.D, pr.K, pr.Kappa)
	}
	if !check.Positive(pr.Lambda) {
		return Calibration{}, fmt.Errorf("%w: lambda = %v: objective perturbation needs a strongly convex objective, lambda > 0 (and at least its floor)", ErrCondition, pr.Lambda)
	}
	// A multiclass loss has K = classes >= 2 outputs (CheckRows reads K = 1
	// as two classes).
	if classes := max(pr.K, 2); pr.Loss.Outputs(classes) != pr.K {
		return Calibration{}, fmt.Errorf("%w: the %s loss has %d outputs for %d classes, the problem K = %d", ErrCondition, pr.Loss.Name(), pr.Loss.Outputs(classes), classes, pr.K)
	}
	cons, err := pr.Loss.Constants(losses.Domain{Kappa: pr.Kappa, Classes: pr.K})
	if err != nil {
		return Calibration{}, fmt.Errorf("%w: %w", ErrCondition, err)
	}
	if !cons.Convex {
		return Calibration{}, fmt.Errorf("%w: convexity: the %s loss is not convex", ErrCondition, pr.Loss.Name())
	}
	r, a, err := curvature(pr, cons)
	if err != nil {
		return Calibration{}, err
	}
	c := Calibration{
		Mechanism: m, Epsilon: eps, Delta: delta, N: pr.N, P: pr.K * pr.D,
		L: cons.Lz * pr.Kappa, Beta: cons.Sz * pr.Kappa * pr.Kappa, Lambda: pr.Lambda,
		Rank: r, Curv: a, GradTol: GradTol,
	}
	c.Step = 1 / (c.Beta + c.Lambda)
	switch m {
	case perturb.Objective:
		c.EpsOutput = PureOutputEpsShare * eps
		c.EpsObjective = dp.Rest(eps, c.EpsOutput)
	case perturb.AMP:
		c.EpsOutput = AMPOutputEpsShare * eps
		c.EpsObjective = dp.Rest(eps, c.EpsOutput)
		c.DeltaOutput = AMPOutputDeltaShare * delta
		c.DeltaFailCharge = AMPFailDeltaShare * delta
		c.DeltaFail = c.DeltaFailCharge / (1 + math.Exp(eps))
		c.DeltaObjective = dp.Rest(delta, c.DeltaOutput, c.DeltaFailCharge)
		c.SubspaceDim = 2
		if pr.K > 1 {
			c.SubspaceDim = 2 * (pr.K - 1)
		}
		c.Tail = chiTail(c.SubspaceDim, c.DeltaObjective)
	}
	c.EpsJacobian = jacobianEps(r, a, pr.N, pr.Lambda)
	c.LambdaFloor = lambdaFloor(r, a, pr.N, c.EpsObjective)
	if !check.Positive(c.LambdaFloor) {
		return Calibration{}, fmt.Errorf("%w: the lambda floor is %v at eps = %v with n = %d", ErrBudget, c.LambdaFloor, eps, pr.N)
	}
	return c, nil
}

// LambdaFloor returns the smallest ridge strength mechanism m accepts for
// pr (its Lambda is ignored) with budget (eps, delta): the lambda at which
// the Jacobian part Rank log(1 + Curv/(n lambda)) is half of the objective
// part's eps. It reads only public constants.
func LambdaFloor(m dp.Mechanism, eps, delta float64, pr Problem) (float64, error) {
	probe := pr
	probe.Lambda = 1 // ignored: the floor is a function of the constants
	c, err := constants(m, eps, delta, probe)
	if err != nil {
		return 0, err
	}
	return c.LambdaFloor, nil
}

// RaiseToFloor is the extra-ridge step of Chaudhuri, Monteleoni & Sarwate's
// Algorithm 2 in the form of this package: it returns pr with Lambda
// replaced by max(Lambda, LambdaFloor) and the ridge Delta it added (0 when
// Lambda is at or above the floor). The objective minimized is then
// (1/n) sum_i l_i + ((Lambda + Delta)/2) ||w||^2 + <b, w>/n, and the
// calibration of the returned problem is the one at the floor: EpsJacobian
// = eps_obj/2 and EpsNoise = eps_obj/2, which is Algorithm 2's split once
// its two-sided factor is replaced by the one-sided one (docs/DESIGN.md,
// section 11). Delta is a function of (n, eps, delta, the loss constants,
// Lambda) only, so raising costs no privacy; the returned Lambda is what
// the certificate's run record publishes. Calibrate itself never raises:
// a lambda below the floor given to it (and so to private.Fit) is refused.
func RaiseToFloor(m dp.Mechanism, eps, delta float64, pr Problem) (Problem, float64, error) {
	floor, err := LambdaFloor(m, eps, delta, pr)
	if err != nil {
		return pr, 0, err
	}
	if !(pr.Lambda < floor) {
		return pr, 0, nil
	}
	extra := floor - pr.Lambda
	pr.Lambda = floor
	return pr, extra, nil
}
