package objpert

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// CheckRows checks that the rows and labels fit the problem: n x D rows of
// norm at most Kappa (the bound the calibration assumes), valid labels.
func CheckRows(X *mat.Dense, y []float64, pr Problem) error {
	n, d := X.Dims()
	if n != pr.N || d != pr.D || len(y) != n {
		return fmt.Errorf("%w: %d x %d rows with %d labels for a problem with n = %d, d = %d", ErrCondition, n, d, len(y), pr.N, pr.D)
	}
	classes := pr.K
	if pr.K == 1 {
		classes = 2
	}
	// Near the ends of float64 kappa's square overflows or underflows:
	// then each row is compared as x/kappa with the unit ball.
	k2 := pr.Kappa * pr.Kappa
	scaled := !(k2 >= 0x1p-1000 && k2 <= 0x1p1000)
	exact := func(i int) error {
		var sq float64
		for _, v := range X.RawRowView(i) {
			if !check.Finite(v) {
				return fmt.Errorf("%w: row %d is not finite", ErrCondition, i)
			}
			if scaled {
				v /= pr.Kappa
			}
			sq += float64(v * v)
		}
		lim := k2
		if scaled {
			lim = 1
		}
		if !(sq <= lim) {
			norm := math.Sqrt(sq)
			if scaled {
				norm *= pr.Kappa
			}
			return fmt.Errorf("%w: row %d has norm %g above kappa = %g", ErrCondition, i, norm, pr.Kappa)
		}
		return nil
	}
	label := func(i int) error {
		if err := pr.Loss.CheckLabel(y[i], classes); err != nil {
			return fmt.Errorf("%w: row %d: %w", ErrCondition, i, err)
		}
		return nil
	}
	// Four rows' squared norms at a time, with the bits of exact's sum: a
	// sum at most kappa^2 (finite) has finite terms, and any other row is
	// checked exactly. The rows go in order, so the first failing row is
	// the one reported.
	i := 0
	for ; !scaled && i+4 <= n; i += 4 {
		sq := kernel.SeqSquares4(X.RawRowView(i), X.RawRowView(i+1), X.RawRowView(i+2), X.RawRowView(i+3))
		for r, v := range sq {
			if !(v <= k2) {
				if err := exact(i + r); err != nil {
					return err
				}
			}
			if err := label(i + r); err != nil {
				return err
			}
		}
	}
	for ; i < n; i++ {
		if err := exact(i); err != nil {
			return err
		}
		if err := label(i); err != nil {
			return err
		}
	}
	return nil
}

// Minimize returns the minimizer of the objective without noise (b = 0):
// the non-private weights, for diagnostics and baselines only.
func Minimize(ctx context.Context, X *mat.Dense, y []float64, pr Problem, cal Calibration) ([]float64, SolveStats, error) {
	if err := CheckRows(X, y, pr); err != nil {
		return nil, SolveStats{}, err
	}
	return minimize(ctx, X, y, pr, nil, cal.GradTol, cal.FallbackSteps, cal.Step)
}

