package perturb

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"math/bits"
)

// This file holds exact samplers: they read uniformly random bits and use
// integer operations only, so that the law of what they return is exactly
// the one stated, with no floating-point rounding anywhere. They follow
// Karney (2016), "Sampling exactly from the normal distribution", ACM TOMS
// 42(1), whose Algorithm N draws a standard normal deviate and whose
// Algorithm B is its Bernoulli step, both built on von Neumann's (1951)
// method for events of probability exp(-x). Canonne, Kamath & Steinke
// (2020), "The Discrete Gaussian for Differential Privacy", Section 5.1, use
// the same method of von Neumann for Bernoulli(exp(-gamma)) with a rational
// gamma.
//
// A continuous deviate is returned as an integer part and a lazily drawn
// fraction (a "u-rand" in Karney's terms): the words of its binary
// expansion that the algorithm needed, the rest not drawn yet. The stated
// law holds for the whole real number, and the undrawn words are, given the
// drawn ones and the fact that the draw was accepted, independent fair bits:
// every comparison that decided acceptance was settled by drawn words only.
// So the deviate can be refined to any precision later by drawing more
// words, and every finite prefix is exact.

// wordSource supplies independent uniformly random 64-bit words read from r
// through a buffer. It is not safe for concurrent use: every release makes
// its own. A read error panics with a sourceFailure, which the exported
// entry points recover into an error wrapping ErrSource; the samplers below
// cannot go on without random bits (a reader returning only zeros would
// stall a comparison for ever).
type wordSource struct {
	r   io.Reader
	buf [1024]byte
	pos int
}

// sourceFailure is the panic value of a failed read; see wordSource.
type sourceFailure struct{ err error }

func newWordSource(r io.Reader) *wordSource {
	return &wordSource{r: r, pos: len(wordSource{}.buf)}
}

// word returns a uniformly random 64-bit word.
func (s *wordSource) word() uint64 {
	if s.pos+8 > len(s.buf) {
		if _, err := io.ReadFull(s.r, s.buf[:]); err != nil {
			panic(sourceFailure{err})
		}
		s.pos = 0
	}
	w := binary.LittleEndian.Uint64(s.buf[s.pos:])
	s.pos += 8
	return w
}

// wipe clears the buffered bits, which are the secret noise.
func (s *wordSource) wipe() {
	clear(s.buf[:])
	s.pos = len(s.buf)
}

// recoverSource turns a sourceFailure panic into an error wrapping ErrSource
// in *err; other panics propagate. Use it deferred.
func recoverSource(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(sourceFailure)
		if !ok {
			panic(r)
		}
		*err = fmt.Errorf("%w: reading random bits: %w", ErrSource, f.err)
	}
}

// uniformInt returns an integer uniform on {0, ..., m-1}, m >= 1, by
// rejection: the top bits.Len64(m-1) bits of a word, redrawn until they are
// below m (each try succeeds with probability > 1/2).
func (s *wordSource) uniformInt(m uint64) uint64 {
	n := uint(bits.Len64(m - 1))
	for {
		v := s.word() >> (64 - n) // a shift by 64 gives 0 (m = 1)
		if v < m {
			return v
		}
	}
}

// urand is a uniform deviate on (0, 1) drawn lazily: its binary expansion is
// 0.b1 b2 b3 ..., of which the first 64*n bits are drawn, stored most
// significant word first (head, then tail); the others are independent fair
// bits not drawn yet. The value 0 and ties between two deviates have
// probability 0 and play no role.
type urand struct {
	n    int
	head [2]uint64
	tail []uint64
}

// reset makes u a fresh deviate with no word drawn, keeping its storage.
func (u *urand) reset() {
	u.n = 0
	u.tail = u.tail[:0]
}

// word returns the i-th word of u's expansion (0-based), drawing the words
// up to it from s if needed.
func (u *urand) word(i int, s *wordSource) uint64 {
	for u.n <= i {
		w := s.word()
		if u.n < len(u.head) {
			u.head[u.n] = w
		} else {
			u.tail = append(u.tail, w)
		}
		u.n++
	}
	if i < len(u.head) {
		return u.head[i]
	}
	return u.tail[i-len(u.head)]
}

// less reports whether a < b, comparing word by word from the most
// significant and drawing only as many words as the comparison needs.
func less(a, b *urand, s *wordSource) bool {
	for i := 0; ; i++ {
		x, y := a.word(i, s), b.word(i, s)
		if x != y {
			return x < y
		}
	}
}

// prefix returns floor(u * 2^p), the first p bits of u as an integer,
// drawing words as needed.
func (u *urand) prefix(p int, s *wordSource) *big.Int {
	q := (p + 63) / 64
	ws := make([]big.Word, q)
	for i := 0; i < q; i++ {
		ws[q-1-i] = big.Word(u.word(i, s))
	}
	z := new(big.Int).SetBits(ws)
	return z.Rsh(z, uint(64*q-p))
}

