package pdp

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
)

// AnalysedMinimizer states what the pDP of a trained release is computed
// on. Reports of a model file carry it (ReleaseAnalysis.Weights).
const AnalysedMinimizer = "the released weights were trained by SGD (the certificate's run) and then perturbed; " +
	"this analysis is of the exact minimizer w_hat of the same regularized objective on the same training rows, " +
	"as if the release were w_hat plus noise at the certificate's noise scale: the pDP of that idealized release, not of the SGD iterate. " +
	"The distance from the published weights to w_hat is given as context only"

// NeighboursVersusCertificate states how the per-instance epsilons of a
// report relate to the certificate's epsilon. Reports of a model file carry
// it (ReleaseAnalysis.Neighbours).
const NeighboursVersusCertificate = "the per-instance epsilons are for add/remove-one neighbours (Z and Z without one row, as in Wang's paper); " +
	"the certificate's epsilon is for replace-one neighbours (two tables differing in one row). " +
	"The report gives each row's replace-one epsilon too (an upper bound over every replacement, see replace_relation): " +
	"the two kinds of epsilon answer different questions, and the remove-one ones are compared with the certificate here for orientation"

// Certified compares the per-instance epsilons of the rows with the
// certified epsilon of the release.
type Certified struct {
	// Epsilon and Delta are the certificate's claim (replace-one).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Below counts the rows whose per-instance epsilon is strictly below
	// Epsilon; ShareBelow is Below over the rows.
	Below      int     `json:"rows_below"`
	ShareBelow float64 `json:"share_below"`
	// Worst is the row with the largest per-instance epsilon (ties: the
	// smaller id), and WorstRatio its epsilon over Epsilon.
	Worst      Exposed `json:"worst_row"`
	WorstRatio float64 `json:"worst_to_certified"`
}

// CompareCertified returns the comparison of the per-instance epsilons eps
// (row i: ids[i], diffs[i], eps[i]) with the certified epsilon certEps > 0.
func CompareCertified(ids []int, diffs []Diff, eps []float64, certEps, certDelta float64) (Certified, error) {
	if len(ids) != len(diffs) || len(eps) != len(diffs) || len(eps) == 0 {
		return Certified{}, fmt.Errorf("%w: %d ids, %d differences, %d epsilons", ErrInput, len(ids), len(diffs), len(eps))
	}
	if !check.Positive(certEps) {
		return Certified{}, fmt.Errorf("%w: certified epsilon %v", ErrInput, certEps)
	}
	c := Certified{Epsilon: certEps, Delta: certDelta}
	for _, e := range eps {
		if math.IsNaN(e) {
			return Certified{}, fmt.Errorf("%w: NaN epsilon", ErrInput)
		}
		if e < certEps {
			c.Below++
		}
	}
	c.ShareBelow = float64(c.Below) / float64(len(eps))
	c.Worst = TopExposed(ids, diffs, eps, 1)[0]
	c.WorstRatio = c.Worst.Epsilon / certEps
	return c, nil
}

// ReleaseAnalysis is the part of a report that describes a release read
// from a model file (the train command's output) and compares the
// per-instance epsilons of its training rows with its certificate.
type ReleaseAnalysis struct {
	// ModelFile names the model file; Claim says what its certificate
	// claims (a private release, or no claim and why).
	ModelFile string `json:"model_file"`
	Claim     string `json:"claim"`
	// Route and Sensitivity are the certificate's sensitivity route and
	// its replace-one L2 sensitivity Delta.
	Route       string  `json:"sensitivity_route"`
	Sensitivity float64 `json:"certified_l2_sensitivity"`
	// Certified is the comparison of the rows with the certified epsilon.
	Certified Certified `json:"certified"`
	// RemoveOneBound is the data-independent bound on every row's
	// per-instance sensitivity of the exact minimizer, L/(n lambda), with
	// L = min(G, L_z kappa) the Lipschitz constant of the (clipped) loss;
	// RemoveOneEpsilon the mechanism's epsilon there.
	RemoveOneBound   float64 `json:"remove_one_bound"`
	RemoveOneEpsilon float64 `json:"remove_one_bound_epsilon"`
	// Weights is AnalysedMinimizer; ReleasedToExact = ||w~ - w_hat||_2,
	// the distance from the published weights to the exact minimizer,
	// with ExactNorm = ||w_hat||_2 and NoiseRMSNorm, the root mean square
	// norm of the mechanism's noise, for scale.
	Weights         string  `json:"weights"`
	ReleasedToExact float64 `json:"released_to_exact_l2"`
	ExactNorm       float64 `json:"exact_norm"`
	NoiseRMSNorm    float64 `json:"noise_rms_norm"`
	// Neighbours is NeighboursVersusCertificate.
	Neighbours string `json:"neighbours"`
	// NullRows counts the training rows whose label was not declared: the
	// zero vector, whose per-instance epsilon is 0.
	NullRows int `json:"null_rows"`
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
