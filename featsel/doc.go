// Package featsel does private feature selection from released (noisy)
// linear-model weights, following the private feature selection with the
// elastic net of Watson, Rozemberczki & Sarkar, "Stability Enhanced Privacy
// and Applications in Private SGD" (its Section on feature selection and its
// Lemma 16 on flip probabilities).
//
// The model is trained with the elastic-net penalty of docs/DESIGN.md
// (section 1),
//
//	R(w) = lambda * ((1-alpha)/2 ||w||^2 + alpha ||w||_1),  alpha = l1 ratio,
//
// which the paper writes lambda'(gamma ||w||^2 + eta ||w||_1); the two map by
// lambda = lambda'(2 gamma + eta), alpha = eta/(2 gamma + eta) (see
// regularizers.ElasticNet). The L1 part zeroes weights; output perturbation
// then makes every released weight non-zero, so a feature is kept when its
// released weight clears a threshold T:
//
//	feature j is selected  <=>  |w~_kj| > T for some row k
//
// (the "any class" rule for a K x D softmax model stored row-major as in
// trainer.Model.W; for K = 1 simply |w~_j| > T). T is Static (user value) or
// Dynamic: set from the noise scale alone so that a true-zero weight is
// selected with probability at most q (ThresholdSpec). A data-independent T
// makes the selection post-processing of the private release: it costs no
// privacy beyond the release's (eps, delta) certificate.
//
// The noise is described, not drawn, by a NoiseModel: the marginal law that
// the mechanism of the release provides (perturb.Noise.Marginal, a
// perturb/marginal.Law), so featsel never names a mechanism and a new
// mechanism needs no change here. Every law is a scale mixture with a shared
// scale: Laplace or Gaussian noise per coordinate has one scale, and
// gamma-norm "vector" noise, with density proportional to exp(-||z||/theta)
// in R^Dim, is the Gaussian scale mixture sqrt(V) N(0, I) with
// V ~ Gamma((Dim+1)/2, scale 2 theta^2), derived exactly in perturb and
// discretized by quadrature (TailProb).
//
// FlipProbability and FeatureFlipProbability give the probability that the
// noisy decision differs from the noise-free one (the paper's Lemma 16, in
// closed form for Laplace and Gaussian noise, by quadrature over V for
// gamma-norm noise, in general averaged over the law's shared scale); ExpectedFlips sums it over features. Compare measures a
// private selection against the non-private one (precision, recall, F1,
// Jaccard) and NewReport does all of it at once. The functions are
// deterministic; featsel never draws noise.
//
// Errors wrap ErrInvalid (NaN or infinite weights, negative T, a rate outside
// (0, 1), an invalid noise law) or ErrShape (a weight slice that is not
// K x D); no function panics on user data.
package featsel
