package report

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// Publishable returns the public constants of the analysed release and the
// gradient norm of every training row (in the order of r.IDs), or an error
// wrapping pdp.ErrNotPublishable when the release has no data-independent
// bound on a row's contribution.
func (r *Result) Publishable() (*pdp.Publishable, error) {
	if r.a == nil {
		return nil, fmt.Errorf("%w: the result holds no analysis (build it with Simulate or AnalyzeRelease)", pdp.ErrNotPublishable)
	}
	if r.publicErr != nil {
		return nil, fmt.Errorf("%w: %w", pdp.ErrNotPublishable, r.publicErr)
	}
	pc := *r.public
	pc.Tolerance = r.a.Tolerance()
	if err := pc.Check(); err != nil {
		return nil, err
	}
	return &pdp.Publishable{Public: pc, GradNorms: r.a.GradNorms()}, nil
}

// labelDomain returns the domain of the loss constants for rows bounded by
// kappa and, with labelBound > 0, regression labels clipped into
// [-labelBound, labelBound]: then the minimizers of J satisfy
// (n lambda/2)||w_hat||^2 <= J(w_hat) <= J(0) <= n B^2/2 for a loss bounded
// by its label bound at w = 0 (the squared loss), for Z and every
// neighbour: ||w_hat|| <= B/sqrt(lambda).
func labelDomain(kappa, labelBound, lambda float64, classes int) losses.Domain {
	dom := losses.Domain{Kappa: kappa, Classes: classes}
	if labelBound > 0 && lambda > 0 {
		dom.Radius, dom.LabelBound = labelBound/math.Sqrt(lambda), labelBound
	}
	return dom
}

// newPublicConstants returns the public constants of a release of the
// minimizer of J with the loss on the domain dom (its row bound enforced
// by clipping), per-example clipping at clip > 0 (0: none), on n rows.
func newPublicConstants(loss losses.Loss, dom losses.Domain, clip, lambda float64, n, dim int, m pdp.PrivacyLoss) (*pdp.PublicConstants, error) {
	c, err := loss.Constants(dom)
	if err != nil {
		return nil, fmt.Errorf("the %s loss has no Lipschitz constant on this domain (a squared loss needs a label bound): %w", loss.Name(), err)
	}
	lip := c.Lz * dom.Kappa
	if clip > 0 {
		// The clamped derivative is still S_z-Lipschitz in the margin.
		lip = math.Min(lip, clip)
	}
	pc := &pdp.PublicConstants{N: n, Lambda: lambda, Lipschitz: lip, Smoothness: c.Sz * dom.Kappa * dom.Kappa, Noise: m, Dim: dim}
	return pc, pc.Check()
}

// publicConstants returns the public constants of a simulated release on
// n rows bounded by kappa, or why there are none: rows kept as they are
// (no standardization, no bias) have a bound kappa that is assumed, not
// enforced by clipping, so one row's influence has no data-independent
// bound.
func (sim *Simulation) publicConstants(kappa float64, classes, n, dim int, m pdp.PrivacyLoss) (*pdp.PublicConstants, error) {
	if !sim.Bias && !sim.Standardize {
		return nil, fmt.Errorf("the rows are kept as they are (no standardization, no bias): their bound kappa = %g is assumed, not enforced", kappa)
	}
	pc, err := newPublicConstants(sim.Loss, labelDomain(kappa, sim.LabelBound, sim.Lambda, classes), 0, sim.Lambda, n, dim, m)
	if err != nil {
		return nil, err
	}
	if sim.Standardize {
		pc.NotCovered = append(pc.NotCovered, standardizedNote)
	}
	return pc, nil
}

// standardizedNote is what a summary's claim does not cover when the
// features were standardized with statistics of the training rows.
const standardizedNote = "the features were standardized with statistics of the training rows: replacing a row changes them, and so every row, which the claim does not cover (it holds for the standardized rows)"

// bindingOf returns the binding of a model file's release.
func bindingOf(c *release.Certificate) *pdp.Binding {
	return &pdp.Binding{WeightsSHA256: c.WeightsSHA256, Epsilon: c.Epsilon, Delta: c.Delta}
}

// ModelConstants returns the public constants of the release of a model
// file from the file alone (no rows), bound to it (pdp.Binding): what a
// summary of its per-instance epsilons must state, but the solver's
// tolerance, which is the analysis's (zero here). It is an error wrapping
// pdp.ErrNotPublishable when the release has no data-independent bound on a
// row's contribution, ErrInput when the objective cannot be rebuilt.
func ModelConstants(r *modelfile.Released) (*pdp.PublicConstants, error) {
	if r == nil || r.Certificate == nil || r.Certificate.Run == nil {
		return nil, fmt.Errorf("%w: a model file without a certificate or run record", pdp.ErrInput)
	}
	c := r.Certificate
	cfg, _, _, err := releaseObjective(r)
	if err != nil {
		return nil, err
	}
	m, err := pdp.NewPrivacyLoss(c.Mechanism, c.NoiseScale, c.Delta)
	if err != nil {
		return nil, err
	}
	pc, err := releasePublicConstants(cfg, c.Run, c.Run.N, c.Dim, m, r.Preprocessing.Mode.Inside())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pdp.ErrNotPublishable, err)
	}
	pc.Binding = bindingOf(c)
	return pc, nil
}

// releasePublicConstants returns the public constants of the release of a
// model file: the objective cfg the run optimized (releaseObjective), its
// run record, and whether the preprocessing was fitted inside the
// privacy boundary (inside) or on the training rows.
func releasePublicConstants(cfg pdp.Config, run *trainer.Run, n, dim int, m pdp.PrivacyLoss, inside bool) (*pdp.PublicConstants, error) {
	dom := labelDomain(run.Kappa, run.LabelBound, run.Lambda, cfg.Classes)
	pc, err := newPublicConstants(cfg.Loss, dom, cfg.Clip, run.Lambda, n, dim, m)
	if err != nil {
		return nil, err
	}
	if !inside {
		pc.NotCovered = append(pc.NotCovered, standardizedNote)
	}
	return pc, nil
}