// exactSampler draws exact deviates from the bits of a wordSource. Its
// scratch deviates are reused across calls; it is not safe for concurrent
// use.
type exactSampler struct {
	s       *wordSource
	scratch [3]urand
}

func newExactSampler(s *wordSource) *exactSampler { return &exactSampler{s: s} }

// expHalf returns true with probability exp(-1/2), by von Neumann's
// method: draw u1, u2, ... while 1/2 > u1 > u2 > ...; the length n of the
// run satisfies P(n >= j) = (1/2)^j / j!, so P(n even) = sum_j (-1/2)^j/j! =
// exp(-1/2). (The Bernoulli trial of steps N1 and N2 of Karney's
// Algorithm N; Canonne, Kamath & Steinke 2020, Section 5.1, with
// gamma = 1/2.)
func (e *exactSampler) expHalf() bool {
	z := &e.scratch[0]
	z.reset()
	if z.word(0, e.s)>>63 != 0 { // u1 >= 1/2: n = 0
		return true
	}
	u := &e.scratch[1]
	n := 1
	for {
		u.reset()
		if !less(u, z, e.s) {
			return n%2 == 0
		}
		z, u = u, z
		n++
	}
}

// expNeg returns true with probability exp(-x) for the deviate x in (0, 1),
// by von Neumann's method with the run x > u1 > u2 > ...: P(n >= j) =
// x^j / j!, so P(n even) = exp(-x). It may draw further words of x.
func (e *exactSampler) expNeg(x *urand) bool {
	z, u, v := x, &e.scratch[0], &e.scratch[1]
	n := 0
	for {
		u.reset()
		if !less(u, z, e.s) {
			return n%2 == 0
		}
		// The new minimum moves to u; the old one (x itself at first)
		// is left alone, and the next candidate uses the other buffer.
		z = u
		u, v = v, u
		n++
	}
}

// bernoulliB returns true with probability exp(-x (2k + x) / (2k + 2)) for
// the deviate x in (0, 1) and an integer k >= 0: Karney's Algorithm B. Each
// step of the run continues when both y_j < y_{j-1} (y_0 = x) and an
// independent event of probability c = (2k + x)/(2k + 2) happen, so
// P(n >= j) = (c x)^j / j! and P(n even) = exp(-c x). The event of
// probability c is h < 2k, or h = 2k and r < x, for h uniform on
// {0, ..., 2k+1} and r a fresh deviate: P = (2k + x)/(2k + 2).
func (e *exactSampler) bernoulliB(k uint64, x *urand) bool {
	z, y, w := x, &e.scratch[0], &e.scratch[1]
	r := &e.scratch[2]
	n := 0
	for {
		y.reset()
		if !less(y, z, e.s) {
			return n%2 == 0
		}
		h := e.s.uniformInt(2*k + 2)
		switch {
		case h < 2*k:
		case h == 2*k:
			r.reset()
			if !less(r, x, e.s) {
				return n%2 == 0
			}
		default:
			return n%2 == 0
		}
		z = y
		y, w = w, y
		n++
	}
}

// exactReal is a real number k + f (negated if neg) with an integer k >= 0
// and a lazily drawn fraction f in (0, 1).
type exactReal struct {
	neg bool
	k   uint64
	f   urand
}

// floorScaled returns floor(|x| * 2^p) for p >= 1, drawing words of the
// fraction as needed: |x| lies in [z, z+1] / 2^p.
func (x *exactReal) floorScaled(p int, s *wordSource) *big.Int {
	z := new(big.Int).SetUint64(x.k)
	z.Lsh(z, uint(p))
	return z.Add(z, x.f.prefix(p, s))
}

// normal sets x to an exact standard normal deviate by Karney's Algorithm N:
//
//	N1  k >= 0 with probability exp(-k/2) (1 - exp(-1/2)): count the
//	    successes of expHalf before its first failure;
//	N2  accept with probability exp(-k (k-1) / 2): k (k-1) successes of
//	    expHalf in a row;
//	N3  draw the fraction f uniform on (0, 1);
//	N4  accept with probability exp(-f (2k + f) / 2): k + 1 successes of
//	    bernoulliB(k, f) in a row;
//	N5  return k + f with a random sign.
//
// Steps N1 and N2 give k with probability proportional to exp(-k^2/2), and
// N3 and N4 weight k + f by exp(-f(2k + f)/2), so that the accepted k + f
// has density proportional to exp(-(k + f)^2 / 2) on [0, inf).
func (e *exactSampler) normal(x *exactReal) {
	for {
		var k uint64
		for e.expHalf() {
			k++
		}
		ok := true
		for i := uint64(0); ok && i < k*(k-1); i++ {
			ok = e.expHalf()
		}
		if !ok {
			continue
		}
		x.f.reset()
		for i := uint64(0); ok && i <= k; i++ {
			ok = e.bernoulliB(k, &x.f)
		}
		if !ok {
			continue
		}
		x.k = k
		x.neg = e.s.word()>>63 != 0
		return
	}
}