// Release draws the noise of cal from src, minimizes the perturbed
// objective of pr on the rows X (each of norm at most pr.Kappa) and labels
// y, adds AMP's output noise, and returns the released model. cal must come
// from Calibrate for pr. The noise b and the unperturbed iterate are wiped
// before return. The statistics are not private.
//
// Noise: objective draws b by src.AddGammaNorm with L2 sensitivity 2L and
// eps EpsNoise (density proportional to exp(-EpsNoise ||b|| / (2L))), runs
// the solver until ||grad F|| <= GradTol (no cap: the running time depends
// on the data and the noise) and adds xi by src.AddGammaNorm with L2
// sensitivity OutSensitivity and eps EpsOutput; amp draws b_1 and b_2 by
// src.AddGaussian with Sigma1 and Sigma2.
func Release(ctx context.Context, X *mat.Dense, y []float64, pr Problem, cal Calibration, src perturb.Source) (*trainer.Model, SolveStats, error) {
	if err := CheckRows(X, y, pr); err != nil {
		return nil, SolveStats{}, err
	}
	if !Handles(cal.Mechanism) {
		return nil, SolveStats{}, fmt.Errorf("%w: the calibration is for another problem", ErrCondition)
	}
	// The noise must be the one Calibrate gives for this problem (its
	// kappa and loss constants included), not one made for another.
	want, err := Calibrate(cal.Mechanism, cal.Epsilon, cal.Delta, pr)
	if want.noOutputNoise = cal.noOutputNoise; err != nil || want != cal {
		return nil, SolveStats{}, fmt.Errorf("%w: the calibration is for another problem (%v)", ErrCondition, err)
	}
	if src == nil {
		src = perturb.Secure()
	}
	p := cal.P
	b := make([]float64, p)
	defer clear(b)
	switch cal.Mechanism {
	case perturb.Objective:
		err = src.AddGammaNorm(b, 2*cal.L, cal.EpsNoise)
	case perturb.AMP:
		err = src.AddGaussian(b, cal.Sigma1)
	}
	if err != nil {
		return nil, SolveStats{}, err
	}
	w, st, err := minimize(ctx, X, y, pr, b, cal.GradTol, cal.FallbackSteps, cal.Step)
	if err != nil {
		return nil, SolveStats{}, err
	}
	switch cal.Mechanism {
	case perturb.AMP:
		err = src.AddGaussian(w, cal.Sigma2)
	case perturb.Objective:
		if !st.Reached {
			clear(w)
			return nil, SolveStats{}, fmt.Errorf("objpert: the solver stopped at gradient norm %g above gamma = %g", st.GradNorm, cal.GradTol)
		}
		if !cal.noOutputNoise {
			err = src.AddGammaNorm(w, cal.OutSensitivity, cal.EpsOutput)
		}
	}
	if err != nil {
		clear(w)
		return nil, SolveStats{}, err
	}
	if i := check.FirstNonFinite(w); i >= 0 {
		return nil, SolveStats{}, fmt.Errorf("objpert: released weight %d is %v", i, w[i])
	}
	return &trainer.Model{Loss: pr.Loss.Name(), Task: pr.Loss.Task(), K: pr.K, D: pr.D, W: w}, st, nil
}

// Citation returns the references of mechanism m's guarantee.
func Citation(m dp.Mechanism) string {
	if m == perturb.AMP {
		return "Iyengar, Near, Song, Thakkar, Thakurta & Wang (2019), Towards Practical Differentially Private Convex Optimization, IEEE S&P, Algorithm 1 (Approximate Minima Perturbation); objective part with Gaussian noise as in Kifer, Smith & Thakurta (2012), COLT, Theorem 2, calibrated by the derivation of docs/DESIGN.md, section 11; output part: Balle & Wang (2018), Theorem 8"
	}
	return "Chaudhuri, Monteleoni & Sarwate (2011), Differentially private empirical risk minimization, JMLR 12, Section 3.2, Algorithm 2 and Theorem 9 (objective perturbation), with the Jacobian ratio bounded one-sidedly as in Kifer, Smith & Thakurta (2012), COLT, Theorem 2; derivation in docs/DESIGN.md, section 11"
}

// Route returns the certificate's SensitivityRoute: the mechanism's own
// analysis with its constants.
func (c Calibration) Route() string {
	s := fmt.Sprintf("objective perturbation (no stability route): the noise hides the summed gradient, ||b(w;S) - b(w;S')|| <= 2L = %g; "+
		"Jacobian factor %d log(1 + %g/(n lambda)) = %.6g with n = %d, lambda = %g (floor %.6g); noise eps %.6g of the objective part's %.6g",
		2*c.L, c.Rank, c.Curv, c.EpsJacobian, c.N, c.Lambda, c.LambdaFloor, c.EpsNoise, c.EpsObjective)
	if c.Mechanism == perturb.Objective {
		s += fmt.Sprintf("; gamma-norm b with theta = %.6g, rounded to a lattice of step at most %.6g (the secure sampler's rounding of the exact draw); "+
			"output part: the solver runs until the gradient threshold gamma = %g is reached, so the iterate lies within r = gamma/lambda + sqrt(p) step/(2 n lambda) = %.6g "+
			"of the minimizer for the exact draw, and gamma-norm noise xi of L2 sensitivity 2r = %.6g with eps %.6g (theta_2 = %.6g) is added to it",
			c.Theta, c.BStep, c.GradTol, c.Radius, c.OutSensitivity, c.EpsOutput, c.Theta2)
	}
	if c.Mechanism == perturb.AMP {
		s += fmt.Sprintf("; Gaussian b_1 with sigma_1 = %.6g (chi tail %.6g in dimension %d at delta %.6g); "+
			"output part: gradient threshold gamma = %g, sensitivity 2 gamma/lambda = %.6g, sigma_2 = %.6g for eps %.6g, delta %.6g; "+
			"iteration budget: %d gradient steps of %.6g reach gamma when ||b_1|| <= %.6g, which fails with probability at most %.6g",
			c.Sigma1, c.Tail, c.SubspaceDim, c.DeltaObjective, c.GradTol, c.OutSensitivity, c.Sigma2, c.EpsOutput, c.DeltaOutput,
			c.FallbackSteps, c.Step, c.NormBound, c.DeltaFail)
	}
	return s
}

