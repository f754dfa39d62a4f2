package exactgauss

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// LatticeBits is how far below sigma the lattice step lies: for sigma in
// [2^(e-1), 2^e) the step is 2^(e - LatticeBits - 1), so that
// 2^-(LatticeBits+1) sigma < step <= 2^-LatticeBits sigma.
const LatticeBits = 20

// Lattice returns the exponent of the lattice step 2^Lattice(sigma) of
// sigma > 0 (finite): see LatticeBits.
func Lattice(sigma float64) int {
	_, e := math.Frexp(sigma)
	return e - LatticeBits - 1
}

// Sampler draws the noise of AddSnapped from its own ChaCha8 generator
// (math/rand/v2), a cryptographically strong generator keyed by the
// caller. It is not safe for concurrent use.
type Sampler struct {
	rng   *rand.ChaCha8
	buf   [bufWords]uint64 // words of rng not used yet: buf[pos:]
	pos   int
	drawn uint64 // words drawn from rng so far (benchmarks: used = drawn - unused)
	t     *tables
	sign  uint64 // sign bits not used yet
	nsign uint
	t0    uint64   // the first word of the fraction of the current deviate
	tw    []uint64 // all the words drawn of it, if more than t0 (else empty)
	yw    []uint64 // the words drawn of the uniform of its acceptance test

	// exact forces every acceptance test and rounding through the exact
	// big-integer paths, and latticeBits (if not 0) replaces LatticeBits
	// (tests).
	exact       bool
	latticeBits int
}

// New returns a Sampler whose generator is ChaCha8 keyed by key.
func New(key [32]byte) *Sampler {
	return &Sampler{rng: rand.NewChaCha8(key), pos: bufWords, t: theTables()}
}

// bufWords is how many words of the generator a Sampler holds drawn ahead.
const bufWords = 64

// usualWords is the most words the usual draw of AddSnapped takes: the
// proposal's word, the fraction's first word and a word of sign bits.
const usualWords = 3

// next returns the next word of the generator. The words come out in the
// order of rng.Uint64, each once: the buffer only draws them ahead (refill),
// so that the sampler's loops make no call for them.
func (s *Sampler) next() uint64 {
	if s.pos >= bufWords {
		s.refill()
	}
	return s.take()
}

// take is next when the buffer holds a word (s.pos < bufWords): short
// enough to be inlined.
func (s *Sampler) take() uint64 {
	v := s.buf[s.pos]
	s.pos++
	return v
}

// refill moves the words not used yet to the front of s.buf and fills the
// rest with the next words of the generator, keeping their order.
func (s *Sampler) refill() {
	n := copy(s.buf[:], s.buf[s.pos:])
	for i := n; i < bufWords; i++ {
		s.buf[i] = s.rng.Uint64()
	}
	s.drawn += uint64(bufWords - n)
	s.pos = 0
}

// AddSnapped sets every w[i] to lambda round((w[i] + sigma Z_i) / lambda),
// written as a float64 (see latticeFloat), with Z_i independent exact
// standard normal deviates and lambda = 2^Lattice(sigma). sigma must be
// finite and > 0 and every w[i] finite: the caller checks. It returns the
// index of the first value that rounded past the float64 range (written
// as an infinity), -1 if none did.
//
// The usual draw (a core piece accepted by the flat squeeze of its first
// word, then the int64 rounding) runs inline, its words taken from the
// buffer in the order magnitude and bit would take them; every other case
// goes through magnitudeFrom and snap with the same words, so the output
// is the same function of the generator's words as magnitude, bit and the
// roundings called one after the other.
func (s *Sampler) AddSnapped(w []float64, sigma float64) int {
	fr, e := math.Frexp(sigma)
	ms := uint64(math.Ldexp(fr, 53)) // sigma = ms 2^(e-53), ms in [2^52, 2^53)
	lb := LatticeBits
	if s.latticeBits != 0 {
		lb = s.latticeBits
	}
	le := e - lb - 1
	fast := !s.exact && lb == LatticeBits
	// scale = 2^le is exact and k 2^le normal for 0 < |k| < 2^44 when
	// le is in [-1022, 970]: then float64(k) scale is latticeInt(k, le),
	// and finite (roundFastScaled's |k| is below 2^43).
	scaled := fast && -1022 <= le && le <= 970
	scale := math.Ldexp(1, le)
	sw := unitScale(le)
	t := s.t
	over := -1
	for i, x := range w {
		if s.pos > bufWords-usualWords {
			s.refill()
		}
		u := s.take()
		b, ytop := t.entry(u)
		if !s.exact && b != nCore && u&(1<<yBits-1) < ytop {
			t0 := s.take() // the fraction's first word, then the sign
			if s.nsign == 0 {
				s.sign, s.nsign = s.take(), 64
			}
			neg := s.popSign()
			if scaled {
				w0, w1, wok := wUnits(x, sw) // roundFastScaled, inline
				if k, ok := roundUnits(w0, w1, ms, b, t0, neg); ok && wok {
					w[i] = float64(k) * scale // float64(0) is +0
					continue
				}
			}
			s.t0, s.tw = t0, s.tw[:0]
			w[i] = s.snap(x, ms, e, le, b, 1, neg, fast)
		} else {
			b, width := s.magnitudeFrom(u)
			w[i] = s.snap(x, ms, e, le, b, width, s.bit(), fast)
		}
		if over < 0 && math.IsInf(w[i], 0) {
			over = i
		}
	}
	return over
}

