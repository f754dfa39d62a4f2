package exactgauss

import (
	"fmt"
	"math/big"
	"testing"
)

// fAt returns lo <= F(x) <= hi for x = (i + t/2^16) 2^-pieceBits (t in
// [0, 2^16]), F = k 2^(fBits - kappaBits) f, rounded outwards to integers.
func fAt(k uint64, i int64, t int64) (lo, hi *big.Int) {
	n := big.NewInt(i<<16 + t)
	n.Mul(n, n) // x^2/2 = n 2^-(2 (pieceBits + 16) + 1)
	l, h := expBracket(n, 2*(pieceBits+16)+1, bracketP)
	return scaleF(k, l, false), scaleF(k, h, true)
}

// TestTables checks the proposal: the alias table gives every entry exactly
// its weight out of 2^64 (core piece i: H_i, the rest: 2^64 - sum H_i, at
// least the tail's weight); every height bounds F on its piece from above
// and every squeeze bounds it from below (at 5 points of each piece, with
// F bracketed independently); the lines of each piece bound F from both
// sides at those points; the tail's first height bounds F at its start.
func TestTables(t *testing.T) {
	tb, err := buildTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tableProblems(tb) {
		t.Error(p)
	}
	// Negative controls: a height 2 units low, a lower line 2^20 units
	// high, a threshold 1 unit off.
	for name, corrupt := range map[string]func(*tables){
		"height": func(c *tables) { c.pieces[0].h -= 2 },
		"line":   func(c *tables) { c.pieces[500].al += 1 << 20 },
		"alias":  func(c *tables) { c.cols[7].thr-- },
	} {
		c := *tb
		corrupt(&c)
		if len(tableProblems(&c)) == 0 {
			t.Errorf("a corrupted %s passes the checks", name)
		}
	}
}

// tableProblems returns what is wrong with tb (nothing, for a right one).
func tableProblems(tb *tables) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	got := make([]uint64, nCols)
	for j, c := range tb.cols {
		got[j] += uint64(c.thr)
		got[c.alias] += colCap - uint64(c.thr)
		if c.yOwn != tb.yTop(j) || c.yAlias != tb.yTop(int(c.alias)) {
			bad("column %d: squeezes %d, %d, want those of entries %d and %d", j, c.yOwn, c.yAlias, j, c.alias)
		}
	}
	var sum uint64
	for i := range nCore {
		if got[i] != tb.pieces[i].h {
			bad("piece %d: weight %d in the alias table, want H = %d", i, got[i], tb.pieces[i].h)
		}
		sum += got[i]
	}
	if got[nCore] != tb.rest || 1<<totalBits-sum != tb.rest {
		bad("rest: %d in the table, %d stated, 2^%d - sum H = %d", got[nCore], tb.rest, totalBits, 1<<totalBits-sum)
	}
	if tb.rest<<tb.tailShift < tb.tail || tb.tail != 1<<(tb.q+pieceBits+1+int(tb.tailShift)) {
		bad("tail %d (q = %d, shift %d) above the rest %d", tb.tail, tb.q, tb.tailShift, tb.rest)
	}
	// F(tailStart) = k f 2^-fShift <= 2^q, with f's bracket at a precision of
	// its own: k lo 2^-(fShift + 64) (lo of 2^(bracketP+64) f) at most 2^q.
	lo, _ := expBracket(big.NewInt(nCore*nCore), 2*pieceBits+1, bracketP+64)
	if k := new(big.Int).Mul(lo, new(big.Int).SetUint64(tb.k)); k.BitLen()-(fShift+64) > tb.q {
		bad("F(tailStart) above the tail's height 2^%d", tb.q)
	}

	for i := range nCore {
		p := &tb.pieces[i]
		h := new(big.Int).SetUint64(p.h)
		// The flat squeeze: y/2^64 <= L/H with L <= F on the piece, that is
		// y H <= 2^64 F(a_{i+1}). A bound is wrong only if it is on the
		// wrong side of F's bracket (F's bracket is within a unit).
		_, fEnd := fAt(tb.k, int64(i+1), 0)
		yH := new(big.Int).Mul(new(big.Int).SetUint64(p.y), h)
		if yH.Cmp(new(big.Int).Lsh(fEnd, 64)) > 0 {
			bad("piece %d: y H > 2^64 F(a_%d)", i, i+1)
		}
		for s := int64(0); s <= 1<<16; s += 1 << 14 {
			lo, hi := fAt(tb.k, int64(i), s)
			if lo.Cmp(h) > 0 {
				bad("piece %d at %d/2^16: F >= %v above H = %v", i, s, lo, h)
			}
			// Lines at t = s/2^16, times 2^16.
			al := new(big.Int).Lsh(new(big.Int).SetUint64(p.al), 16)
			al.Sub(al, new(big.Int).Mul(new(big.Int).SetUint64(p.dl), big.NewInt(s)))
			au := new(big.Int).Lsh(new(big.Int).SetUint64(p.au), 16)
			au.Sub(au, new(big.Int).Mul(new(big.Int).SetUint64(p.du), big.NewInt(s)))
			if al.Cmp(new(big.Int).Lsh(hi, 16)) > 0 {
				bad("piece %d at %d/2^16: the lower line is above F", i, s)
			}
			if au.Cmp(new(big.Int).Lsh(lo, 16)) < 0 {
				bad("piece %d at %d/2^16: the upper line is below F", i, s)
			}
		}
	}
	return out
}

// y returns the flat squeeze of entry e (0 for the rest).
func (t *tables) y(e int) uint64 {
	if e == nCore {
		return 0
	}
	return t.pieces[e].y
}
