// Package perturb is the noise of output perturbation: the noise laws, their
// calibration and the sources of randomness, on vectors of float64. It
// imports only package dp (the mechanism names and the budget), below the
// trainer: package release adds the noise to trained weights and writes the
// certificate.
//
// A release adds noise to the trained weights w, calibrated to a privacy
// target (eps, delta) and to the sensitivity of w (how far w can move when
// one training example is replaced), which the stability package derives
// from the training run (Watson, Rozemberczki & Sarkar, "Stability Enhanced
// Privacy and Applications in Private SGD").
//
// Neighbouring relation: every guarantee here is for replace-one
// neighbours: data sets S and S' of equal size that differ in one example.
//
// Mechanisms, with D2 and D1 the L2 and L1 sensitivities and d the number
// of released weights:
//
//	laplace            Lap(D1/eps) per coordinate, D1 = sqrt(d) D2 or a tighter L1 bound
//	                   pure eps-DP (Dwork, McSherry, Nissim & Smith 2006)
//	gamma              noise b with density ~ exp(-eps ||b|| / D2): ||b|| ~ Gamma(d, D2/eps),
//	                   uniform direction; pure eps-DP (Chaudhuri, Monteleoni & Sarwate 2011)
//	gaussian           N(0, sigma^2) per coordinate, sigma = D2 sqrt(2 ln(1.25/delta)) / eps;
//	                   (eps, delta)-DP for eps < 1 only (Dwork & Roth 2014, Theorem A.1)
//	gaussian-analytic  N(0, sigma^2) per coordinate, smallest sigma of the exact condition;
//	                   (eps, delta)-DP for every eps > 0 (Balle & Wang 2018, Theorem 8)
//
// Mechanisms are values. Their names are dp.Mechanism, what
// certificates, model files and the command line carry, so their formats do
// not change. The mechanism itself is a value in three roles, each a small
// interface: Noise (the budget check, the calibration, the sampler Add and
// the marginal law), Statement (the certificate's words) and Tuning (the
// noise norms and the inverse calibration); one file each (laplace.go,
// gamma.go, gaussian.go, analytic_gaussian.go), listed in the registry
// (registry.go). Lookup, LookupStatement and LookupTuning map a name to a
// role and refuse an unknown name with ErrMechanism, so no code path falls
// through to a default mechanism. Everything that used to switch on the name asks the
// value instead: the budget check, the calibration and its inverse, the
// sampler (Add), the certificate's words, notes and citation, the noise
// norms (for the automatic knobs of package private) and the marginal law
// of the released coordinates (package perturb/marginal, which private
// feature selection consumes, so featsel keeps no list of mechanisms). An
// interface rather than a table of functions, because a mechanism's
// methods share state (the classical Gaussian's eps < 1, the gamma sampler's
// lattice) and a test can wrap one to break it.
//
// Adding a mechanism: write one file with a type implementing the three
// roles (the
// shared helpers newCalibration, withScale, checkBudget and checkInverse do
// the common validation), add one line to the registry, and run the
// conformance kit (conformance_test.go here, and featsel's for the marginal
// law), which runs on every registered mechanism: registry, refusal of
// invalid budgets, calibration round trip, the released noise against its
// law and norms, a neighbour audit with a negative control, and the
// certificate. A mechanism that draws from a sampler the Source interface
// lacks also extends Source.
//
// Training-time mechanisms (training.go): objective perturbation
// ("objective") and Approximate Minima Perturbation ("amp") draw their
// noise before training and put it into the objective, so they cannot
// implement Noise: Add, the calibration to a sensitivity of the weights,
// the marginal law of the released coordinates and the expected noise norm
// would all be false for them. They are listed in a separate registry
// (LookupTraining, TrainingMechanisms) with their names, purity and words;
// ParseMechanism accepts them so one --mechanism flag covers both kinds,
// Lookup refuses them with a message naming package objpert, which
// implements them, and the certified pipeline (package private) routes
// them there. Keeping them out of the Noise registry keeps every consumer
// of Noise (featsel, the automatic knobs, the conformance kit) correct
// without a special case.
//
// Laplace noise is calibrated to the L1 sensitivity D1 = sqrt(d) D2, or a
// tighter L1 bound supplied with the sensitivity, never to D2 as in the
// paper, which is not eps-DP for d > 1 (docs/DESIGN.md, section 5).
//
// Add adds the noise of a calibration to a vector in place; a multiclass
// (softmax) model is released as one K x d matrix with one calibration
// (release.Weights), one-vs-rest models split the budget
// (release.OneVsRest). A guarantee covers one release of the trained
// weights, which Add cannot see: package release keeps it. The claim and
// its certificate (dp.Claim, release.Certificate) state the mechanism,
// (eps, delta), the sensitivity and its route, the noise scale, the
// neighbouring relation, the noise source and what is not covered; the
// words, notes and citation come from the mechanism's Statement.
//
// Randomness is injected through a Source: Secure for releases, and Seeded
// for reproducible experiments, whose certificates make no claim (Private
// false: the seed can be published); Seeded's source also fills blocks of
// standard normals (FillNormal, a ziggurat: ziggurat.go) for DP-SGD. Every secure mechanism resists
// floating-point attacks: Laplace noise is delegated to
// github.com/google/differential-privacy/go/v3; the Gaussian noise is
// drawn exactly (package perturb/internal/exactgauss, ChaCha8 keyed by
// crypto/rand) and the gamma-norm noise exactly from crypto/rand bits, both
// with integer arithmetic and snapped to a lattice fixed in advance, so
// that the release is post-processing of the exact mechanism (see
// securegauss.go and the Source method AddGammaNorm).
//
// Private selection: PermuteAndFlip chooses one of finitely many candidates
// with integer utilities by permute-and-flip (McKenna & Sheldon 2020), eps-DP
// and sampled exactly (a Fisher-Yates order from exact uniform integers,
// coins Bernoulli(exp(-gamma)) for rational gamma after Canonne, Kamath &
// Steinke 2020, Section 5.1); package stump uses it, and PermuteAndFlipLaw
// gives its output law for tests.
//
// EpsilonForScale inverts the calibration: the eps a given noise scale buys
// for a given sensitivity, so that the privacy gain of a smaller stability
// bound at fixed noise can be reported.
package perturb
