package featsel

import (
	"fmt"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// NoiseOf returns the law of the noise that the release whose claim is c
// (a certificate's dp.Claim)
// added to every weight: the marginal law (perturb.Noise.Marginal) of its
// output-perturbation mechanism at the certificate's noise scale and
// dimension. The certificate is public, so a threshold set from the law
// (Dynamic) keeps the selection post-processing of the release. A release
// whose noise is not added to the weights (objective perturbation, AMP, a
// decision stump), a nil certificate or a law the scale does not make is an error
// wrapping ErrInvalid.
func NoiseOf(c *dp.Claim) (NoiseModel, error) {
	if c == nil {
		return NoiseModel{}, fmt.Errorf("%w: no certificate (a non-private fit has no noise)", ErrInvalid)
	}
	n, err := perturb.Lookup(c.Mechanism)
	if err != nil {
		return NoiseModel{}, fmt.Errorf("%w: mechanism %s adds no noise to the weights; release by output perturbation (%s)", ErrInvalid, c.Mechanism, perturb.MechanismList())
	}
	law, err := n.Marginal(perturb.Calibration{
		Mechanism: c.Mechanism, Epsilon: c.Epsilon, Delta: c.Delta, Dim: c.Dim,
		L2: c.L2Sensitivity, L1: c.L1Sensitivity, Scale: c.NoiseScale,
	})
	if err != nil {
		return NoiseModel{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return law, nil
}

// WithoutBias returns the K x (D-1) weights of the K x D row-major weights
// w (trainer.Model.W) without their last column, the bias input of a
// released model (modelfile: the feature map's last input is the bias),
// which is not a candidate feature. Errors wrap ErrShape (len(w) != k*d,
// k < 1 or d < 1).
func WithoutBias(w []float64, k, d int) ([]float64, error) {
	if k < 1 || d < 1 || len(w) != k*d {
		return nil, fmt.Errorf("%w: %d weights for a %d x %d model with a bias column", ErrShape, len(w), k, d)
	}
	out := make([]float64, 0, k*(d-1))
	for r := range k {
		out = append(out, w[r*d:(r+1)*d-1]...)
	}
	return out, nil
}

// SelectReleased selects the features of a released model: w holds its
// K x D row-major weights with the bias last (trainer.Model.W of a
// modelfile.Released), c its certificate. It reads the noise law from c
// (NoiseOf), resolves spec for K rows, drops the bias (WithoutBias) and
// applies Select; it returns the selected features (indices among the D-1
// inputs before the bias) and the threshold T. Every step reads public
// values, so the selection is post-processing of the release. Errors are
// those of the steps.
//
// The release must be an output perturbation (NoiseOf): name its
// mechanism, private.Options.Mechanism = perturb.Gamma say. A private fit
// with only a budget and classes (private.FitMatrix, FitRows, or Fit with
// Options.Select) lets the public rule choose the setting, which may be
// objective perturbation: its noise is not added to the weights, and
// SelectReleased refuses it ("adds no noise to the weights").
func SelectReleased(w []float64, k, d int, c *dp.Claim, spec ThresholdSpec) (idx []int, t float64, err error) {
	law, err := NoiseOf(c)
	if err != nil {
		return nil, 0, err
	}
	if t, err = spec.Resolve(law, k); err != nil {
		return nil, 0, err
	}
	v, err := WithoutBias(w, k, d)
	if err != nil {
		return nil, 0, err
	}
	idx, _, err = Select(v, k, d-1, t)
	return idx, t, err
}
