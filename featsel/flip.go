package featsel

import (
	"fmt"
	"math"
)

// FlipProbability returns the probability that thresholding the noisy weight
// w + N at t gives a different decision than thresholding the true weight w:
//
//	|w| >  t:  P(|w + N| <= t)   (a selected feature is lost)
//	|w| <= t:  P(|w + N| >  t)   (a discarded feature is gained)
//
// where N is one coordinate of the noise. This is the quantity of the paper's
// Lemma 16 (flip probabilities in private feature selection), derived here
// exactly in our conventions; with a = |w|:
//
//	Laplace(b), a > t:   exp(-a/b) sinh(t/b)
//	Laplace(b), a <= t:  exp(-t/b) cosh(a/b)
//	Gaussian(sigma), a > t:   [erfc((a-t)/(sigma√2)) - erfc((a+t)/(sigma√2))]/2
//	Gaussian(sigma), a <= t:  [erfc((t-a)/(sigma√2)) + erfc((t+a)/(sigma√2))]/2
//	GammaNorm: the Gaussian lines with sigma = sqrt(V), averaged over
//	           V ~ Gamma((Dim+1)/2, scale 2 theta^2) (exact marginal, see
//	           NoiseModel.TailProb; computed by quadrature).
//
// In particular a zero weight flips with probability P(|N| > t), the rate q
// of a Dynamic threshold, and the Laplace lines are bounded by
// exp(-|a-t|/b), which decays with the distance of the weight to the threshold.
//
// The weight w is a true (noise-free) weight; the regularization that made
// it zero or not does not enter: the elastic net penalty
// Lambda*((1-L1Ratio)/2 ||w||^2 + L1Ratio ||w||_1), the paper's
// lambda*(gamma||w||^2 + eta||w||_1) with Lambda = lambda*(2gamma+eta) and
// L1Ratio = eta/(2gamma+eta), only shapes w.
//
// Errors wrap ErrInvalid (a non-finite w, a negative or non-finite t, an
// invalid noise model).
func FlipProbability(w, t float64, noise NoiseModel) (float64, error) {
	if err := checkWeights([]float64{w}, 1, 1); err != nil {
		return 0, err
	}
	return featureFlip([]float64{w}, t, noise)
}

// FeatureFlipProbability is FlipProbability for one feature of a K-row model
// under the "any class" rule of Select: col holds the K true weights of the
// feature (one per row). The feature is selected when some |col[k] + N_k| > t;
// the result is P(all K within t) if the true feature is selected and
// P(some row outside t) otherwise.
//
// It is exact for all three kinds: Laplace and Gaussian coordinates are
// independent, and gamma-norm coordinates are independent given the mixing
// variance V of its scale-mixture form (see NoiseModel.TailProb), so
//
//	P(all within) = E_V[ prod_k P(|col[k] + sqrt(V) G_k| <= t) ].
//
// For gamma-norm noise len(col) must not exceed Dim (ErrShape).
func FeatureFlipProbability(col []float64, t float64, noise NoiseModel) (float64, error) {
	if len(col) == 0 {
		return 0, fmt.Errorf("%w: feature with no weights", ErrShape)
	}
	if err := checkWeights(col, len(col), 1); err != nil {
		return 0, err
	}
	return featureFlip(col, t, noise)
}

func featureFlip(col []float64, t float64, noise NoiseModel) (float64, error) {
	if err := checkThreshold(t); err != nil {
		return 0, err
	}
	if err := noise.Validate(); err != nil {
		return 0, err
	}
	var mx mixture
	if noise.Kind == GammaNorm {
		if len(col) > noise.Dim {
			return 0, fmt.Errorf("%w: %d weights in a gamma-norm vector of dimension %d", ErrShape, len(col), noise.Dim)
		}
		mx = newMixture(noise.Dim, noise.Scale)
	}
	return flipWith(col, t, noise, mx), nil
}

// flipWith computes the flip probability of one feature; mx must be built
// for gamma-norm noise.
func flipWith(col []float64, t float64, noise NoiseModel, mx mixture) float64 {
	selected := false
	for _, v := range col {
		if math.Abs(v) > t {
			selected = true
			break
		}
	}
	// given returns the flip probability for independent coordinates of
	// scale sd (Laplace scale or Gaussian standard deviation).
	given := func(sd float64, lap bool) float64 {
		if selected {
			p := 1.0
			for _, v := range col {
				in, _ := coordProbs(math.Abs(v), t, sd, lap)
				p *= in
			}
			return p
		}
		// 1 - prod(1 - outside_k), without cancellation for small outsides.
		var l float64
		for _, v := range col {
			_, out := coordProbs(math.Abs(v), t, sd, lap)
			l += math.Log1p(-out)
		}
		return -math.Expm1(l)
	}
	switch noise.Kind {
	case Laplace:
		return given(noise.Scale, true)
	case Gaussian:
		return given(noise.Scale, false)
	default:
		return mx.expect(func(sd float64) float64 { return given(sd, false) })
	}
}

// ExpectedFlips returns the expected number of features of the K x D model w
// (true weights, row-major as in trainer.Model.W) whose "any class" decision
// at threshold t differs between w and a noisy release w + N: the sum over
// j of FeatureFlipProbability of column j. By linearity of expectation it is
// exact whatever the dependence between features (gamma-norm noise couples
// all coordinates).
//
// It costs O(K*D) for Laplace and Gaussian noise and O(K*D*513) for
// gamma-norm noise (quadrature nodes). Errors are those of Select and of
// NoiseModel.Validate, and ErrShape if gamma-norm noise has Dim < K*D (the
// noise vector must cover the whole model).
func ExpectedFlips(w []float64, k, d int, t float64, noise NoiseModel) (float64, error) {
	if err := checkWeights(w, k, d); err != nil {
		return 0, err
	}
	if err := checkThreshold(t); err != nil {
		return 0, err
	}
	if err := noise.Validate(); err != nil {
		return 0, err
	}
	var mx mixture
	if noise.Kind == GammaNorm {
		if k*d > noise.Dim {
			return 0, fmt.Errorf("%w: %d x %d model in a gamma-norm vector of dimension %d", ErrShape, k, d, noise.Dim)
		}
		mx = newMixture(noise.Dim, noise.Scale)
	}
	col := make([]float64, k)
	var sum float64
	for j := 0; j < d; j++ {
		for r := 0; r < k; r++ {
			col[r] = w[r*d+j]
		}
		sum += flipWith(col, t, noise, mx)
	}
	return sum, nil
}
