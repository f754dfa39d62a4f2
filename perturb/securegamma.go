package perturb

import (
	"fmt"
	"io"
	"math"
	"math/big"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Secure gamma-norm release.
//
// The gamma-norm ("vector") mechanism of Chaudhuri, Monteleoni & Sarwate
// (2011), "Differentially private empirical risk minimization", JMLR 12,
// Section 3 (output perturbation, Algorithm 1, Theorem 6), releases w + N
// with N of density proportional to exp(-||n||_2 / theta), theta = D2/eps.
// Sampled in float64 it is open to the attacks of Mironov (2012), "On
// significance of the least significant bits for differential privacy",
// CCS, Section 4: the floats that x + N can take, and how often, depend on
// x through the rounding of the sampler's arithmetic, so the low-order bits
// of one output can tell neighbouring inputs apart with far more confidence
// than eps allows. Mironov's remedy (Section 5, the snapping mechanism)
// rounds the output to a power-of-two grid and proves a slightly larger eps
// under assumptions on the floating-point library. The release below
// removes floating-point arithmetic from the claim altogether.
//
// Mechanism. Let lambda = 2^e be the lattice step of gammaLattice (about
// 2^-20 theta). The release is
//
//	M(w) = R(w + N),   R(x)_i = lambda * round(x_i / lambda),
//
// with N exactly of density c exp(-||n|| / theta) on R^d and round to the
// nearest integer (ties, of probability 0, to the larger). Each lattice
// point lambda*k is then written as the float64 nearest to it (exact when
// |k| < 2^53).
//
// Claim: M is eps-DP for replace-one neighbours whenever
// ||w_S - w_S'||_2 <= D2, with eps = D2/theta exactly as given (no
// allowance for rounding). Proof: for any set B of outputs, let
// A = R^{-1}(B) be the points of R^d that the fixed map R sends into B.
// Then P(M(w) in B) = P(w + N in A) = int_A c exp(-||x - w||/theta) dx, and
// exp(-||x - w||/theta) <= exp(||w - w'||/theta) exp(-||x - w'||/theta) by
// the triangle inequality, so P(M(w) in B) <= exp(eps) P(M(w') in B)
// (Chaudhuri, Monteleoni & Sarwate, Theorem 6). R, the conversion to
// float64 and the choice of lambda depend on public parameters only, so
// they are post-processing. The claim therefore holds exactly if the
// sampler below produces R(w + N) with exactly the law of the ideal
// mechanism, which it does: every step is an exact sampler or exact integer
// arithmetic, and no step rounds.
//
// Exact sampling. N is drawn as a Gaussian scale mixture,
//
//	N = theta sqrt(T) G,  G ~ N(0, I_d),  T ~ Gamma((d+1)/2, scale 2),
//
// independent. Indeed, with s = theta^2 T ~ Gamma((d+1)/2, scale 2 theta^2),
// the density of sqrt(s) G at n is proportional to
// int_0^inf s^(-d/2) exp(-||n||^2/(2s)) s^((d-1)/2) exp(-s/(2 theta^2)) ds
// = int_0^inf s^(-1/2) exp(-A/s - B s) ds with A = ||n||^2/2 and
// B = 1/(2 theta^2), and int_0^inf s^(-1/2) exp(-A/s - B s) ds =
// sqrt(pi/B) exp(-2 sqrt(A B)) = sqrt(pi/B) exp(-||n||/theta). (This is the
// multivariate form of the representation of the Laplace law as a normal
// scale mixture; Andrews & Mallows 1974.) T is 2(E_1 + ... + E_m), plus
// G_0^2 when d is even, with m = floor((d+1)/2), E_j standard exponential
// and G_0 standard normal: Gamma(m, 2) and Gamma(1/2, 2) = chi-square(1).
// Every G_i, E_j and G_0 comes from the exact samplers of exact.go
// (Karney 2016, Algorithm N; von Neumann's exponential), driven by
// crypto/rand for the secure source: an integer part and a fraction whose
// words are drawn on demand. Canonne, Kamath & Steinke (2020), "The
// Discrete Gaussian for Differential Privacy", Section 5, take the same
// exact route to discrete Laplace and Gaussian noise with rational
// parameters; a product of such discrete proposals for exp(-a ||v||) on
// Z^d would be exact too, but its acceptance rate decays exponentially in
// d, while the mixture above costs O(d) exact deviates.
//
// Exact rounding. With p bits of every fraction drawn, each deviate is known
// to lie in an interval of width 2^-p with dyadic ends; D2, eps, w_i and
// lambda are dyadic rationals (float64 values). Integer interval arithmetic
// (sums, products, floor and ceiling square roots, floor division; never a
// rounded operation) gives an interval [lo, hi] that contains
// (w_i + N_i)/lambda. If floor(lo + 1/2) = floor(hi + 1/2), that integer is
// round((w_i + N_i)/lambda), because floor(x + 1/2) is monotone; otherwise
// p is doubled by drawing more words, which by the property of the lazy
// fractions leaves the law unchanged. This is the interval refining of
// Haney et al. (2022), "Precision-based attacks and interval refining",
// applied to a d-dimensional law. With p = 64 to start, the interval of
// (w_i + N_i)/lambda is about 2^-42 sqrt(d) wide, so the first pass settles
// a coordinate except with probability of that order, and the cost is that
// of the d + m + 1 exact deviates and a few big-integer products per
// coordinate (BenchmarkSecureGammaNorm_D* measures it per weight).
//
// Not covered: the running time varies (rejection loops, rare refinements),
// and a timing side channel is outside the claim, as it is for the
// delegated Laplace and Gaussian samplers.

// gammaLatticeBits is how far below the noise scale theta the lattice step
// lies: lambda = 2^(e - gammaLatticeBits - 1) for theta in [2^(e-1), 2^e),
// so that 2^-21 theta < lambda <= 2^-20 theta (theta as rounded to float64;
// lambda plays no part in the privacy claim). The step moves each
// coordinate by at most lambda/2, against a noise standard deviation of
// theta sqrt(d+1) per coordinate.
const gammaLatticeBits = 20

// gammaLattice returns the exponent e of the lattice step lambda = 2^e for
// the gamma-norm noise with L2 sensitivity l2 and privacy parameter eps, or
// an error if theta = l2/eps is not a finite positive float64. The step
// depends on these public parameters only.
func gammaLattice(l2, eps float64) (int, error) {
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return 0, err
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	theta := l2 / eps
	if !check.Positive(theta) {
		return 0, fmt.Errorf("%w: theta = l2/eps = %v/%v is not a finite positive float64", ErrScale, l2, eps)
	}
	_, e := math.Frexp(theta) // theta in [2^(e-1), 2^e)
	return e - gammaLatticeBits - 1, nil
}

// secureGammaNote returns the sentence a certificate lists for a gamma-norm
// release by the secure source in dimension dim, with L2 sensitivity l2 and
// privacy parameter eps.
func secureGammaNote(dim int, l2, eps float64) string {
	e, err := gammaLattice(l2, eps)
	if err != nil {
		return "the gamma-norm noise could not be calibrated: " + err.Error()
	}
	return fmt.Sprintf("the gamma-norm noise is sampled exactly, without floating-point arithmetic "+
		"(Karney's exact normal and von Neumann's exact exponential deviates from crypto/rand bits, "+
		"combined as a Gaussian scale mixture by exact integer interval arithmetic), and each of the %d "+
		"released weights is the multiple of the lattice step lambda = 2^%d (about 2^-20 of theta = %g) "+
		"nearest to the exact noisy weight, written as the nearest float64: a rounding fixed in advance of "+
		"an exact draw is post-processing, so the floating-point attacks of Mironov (2012) do not apply and "+
		"eps = %g holds exactly, with no allowance for rounding; timing side channels are not covered",
		dim, e, l2/eps, eps)
}

// addGammaNormSecure adds the gamma-norm noise of L2 sensitivity l2 and
// privacy parameter eps to w, snapped to the lattice of gammaLattice, with
// every random bit read from r (crypto/rand for the secure source). See the
// comment at the top of this file for the mechanism and the proof.
func addGammaNormSecure(w []float64, l2, eps float64, r io.Reader) error {
	return addGammaNormExact(w, l2, eps, r, 64, gammaLatticeBits)
}

// addGammaNormExact is addGammaNormSecure with the first pass at p0 >= 1
// bits of every fraction and the lattice step 2^-latticeBits times that of
// gammaLattice (tests use a small p0 or a fine lattice to exercise the
// refinement).
func addGammaNormExact(w []float64, l2, eps float64, r io.Reader, p0, latticeBits int) (err error) {
	le, err := gammaLattice(l2, eps)
	if err != nil {
		return err
	}
	le -= latticeBits - gammaLatticeBits
	if i := check.FirstNonFinite(w); i >= 0 {
		return fmt.Errorf("%w: weight %d is %v", ErrModel, i, w[i])
	}
	d := len(w)
	if d == 0 {
		return nil
	}
	src := newWordSource(r)
	defer src.wipe()
	defer recoverSource(&err)

	// Draw G_1..G_d, E_1..E_m and, for even d, G_0.
	ex := newExactSampler(src)
	g := make([]exactReal, d)
	for i := range g {
		ex.normal(&g[i])
	}
	m := (d + 1) / 2
	es := make([]exactReal, m)
	for j := range es {
		ex.exponential(&es[j])
	}
	var g0 *exactReal
	if d%2 == 0 {
		g0 = new(exactReal)
		ex.normal(g0)
	}

	// The dyadic constants: l2 = mD 2^eD, eps = mE 2^eE, lambda = 2^le,
	// so theta/lambda = (mD/mE) 2^x.
	mD, eD := dyadic(l2)
	mE, eE := dyadic(eps)
	x := eD - eE - le

	sq := sqrtBounds{src: src, e: es, g0: g0}
	out := make([]float64, d)
	for i := range w {
		var k *big.Int
		for p := p0; k == nil; p *= 2 {
			k = roundCoordinate(w[i], &g[i], &sq, p, mD, mE, x, le, src)
		}
		f, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(k), le).Float64()
		out[i] = f
	}
	copy(w, out)
	return nil
}