// snap returns the lattice point of x + s sigma |Z| for sigma = ms 2^(e-53),
// |Z| as magnitude returns it (b, width) and s the sign (negative if neg),
// as AddSnapped writes it; fast allows roundFast.
func (s *Sampler) snap(x float64, ms uint64, e, le int, b, width uint64, neg, fast bool) float64 {
	if fast && width == 1 {
		if k, ok := roundFast(x, ms, le, b, s.t0, neg); ok {
			return latticeInt(k, le)
		}
	}
	return latticeFloat(s.roundExact(x, ms, e-53, le, b, width, neg), le)
}

// bit returns a fair random bit.
func (s *Sampler) bit() bool {
	if s.nsign == 0 {
		s.sign, s.nsign = s.next(), 64
	}
	return s.popSign()
}

// popSign returns the next of the sign bits, s.nsign > 0.
func (s *Sampler) popSign() bool {
	b := s.sign&1 != 0
	s.sign >>= 1
	s.nsign--
	return b
}

// magnitude draws |Z| for an exact standard normal Z: it returns b and
// width with |Z| 2^(pieceBits + 64m) in [b 2^(64m) + width T, b 2^(64m) +
// width (T + 1)] for T the integer of the first m words of the fraction
// (most significant first), the words not drawn yet being independent fair
// bits. The first word is s.t0; s.tw holds all the words drawn when there
// are more than that one (see words).
func (s *Sampler) magnitude() (b, width uint64) {
	return s.magnitudeFrom(s.next())
}

// magnitudeFrom is magnitude with u the first word of its first proposal.
func (s *Sampler) magnitudeFrom(u uint64) (b, width uint64) {
	t := s.t
	for ; ; u = s.next() {
		e, ytop := t.entry(u)
		if e == nCore {
			if b, ok := s.tail(); ok {
				return b, 1 << pieceBits
			}
			continue
		}
		t0 := s.next()
		s.t0, s.tw = t0, s.tw[:0]
		yhi := u & (1<<yBits - 1)
		// y < (yhi + 1) 2^-yBits <= ytop 2^-yBits <= y_e 2^-64 <= L_e / H_e.
		if !s.exact && yhi < ytop {
			return e, 1
		}
		// The first word of y: its yBits bits from u, the rest fresh.
		y0 := yhi<<(64-yBits) | s.next()>>yBits
		if !s.exact {
			switch squeeze(&t.pieces[e], t0, y0) {
			case 1:
				return e, 1
			case -1:
				continue
			}
		}
		s.tw = append(s.tw, t0)
		s.yw = append(s.yw[:0], y0)
		if s.accept(e, 1, new(big.Int).SetUint64(t.pieces[e].h), 0) {
			return e, 1
		}
	}
}

// entry returns the entry of the alias table that the word u picks and the
// flat squeeze of its piece (0 for the rest entry): u = [column: colBits]
// [v: thrBits][the first yBits of the uniform y].
func (t *tables) entry(u uint64) (e, ytop uint64) {
	j := u >> (64 - colBits)
	c := &t.cols[j]
	if uint32(u>>yBits) >= c.thr {
		return uint64(c.alias), uint64(c.yAlias)
	}
	return j, uint64(c.yOwn)
}

// words makes s.tw hold the words of the fraction drawn so far.
func (s *Sampler) words() {
	if len(s.tw) == 0 {
		s.tw = append(s.tw, s.t0)
	}
}

