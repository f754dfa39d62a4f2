package poisson

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// Rate returns the probability q with which a Sampler of expected batch b
// from n rows includes each row in each step: b/n
// rounded down to the largest float64 that is an integer multiple of
// 2^-64, q = m 2^-64 with m < 2^64 of at most 53 significant bits (1 when
// b = n). It is at most b/n, within a relative 2^-52 of it, and exactly
// the float64 it returns (the accountant takes that q). It panics unless
// 1 <= b <= n (a programmer's error: the callers check their settings
// first).
func Rate(n, b int) float64 {
	if b < 1 || b > n {
		panic(fmt.Sprintf("poisson: sampling an expected %d of %d rows", b, n))
	}
	if b == n {
		return 1
	}
	m, _ := bits.Div64(uint64(b), 0, uint64(n)) // floor(b 2^64 / n), b < n
	if l := bits.Len64(m); l > 53 {
		m &^= 1<<uint(l-53) - 1
	}
	return math.Ldexp(float64(m), -64) // m has at most 53 bits: exact
}

// Sampler draws the batches of DP-SGD by Poisson sampling: in each step
// every one of n rows independently with probability q = Rate(n, b), q =
// m 2^-64, exactly (all rows when b = n), from coins that never read the
// rows.
//
// A step costs expected O(qn + 1) time and coins, not O(n): the sampler
// draws the gaps between the selected rows, not a coin per row. The rows
// of the steps, step after step, form one sequence of coins B_1, B_2, ...,
// and the gaps between the successes are drawn as i.i.d. Geometric(q)
// variables G (P(G = k) = (1-q)^k q, k >= 0, the number of failures before
// a success), each from a fresh uniform U by inversion: G = max{k :
// U < p^k}, p = 1 - q, so that P(G >= k) = P(U < p^k) = p^k. The law is
// exact: for any pattern of n coins with successes at s_1 < ... < s_r,
// the gaps must be s_1, s_2 - s_1 - 1, ..., and the gap after s_r at
// least n - 1 - s_r, of probability (prod_j p^(g_j) q) p^(n-1-s_r) =
// q^r p^(n-r), the law of n independent Bernoulli(q) coins; and the gaps
// after a pattern are independent of it, so the coins of disjoint stretches
// (other steps) are independent. A gap that runs past a step carries into
// the next one: its coins are the next step's first coins.
//
// Each comparison U < p^k is exact. U is a sequence of uniform 64-bit
// words (its binary expansion, drawn as needed) and p^k = (a 2^-64)^k, a =
// 2^64 - m, a dyadic rational. The comparison first uses bounds lo <= p^k
// <= hi in float64 (a table of p^(i 256^l), each entry rounded outward,
// multiplied with outward rounding) against U's first 53 bits, in float64
// operations that are all exact; when they do not settle it (for p^k well
// above 2^-53, about once in 2^44 comparisons), p^k is bounded at 128
// bits, then 256, and so on, by math/big with directed rounding, against
// as many words of U as that precision needs, up to the exact value (64k
// bits), which always settles it. The first guess of G comes from a table
// of log2 in floating point; it decides only which comparisons are made,
// and G is found by the exact comparisons alone (G = k when U < p^k and U
// >= p^(k+1)), so the law does not depend on the guess's accuracy.
// One gap is at most maxGap; a gap that reaches it (U < p^maxGap) skips
// maxGap failures and draws the next gap afresh, which the independence
// of the coins allows.
type Sampler struct {
	coins rand.Source
	n     int
	q     float64 // m 2^-64
	all   bool
	a     uint64  // 2^64 - m: p = a 2^-64
	inv   float64 // 1/log2(p), for the guesses
	pow   *powTable
	next  int64    // the position of the next selected row, from the start of the step
	u     []uint64 // the words of the current uniform U drawn so far
	exact bool     // test-only: always take the exact comparison
}

// maxGap bounds one geometric draw: p^k is tabulated for k <= maxGap.
const maxGap = 1<<(8*powLevels) - 1

