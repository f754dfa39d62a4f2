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
//	gamma-norm: the Gaussian lines with sigma = sqrt(V), averaged over
//	           V ~ Gamma((Dim+1)/2, scale 2 theta^2) (exact marginal, see
//	           TailProb; computed by quadrature).
//
// In general: the lines of the law's coordinate family at scale S, averaged
// over the law's shared scale S (NoiseModel).
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
// invalid noise law).
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
// It is exact for every law: the coordinates are independent given the
// law's shared scale S (Laplace and Gaussian coordinates are independent;
// gamma-norm coordinates are independent given the mixing variance V of its
// scale-mixture form, see NoiseModel), so
//
//	P(all within) = E_S[ prod_k P(|col[k] + S X_k| <= t) ].
//
// For a law with several scales (gamma-norm noise) len(col) must not exceed
// Dim (ErrShape).
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
	if err := checkNoise(noise); err != nil {
		return 0, err
	}
	if err := checkGroup(noise, len(col), fmt.Sprintf("%d weights", len(col))); err != nil {
		return 0, err
	}
	return flipWith(col, t, noise), nil
}

// flipWith computes the flip probability of one feature: the probability
// given the shared scale S, where the coordinates are independent, averaged
// over S.
func flipWith(col []float64, t float64, noise NoiseModel) float64 {
	selected := false
	for _, v := range col {
		if math.Abs(v) > t {
			selected = true
			break
		}
	}
	given := func(sd float64) float64 {
		if selected {
			p := 1.0
			for _, v := range col {
				in, _ := coordProbs(math.Abs(v), t, sd, noise.Coord)
				p *= in
			}
			return p
		}
		// 1 - prod(1 - outside_k), without cancellation for small outsides.
		var l float64
		for _, v := range col {
			_, out := coordProbs(math.Abs(v), t, sd, noise.Coord)
			l += math.Log1p(-out)
		}
		return -math.Expm1(l)
	}
	return noise.Expect(given)
}

// ExpectedFlips returns the expected number of features of the K x D model w
// (true weights, row-major as in trainer.Model.W) whose "any class" decision
// at threshold t differs between w and a noisy release w + N: the sum over
// j of FeatureFlipProbability of column j. By linearity of expectation it is
// exact whatever the dependence between features (gamma-norm noise couples
// all coordinates).
//
// It costs O(K*D) times the number of scales of the law: one for Laplace
// and Gaussian noise, 513 quadrature nodes for gamma-norm noise. Errors are
// those of Select, ErrInvalid for an invalid law, and ErrShape if a law with
// several scales has Dim < K*D (the noise vector must cover the whole
// model).
func ExpectedFlips(w []float64, k, d int, t float64, noise NoiseModel) (float64, error) {
	if err := checkWeights(w, k, d); err != nil {
		return 0, err
	}
	if err := checkThreshold(t); err != nil {
		return 0, err
	}
	if err := checkNoise(noise); err != nil {
		return 0, err
	}
	if err := checkGroup(noise, k*d, fmt.Sprintf("%d x %d model", k, d)); err != nil {
		return 0, err
	}
	col := make([]float64, k)
	var sum float64
	for j := 0; j < d; j++ {
		for r := 0; r < k; r++ {
			col[r] = w[r*d+j]
		}
		sum += flipWith(col, t, noise)
	}
	return sum, nil
}