// squeeze decides the acceptance test y H < F(x) of core piece p from the
// first words t0 of t and y0 of y by the lines of p: 1 accept, -1 reject,
// 0 undecided. With y in [y0, y0 + 1] 2^-64 and t in [t0, t0 + 1] 2^-64 and
// both lines decreasing in t: accept if (y0 + 1) H <= 2^64 al - dl (t0 + 1),
// reject if y0 H >= 2^64 au - du t0.
func squeeze(p *piece, t0, y0 uint64) int {
	if y0 == math.MaxUint64 || t0 == math.MaxUint64 {
		return 0
	}
	lh, ll := bits.Mul64(y0+1, p.h)
	dh, dl := bits.Mul64(p.dl, t0+1)
	rl, borrow := bits.Sub64(0, dl, 0)
	rh, borrow := bits.Sub64(p.al, dh, borrow)
	if borrow == 0 && (lh < rh || lh == rh && ll <= rl) {
		return 1
	}
	lh, ll = bits.Mul64(y0, p.h)
	dh, dl = bits.Mul64(p.du, t0)
	rl, borrow = bits.Sub64(0, dl, 0)
	rh, borrow = bits.Sub64(p.au, dh, borrow)
	if borrow != 0 || lh > rh || lh == rh && ll >= rl {
		return -1
	}
	return 0
}

// tail draws from the rest entry: with probability tail/rest (else the
// dead mass) it draws a tail piece and its acceptance test (tailPiece),
// reporting whether a deviate was accepted, and its b (see magnitude).
func (s *Sampler) tail() (uint64, bool) {
	if s.uniform(s.t.rest<<s.t.tailShift) >= s.t.tail {
		return 0, false // the dead mass
	}
	return s.tailPiece()
}

// tailPiece draws tail piece k with probability 2^-(k+1) (its weight over
// the tail's), a uniform point of it and the acceptance test against its
// height 2^(q-k).
func (s *Sampler) tailPiece() (uint64, bool) {
	var k uint64
	for {
		u := s.next()
		k += uint64(bits.TrailingZeros64(u))
		if u != 0 {
			break
		}
	}
	b := uint64(nCore) + k<<pieceBits
	s.t0 = s.next()
	s.tw = append(s.tw[:0], s.t0)
	s.yw = append(s.yw[:0], s.next())
	return b, s.accept(b, 1<<pieceBits, big.NewInt(1), s.t.q-int(k))
}

// uniform returns an integer uniform on [0, n), n >= 1, by rejection.
func (s *Sampler) uniform(n uint64) uint64 {
	sh := uint(bits.LeadingZeros64(n - 1))
	if n == 1 {
		return 0
	}
	for {
		if v := s.next() >> sh; v < n {
			return v
		}
	}
}

// word returns the i-th word (0-based) of ws, drawing the words up to it.
func (s *Sampler) word(ws *[]uint64, i int) {
	for len(*ws) <= i {
		*ws = append(*ws, s.next())
	}
}

// prefix returns the integer of the words ws, most significant first.
func prefix(ws []uint64) *big.Int {
	z := new(big.Int)
	wb := make([]big.Word, len(ws))
	for i, v := range ws {
		wb[len(ws)-1-i] = big.Word(v)
	}
	return z.SetBits(wb)
}

// accept decides y H < F(x) exactly for the deviate x with
// x 2^(pieceBits + p) in [b 2^p + width T, b 2^p + width (T + 1)] (T the
// first p bits of the fraction, s.tw), y uniform on [0, 1) (s.yw) and the
// height H = hm 2^he, drawing further words of both until the bounds
// decide: F(x) = k 2^(fBits - kappaBits) f(x) with f(x) between its values
// at the two ends, each bracketed by expBracket. It never decides on a
// rounded value: an undecided comparison draws 64 more bits of each.
func (s *Sampler) accept(b, width uint64, hm *big.Int, he int) bool {
	kb := new(big.Int).SetUint64(s.t.k)
	for m := 1; ; m++ {
		s.word(&s.tw, m-1)
		s.word(&s.yw, m-1)
		p := uint(64 * m)
		x0 := new(big.Int).Lsh(new(big.Int).SetUint64(b), p)
		x0.Add(x0, new(big.Int).Mul(new(big.Int).SetUint64(width), prefix(s.tw[:m])))
		x1 := new(big.Int).Add(x0, new(big.Int).SetUint64(width))
		// x^2/2 in [x0^2, x1^2] 2^-(2 (pieceBits + p) + 1).
		sh := 2*(pieceBits+p) + 1
		q := p + 64
		flo, _ := expBracket(new(big.Int).Mul(x1, x1), sh, q)
		_, fhi := expBracket(new(big.Int).Mul(x0, x0), sh, q)
		// y H vs k 2^(fBits - kappaBits) f with y in [Y, Y+1] 2^-p,
		// f in [flo, fhi] 2^-q: compare
		// Y hm 2^(he + q) with k flo 2^(fBits - kappaBits + p).
		y := prefix(s.yw[:m])
		lhs := func(y *big.Int) *big.Int { return new(big.Int).Mul(y, hm) }
		rhs := func(f *big.Int) *big.Int { return new(big.Int).Mul(kb, f) }
		ls, rs := he+int(q), fBits-kappaBits+int(p)
		if c := cmpShifted(lhs(new(big.Int).Add(y, big.NewInt(1))), ls, rhs(flo), rs); c <= 0 {
			return true // y H < (Y+1) 2^-p H <= F(x)
		}
		if c := cmpShifted(lhs(y), ls, rhs(fhi), rs); c >= 0 {
			return false // y H >= Y 2^-p H >= F(x)
		}
	}
}

