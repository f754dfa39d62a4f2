package perturb

import (
	crand "crypto/rand"
	"fmt"
	"math"
	"sync"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb/internal/exactgauss"
)

// Secure Gaussian noise.
//
// The secure source's AddGaussian releases, for each coordinate w_i,
//
//	M(w)_i = lambda round((w_i + sigma Z_i) / lambda),  Z_i ~ N(0, 1) exactly,
//
// with lambda = 2^e the lattice step of SecureGaussianLattice (2^-21 sigma
// < lambda <= 2^-20 sigma), written as the nearest float64 (exact while
// |M(w)_i| < 2^53 lambda). The law of the added noise M(w)_i - w_i is that
// of sigma Z_i rounded along with w_i: within lambda/2 of sigma Z_i, of
// variance sigma^2 plus about lambda^2/12.
//
// Why the release's (eps, delta) holds: w + sigma Z has exactly the law of
// the Gaussian mechanism with this sigma, and the rounding is a map fixed
// by sigma alone, so M is post-processing of it. Every (eps, delta) that
// calibration gives the Gaussian mechanism for a sensitivity (the classical
// bound, Balle & Wang's analytic one, or an accountant composing DP-SGD's
// steps, each of which is rounded before the next step reads it) holds for
// M exactly: the caller calibrates sigma as for the continuous mechanism,
// and no allowance for the lattice is needed, unlike a discrete Gaussian on
// a lattice (Canonne, Kamath & Steinke 2020), whose (eps, delta) differs
// from the continuous one. Z is drawn exactly and the rounding is exact
// integer arithmetic (package perturb/internal/exactgauss), so the
// floating-point attacks of Mironov (2012) do not apply. Timing side
// channels are not covered.
//
// Randomness: each sampler reads a ChaCha8 generator (math/rand/v2, a
// cryptographically strong generator) keyed by 32 bytes of crypto/rand
// when it is made; samplers are kept in a sync.Pool between calls, so a
// call costs no read of crypto/rand in the steady state.

// samplers holds the exact Gaussian samplers between calls, each with its
// own generator keyed from crypto/rand.
var samplers = sync.Pool{New: func() any {
	var key [32]byte
	// crypto/rand.Read does not return an error since Go 1.24: on failure
	// of the operating system's generator the program is terminated.
	_, _ = crand.Read(key[:])
	return exactgauss.New(key)
}}

// addGaussianSecure is the secure source's AddGaussian: see the comment
// at the top of this file.
func addGaussianSecure(w []float64, sigma float64) error {
	if !check.Positive(sigma) {
		return fmt.Errorf("%w: sigma = %v, want finite > 0", ErrScale, sigma)
	}
	if i := check.FirstNonFinite(w); i >= 0 {
		return fmt.Errorf("%w: value %d is %v: the secure Gaussian noise needs finite values", ErrModel, i, w[i])
	}
	s := samplers.Get().(*exactgauss.Sampler)
	i := s.AddSnapped(w, sigma)
	samplers.Put(s)
	// A value near the float64 range with a sigma near it can round past
	// it: refused rather than released as an infinity. The check reads
	// the noisy values only (post-processing of the exact draw); the
	// sampler reports it, sparing a second pass over w.
	if i >= 0 {
		return fmt.Errorf("%w: noisy value %d overflowed float64 at sigma = %v", ErrModel, i, sigma)
	}
	return nil
}

// SecureGaussianLattice returns the step of the lattice that the secure
// source's AddGaussian rounds to at sigma > 0: 2^(e-21) for sigma in
// [2^(e-1), 2^e).
func SecureGaussianLattice(sigma float64) float64 {
	return math.Ldexp(1, exactgauss.Lattice(sigma))
}

// Sentences of certificates on the secure Gaussian noise, one for each
// kind of release that draws it; each names the lattice by its rule
// (SecureGaussianLattice), so that it does not depend on the release.
const (
	// SecureGaussianNote is the note of an output perturbation with
	// Gaussian noise (gaussian, gaussian-analytic) by the secure source.
	SecureGaussianNote = "the Gaussian noise is drawn exactly (perturb's exact sampler: integer arithmetic on the bits of ChaCha8 keyed by crypto/rand) " +
		"and each noisy value is rounded to the nearest multiple of 2^(e-21) for sigma in [2^(e-1), 2^e), written as the nearest float64: " +
		"a rounding fixed in advance of an exact draw of the Gaussian mechanism is post-processing, so the floating-point attacks of Mironov (2012) do not apply " +
		"and the claim holds with no allowance for rounding; timing side channels are not covered"
	// SecureDPSGDNote is the note of a DP-SGD release by the secure source.
	SecureDPSGDNote = "the noise of every step is drawn by the secure source's exact Gaussian sampler (perturb.Secure) at standard deviation sigma C, " +
		"and each noisy sum is rounded to the nearest multiple of 2^(e-21) for sigma C in [2^(e-1), 2^e) before the step uses it: " +
		"post-processing of each step's exact Gaussian mechanism, so the accountant's eps holds with no allowance for rounding; " +
		"the sampling coins come from ChaCha8 keyed by 256 bits of crypto/rand"
	// SecureAMPNote is the note of an objective perturbation with Gaussian
	// noise (amp) by the secure source.
	SecureAMPNote = "b_1 and b_2 come from the secure source's exact Gaussian sampler, each coordinate rounded to the nearest multiple of 2^(e-21) for its sigma in [2^(e-1), 2^e): " +
		"the rounding of b_2 is post-processing, covered exactly; the objective part's proof is for the continuous law of b_1, " +
		"and the rounding of b_1 (at most 2^-21 sigma_1 a coordinate) is not covered"
	// SecurePCANote ends the note on private principal directions drawn
	// with the secure source.
	SecurePCANote = "; the noise came from the secure source's exact Gaussian sampler, each entry rounded to the nearest multiple of 2^(e-21) for sigma in [2^(e-1), 2^e): " +
		"post-processing of the exact Gaussian mechanism, covered with no allowance for rounding"
)

// FormerNote is a sentence (or the part of one) that certificates wrote
// for the secure Gaussian noise before the exact sampler (Then), when
// google/differential-privacy's binomial sampler drew it, and the one they
// write now (Now).
type FormerNote struct{ Now, Then string }

// FormerNotes lists the sentences of FormerNote: a verifier takes a file
// whose certificate has Then where the rebuilt one has Now as a release of
// that sampler.
var FormerNotes = []FormerNote{
	{SecureGaussianNote, secureSamplerNote},
	{SecureDPSGDNote, "the noise of every step is drawn by the secure Gaussian sampler of google/differential-privacy (perturb.Secure), at a standard deviation at least sigma C; the sampling coins come from ChaCha8 keyed by 256 bits of crypto/rand"},
	{SecureAMPNote, "b_1 and b_2 come from the secure Gaussian sampler of google/differential-privacy, a discretized approximation of N(0, sigma^2): the objective part's proof is for the exact Gaussian law, and the discretization of b_1 is not covered"},
	{SecurePCANote, "; the noise came from the secure Gaussian sampler of google/differential-privacy, a discretized approximation of N(0, sigma^2): the proof is for the exact Gaussian law, and the discretization is not covered"},
}