// Ledger returns the parts of the budget the mechanism spends.
func (c Calibration) Ledger() []dp.Charge {
	if c.Mechanism == perturb.Objective {
		return []dp.Charge{
			{Step: "objective part: the minimizer of the objective with gamma-norm noise b (exact draw)", Mechanism: c.Mechanism, Epsilon: c.EpsObjective},
			{Step: "output part: gamma-norm noise xi on the solver's iterate (gradient norm at most gamma, b rounded to its lattice), L2 sensitivity 2r", Mechanism: c.Mechanism, Epsilon: c.EpsOutput},
		}
	}
	return []dp.Charge{
		{Step: "objective part: the minimizer of the objective with Gaussian noise b_1", Mechanism: c.Mechanism, Epsilon: c.EpsObjective, Delta: c.DeltaObjective},
		{Step: "output part: Gaussian noise b_2 on the solver's iterate (gradient norm at most gamma)", Mechanism: c.Mechanism, Epsilon: c.EpsOutput, Delta: c.DeltaOutput},
		{Step: "iteration budget: the event ||b_1|| > B, the only one on which the fixed budget may miss gamma, charged (1 + e^eps) P(||b_1|| > B)", Mechanism: c.Mechanism, Delta: c.DeltaFailCharge},
	}
}

// Notes returns what the claim of a release with cal does not cover, for
// the noise source kind sourceKind.
func (c Calibration) Notes(sourceKind string) []string {
	notes := []string{
		"the weights are computed in float64 (margins, gradients, Hessians, Cholesky factors): the change-of-variables argument is for exact arithmetic, and the rounding of the solver is not covered",
	}
	if c.Mechanism == perturb.Objective {
		notes = append(notes, fmt.Sprintf("the solver runs (at most %d Newton steps, then gradient steps of %.6g) until the gradient norm is at most gamma = %g, with no cap on the steps: the running time depends on the data and the noise, and timing is not covered; in float64 it is assumed that the gradient steps reach gamma, far above the rounding of the gradient",
			maxNewton, c.Step, c.GradTol))
	} else {
		notes = append(notes, fmt.Sprintf("the iteration budget reaches gamma whenever ||b_1|| <= %.6g in exact arithmetic; in float64 it is assumed that gradient steps keep reducing the gradient norm down to gamma = %g, far above the rounding of the gradient", c.NormBound, c.GradTol))
	}
	switch {
	case sourceKind != perturb.SourceSecure:
	case c.Mechanism == perturb.Objective:
		notes = append(notes, fmt.Sprintf("b and xi are drawn by perturb's exact gamma-norm sampler from crypto/rand bits; b is the exact draw rounded to its lattice (step at most %.3g) before the minimization, and the claim covers that rounding: the objective part is for the minimizer w* of the objective with the exact draw, the iterate is a function of (data, w*) within r = %.3g of w*, and xi (L2 sensitivity 2r) hides where in that ball it lies", c.BStep, c.Radius))
	default:
		notes = append(notes, perturb.SecureAMPNote)
	}
	return notes
}