// cmpShifted compares a 2^as with b 2^bs for a, b >= 0.
func cmpShifted(a *big.Int, as int, b *big.Int, bs int) int {
	m := min(as, bs)
	a = new(big.Int).Lsh(a, uint(as-m))
	b = new(big.Int).Lsh(b, uint(bs-m))
	return a.Cmp(b)
}

// roundFast returns round((w + s sigma x)/lambda) for sigma = ms 2^(le+32)
// (ms in [2^52, 2^53): sigma/lambda = ms 2^-32), lambda = 2^le, s the sign
// (negative if neg) and x in [i 2^64 + t0, i 2^64 + t0 + 1] 2^-(pieceBits +
// 64), i < nCore, when int64 arithmetic in units of 2^-fastBits lambda
// settles it, and false otherwise: see roundFastScaled.
func roundFast(w float64, ms uint64, le int, i, t0 uint64, neg bool) (int64, bool) {
	return roundFastScaled(w, unitScale(le), ms, i, t0, neg)
}

// fastBits is the fraction of a lattice step that roundFast keeps: it
// counts in units of 2^-fastBits lambda.
const fastBits = 20

// unitScale returns 2^(fastBits - le), the factor that writes w/lambda in
// units of 2^-fastBits for lambda = 2^le, or 0 when that is not a normal
// float64 (roundFastScaled then answers for w = 0 only).
func unitScale(le int) float64 {
	if e := fastBits - le; -1022 <= e && e <= 1023 {
		return math.Ldexp(1, e)
	}
	return 0
}

// roundFastScaled is roundFast with sw = unitScale(le), hoisted out of
// AddSnapped's loop (wUnits, then roundUnits, which has no branch: the
// sign is arithmetic).
// sigma x / lambda = ms x' 2^-104 with x' in [X, X + 1], X = i 2^64 + t0,
// lies in [P, P + 2) 2^-fastBits for P = floor(ms X 2^-84) (ms X < 2^128,
// and ms < 2^53 adds less than one unit). w/lambda in those units is
// v = w sw, exact when v is a normal float64 (a product by a power of
// two), and when it is subnormal but not 0 its floor and ceiling are still
// those of the exact value (both are within (-1, 1) with its sign); it is
// bracketed by [floor v, ceil v] when |v| < 2^62, and the answer is false
// otherwise, or when v is 0 for a w that is not (an underflow, or sw = 0).
func roundFastScaled(w, sw float64, ms, i, t0 uint64, neg bool) (int64, bool) {
	w0, w1, wok := wUnits(w, sw)
	k, ok := roundUnits(w0, w1, ms, i, t0, neg)
	return k, ok && wok
}

// wUnits returns floor(v) and ceil(v) for v = w sw, and whether they
// bracket w/lambda in units of 2^-fastBits (see roundFastScaled); the two
// parts of roundFastScaled are short enough to be inlined in AddSnapped.
// The floor and ceiling come from v's truncation, without math.Floor's
// call on CPUs without SSE4.1: float64(c) is exact (v is an integer when
// |v| >= 2^53).
func wUnits(w, sw float64) (w0, w1 int64, ok bool) {
	v := w * sw
	c := int64(v) // toward 0
	fc := float64(c)
	return c - b2i(fc > v), c + b2i(fc < v), -0x1p62 < v && v < 0x1p62 && (v != 0 || w == 0)
}

