package exactgauss

import (
	"fmt"
	"math/big"
	"math/bits"
	"sync"
)

// The proposal of the rejection sampler (see the package doc).
//
// f(x) = exp(-x^2/2) on [0, inf) is covered by nCore pieces of width
// 2^-pieceBits, piece i on [a_i, a_i + 2^-pieceBits) with a_i = i 2^-pieceBits,
// and a tail from tailStart = nCore 2^-pieceBits made of unit pieces
// [tailStart + k, tailStart + k + 1), k = 0, 1, .... Heights are in units
// where F(x) = kappa 2^fBits f(x), kappa = table.k / 2^20 (an integer over a
// power of two, so every quantity below is an integer or a dyadic
// rational). Piece i has height H_i >= F(a_i) >= F on the piece (f
// decreases on [0, inf)); tail piece k has height 2^(q-k) >= F(tailStart + k)
// >= F on it, since F(tailStart + k)/F(tailStart) = exp(-tailStart k - k^2/2)
// <= 2^-k. A piece is chosen with probability proportional to its height
// times its width: in units of (height unit) x 2^-pieceBits, core piece i
// weighs H_i and the whole tail 2^pieceBits sum_k 2^(q-k) = 2^(q+pieceBits+1)
// (q may be negative: the tail weighs less than a unit, and the rest entry
// is split between it and the dead mass in units 2^-tailShift).
// The weights, with a rest entry (the tail plus an unused "dead" mass that
// makes them add up to exactly 2^totalBits), fill an alias table (Walker
// 1977, Vose 1991) of nCols = 2^colBits columns of capacity colCap =
// 2^thrBits, built in integer arithmetic, so that totalBits uniform bits
// pick an entry with probability exactly its weight / 2^totalBits. A 64-bit
// word gives them (its top bits) and the first 64 - totalBits bits of the
// acceptance test's uniform (its low bits), which are independent of them.
const (
	pieceBits = 8
	colBits   = 11
	thrBits   = 32
	totalBits = colBits + thrBits
	yBits     = 64 - totalBits // the bits of the uniform y in the first word
	nCols     = 1 << colBits
	nCore     = nCols - 1 // pieces 0 .. nCore-1; entry nCore is the rest
	colCap    = 1 << thrBits
	kappaBits = 20  // kappa = k / 2^kappaBits
	fBits     = 32  // F = kappa 2^fBits f
	bracketP  = 128 // the precision of the table's brackets of f
)

// piece holds the constants of core piece i (F in the units above, t the
// position in the piece, x = a_i + t 2^-pieceBits, t in [0, 1)):
//
//	h        H_i, the height, >= F(a_i)
//	y        floor(2^64 L_i / H_i) with L_i <= F(a_{i+1}) <= F on the piece:
//	         a uniform y below y 2^-64 is accepted at once
//	al, dl   the lower line al - dl t <= F(a_i + t 2^-pieceBits)
//	au, du   the upper line au - du t >= F(a_i + t 2^-pieceBits)
type piece struct {
	h, y           uint64
	al, dl, au, du uint64
}

// column is one column of the alias table: a draw v uniform on
// [0, colCap) picks entry col if v < thr, else alias (a full column has
// thr 0 and itself as alias). yOwn and yAlias are floor(y / 2^(64-yBits))
// of the two entries' pieces (0 for the rest entry), kept here so that the
// usual draw reads one 16-byte column.
type column struct {
	thr          uint32
	yOwn, yAlias uint32
	alias        uint16
}

type tables struct {
	k    uint64 // kappa = k / 2^kappaBits
	q    int    // the tail's first height is 2^q, at least F(tailStart)
	rest uint64 // the rest entry's weight: the tail and the dead mass, 2^totalBits - sum H_i
	// In units of 2^-tailShift, the rest weighs rest 2^tailShift and the
	// tail tail = 2^(q+pieceBits+1+tailShift).
	tailShift uint
	tail      uint64
	pieces    [nCore]piece
	cols      [nCols]column
}

var (
	tabOnce sync.Once
	tab     *tables
)

// theTables returns the tables, built on first use (a few milliseconds).
func theTables() *tables {
	tabOnce.Do(func() {
		t, err := buildTables()
		if err != nil {
			panic(err) // the build is deterministic: its tests catch this
		}
		tab = t
	})
	return tab
}

// fBracket returns lo <= 2^bracketP f(a) <= hi at a = i 2^-pieceBits:
// f(a) = exp(-i^2 / 2^(2 pieceBits + 1)).
func fBracket(i int64) (lo, hi *big.Int) {
	n := big.NewInt(i)
	n.Mul(n, n)
	return expBracket(n, 2*pieceBits+1, bracketP)
}

// fShift is the shift from k times a bracket bound of 2^bracketP f to F =
// k 2^(fBits - kappaBits) f.
const fShift = bracketP - fBits + kappaBits

// scaleF returns floor (up false) or ceil (up true) of k v 2^-fShift: F
// for a bracket bound v of 2^bracketP f.
func scaleF(k uint64, v *big.Int, up bool) *big.Int {
	z := new(big.Int).Mul(v, new(big.Int).SetUint64(k))
	s := uint(fShift)
	if up {
		z, _ = ceilShift(z, s, nil)
		return z
	}
	return z.Rsh(z, s)
}

