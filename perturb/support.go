package perturb

import "math"

// The values a release can take.
//
// Every secure sampler of this package rounds what it outputs to a lattice
// fixed by public parameters: the gamma-norm sampler rounds w + N to the
// multiples of 2^gammaLattice (securegamma.go), the Gaussian one to the
// multiples of SecureGaussianLattice(sigma) (securegauss.go), and
// google/differential-privacy rounds the perturbed value of each coordinate
// to a power of two, ceilPow2((l1/eps)/2^40) for Laplace and, in the
// Gaussian releases before the exact sampler, ceilPow2(2 sigma/2^57) for its
// binomial Gaussian. Both Gaussian lattices are powers of two, the exact
// sampler's the coarser, so the finer one holds the releases of both. A
// released coordinate off that lattice cannot come from the sampler. The noise norms are random, so a released vector far
// from any trained weights is not impossible, only unlikely: TailNorm bounds
// the norm of the noise by a value it exceeds with a stated probability.

// googleLaplaceStep is the lattice step of google/differential-privacy's
// Laplace sampler with L1 sensitivity l1 and eps (laplace_noise.go).
func googleLaplaceStep(l1, eps float64) float64 { return ceilPow2(l1 / eps / math.Exp2(40)) }

// googleGaussianStep is the lattice step of google/differential-privacy's
// Gaussian sampler for the sigma this package asked of it
// (gaussian_noise.go), and that sampler's sigma: the secure Gaussian
// sampler of the releases before the exact one.
func googleGaussianStep(sigma float64) (step, used float64) {
	_, used, err := googleLInf(sigma)
	if err != nil {
		return 0, sigma
	}
	return ceilPow2(2 * used / math.Exp2(57)), used
}

// ceilPow2 returns the least power of two at least x > 0.
func ceilPow2(x float64) float64 {
	f, e := math.Frexp(x) // x = f 2^e, f in [0.5, 1)
	if f == 0.5 {
		return x
	}
	return math.Ldexp(1, e)
}

// Lattice returns the step of the lattice every coordinate of a release of
// cal by the secure source lies on: a released coordinate is an integer
// multiple of it. For the Gaussian mechanisms it is the finer lattice of
// google/differential-privacy's sampler, of which the exact sampler's
// (SecureGaussianLattice) is a sublattice, so that both their releases
// verify. Seeded and other sources do not round.
func Lattice(cal Calibration) float64 {
	switch cal.Mechanism {
	case Laplace:
		return googleLaplaceStep(cal.L1, cal.L1/cal.Scale)
	case Gaussian, AnalyticGaussian:
		step, _ := googleGaussianStep(cal.Scale)
		return step
	case Gamma:
		e, err := gammaLattice(cal.L2, cal.L2/cal.Scale)
		if err != nil {
			return 0
		}
		return math.Ldexp(1, e)
	}
	return 0
}

// TailNorm returns a bound on the L2 norm of the noise of cal in its
// dimension that the noise exceeds with probability at most exp(-t), t > 0,
// with the rounding of the secure sampler (half a lattice step per
// coordinate; for the Gaussian mechanisms that of the exact sampler, the
// larger of the two it has had) included:
//
//	laplace   sqrt(d) b (ln d + t), a union bound over the coordinates of
//	          P(|Lap(b)| > x) = exp(-x/b)
//	gaussian  sigma (sqrt(d) + sqrt(2 t)), the concentration of the norm of
//	          N(0, sigma^2 I_d), a 1-Lipschitz function of it (Boucheron,
//	          Lugosi & Massart 2013, Theorem 5.6), with the larger of sigma
//	          and the sigma google/differential-privacy's sampler used
//	gamma     the least x with P(Gamma(d, theta) > x) <= exp(-t) by the
//	          Chernoff bound P(X > theta (d + s)) <= exp(-s + d ln(1 + s/d))
func TailNorm(cal Calibration, t float64) float64 {
	d := float64(cal.Dim)
	round := math.Sqrt(d) * Lattice(cal) / 2
	switch cal.Mechanism {
	case Laplace:
		return math.Sqrt(d)*cal.Scale*(math.Log(d)+t) + round
	case Gaussian, AnalyticGaussian:
		_, sigma := googleGaussianStep(cal.Scale)
		round = math.Sqrt(d) * math.Max(Lattice(cal), SecureGaussianLattice(cal.Scale)) / 2
		return math.Max(sigma, cal.Scale)*(math.Sqrt(d)+math.Sqrt(2*t)) + round
	case Gamma:
		return GammaTail(d, cal.Scale, t) + round
	}
	return math.Inf(1)
}

// GammaTail returns theta (d + s) for the least s >= 0 (to a relative
// 1e-12) with exp(-s + d ln(1 + s/d)) <= exp(-t): a value that a
// Gamma(d, theta) variable exceeds with probability at most exp(-t)
// (the Chernoff bound of the sum of d exponentials of mean theta).
func GammaTail(d, theta, t float64) float64 {
	excess := func(s float64) float64 { return -s + d*math.Log1p(s/d) + t } // <= 0 wanted
	hi := t + d
	for excess(hi) > 0 {
		hi *= 2
	}
	lo := 0.0
	for range 200 {
		mid := (lo + hi) / 2
		if excess(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return theta * (d + hi)
}

// OnLattice reports whether every value of w is an integer multiple of
// step (true for step 0: no lattice).
func OnLattice(w []float64, step float64) bool {
	if step == 0 {
		return true
	}
	for _, v := range w {
		if q := v / step; q != math.Trunc(q) {
			return false
		}
	}
	return true
}
