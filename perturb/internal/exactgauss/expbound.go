package exactgauss

import "math/big"

// expBracket returns integers lo <= 2^p exp(-num/2^sh) <= hi, for num >= 0,
// computed with integer operations only (no rounding is ever assumed), and
// with hi - lo at most a few units for every p.
//
// Method: with r the least integer >= 0 such that u = num/2^(sh+r) <= 1/2,
// exp(-num/2^sh) = exp(-u)^(2^r). exp(-u) is the sum of the alternating
// series sum_j (-u)^j/j!, whose terms decrease for u <= 1, so the partial
// sum S_J is within the next term u^(J+1)/(J+1)! of the limit. Each term is
// kept as an interval [floor, ceil] of its value times 2^q, the partial sum
// as the interval of the sums of those bounds; the series stops when the
// upper bound of a term is at most 1 (in units of 2^-q), which then bounds
// the remainder. The interval of exp(-u) is squared r times (floor of the
// lower bound's square, ceiling of the upper's) and brought to 2^p. The
// working precision q = p + 2r + 32 leaves room for the few units lost per
// term and the doubling of the relative error in each squaring.
func expBracket(num *big.Int, sh uint, p uint) (lo, hi *big.Int) {
	if num.Sign() <= 0 {
		one := new(big.Int).Lsh(big.NewInt(1), p)
		return one, new(big.Int).Set(one)
	}
	r := 0
	if n := num.BitLen() - int(sh) + 1; n > 0 {
		r = n // num < 2^(sh+r-1), so u < 1/2
	}
	q := p + 2*uint(r) + 32
	den := uint(int(sh) + r) // u = num / 2^den

	one := new(big.Int).Lsh(big.NewInt(1), q)
	tlo, thi := new(big.Int).Set(one), new(big.Int).Set(one)
	slo, shi := new(big.Int).Set(one), new(big.Int).Set(one)
	mod := new(big.Int)
	jb := new(big.Int)
	for j := int64(1); ; j++ {
		jb.SetInt64(j)
		// T_j = T_{j-1} u / j: floor for the lower bound, ceiling for the upper.
		tlo.Mul(tlo, num)
		tlo.Rsh(tlo, den)
		tlo.Quo(tlo, jb)
		thi.Mul(thi, num)
		thi, mod = ceilShift(thi, den, mod)
		thi.QuoRem(thi, jb, mod)
		if mod.Sign() != 0 {
			thi.Add(thi, big.NewInt(1))
		}
		if j%2 == 1 {
			slo.Sub(slo, thi)
			shi.Sub(shi, tlo)
		} else {
			slo.Add(slo, tlo)
			shi.Add(shi, thi)
		}
		if thi.Cmp(big.NewInt(1)) <= 0 {
			break // the remainder is at most the next term < thi <= 1
		}
	}
	slo.Sub(slo, big.NewInt(1))
	shi.Add(shi, big.NewInt(1))
	if slo.Sign() < 0 {
		slo.SetInt64(0)
	}
	for range r {
		slo.Mul(slo, slo)
		slo.Rsh(slo, q)
		shi.Mul(shi, shi)
		shi, mod = ceilShift(shi, q, mod)
	}
	slo.Rsh(slo, q-p)
	shi, _ = ceilShift(shi, q-p, mod)
	return slo, shi
}

// ceilShift sets x to ceil(x / 2^s) for x >= 0 and returns it, with tmp as
// scratch (returned for reuse).
func ceilShift(x *big.Int, s uint, tmp *big.Int) (*big.Int, *big.Int) {
	if tmp == nil {
		tmp = new(big.Int)
	}
	tmp.Lsh(big.NewInt(1), s)
	tmp.Sub(tmp, big.NewInt(1))
	x.Add(x, tmp)
	x.Rsh(x, s)
	return x, tmp
}
