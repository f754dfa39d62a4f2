package accountant

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrInvalid is wrapped by every error about an argument out of its range:
// a sample rate outside [0, 1], a noise multiplier that is not finite and
// > 0, fewer than one step, a delta outside (0, 1), an order that is not
// finite and > 1.
var ErrInvalid = errors.New("accountant: invalid argument")

// maxFracTerms is the number of terms of the series of a fractional order
// after which its last upper bound is taken (or, when it has none, the
// order is given up: its RDP taken as +Inf, and listed in
// Guarantee.Excluded).
const maxFracTerms = 1000

// fracTol is how far (in nats) below the sum A_alpha - 1 the terms of the
// series of a fractional order must fall to stop it early: the partial
// sum is then above the limit by at most exp(-18) = 1.5e-8 of it.
const fracTol = 18

// SampledGaussian is Steps runs of the Poisson-subsampled Gaussian
// mechanism: each step includes every row independently with probability
// SampleRate, sums a function of the included rows whose L2 sensitivity to
// adding or removing one row is at most C, and adds Gaussian noise of
// standard deviation NoiseMultiplier * C to every coordinate. Its neighbours
// are add/remove-one (the package documentation says what that gives under
// replace-one).
//
// The zero value is invalid: Validate refuses it.
type SampledGaussian struct {
	// SampleRate is the probability q in [0, 1] that a row is in a step's
	// batch (expected batch size / rows). 0 releases nothing of the rows.
	SampleRate float64
	// NoiseMultiplier is sigma > 0, finite: the noise's standard deviation
	// over the sensitivity C.
	NoiseMultiplier float64
	// Steps is the number T >= 1 of steps composed.
	Steps int
}

// Validate returns an error wrapping ErrInvalid when q is not in [0, 1],
// sigma is not finite and > 0, or T < 1.
func (g SampledGaussian) Validate() error {
	switch {
	case !(g.SampleRate >= 0 && g.SampleRate <= 1):
		return fmt.Errorf("%w: sample rate q = %v, want 0 <= q <= 1", ErrInvalid, g.SampleRate)
	case !check.Positive(g.NoiseMultiplier):
		return fmt.Errorf("%w: noise multiplier %v, want finite > 0", ErrInvalid, g.NoiseMultiplier)
	case g.Steps < 1:
		return fmt.Errorf("%w: %d steps, want at least 1", ErrInvalid, g.Steps)
	}
	return nil
}

// checkOrder returns an error wrapping ErrInvalid when alpha is not a
// finite order > 1.
func checkOrder(alpha float64) error {
	if !(alpha > 1) || math.IsInf(alpha, 1) {
		return fmt.Errorf("%w: RDP order %v, want finite > 1", ErrInvalid, alpha)
	}
	return nil
}

// RDP returns the Renyi differential privacy of g's Steps steps at the order
// alpha (finite, > 1): Steps times the RDP of one step, by the composition
// of RDP (Mironov 2017, "Renyi Differential Privacy", Proposition 1). The
// RDP of one step is that of Mironov, Talwar & Zhang 2019, "Renyi
// Differential Privacy of the Sampled Gaussian Mechanism": log(A_alpha) /
// (alpha - 1), A_alpha the alpha-th moment of the likelihood ratio of the
// mixture (1-q) N(0, sigma^2) + q N(1, sigma^2) to N(0, sigma^2) (their
// Section 3; that direction is the larger, their Theorem 5). At an integer
// order A_alpha is the binomial sum of their Section 3.2, computed as
// 1 + sum_{i>=2} C(alpha,i) q^i (1-q)^(alpha-i) (exp((i^2-i)/(2 sigma^2))-1)
// in log space, so every term is positive and no precision is lost for a
// small q. At a fractional order it is the two series of their Section 3.3
// split at z0 = sigma^2 log(1/q - 1) + 1/2, with the signs of the
// generalized binomial coefficients, as TF Privacy's first rdp_accountant
// (_compute_log_a_frac) does (dp_accounting's later version sums the terms'
// absolute values: an upper bound, 1.3% above A_alpha - 1 at order 1.5 in
// the MNIST tutorial's setting); the series is stopped at a partial sum
// above its limit, by at most exp(-18) = 1.5e-8 of A_alpha - 1 once its
// terms have fallen that low, or after 1000 terms (a looser upper bound;
// +Inf, an Excluded order, if there is none yet). At q = 1 it is the
// Gaussian mechanism's alpha / (2 sigma^2) (Mironov 2017, Proposition 7),
// at q = 0 it is 0. Where the sums overflow (sigma below about 1e-150) it
// is the bound log((1-q) + q exp(alpha(alpha-1)/(2 sigma^2))) / (alpha-1),
// from the joint convexity of exp((alpha-1) D_alpha) (van Erven &
// Harremoes 2014, "Renyi Divergence and Kullback-Leibler Divergence").
func (g SampledGaussian) RDP(alpha float64) (float64, error) {
	if err := g.Validate(); err != nil {
		return 0, err
	}
	if err := checkOrder(alpha); err != nil {
		return 0, err
	}
	return float64(g.Steps) * stepRDP(g.SampleRate, g.NoiseMultiplier, alpha), nil
}