// New returns the sampler of batches of expected size b from n rows,
// drawing from coins (64 uniform bits per Uint64). It panics unless 1 <= b
// <= n and coins is not nil (a programmer's error: the callers check their
// settings first).
func New(coins rand.Source, n, b int) *Sampler {
	if coins == nil || b < 1 || b > n {
		panic(fmt.Sprintf("poisson: sampling an expected %d of %d rows (coins %v)", b, n, coins != nil))
	}
	q := Rate(n, b)
	s := &Sampler{coins: coins, n: n, q: q, all: q == 1}
	if !s.all {
		s.a = -uint64(math.Ldexp(q, 64)) // 2^64 - m, m = q 2^64 < 2^64
		s.inv = math.Ln2 / math.Log1p(-q)
		s.pow = newPowTable(s.a)
		s.u = make([]uint64, 0, 4)
		s.next = s.draw(0)
	}
	return s
}

// Rate returns the probability q = Rate(n, b) with which each row is in
// each batch.
func (s *Sampler) Rate() float64 { return s.q }

// Sample returns the indices of the rows of the next step, in increasing
// order, appended to batch[:0].
func (s *Sampler) Sample(batch []int) []int {
	batch = batch[:0]
	n := int64(s.n)
	if s.all {
		for i := range s.n {
			batch = append(batch, i)
		}
		return batch
	}
	for s.next < n {
		batch = append(batch, int(s.next))
		s.next = s.draw(s.next + 1)
	}
	s.next -= n
	return batch
}

// Peek returns the first row of the next step's batch when it is already
// drawn (it is when ok), without drawing: a caller may hint that row to
// the cache a step ahead.
func (s *Sampler) Peek() (row int, ok bool) {
	if s.all {
		return 0, true
	}
	return int(s.next), s.next < int64(s.n)
}

// draw returns the position of the first success among the coins from
// position from on: from plus a Geometric(q) gap, drawn maxGap coins at a
// time.
func (s *Sampler) draw(from int64) int64 {
	for {
		g, full := s.geometric()
		if !full {
			return from + g
		}
		from += maxGap
	}
}

