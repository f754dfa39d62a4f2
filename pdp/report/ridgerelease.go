package report

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/ridge"
	"github.com/stabpriv/stabpriv/perturb"
)

// The releases of ridge regression that SimulateRidge analyses beside
// isotropic output perturbation (Simulate).
const (
	// RidgeOPS is one posterior sample (SampleOPS; Wang, Per-instance DP,
	// Theorem 14): per-instance epsilons by the corrected Theorem 14
	// (OPSEpsilon), for add/remove-one neighbours.
	RidgeOPS = "ops"
	// RidgeAdaOPS is AdaOPS (Algorithm 1): an (eps, delta)-DP release whose
	// sampling step's per-instance epsilons are reported (at delta/4, on
	// the ridge weight lambda_n it chose).
	RidgeAdaOPS = "adaops"
	// RidgeGaussianCov is Gaussian output perturbation with the covariance
	// A^{-1}/gamma (pdp.GaussianCov; Wang's eq. 2), A fixed independently of
	// the data.
	RidgeGaussianCov = "gaussian-cov"
)

// RidgeRelease describes a release of ridge regression for SimulateRidge.
type RidgeRelease struct {
	// Kind is RidgeOPS, RidgeAdaOPS or RidgeGaussianCov.
	Kind string
	// Gamma > 0 is the posterior scale of OPS (exp(-(gamma/2)(||y -
	// Xw||^2 + n lambda ||w||^2))) or the precision scale of the Gaussian;
	// AdaOPS chooses its own (unused).
	Gamma float64
	// Cond is AdaOPS's kappa (ridge.AdaOPSConfig.Cond).
	Cond float64
	// Precision is the Gaussian's A, positive definite, of the dimension
	// of the prepared rows; nil means the identity. It must be fixed
	// independently of the data: a data-dependent A (the Fisher choice
	// X^T X) makes Lemma 4 inapplicable (Wang, Section 4).
	Precision *mat.SymDense
	// Seed seeds AdaOPS's noisy lambda_min: the analysis publishes nothing,
	// and the report names the lambda_n that the draw gave.
	Seed uint64
}

// check validates the release against the simulation's settings.
func (rr RidgeRelease) check(sim Simulation) error {
	if _, ok := sim.Loss.(losses.Squared); !ok {
		return fmt.Errorf("%w: the %s release is of ridge regression: use the squared loss", pdp.ErrInput, rr.Kind)
	}
	switch rr.Kind {
	case RidgeOPS, RidgeGaussianCov:
		if !check.Positive(rr.Gamma) {
			return fmt.Errorf("%w: %s needs gamma finite > 0, have %v", pdp.ErrInput, rr.Kind, rr.Gamma)
		}
		if !check.OpenUnit(sim.Delta) || (rr.Kind == RidgeOPS && !(sim.Delta < 2/math.E)) {
			return fmt.Errorf("%w: %s needs delta in (0, 1) (OPS: (0, 2/e)), have %v", pdp.ErrInput, rr.Kind, sim.Delta)
		}
	case RidgeAdaOPS:
		if !check.Positive(sim.Epsilon) || !(sim.Delta > 0 && sim.Delta < 2/math.E) || !check.Positive(rr.Cond) {
			return fmt.Errorf("%w: adaops needs eps > 0, delta in (0, 2/e) and a condition number kappa > 0, have %v, %v, %v", pdp.ErrInput, sim.Epsilon, sim.Delta, rr.Cond)
		}
	default:
		return fmt.Errorf("%w: ridge release %q, want %s, %s or %s", pdp.ErrInput, rr.Kind, RidgeOPS, RidgeAdaOPS, RidgeGaussianCov)
	}
	return nil
}

