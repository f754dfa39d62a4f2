package exactgauss

import (
	"math"
	"math/big"
	"testing"
)

// TestExpBracket checks lo <= 2^p exp(-num/2^sh) <= hi: against math.Exp
// (to 1e-13 relative, far above its error), the width of the bracket, the
// exact value at 0, and, with no floating point at all, the identity
// exp(-a) exp(-b) = exp(-(a+b)) on the brackets.
func TestExpBracket(t *testing.T) {
	for _, p := range []uint{53, 64, 128} {
		for _, sh := range []uint{0, 3, 17, 40} {
			for _, n := range []int64{0, 1, 2, 3, 7, 100, 1 << 20, 123456789, 1 << 40} {
				a := math.Ldexp(float64(n), -int(sh))
				if a > 700 {
					continue
				}
				lo, hi := expBracket(big.NewInt(n), sh, p)
				if lo.Cmp(hi) > 0 {
					t.Fatalf("p %d, %d/2^%d: lo %v > hi %v", p, n, sh, lo, hi)
				}
				if w := new(big.Int).Sub(hi, lo); w.Cmp(big.NewInt(4)) > 0 {
					t.Errorf("p %d, %d/2^%d: width %v > 4", p, n, sh, w)
				}
				if n == 0 && (lo.Cmp(hi) != 0 || lo.BitLen() != int(p)+1) {
					t.Errorf("p %d: exp(0) bracket [%v, %v], want exactly 2^p", p, lo, hi)
				}
				want := math.Exp(-a)
				got, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(lo), -int(p)).Float64()
				if tol := 1e-13*want + math.Ldexp(4, -int(p)); math.Abs(got-want) > tol {
					t.Errorf("p %d, exp(-%v): bracket at %v, math.Exp %v", p, a, got, want)
				}
			}
		}
	}
	// exp(-a) exp(-b) = exp(-(a+b)) for a = x/2^10, b = y/2^10: the
	// product of the lower bounds is at most the upper bound of the sum,
	// and the product of the upper bounds at least its lower bound.
	const p, sh = 96, 10
	for _, xy := range [][2]int64{{1, 1}, {3, 5000}, {1000, 1000}, {12345, 678}, {30000, 2}} {
		la, ha := expBracket(big.NewInt(xy[0]), sh, p)
		lb, hb := expBracket(big.NewInt(xy[1]), sh, p)
		ls, hs := expBracket(big.NewInt(xy[0]+xy[1]), sh, p)
		lo := new(big.Int).Mul(la, lb)
		hi := new(big.Int).Mul(ha, hb)
		if lo.Cmp(new(big.Int).Lsh(hs, p)) > 0 || hi.Cmp(new(big.Int).Lsh(ls, p)) < 0 {
			t.Errorf("%v: the brackets of exp(-a) exp(-b) and of exp(-(a+b)) are disjoint", xy)
		}
	}
}