func buildTables() (*tables, error) {
	los := make([]*big.Int, nCore+1)
	his := make([]*big.Int, nCore+1)
	sum := new(big.Int)
	for i := range los {
		los[i], his[i] = fBracket(int64(i))
		if i < nCore {
			sum.Add(sum, his[i])
		}
	}
	// kappa fills 2^totalBits but for a margin of 2^21 (the tail and the
	// ceilings): k = floor((2^totalBits - 2^21) 2^fShift / sum) - 1.
	num := new(big.Int).Lsh(big.NewInt(1), totalBits)
	num.Sub(num, big.NewInt(1<<21))
	num.Lsh(num, fShift)
	num.Quo(num, sum)
	num.Sub(num, big.NewInt(1))
	if !num.IsUint64() {
		return nil, fmt.Errorf("exactgauss: kappa %v does not fit", num)
	}
	t := &tables{k: num.Uint64()}

	fLo := make([]uint64, nCore+1)
	fHi := make([]uint64, nCore+1)
	for i := range los {
		lo, hi := scaleF(t.k, los[i], false), scaleF(t.k, his[i], true)
		if !hi.IsUint64() {
			return nil, fmt.Errorf("exactgauss: F(a_%d) = %v does not fit", i, hi)
		}
		fLo[i], fHi[i] = lo.Uint64(), hi.Uint64()
	}
	// 2^q > F(tailStart) <= k his[nCore] 2^-fShift.
	t.q = new(big.Int).Mul(new(big.Int).SetUint64(t.k), his[nCore]).BitLen() - fShift
	t.tailShift = uint(max(0, -(t.q + pieceBits + 1)))
	t.tail = 1 << (t.q + pieceBits + 1 + int(t.tailShift))

	var total uint64
	for i := range nCore {
		total += fHi[i] // each < 2^(fBits+3): no overflow
	}
	if total > 1<<totalBits {
		return nil, fmt.Errorf("exactgauss: the weights %d exceed 2^%d", total, totalBits)
	}
	t.rest = 1<<totalBits - total
	if t.rest<<t.tailShift < t.tail || t.rest >= 1<<(63-t.tailShift) {
		return nil, fmt.Errorf("exactgauss: the rest %d is below the tail %d", t.rest, t.tail)
	}

	for i := range nCore {
		p := &t.pieces[i]
		p.h = fHi[i]
		lb := fLo[i+1] // L_i <= F(a_{i+1})
		if lb >= p.h {
			return nil, fmt.Errorf("exactgauss: piece %d: L %d >= H %d", i, lb, p.h)
		}
		p.y, _ = bits.Div64(lb, 0, p.h)
		// F is concave on [0, 1] and convex on [1, inf); 1 is the end of
		// piece 2^pieceBits - 1. 2^-pieceBits a_i = i 2^-(2 pieceBits).
		const s = 2 * pieceBits
		if i < 1<<pieceBits {
			// Lower: the chord through lower bounds. Upper: the tangent
			// at a_i, F(a_i)(1 - a_i 2^-pieceBits t), raised.
			p.al, p.dl = fLo[i], fLo[i]-fLo[i+1]
			p.au = fHi[i]
			hi, lo := bits.Mul64(fHi[i], uint64(i))
			p.du = hi<<(64-s) | lo>>s // floor(F_hi(a_i) i 2^-s)
		} else {
			// Upper: the chord through upper bounds. Lower: the tangent
			// at b = a_{i+1}, F(b)(1 + b 2^-pieceBits (1 - t)), lowered.
			p.au, p.du = fHi[i], fHi[i]-fHi[i+1]
			b := uint64(i + 1)
			hi, lo := bits.Mul64(fLo[i+1], b)
			p.al = fLo[i+1] + (hi<<(64-s) | lo>>s) // floor(F_lo(b) (1 + b 2^-s))
			c := hi<<(64-s) | lo>>s
			if lo&(1<<s-1) != 0 {
				c++
			}
			p.dl = c // ceil(F_lo(b) b 2^-s)
		}
	}

	w := make([]uint64, nCols)
	for i := range nCore {
		w[i] = fHi[i]
	}
	w[nCore] = t.rest
	if err := t.buildAlias(w); err != nil {
		return nil, err
	}
	for j := range t.cols {
		c := &t.cols[j]
		c.yOwn, c.yAlias = t.yTop(j), t.yTop(int(c.alias))
	}
	return t, nil
}

// buildAlias fills the columns from the weights w (nCols entries adding up
// to exactly 2^totalBits) by Vose's method in integer arithmetic: while a column is
// left, an entry s below the capacity takes a column of its own with
// threshold w_s, topped up by an entry l at or above it, whose weight drops
// by colCap - w_s. Every step keeps the weights left equal to colCap times
// the columns left, so the entries left at the end fill whole columns.
func (t *tables) buildAlias(w []uint64) error {
	var small, large []int
	for i, v := range w {
		if v < colCap {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		t.cols[s] = column{thr: uint32(w[s]), alias: uint16(l)}
		w[l] -= colCap - w[s]
		if w[l] < colCap {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		if w[i] != colCap {
			return fmt.Errorf("exactgauss: alias entry %d left with %d, want %d", i, w[i], uint64(colCap))
		}
		t.cols[i] = column{thr: 0, alias: uint16(i)} // always the alias: itself
	}
	return nil
}

// yTop returns floor(y / 2^(64-yBits)) of entry e's piece, 0 for the rest.
func (t *tables) yTop(e int) uint32 {
	if e == nCore {
		return 0
	}
	return uint32(t.pieces[e].y >> (64 - yBits))
}