// SimulateRidge analyses the ridge release rr (OPS, AdaOPS or a Gaussian
// with a general covariance) on the data set ds as Simulate does for
// isotropic output perturbation: the same split and preparation (sim's
// Mechanism and Sigma are not used; Epsilon is AdaOPS's target and Delta
// the delta of every claim), every training row's remove-one sensitivity
// (exact: ridge's one-step difference is the leave-one-out solution) and
// per-instance epsilon under rr, the held-out rows' as added targets and,
// for the posterior samples (Gibbs distributions), their on-average
// KL-privacy in closed form (Ridge.OPSOnAverageKL). The epsilons of OPS
// and AdaOPS are Theorem 14's bounds (upper bounds); the Gaussian's are
// exact (pdp.GaussianCov.Epsilon).
func SimulateRidge(ds *datasets.Dataset, sim Simulation, rr RidgeRelease) (*Result, error) {
	if err := sim.check(); err != nil {
		return nil, err
	}
	if err := rr.check(sim); err != nil {
		return nil, err
	}
	l, err := sim.load(ds)
	if err != nil {
		return nil, err
	}
	train, test, notes, trainIdx, testIdx := l.train, l.test, l.notes, l.trainIdx, l.testIdx
	xtr, ytr := train.X, train.Y
	ntr, d := xtr.Dims()
	if rr.Precision != nil && rr.Precision.SymmetricDim() != d {
		return nil, fmt.Errorf("%w: a %d x %d precision matrix A for %d weights (with the bias column, if any)", pdp.ErrInput, rr.Precision.SymmetricDim(), rr.Precision.SymmetricDim(), d)
	}
	reg := float64(ntr) * sim.Lambda
	var ada *ridge.AdaOPSResult
	if rr.Kind == RidgeAdaOPS {
		// AdaOPS chooses its ridge weight; the sensitivities are at it.
		if ada, err = ridge.AdaOPS(xtr, ytr, ridge.AdaOPSConfig{Epsilon: sim.Epsilon, Delta: sim.Delta, Cond: rr.Cond, Source: perturb.Seeded(rr.Seed)}); err != nil {
			return nil, err
		}
		reg = ada.Reg
	}
	a, err := pdp.New(xtr, ytr, pdp.Config{Loss: losses.Squared{}, Lambda: reg / float64(ntr), LabelBound: sim.LabelBound})
	if err != nil {
		return nil, err
	}
	diffs, err := a.RemoveAll()
	if err != nil {
		return nil, err
	}
	var (
		rowEps               []float64
		targetEps            func(x []float64, y float64, d pdp.Diff) (float64, error)
		gamma, delta         = rr.Gamma, sim.Delta
		scaleName, mechanism = "gamma", rr.Kind
		dpEps                *float64
		kind                 = pdp.KindBound
	)
	switch rr.Kind {
	case RidgeOPS, RidgeAdaOPS:
		if res := ada; res != nil {
			gamma, delta = res.Gamma, sim.Delta/4
			e := sim.Epsilon
			dpEps = &e
			notes = append(notes, fmt.Sprintf("AdaOPS (Wang, Algorithm 1, as corrected in pdp.AdaOPS): (%g, %g)-DP for add/remove-one neighbours of rows with ||x|| <= 1 and |y| <= 1; its noisy lambda_min (seed %d, nothing published) gave the ridge weight lambda_n = %.4g and gamma_n = %.4g; the per-instance epsilons are those of its sampling step at delta/4 (Theorem 14, corrected)", sim.Epsilon, sim.Delta, rr.Seed, res.Reg, res.Gamma))
		} else {
			notes = append(notes, fmt.Sprintf("one posterior sample (OPS) with gamma = %g and the ridge weight n lambda = %.4g; per-instance epsilons by Wang's Theorem 14, corrected (pdp.opsBound): upper bounds; no worst-case DP epsilon without a bounded domain", gamma, reg))
		}
		r, err := ridge.FitReg(xtr, ytr, reg)
		if err != nil {
			return nil, err
		}
		if rowEps, err = r.OPSEpsilon(gamma, delta); err != nil {
			return nil, err
		}
		targetEps = func(x []float64, y float64, _ pdp.Diff) (float64, error) {
			return r.OPSEpsilonTarget(x, y, gamma, delta)
		}
		if test != nil {
			m, _ := test.X.Dims()
			rows := make([]int, m)
			for t := range rows {
				rows[t] = t % ntr
			}
			kl, err := r.OPSOnAverageKL(gamma, rows, test.X, test.Y)
			if err != nil {
				return nil, err
			}
			notes = append(notes, fmt.Sprintf("on-average KL-privacy of the posterior sample (Wang, Lei & Fienberg, Definition 2; closed form, each of the %d held-out rows replacing a training row): %.4g", m, kl))
		}
	case RidgeGaussianCov:
		prec := rr.Precision
		if prec == nil {
			prec = identity(d)
		}
		cov := pdp.GaussianCov{A: prec, Gamma: gamma, Delta: delta}
		scaleName, kind = "gamma", pdp.KindExact
		rowEps = make([]float64, len(diffs))
		for i, df := range diffs {
			if rowEps[i], err = cov.Epsilon(df); err != nil {
				return nil, err
			}
		}
		targetEps = func(_ []float64, _ float64, d pdp.Diff) (float64, error) { return cov.Epsilon(d) }
		notes = append(notes, fmt.Sprintf("Gaussian output perturbation N(w_hat, A^{-1}/gamma), gamma = %g, A given (identity when none), fixed independently of the data: per-instance epsilons exact (Balle & Wang's curve at the whitened distance sqrt(gamma) ||V||_A; Wang's Lemma 4 with its misprint corrected)", gamma))
	}
	ids := rowNumbers(trainIdx)
	rep, err := NewReport(a, pdp.PrivacyLoss{Kind: dp.Mechanism(mechanism), Scale: gamma, Delta: delta}, reg/float64(ntr), ids, diffs, rowEps, sim.Top)
	if err != nil {
		return nil, err
	}
	rep.Mechanism, rep.NoiseScaleName, rep.NoiseScale, rep.Delta = mechanism, scaleName, gamma, delta
	// The epsilons are the release's bounds (or exact values), whatever the
	// kind of the sensitivity column.
	rep.Kinds = map[string]int{pdp.KindExact: 0, pdp.KindBound: 0, pdp.KindEstimate: 0}
	rep.Kinds[kind] = len(diffs)
	for t := range rep.Top {
		rep.Top[t].Kind = kind
	}
	rep.DPEpsilon = dpEps
	if dpEps != nil {
		rep.DPNeighbours = "add/remove-one (AdaOPS, Wang's Proposition 17)"
	}
	res := &Result{Report: rep, IDs: ids, Diffs: diffs, Epsilons: rowEps}
	if test != nil {
		res.TargetDiffs, err = a.AddAll(test.X, test.Y)
		if err != nil {
			return nil, err
		}
		res.TargetIDs = rowNumbers(testIdx)
		res.TargetEpsilons = make([]float64, len(res.TargetDiffs))
		for t, df := range res.TargetDiffs {
			if res.TargetEpsilons[t], err = targetEps(test.X.RawRowView(t), test.Y[t], df); err != nil {
				return nil, err
			}
		}
		ts, err := pdp.Summarize(res.TargetEpsilons)
		if err != nil {
			return nil, err
		}
		rep.Targets = &ts
		rep.TargetKinds = map[string]int{kind: len(res.TargetDiffs)}
	}
	rep.Notes = append(notes, "sensitivities: ridge regression's one-step difference is the exact leave-one-out solution (its Hessian is constant)",
		"no replace-one epsilons for this release (the remove-one ones are Theorem 14's or the Gaussian's)")
	return res, nil
}

// identity returns the d x d identity.
func identity(d int) *mat.SymDense {
	a := mat.NewSymDense(d, nil)
	for j := range d {
		a.SetSym(j, j, 1)
	}
	return a
}
