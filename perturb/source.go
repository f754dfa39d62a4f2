package perturb

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/google/differential-privacy/go/v3/noise"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Source kinds recorded in a Certificate.
const (
	// SourceSecure is the kind of the source returned by Secure.
	SourceSecure = "secure"
	// SourceSeeded is the kind of the source returned by Seeded.
	SourceSeeded = "seeded: not for release"
)

// Source supplies the randomness of a release. It is injected through
// ReleaseConfig, never taken from a global.
//
// Uniform and Normal are the base draws of the float64 samplers SampleGamma
// and SampleUnitVector. AddLaplace, AddGaussian and AddGammaNorm add noise to
// a vector in place; they are separate methods so that the secure source can
// use samplers that resist floating-point attacks.
type Source interface {
	// Uniform returns a draw from the uniform distribution on (0, 1).
	Uniform() float64
	// Normal returns a draw from the standard normal distribution.
	Normal() float64
	// AddLaplace adds to every w[i] an independent draw of Laplace noise of
	// scale l1/eps, where l1 > 0 is the L1 sensitivity and eps > 0.
	AddLaplace(w []float64, l1, eps float64) error
	// AddGaussian adds to every w[i] an independent draw of N(0, sigma^2),
	// sigma > 0.
	AddGaussian(w []float64, sigma float64) error
	// AddGammaNorm adds to w a noise vector of the gamma-norm mechanism,
	// with density proportional to exp(-eps ||b||_2 / l2) (its norm is
	// Gamma(len(w), l2/eps), its direction uniform), where l2 > 0 is the L2
	// sensitivity and eps > 0.
	AddGammaNorm(w []float64, l2, eps float64) error
	// Kind describes the source for a certificate: SourceSecure,
	// SourceSeeded, or a description of a caller-supplied source.
	Kind() string
}

// cryptoBits is a math/rand/v2 Source reading crypto/rand. It is stateless,
// hence safe for concurrent use.
type cryptoBits struct{}

func (cryptoBits) Uint64() uint64 {
	var b [8]byte
	// crypto/rand.Read does not return an error since Go 1.24: on failure
	// of the operating system's generator the program is terminated.
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// secureSource is the Source returned by Secure.
type secureSource struct {
	r *rand.Rand
}

// Secure returns a cryptographically secure Source, safe for concurrent use.
//
// What is delegated to github.com/google/differential-privacy/go/v3/noise:
//
//   - AddLaplace calls noise.Laplace().AddNoiseFloat64(x, 1, l1, eps, 0),
//     that is l0 sensitivity 1 and lInf sensitivity l1, so its scale is
//     l1/eps. The library's geometric sampler on a power-of-two grid (with the
//     input rounded to the grid and the sensitivity enlarged by the grid step)
//     resists floating-point attacks on the Laplace mechanism. That library
//     refuses eps < 2^-50; AddLaplace then returns an error wrapping ErrSource.
//
// What is not delegated: AddGaussian draws every coordinate's noise
// exactly from N(0, sigma^2), with integer arithmetic on the bits of a
// ChaCha8 generator keyed by 32 bytes of crypto/rand, and rounds the noisy
// value to a power-of-two lattice (step about 2^-21 sigma): the release is
// post-processing of the exact Gaussian mechanism, so its (eps, delta)
// holds with no allowance for rounding (see securegauss.go and package
// perturb/internal/exactgauss). It costs a few times math/rand/v2's
// NormFloat64 per coordinate (BenchmarkSecureAddGaussian_D*); the
// delegated Laplace sampler reads crypto/rand for every coordinate, which
// makes it far slower per weight than Seeded
// (BenchmarkReleaseLaplaceSecure_D10000).
//
// AddGammaNorm samples the gamma-norm noise exactly from crypto/rand bits,
// with integer arithmetic only, and snaps each released weight to a
// power-of-two lattice (step about 2^-20 of the noise scale l2/eps); the
// result is exactly eps-DP, with no allowance for
// floating-point rounding, and floating-point attacks (Mironov 2012) do not
// apply. See the comment at the top of securegamma.go for the mechanism and
// the proof. BenchmarkSecureGammaNorm_D* measures its cost per weight,
// BenchmarkSeededGammaNorm_D330 that of the float64 sampler.
// Uniform and Normal come from math/rand/v2 driven by crypto/rand bits; they
// are used by SampleGamma and SampleUnitVector, not by the releases.
func Secure() Source { return secureSource{r: rand.New(cryptoBits{})} }

func (s secureSource) Uniform() float64 { return openUniform(s.r) }
func (s secureSource) Normal() float64  { return s.r.NormFloat64() }
func (secureSource) Kind() string       { return SourceSecure }

func (secureSource) AddLaplace(w []float64, l1, eps float64) error {
	if err := checkScaleArgs(l1, eps); err != nil {
		return err
	}
	lap := noise.Laplace()
	for i, x := range w {
		y, err := lap.AddNoiseFloat64(x, 1, l1, eps, 0)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSource, err)
		}
		w[i] = y
	}
	return nil
}