// Curve returns g.RDP at every order of orders (DefaultOrders when nil).
func (g SampledGaussian) Curve(orders []float64) ([]float64, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if orders == nil {
		orders = DefaultOrders()
	}
	rdp := make([]float64, len(orders))
	for i, a := range orders {
		if err := checkOrder(a); err != nil {
			return nil, err
		}
		rdp[i] = float64(g.Steps) * stepRDP(g.SampleRate, g.NoiseMultiplier, a)
	}
	return rdp, nil
}

// stepRDP is the RDP of one step at the order alpha > 1, for q in [0, 1]
// and sigma > 0.
func stepRDP(q, sigma, alpha float64) float64 {
	switch {
	case q == 0:
		return 0
	case q == 1:
		return alpha / (2 * sigma * sigma)
	}
	var logA float64
	if alpha == math.Trunc(alpha) {
		logA = logAInt(q, sigma, int(alpha))
	} else {
		logA = logAFrac(q, sigma, alpha)
	}
	// A_alpha is at most (1-q) + q exp(alpha(alpha-1)/(2 sigma^2)), by the
	// joint convexity of the integral of P^alpha Q^(1-alpha) for alpha > 1:
	// the bound where the sums overflow (sigma below about 1e-150).
	convex := logAdd(math.Log1p(-q), math.Log(q)+alpha*(alpha-1)/(2*sigma*sigma))
	if !(logA <= convex) {
		logA = convex
	}
	return logA / (alpha - 1)
}

// logAInt is log(A_alpha) at an integer order alpha >= 2, for 0 < q < 1:
// log1p of the sum over i >= 2 of C(alpha,i) q^i (1-q)^(alpha-i)
// expm1((i^2-i)/(2 sigma^2)), the terms i = 0 and 1 of the binomial
// expansion adding up with the rest of 1 (Mironov, Talwar & Zhang 2019,
// Section 3.2).
func logAInt(q, sigma float64, alpha int) float64 {
	logq, log1mq := math.Log(q), math.Log1p(-q)
	a := float64(alpha)
	lgA, _ := math.Lgamma(a + 1)
	var sum logSum
	for i := 2; i <= alpha; i++ {
		fi := float64(i)
		lgI, _ := math.Lgamma(fi + 1)
		lgR, _ := math.Lgamma(a - fi + 1)
		sum.add(lgA - lgI - lgR + fi*logq + (a-fi)*log1mq + logExpm1((fi*fi-fi)/(2*sigma*sigma)))
	}
	return log1pExp(sum.log())
}