// dyadic returns m and e with v = m 2^e exactly, for a finite v != 0
// (m is negative when v is).
func dyadic(v float64) (*big.Int, int) {
	fr, e := math.Frexp(v) // v = fr 2^e, |fr| in [1/2, 1)
	m := int64(math.Ldexp(fr, 53))
	return big.NewInt(m), e - 53
}

// sqrtBounds holds the interval bounds on sqrt(T), T = 2 sum_j E_j + G_0^2,
// at each precision computed so far.
type sqrtBounds struct {
	src   *wordSource
	e     []exactReal
	g0    *exactReal
	cache map[int][2]*big.Int
}

// at returns lo, hi with lo <= sqrt(T) 2^p <= hi.
func (s *sqrtBounds) at(p int) (lo, hi *big.Int) {
	if b, ok := s.cache[p]; ok {
		return b[0], b[1]
	}
	// With floor(E_j 2^p) = a_j, E_j 2^p is in [a_j, a_j + 1].
	sum := new(big.Int)
	for j := range s.e {
		sum.Add(sum, s.e[j].floorScaled(p, s.src))
	}
	// T 2^(2p) in [tlo, thi].
	tlo := new(big.Int).Lsh(sum, uint(p+1))
	thi := new(big.Int).Add(sum, big.NewInt(int64(len(s.e))))
	thi.Lsh(thi, uint(p+1))
	if s.g0 != nil {
		a := s.g0.floorScaled(p, s.src)
		tlo.Add(tlo, new(big.Int).Mul(a, a))
		a1 := new(big.Int).Add(a, big.NewInt(1))
		thi.Add(thi, a1.Mul(a1, a1))
	}
	// floor(sqrt(tlo)) <= sqrt(T) 2^p < floor(sqrt(thi)) + 1.
	lo = new(big.Int).Sqrt(tlo)
	hi = new(big.Int).Sqrt(thi)
	hi.Add(hi, big.NewInt(1))
	if s.cache == nil {
		s.cache = make(map[int][2]*big.Int)
	}
	s.cache[p] = [2]*big.Int{lo, hi}
	return lo, hi
}