// NewClaim returns the privacy claim of a release with calibration cal,
// the noise source kind and the caller's notes, with WeightsSHA256 and
// Ledger empty; the certificate (release.Certificate) attaches the public
// run record (Run). It reads no weights, so a verifier rebuilds it from the
// published inputs.
func NewClaim(cal Calibration, sourceKind string, notes []string) *dp.Claim {
	scaleName, scale := "theta (||b|| ~ Gamma(dim, theta))", cal.Theta
	if cal.Mechanism == perturb.AMP {
		scaleName, scale = "sigma_1 (b_1 ~ N(0, sigma_1^2 I))", cal.Sigma1
	}
	c := &dp.Claim{
		Version:          dp.CertificateVersion,
		Private:          sourceKind == perturb.SourceSecure,
		Mechanism:        cal.Mechanism,
		Epsilon:          cal.Epsilon,
		Delta:            cal.Delta,
		Dim:              cal.P,
		L2Sensitivity:    2 * cal.L,
		SensitivityRoute: cal.Route(),
		NoiseScale:       scale,
		NoiseScaleName:   scaleName,
		Neighbouring:     "replace-one: data sets of the same size that differ in one example",
		Source:           sourceKind,
		Citation:         Citation(cal.Mechanism),
	}
	c.Assumptions = []string{
		"the conditions of the mechanism are checked from the published constants: a convex loss, twice continuously differentiable, with |l'| <= L_z and 0 <= l'' <= S_z in the margin, rows of norm at most kappa, the ridge lambda at or above its floor, no L1 term, clipping, dropout or projection",
		"the claim is about the rows the solver received: what happened to them before (preprocessing, selection of the settings) is covered only as this list states",
		"the run constants in this certificate (including n) are published in the clear; the solver's statistics (steps taken, final gradient norm) are withheld",
		"only one release of this training run is covered",
	}
	switch sourceKind {
	case perturb.SourceSecure:
	case perturb.SourceSeeded:
		c.Assumptions = append(c.Assumptions, "the noise was drawn from a seeded generator and can be recomputed from the seed: not for release")
	default:
		c.Assumptions = append(c.Assumptions, "the noise came from a caller-supplied source whose quality is not verified")
	}
	c.Assumptions = append(c.Assumptions, cal.Notes(sourceKind)...)
	c.Assumptions = append(c.Assumptions, notes...)
	return c
}

// Run returns the public run record of a release with cal: the constants
// of the objective and of the solver (schedule "newton", the first and
// fallback step Eta = 1/(beta_s + lambda), the gradient threshold as
// Tolerance), with the SGD fields empty.
func Run(cal Calibration, pr Problem, cons losses.Constants, labelBound float64, seed uint64) *trainer.Run {
	return &trainer.Run{
		Loss: pr.Loss.Name(), Task: pr.Loss.Task().String(), N: pr.N, D: pr.D, K: pr.K,
		Kappa: pr.Kappa, Lz: cons.Lz, Sz: cons.Sz, L: cal.L, BetaS: cal.Beta, Convex: cons.Convex,
		Lambda: pr.Lambda, LabelBound: labelBound, Mu: pr.Lambda,
		Schedule: "newton", Eta: cal.Step, Tolerance: cal.GradTol,
		Dropout: 1, Sampling: "full batch (exact minimization)", Seed: seed, Engine: "objpert",
	}
}

// MinimizeExact returns the minimizer of the objective of pr without noise
// (b = 0) and without the floor's condition, for non-private baselines
// (the experiments' noise-free accuracy at every lambda): Newton steps,
// then at most the gradient steps that reach GradTol from w = 0 in exact
// arithmetic. The weights are not private.
func MinimizeExact(ctx context.Context, X *mat.Dense, y []float64, pr Problem) ([]float64, SolveStats, error) {
	if err := CheckLoss(pr.Loss); err != nil {
		return nil, SolveStats{}, err
	}
	if !check.Positive(pr.Lambda) {
		return nil, SolveStats{}, fmt.Errorf("%w: lambda = %v, want finite > 0", ErrCondition, pr.Lambda)
	}
	if err := CheckRows(X, y, pr); err != nil {
		return nil, SolveStats{}, err
	}
	cons, err := pr.Loss.Constants(losses.Domain{Kappa: pr.Kappa})
	if err != nil {
		return nil, SolveStats{}, fmt.Errorf("%w: %w", ErrCondition, err)
	}
	beta, L := cons.Sz*pr.Kappa*pr.Kappa, cons.Lz*pr.Kappa
	M := beta + pr.Lambda
	steps := 0.0
	if ratio := M * L / (pr.Lambda * GradTol); ratio > 1 {
		steps = math.Min(math.Ceil(math.Log(ratio)/-math.Log1p(-pr.Lambda/M)), 1e9)
	}
	return minimize(ctx, X, y, pr, nil, GradTol, int(steps), 1/M)
}