// Reference parameters through which a target sigma was passed to
// noise.Gaussian(), the secure Gaussian sampler before the exact one
// (securegauss.go): Lattice and TailNorm still cover the releases it made.
const (
	refEpsilon = 1.0
	refDelta   = 1e-5
)

// googleLInf returns the lInf sensitivity with which noise.Gaussian() at the
// reference parameters draws with a standard deviation of at least sigma,
// and that standard deviation.
func googleLInf(sigma float64) (lInf, used float64, err error) {
	ref := noise.SigmaForGaussian(1, 1, refEpsilon, refDelta)
	lInf = sigma / ref
	for i := 0; i < 16; i++ {
		if math.IsNaN(lInf) || math.IsInf(lInf, 0) || lInf <= 0 {
			break
		}
		used = noise.SigmaForGaussian(1, lInf, refEpsilon, refDelta)
		if used >= sigma {
			return lInf, used, nil
		}
		lInf *= sigma / used * (1 + 1e-12)
	}
	return 0, 0, fmt.Errorf("%w: cannot map sigma = %v onto the secure Gaussian sampler", ErrSource, sigma)
}

// AddGaussian adds exact N(0, sigma^2) noise to every w[i] and rounds the
// result to the lattice of step 2^exactgauss.Lattice(sigma): see
// securegauss.go.
func (secureSource) AddGaussian(w []float64, sigma float64) error {
	return addGaussianSecure(w, sigma)
}

// AddGammaNorm draws the gamma-norm noise exactly and snaps the result to a
// lattice: see addGammaNormSecure.
func (secureSource) AddGammaNorm(w []float64, l2, eps float64) error {
	return addGammaNormSecure(w, l2, eps, crand.Reader)
}

// seededSource is the Source returned by Seeded.
type seededSource struct {
	r    *rand.Rand
	seed uint64
	zig  *pcg // FillNormal's generator (rand.NewPCG's stream), made on first use
}

// Seeded returns a reproducible Source driven by a math/rand/v2 PCG generator
// seeded with seed. It is for experiments and tests: its noise can be
// recomputed by anyone who knows the seed, so a certificate of a release
// made with it says "seeded: not for release". It is not safe for
// concurrent use.
//
// Its source also has the method FillNormal(z []float64), which sets
// every z[i] to a standard normal draw from a stream of its own (the
// ziggurat of ziggurat.go on a PCG generator seeded apart), in about 0.6
// of NormFloat64's time a draw: DP-SGD (package trainer) draws its noise
// with it. The other methods never read that stream.
func Seeded(seed uint64) Source {
	return &seededSource{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), seed: seed}
}

// normalSalt keys FillNormal's stream apart from the other streams of a
// seed (such as DP-SGD's sampling coins).
const normalSalt = 0x7a69_6767_7572_6174 // "ziggurat"

// FillNormal sets every z[i] to an independent standard normal draw (see
// Seeded).
func (s *seededSource) FillNormal(z []float64) {
	if s.zig == nil {
		s.zig = &pcg{s.seed, normalSalt}
	}
	zigFill(s.zig, z)
}

