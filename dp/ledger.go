package dp

import (
	"fmt"
	"math"
	"math/big"
	"slices"
)

// The rule of the ledger's sums. A pipeline splits its claim among its
// steps, and floating point can make the charges add up to a little more
// than the claim (0.1 + (1 - 0.1) is 1 plus an ulp's worth in exact
// arithmetic). So every part that is "what the other steps leave" is
// computed by Rest, and an even split by Part: both round down, in exact
// rational arithmetic, so the charges never add up to more than the claim.
// Covers checks a ledger against its claim the same way: the charges are
// added as exact rationals (every float64 is one), never in floating
// point, so no rounding can make an overspent ledger pass.

// Rest returns what a claim of total leaves after steps that spent spent:
// the largest float64 r such that spent[0] + ... + spent[k-1] + r <= total
// holds in exact arithmetic. It is fl(total - sum) or the float64 just
// below it, and it does not depend on the order of spent. The result is
// not checked: it is 0 or negative when the steps spent all of total, and
// NaN when an input is not finite.
func Rest(total float64, spent ...float64) float64 {
	d, ok := exact(total)
	for _, s := range spent {
		v, fin := exact(s)
		if !fin {
			ok = false
			break
		}
		d.Sub(d, v)
	}
	if !ok {
		return math.NaN()
	}
	return floorFloat(d)
}

// Part returns an even k-th of total: the largest float64 p such that k p
// <= total holds in exact arithmetic (fl(total/k) or the float64 just
// below it), so that k charges of p never add up to more than total. It
// returns NaN for k < 1 or a total that is not finite.
func Part(total float64, k int) float64 {
	d, ok := exact(total)
	if !ok || k < 1 {
		return math.NaN()
	}
	return floorFloat(d.Quo(d, new(big.Rat).SetInt64(int64(k))))
}

// exact returns x as an exact rational, and false when x is not finite.
func exact(x float64) (*big.Rat, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return new(big.Rat), false
	}
	return new(big.Rat).SetFloat64(x), true
}

// floorFloat returns the largest float64 at most d (-Inf below the
// float64 range), a positive zero for zero.
func floorFloat(d *big.Rat) float64 {
	f, _ := d.Float64()
	if math.IsInf(f, 1) {
		f = math.MaxFloat64
	}
	for {
		v, ok := exact(f)
		if !ok || v.Cmp(d) <= 0 {
			break
		}
		f = math.Nextafter(f, math.Inf(-1))
	}
	if f == 0 {
		return 0
	}
	return f
}

// ExactTotal returns what a ledger adds up to, as Total does (the entries
// of each part of the rows add up, an entry on all the rows counts in
// every part, and the total is the largest part's), in exact rational
// arithmetic: eps and delta. An entry that is not finite gives ok false.
func ExactTotal(ledger []Charge) (eps, delta *big.Rat, ok bool) {
	type sum struct{ eps, delta *big.Rat }
	zero := func() sum { return sum{new(big.Rat), new(big.Rat)} }
	all := zero()
	parts := map[string]sum{}
	ok = true
	for _, c := range ledger {
		e, okE := exact(c.Epsilon)
		d, okD := exact(c.Delta)
		ok = ok && okE && okD
		s := all
		if c.Rows != "" {
			if _, seen := parts[c.Rows]; !seen {
				parts[c.Rows] = zero()
			}
			s = parts[c.Rows]
		}
		s.eps.Add(s.eps, e)
		s.delta.Add(s.delta, d)
	}
	eps, delta = new(big.Rat).Set(all.eps), new(big.Rat).Set(all.delta)
	keys := make([]string, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := parts[k]
		if e := new(big.Rat).Add(all.eps, p.eps); e.Cmp(eps) > 0 {
			eps = e
		}
		if d := new(big.Rat).Add(all.delta, p.delta); d.Cmp(delta) > 0 {
			delta = d
		}
	}
	return eps, delta, ok
}

// Covers returns an error wrapping ErrBudget unless the ledger's charges
// are finite and not negative and add up (ExactTotal, in exact arithmetic)
// to at most b: a ledger over its claim by a single ulp is refused.
func (b Budget) Covers(ledger []Charge) error {
	for i, c := range ledger {
		if !(c.Epsilon >= 0) || !(c.Delta >= 0) || math.IsInf(c.Epsilon, 1) || math.IsInf(c.Delta, 1) {
			return fmt.Errorf("%w: ledger entry %d (%s) charges eps = %v, delta = %v: want finite >= 0", ErrBudget, i+1, c.Step, c.Epsilon, c.Delta)
		}
	}
	eps, delta, _ := ExactTotal(ledger)
	claimEps, _ := exact(b.Epsilon)
	claimDelta, _ := exact(b.Delta)
	for _, x := range []struct {
		name       string
		sum, claim *big.Rat
	}{{"eps", eps, claimEps}, {"delta", delta, claimDelta}} {
		if x.sum.Cmp(x.claim) > 0 {
			over, _ := new(big.Rat).Sub(x.sum, x.claim).Float64()
			c, _ := x.claim.Float64()
			return fmt.Errorf("%w: the ledger's charges of %s add up to more than the claim %s = %v (by %.3g, in exact arithmetic)", ErrBudget, x.name, x.name, c, over)
		}
	}
	return nil
}