// exponential sets x to an exact standard exponential deviate by von
// Neumann's method: a trial draws f uniform on (0, 1) and accepts it with
// probability exp(-f) (expNeg); k counts the rejected trials, each of
// probability 1 - int_0^1 exp(-f) df = exp(-1), so that k + f has density
// exp(-k) exp(-f) = exp(-(k + f)) on [0, inf).
func (e *exactSampler) exponential(x *exactReal) {
	x.neg = false
	for k := uint64(0); ; k++ {
		x.f.reset()
		if e.expNeg(&x.f) {
			x.k = k
			return
		}
	}
}

// uniformBig returns an integer uniform on {0, ..., m-1}, m >= 1, by
// rejection on the bits.Len of m-1 low bits of fresh words (each try
// succeeds with probability > 1/2); uniformInt when m fits a word.
func (s *wordSource) uniformBig(m *big.Int) *big.Int {
	if m.IsUint64() {
		return new(big.Int).SetUint64(s.uniformInt(m.Uint64()))
	}
	top := new(big.Int).Sub(m, big.NewInt(1))
	n := top.BitLen()
	q := (n + 63) / 64
	ws := make([]big.Word, q)
	v := new(big.Int)
	for {
		for i := range ws {
			ws[i] = big.Word(s.word())
		}
		v.SetBits(ws)
		if extra := 64*q - n; extra > 0 {
			v.Rsh(v, uint(extra))
		}
		if v.Cmp(m) < 0 {
			return v
		}
		ws = make([]big.Word, q) // SetBits took the old slice
	}
}

// bernoulliRat returns true with probability num/den, 0 <= num <= den,
// den >= 1: a uniform integer of {0, ..., den-1} below num.
func (s *wordSource) bernoulliRat(num, den *big.Int) bool {
	return s.uniformBig(den).Cmp(num) < 0
}

// bernoulliExp returns true with probability exp(-gamma) for the rational
// gamma = num/den >= 0 (den >= 1), exactly: Canonne, Kamath & Steinke
// (2020), "The Discrete Gaussian for Differential Privacy", Section 5.1,
// Algorithm 1. For gamma in [0, 1] it draws A_k ~ Bernoulli(gamma/k) for
// k = 1, 2, ... until the first A_K = 0 and returns whether K is odd:
// P(K = k) = gamma^(k-1)/(k-1)! - gamma^k/k!, whose sum over odd k is
// cosh(gamma) - sinh(gamma) = exp(-gamma). For gamma > 1 it needs
// floor(gamma) successes of Bernoulli(exp(-1)) and one of
// Bernoulli(exp(-(gamma - floor(gamma)))), stopping at the first failure
// (so it draws about 1.6 Bernoulli(exp(-1)) trials on average whatever
// gamma is). Every step compares uniform integers: no floating point.
//
// A negative num or a den below 1 is an error wrapping ErrModel, checked
// before any draw: exp(-gamma) is not a probability for gamma < 0, and a
// den below 1 would make the uniform draws of bernoulliRat loop for ever.
func (s *wordSource) bernoulliExp(num, den *big.Int) (bool, error) {
	if num.Sign() < 0 || den.Sign() <= 0 {
		return false, fmt.Errorf("%w: Bernoulli(exp(-gamma)) for gamma = %v/%v, want a numerator >= 0 and a denominator >= 1", ErrModel, num, den)
	}
	if num.Sign() == 0 {
		return true, nil
	}
	whole, frac := new(big.Int).QuoRem(num, den, new(big.Int))
	one := big.NewInt(1)
	for i := new(big.Int); i.Cmp(whole) < 0; i.Add(i, one) {
		if !s.bernoulliExpUnit(one, one) {
			return false, nil
		}
	}
	return s.bernoulliExpUnit(frac, den), nil
}

// bernoulliExpUnit is bernoulliExp for gamma = num/den in [0, 1], with
// 0 <= num <= den and den >= 1 checked by its caller.
func (s *wordSource) bernoulliExpUnit(num, den *big.Int) bool {
	if num.Sign() == 0 {
		return true
	}
	kden := new(big.Int).Set(den)
	k := 1
	for s.bernoulliRat(num, kden) { // A_k ~ Bernoulli(gamma/k)
		k++
		kden.Mul(den, big.NewInt(int64(k)))
	}
	return k%2 == 1
}