// roundUnits returns round((w + s sigma x)/lambda) and whether the
// interval below settles it, for w/lambda in [w0, w1] 2^-fastBits and
// sigma x/lambda in [P, P + 2) 2^-fastBits (see roundFastScaled). The
// value is in [w0 + P, w1 + P + 2] for s = +1 and in [w0 - P - 2, w1 - P]
// for s = -1: with n = 1 for s = -1, 0 else, [w0 + sP - 2n,
// w1 + sP + 2 - 2n]. It has no branch.
func roundUnits(w0, w1 int64, ms, i, t0 uint64, neg bool) (int64, bool) {
	const f = fastBits
	hi, _ := bits.Mul64(ms, t0)
	hi += ms * i                // < 2^53 + 2^53 (nCore - 1) < 2^64: no carry
	p := int64(hi >> (84 - 64)) // floor(ms X 2^-84)
	n := b2i(neg)
	// sP - 2n = (p ^ -n) + n - 2n, plus the half of the rounding.
	lo := (p ^ -n) - n + 1<<(f-1)
	k0, k1 := (w0+lo)>>f, (w1+lo+2)>>f
	return k0, k0 == k1
}

// b2i returns 1 for true, 0 for false (without a branch).
func b2i(b bool) int64 {
	var n int64
	if b {
		n = 1
	}
	return n
}

// roundExact returns round((w + s sigma x)/lambda) for sigma = ms 2^es,
// lambda = 2^le, s the sign (negative if neg) and x as magnitude returns it
// (b, width and the words s.tw), drawing further words of the fraction
// until the interval of the value rounds to one integer.
func (s *Sampler) roundExact(w float64, ms uint64, es, le int, b, width uint64, neg bool) *big.Int {
	s.words()
	var mw *big.Int
	ew := 0
	if w != 0 {
		m, e := split(w)
		mw, ew = big.NewInt(m), e
	}
	for m := 1; ; m++ {
		s.word(&s.tw, m-1)
		p := 64 * m
		x0 := new(big.Int).Lsh(new(big.Int).SetUint64(b), uint(p))
		x0.Add(x0, new(big.Int).Mul(new(big.Int).SetUint64(width), prefix(s.tw[:m])))
		x1 := new(big.Int).Add(x0, new(big.Int).SetUint64(width))
		// sigma x/lambda in ms [x0, x1] 2^(es - le - pieceBits - p) and
		// w/lambda = mw 2^(ew - le), over the denominator 2^g.
		ex := es - le - pieceBits - p
		g := max(1, -ex)
		if mw != nil {
			g = max(g, le-ew)
		}
		ms := new(big.Int).SetUint64(ms)
		n0 := new(big.Int).Lsh(new(big.Int).Mul(ms, x0), uint(g+ex))
		n1 := new(big.Int).Lsh(new(big.Int).Mul(ms, x1), uint(g+ex))
		if neg {
			n0, n1 = n1.Neg(n1), n0.Neg(n0)
		}
		if mw != nil {
			c := new(big.Int).Lsh(mw, uint(g+ew-le))
			n0.Add(n0, c)
			n1.Add(n1, c)
		}
		half := new(big.Int).Lsh(big.NewInt(1), uint(g-1))
		k0 := n0.Add(n0, half)
		k0.Rsh(k0, uint(g)) // arithmetic: floor
		k1 := n1.Add(n1, half)
		k1.Rsh(k1, uint(g))
		if k0.Cmp(k1) == 0 {
			return k0
		}
	}
}

// latticeFloat returns the float64 written for the lattice point k 2^le:
// the nearest float64 (ties to even), and +0 for a value that rounds to
// zero. It is a function of (k, le) alone, whichever path found k.
func latticeFloat(k *big.Int, le int) float64 {
	if k.IsInt64() {
		if v := k.Int64(); -1<<53 <= v && v <= 1<<53 {
			return latticeInt(v, le)
		}
	}
	f := new(big.Float).SetInt(k)
	f.SetMantExp(f, le)
	v, _ := f.Float64()
	if v == 0 {
		return 0
	}
	return v
}

// latticeInt is latticeFloat for |k| <= 2^53: float64(k) is exact, and
// math.Ldexp rounds k 2^le once, to nearest even (in the subnormal range
// too), as big.Float does.
func latticeInt(k int64, le int) float64 {
	v := math.Ldexp(float64(k), le)
	if v == 0 {
		return 0
	}
	return v
}

// split returns mw and ew with w = mw 2^ew exactly, |mw| < 2^53, for a
// finite w (mw = 0 for a zero w).
func split(w float64) (mw int64, ew int) {
	b := math.Float64bits(w)
	exp := int(b>>52) & 0x7ff
	mw = int64(b & (1<<52 - 1))
	if exp == 0 {
		ew = -1074 // subnormal (or zero)
	} else {
		mw |= 1 << 52
		ew = exp - 1075
	}
	if b>>63 != 0 {
		mw = -mw
	}
	return mw, ew
}