func (s *seededSource) Uniform() float64 { return openUniform(s.r) }
func (s *seededSource) Normal() float64  { return s.r.NormFloat64() }
func (*seededSource) Kind() string       { return SourceSeeded }

func (s *seededSource) AddLaplace(w []float64, l1, eps float64) error {
	if err := checkScaleArgs(l1, eps); err != nil {
		return err
	}
	b := l1 / eps
	for i := range w {
		w[i] += b * laplaceDraw(s)
	}
	return nil
}

func (s *seededSource) AddGaussian(w []float64, sigma float64) error {
	if !check.Positive(sigma) {
		return fmt.Errorf("%w: sigma = %v, want finite > 0", ErrScale, sigma)
	}
	for i := range w {
		w[i] += sigma * s.r.NormFloat64()
	}
	return nil
}

// AddGammaNorm draws the gamma-norm noise in float64 arithmetic
// (SampleGamma and SampleUnitVector), which is not protected against
// floating-point attacks; seeded releases are not private anyway.
func (s *seededSource) AddGammaNorm(w []float64, l2, eps float64) error {
	return addGammaNormFloat(s, w, l2, eps)
}

// laplaceDraw returns a standard Laplace draw (scale 1) from two uniforms:
// an exponential magnitude and a random sign.
func laplaceDraw(src Source) float64 {
	e := -math.Log(src.Uniform())
	if src.Uniform() < 0.5 {
		return -e
	}
	return e
}

func checkScaleArgs(l1, eps float64) error {
	if !check.Positive(l1) {
		return fmt.Errorf("%w: L1 sensitivity = %v, want finite > 0", ErrSensitivity, l1)
	}
	if !check.Positive(eps) {
		return fmt.Errorf("%w: eps = %v, want finite > 0", ErrEpsilon, eps)
	}
	return nil
}

// openUniform returns a uniform draw from (0, 1).
func openUniform(r *rand.Rand) float64 {
	for {
		if u := r.Float64(); u > 0 {
			return u
		}
	}
}

// SampleGamma returns a draw from the Gamma distribution with the given
// shape > 0 and scale > 0 (mean shape*scale), by the method of Marsaglia and
// Tsang (2000), with the boost Gamma(a) = Gamma(a+1) * U^(1/a) for a < 1.
// It returns NaN for a shape or scale that is not finite and > 0.
func SampleGamma(src Source, shape, scale float64) float64 {
	if !check.Positive(shape) || !check.Positive(scale) {
		return math.NaN()
	}
	if shape < 1 {
		return SampleGamma(src, shape+1, scale) * math.Pow(src.Uniform(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := src.Normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := src.Uniform()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v * scale
		}
	}
}

// SampleUnitVector fills dst with a draw from the uniform distribution on
// the unit sphere of R^len(dst): independent standard normals, normalized.
// It does nothing for an empty dst.
func SampleUnitVector(src Source, dst []float64) {
	if len(dst) == 0 {
		return
	}
	for {
		var sq float64
		for i := range dst {
			z := src.Normal()
			dst[i] = z
			sq += z * z
		}
		if sq > 0 && !math.IsInf(sq, 0) {
			n := math.Sqrt(sq)
			for i := range dst {
				dst[i] /= n
			}
			return
		}
	}
}

// SourceName returns the Source field of a certificate for src:
// SourceSecure and SourceSeeded for this package's sources (by their type,
// not by what Kind says), "custom: " and the Kind of any other.
func SourceName(src Source) string {
	switch src.(type) {
	case secureSource, *seededSource:
		return src.Kind()
	}
	return "custom: " + src.Kind()
}

// NoiseSeed returns the seed of a source made by Seeded, which a
// certificate of its release publishes, and nil for every other source.
func NoiseSeed(src Source) *uint64 {
	if s, ok := src.(*seededSource); ok {
		seed := s.seed
		return &seed
	}
	return nil
}