// geometric returns min(G, maxGap) for a fresh Geometric(q) gap G and
// whether G >= maxGap.
func (s *Sampler) geometric() (int64, bool) {
	w := s.coins.Uint64()
	s.u = append(s.u[:0], w)
	u := float64(w >> 11) // U in [u 2^-53, (u+1) 2^-53), exactly
	// The guess: G = floor(log U / log p), U about its first bits.
	x := log2Word(u) * s.inv
	k := int64(maxGap)
	switch {
	case !(x > 0):
		k = 0
	case x < maxGap:
		k = int64(x)
	}
	if k < maxGap {
		// Most often U's first word settles U < p^k and U >= p^(k+1).
		lo, hi := s.pow.bounds(k)
		if under(u, lo) && over(u, up(hi*s.pow[0][1].hi)) {
			return k, false
		}
	}
	// G is the k in [0, maxGap] with U < p^k and, below maxGap, U >=
	// p^(k+1); lo <= G < hi is known as the search goes: the guess and
	// its neighbour first, then steps doubling away from them, then
	// bisection (a wrong guess costs comparisons, not exactness).
	lo, hi := int64(0), int64(maxGap)+1
	for step := int64(1); lo+1 < hi; step *= 2 {
		if s.below(k) {
			lo, k = k, min(k+step, hi-1)
		} else {
			hi, k = k, max(k-step, lo)
		}
		if step > hi-lo {
			break
		}
	}
	for lo+1 < hi {
		if mid := lo + (hi-lo)/2; s.below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, lo == maxGap
}

// below reports whether U < p^k, exactly (k >= 0).
func (s *Sampler) below(k int64) bool {
	if k == 0 {
		return true
	}
	if !s.exact {
		lo, hi := s.pow.bounds(k)
		switch u := float64(s.u[0] >> 11); {
		case under(u, lo):
			return true
		case over(u, hi):
			return false
		}
	}
	return s.belowExact(k)
}

// under reports whether U < lo is settled by u = float64 of U's first 53
// bits: U < (u+1) 2^-53 <= lo. Every operation is exact.
func under(u, lo float64) bool { return u+1 <= lo*0x1p53 }

// over reports whether U >= hi is settled by u = float64 of U's first 53
// bits: U >= u 2^-53 > hi. Every operation is exact.
func over(u, hi float64) bool { return u > hi*0x1p53 }

// log2Word returns log2((u + 1/2) 2^-53) for 0 <= u < 2^53 within about
// 1e-10: the exponent, log2 of the first 8 bits beyond the leading one
// from a table, and three terms of the series of log2(1 + t), 0 <= t <
// 2^-8. It is a guess.
func log2Word(u float64) float64 {
	b := math.Float64bits(u + 0.5) // m 2^e, m in [1, 2)
	e := int(b>>52) - 1023
	i := b >> 44 & 255
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	t := (m - (1 + float64(i)/256)) * log2Tab[i].recip
	return float64(e-53) + log2Tab[i].log2 + t*(1-t*(0.5-t*third))*math.Log2E
}

// third is 1/3 rounded: log2Word multiplies by it, which a division would
// make several times slower (the guess needs no more accuracy).
const third = 1.0 / 3

// log2Tab holds log2(1 + i/256) and 1/(1 + i/256).
var log2Tab = func() (t [256]struct{ log2, recip float64 }) {
	for i := range t {
		x := 1 + float64(i)/256
		t[i].log2, t[i].recip = math.Log2(x), 1/x
	}
	return t
}()

// belowExact reports whether U < p^k (k >= 1) by bounds on p^k at a
// precision doubled until they settle it: at 64k bits they are p^k itself.
func (s *Sampler) belowExact(k int64) bool {
	for prec := uint(128); ; prec *= 2 {
		exact := uint64(prec) >= 64*uint64(k)
		if exact {
			prec = uint(64 * k)
		}
		lo, elo := s.power(k, prec, big.ToZero)
		if s.lessThan(lo, elo) {
			return true
		}
		hi, ehi := s.power(k, prec, big.AwayFromZero)
		if !s.lessThan(hi, ehi) || exact {
			return false // U >= hi >= p^k; exact: hi = lo = p^k
		}
	}
}

// power returns p^k = m 2^e with m in [1/2, 1) of prec >= 64 bits,
// every product of the powering rounded by mode: a lower bound for
// big.ToZero, an upper one for big.AwayFromZero, p^k itself when prec >=
// 64k (no product is rounded). The exponent is an int64: p^k may be below
// big.Float's range.
func (s *Sampler) power(k int64, prec uint, mode big.RoundingMode) (*big.Float, int64) {
	normal := func(x *big.Float, e *int64) { *e += int64(x.MantExp(x)) }
	r := new(big.Float).SetPrec(prec).SetMode(mode).SetInt64(1)
	b := new(big.Float).SetPrec(prec).SetMode(mode).SetUint64(s.a) // exact: prec >= 64
	re, be := int64(0), int64(-64)
	normal(r, &re)
	normal(b, &be)
	for {
		if k&1 == 1 {
			r.Mul(r, b)
			re += be
			normal(r, &re)
		}
		if k >>= 1; k == 0 {
			return r, re
		}
		b.Mul(b, b)
		be *= 2
		normal(b, &be)
	}
}

// lessThan reports whether U < c for c = m 2^e, m in [1/2, 1) a
// big.Float of prec bits, drawing the words of U it needs. c is a
// multiple of 2^(e - prec): after the words above 2^e, which must be zero
// for U < c, enough words of U to reach that resolution settle it exactly.
func (s *Sampler) lessThan(m *big.Float, e int64) bool {
	if e > 0 {
		return true // c >= 1 > U
	}
	j0 := (-e) / 64 // c < 2^e <= 2^(-64 j0)
	for j := range j0 {
		if s.word(j) != 0 {
			return false // U >= 2^(-64 (j+1)) >= 2^(-64 j0) > c
		}
	}
	// U = 2^(-64 j0) V and c = 2^(-64 j0) M 2^(-(prec + r)), r = -e - 64 j0
	// in [0, 64), M = m 2^prec an integer: with t words of V, 64 t >=
	// prec + r, V < c' exactly when the integer of V's t words is below
	// M 2^(64 t - prec - r).
	prec, r := int64(m.Prec()), -e-64*j0
	t := (prec + r + 63) / 64
	M, _ := new(big.Float).SetMantExp(m, int(prec)).Int(nil)
	M.Lsh(M, uint(64*t-prec-r))
	V := new(big.Int)
	w := new(big.Int)
	for j := range t {
		V.Lsh(V, 64).Or(V, w.SetUint64(s.word(j0+j)))
	}
	return V.Cmp(M) < 0
}

// word returns word j of U (0 the first), drawing the words up to it.
func (s *Sampler) word(j int64) uint64 {
	for int64(len(s.u)) <= j {
		s.u = append(s.u, s.coins.Uint64())
	}
	return s.u[j]
}

// The table of p^k: powLevels levels of 256 entries, entry i of level l
// bounding p^(i 256^l).
const (
	powLevels = 4
	// powTiny is where the table stops: an entry below it is [0, powTiny],
	// so that the products of the four levels stay normal floats.
	powTiny = 0x1p-200
)

// powTable holds float64 bounds lo <= p^(i 256^l) <= hi.
type powTable [powLevels][256]struct{ lo, hi float64 }

// newPowTable returns the table of p = a 2^-64: each entry is the power
// computed at 128 bits with every product rounded toward zero (for lo) or
// away from it (for hi), then rounded outward to float64; an entry below
// powTiny is [0, powTiny].
func newPowTable(a uint64) *powTable {
	t := new(powTable)
	for _, mode := range []big.RoundingMode{big.ToZero, big.AwayFromZero} {
		lower := mode == big.ToZero
		base := new(big.Float).SetPrec(128).SetMode(mode).SetUint64(a)
		be := int64(-64) + int64(base.MantExp(base)) // p = base 2^be
		for l := range powLevels {
			x := new(big.Float).SetPrec(128).SetMode(mode).SetInt64(1)
			xe := int64(x.MantExp(x))
			for i := range 256 {
				if i > 0 {
					x.Mul(x, base)
					xe += be + int64(x.MantExp(x))
				}
				e := &t[l][i]
				switch {
				case xe <= -200 && lower: // x < 2^xe <= powTiny
					e.lo = 0
				case xe <= -200:
					e.hi = powTiny
				case lower:
					e.lo = outward(x, xe, lower)
				default:
					e.hi = outward(x, xe, lower)
				}
			}
			x.Mul(x, base) // p^(256^(l+1)), the next level's base
			base, be = x, xe+be+int64(x.MantExp(x))
		}
	}
	return t
}

// outward returns m 2^e (m in [1/2, 1), e > -200) rounded to float64 down
// (lower) or up.
func outward(m *big.Float, e int64, lower bool) float64 {
	f, acc := m.Float64()
	switch {
	case lower && acc == big.Above:
		f = math.Nextafter(f, 0)
	case !lower && acc == big.Below:
		f = math.Nextafter(f, 2)
	}
	return math.Ldexp(f, int(e)) // at least 2^-201: exact
}

// bounds returns lo <= p^k <= hi for 0 <= k <= maxGap: the product of
// the entries of k's base-256 digits, each product rounded outward by an
// ulp (every product is a normal float: the entries are 0 or at least
// 2^-200).
func (t *powTable) bounds(k int64) (lo, hi float64) {
	lo, hi = 1, 1
	for l := 0; k != 0; l, k = l+1, k>>8 {
		if i := k & 255; i != 0 {
			e := &t[l][i]
			lo, hi = down(lo*e.lo), up(hi*e.hi)
		}
	}
	return lo, hi
}

// down returns the float64 below x > 0 (0 for x = 0): a lower bound of a
// product rounded to x, for a normal x.
func down(x float64) float64 {
	if x == 0 {
		return 0
	}
	return math.Float64frombits(math.Float64bits(x) - 1)
}

// up returns the float64 above x >= 0: an upper bound of a product rounded
// to x.
func up(x float64) float64 { return math.Float64frombits(math.Float64bits(x) + 1) }