// roundCoordinate returns round((w + N_i)/lambda), N_i = theta sqrt(T) G_i,
// if p bits of every fraction settle it, and nil otherwise. theta/lambda =
// (mD/mE) 2^x and lambda = 2^le.
//
// All quantities are integers over the common denominator mE 2^S:
//
//	w/lambda          = mW 2^(eW - le)                  -> mW mE 2^(eW - le + S)
//	|N_i|/lambda      in [slo glo, shi ghi] mD 2^(x - 2p) / mE
//	                                                    -> [slo glo, shi ghi] mD 2^(x - 2p + S)
//
// with S >= 0 chosen so that every shift is to the left (exact), slo, shi
// the bounds of sqrt(T) 2^p and glo = floor(|G_i| 2^p), ghi = glo + 1.
func roundCoordinate(w float64, gi *exactReal, sq *sqrtBounds, p int, mD, mE *big.Int, x, le int, src *wordSource) *big.Int {
	slo, shi := sq.at(p)
	glo := gi.floorScaled(p, src)
	ghi := new(big.Int).Add(glo, big.NewInt(1))

	S := 0
	if v := 2*p - x; v > S {
		S = v
	}
	var mW *big.Int
	eW := 0
	if w != 0 {
		mW, eW = dyadic(w)
		if v := le - eW; v > S {
			S = v
		}
	}
	nlo := new(big.Int).Mul(slo, glo)
	nlo.Mul(nlo, mD)
	nlo.Lsh(nlo, uint(x-2*p+S))
	nhi := new(big.Int).Mul(shi, ghi)
	nhi.Mul(nhi, mD)
	nhi.Lsh(nhi, uint(x-2*p+S))
	if gi.neg {
		nlo, nhi = nhi.Neg(nhi), nlo.Neg(nlo)
	}
	if mW != nil {
		c := new(big.Int).Mul(mW, mE)
		c.Lsh(c, uint(eW-le+S))
		nlo.Add(nlo, c)
		nhi.Add(nhi, c)
	}
	// floor(a/den + 1/2) = floor((2a + den) / (2 den)); Div is Euclidean,
	// which is floor division for a positive divisor.
	den := new(big.Int).Lsh(mE, uint(S))
	den2 := new(big.Int).Lsh(den, 1)
	klo := nlo.Lsh(nlo, 1)
	klo.Add(klo, den)
	klo.Div(klo, den2)
	khi := nhi.Lsh(nhi, 1)
	khi.Add(khi, den)
	khi.Div(khi, den2)
	if klo.Cmp(khi) != 0 {
		return nil
	}
	return klo
}

// addGammaNormFloat adds gamma-norm noise of scale theta = l2/eps to w in
// float64 arithmetic: a Gamma(d, theta) radius (SampleGamma) times a uniform
// direction (SampleUnitVector). It is the sampler of the seeded source; it
// is not protected against floating-point attacks.
func addGammaNormFloat(src Source, w []float64, l2, eps float64) error {
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", l2); err != nil {
		return err
	}
	if err := checkEpsilon(eps); err != nil {
		return err
	}
	if len(w) == 0 {
		return nil
	}
	r := SampleGamma(src, float64(len(w)), l2/eps)
	if !check.Finite(r) {
		return fmt.Errorf("%w: gamma draw %v", ErrSource, r)
	}
	u := make([]float64, len(w))
	SampleUnitVector(src, u)
	for i := range w {
		w[i] += r * u[i]
	}
	return nil
}