// logAFrac is log(A_alpha) at a fractional order alpha > 1, for 0 < q < 1,
// by the two binomial series of Mironov, Talwar & Zhang 2019, Section 3.3:
// A_alpha = sum_i C(alpha,i) (1-q)^(alpha-i) q^i exp((i^2-i)/(2 sigma^2))
// Phi((z0-i)/sigma) (the integral below z0) + sum_i C(alpha,i) q^(alpha-i)
// (1-q)^i exp((j^2-j)/(2 sigma^2)) Phi((j-z0)/sigma), j = alpha-i (the
// integral above). It sums A_alpha - 1, the terms i = 0 and 1 of the first
// series taken with the 1 in closed form ((1-q)^(alpha-1) (1+(alpha-1)q) - 1
// minus their tails above z0), so that a small q loses no precision. The
// terms' signs are those of C(alpha, i), which alternate from
// i > alpha + 1 on, and their magnitudes decrease from some i on (as
// |C(alpha,i)| times a factor that tends to a constant); after a positive
// term with i > alpha + 1, once both series' terms decrease, the partial
// sum is above the limit (an alternating series with decreasing terms) by
// at most the next term, so it is an upper bound. The sum stops at such a term when the
// terms are fracTol nats below it, and otherwise after maxFracTerms terms
// at the last such bound; with none, it returns +Inf. When A_alpha - 1 is
// below exp(-25) of the sum of its terms' magnitudes (rounding would
// decide it; sigma above about 1e5) it returns the bound of the integer
// order above alpha (the RDP grows with the order).
func logAFrac(q, sigma, alpha float64) float64 {
	logq, log1mq := math.Log(q), math.Log1p(-q)
	s2 := sigma * sigma
	z0 := s2*math.Log(1/q-1) + 0.5
	lgA, _ := math.Lgamma(alpha + 1)
	var pos, neg logSum // the positive and negative terms of A_alpha - 1
	// The terms i = 0 and 1 of the first series, less 1: the closed form of
	// c0 + c1 - 1 (negative for alpha > 1), less c0 Phic(z0/sigma) and
	// c1 Phic((z0-1)/sigma), their parts above z0.
	neg.add(math.Log(-math.Expm1((alpha-1)*log1mq + math.Log1p((alpha-1)*q))))
	neg.add(alpha*log1mq + logPhic(z0/sigma))
	neg.add(math.Log(alpha) + logq + (alpha-1)*log1mq + logPhic((z0-1)/sigma))
	last0, last1 := math.Inf(-1), math.Inf(-1)
	bound := math.Inf(1) // log of the last partial sum above A_alpha - 1
	for i := range maxFracTerms {
		fi := float64(i)
		j := alpha - fi
		lgI, _ := math.Lgamma(fi + 1)
		lgJ, sign := math.Lgamma(j + 1) // C(alpha, i) has the sign of Gamma(alpha-i+1)
		coef := lgA - lgI - lgJ
		s0 := coef + fi*logq + j*log1mq + (fi*fi-fi)/(2*s2) + logPhic((fi-z0)/sigma)
		s1 := coef + j*logq + fi*log1mq + (j*j-j)/(2*s2) + logPhic((z0-j)/sigma)
		sum := &pos
		if sign < 0 {
			sum = &neg
		}
		if i >= 2 {
			sum.add(s0)
		}
		sum.add(s1)
		if fi > alpha+1 && sign > 0 && s0 < last0 && s1 < last1 {
			p, n := pos.log(), neg.log()
			mag := logAdd(p, n)
			if !(p > n) || logSub(p, n) < mag-25 {
				if max(s0, s1) < mag-30 {
					// A_alpha - 1 is lost in the rounding of its terms.
					return logAInt(q, sigma, int(math.Ceil(alpha)))
				}
			} else {
				bound = logSub(p, n)
				if max(s0, s1) < bound-fracTol {
					return log1pExp(bound)
				}
			}
		}
		last0, last1 = s0, s1
	}
	return log1pExp(bound)
}

// logPhic returns log(Phic(x)), Phic(x) = erfc(x / sqrt(2)) / 2 the upper
// tail of the standard normal.
func logPhic(x float64) float64 { return logErfc(x/math.Sqrt2) - math.Ln2 }

// logSub returns log(exp(x) - exp(y)) for x > y.
func logSub(x, y float64) float64 {
	if math.IsInf(y, -1) {
		return x
	}
	return x + math.Log(-math.Expm1(y-x))
}

// logSum accumulates log(sum exp(x_i)) without overflow. The zero value is
// the empty sum (log 0 = -Inf).
type logSum struct {
	m, s float64 // the sum is s * exp(m), s in [1, n] once a term is added
	n    int
}

// add adds exp(x) to the sum.
func (l *logSum) add(x float64) {
	switch {
	case math.IsInf(x, -1):
		return
	case l.n == 0:
		l.m, l.s = x, 1
	case x > l.m:
		l.s = l.s*math.Exp(l.m-x) + 1
		l.m = x
	default:
		l.s += math.Exp(x - l.m)
	}
	l.n++
}

// log returns the log of the sum.
func (l *logSum) log() float64 {
	if l.n == 0 {
		return math.Inf(-1)
	}
	return l.m + math.Log(l.s)
}

// logAdd returns log(exp(x) + exp(y)).
func logAdd(x, y float64) float64 {
	lo, hi := min(x, y), max(x, y)
	if math.IsInf(lo, -1) {
		return hi
	}
	return hi + math.Log1p(math.Exp(lo-hi))
}

// log1pExp returns log(1 + exp(x)).
func log1pExp(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// logExpm1 returns log(exp(x) - 1) for x > 0.
func logExpm1(x float64) float64 {
	if x > 1 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// logErfc returns log(erfc(x)), by the asymptotic series where erfc
// underflows: erfc(x) = exp(-x^2)/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) -
// ...), whose terms from the 11th on are below 1e-17 for x >= 20.
func logErfc(x float64) float64 {
	if x < 20 {
		return math.Log(math.Erfc(x))
	}
	x2 := x * x
	sum, term := 1.0, 1.0
	for k := 1; k <= 10; k++ {
		term *= -float64(2*k-1) / (2 * x2)
		sum += term
	}
	return -x2 - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(sum)
}
