package exactgauss

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestRoundFastBoundary checks that the int64 rounding agrees with the
// exact one where it answers, at deviates built to put w + sigma x within
// a few units of 2^-104 sigma of a rounding boundary: w on and next to
// half-lattice and lattice points, subnormal, huge; sigma at and below
// powers of two.
func TestRoundFastBoundary(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	s := newTest(9)
	answered, total := 0, 0
	for it := 0; it < 200000; it++ {
		sigma := math.Ldexp(0.5+r.Float64()/2, r.IntN(200)-100)
		if it%7 == 0 {
			sigma = math.Ldexp(1, r.IntN(40)-20) // power of two
		}
		if it%11 == 0 {
			sigma = math.Nextafter(math.Ldexp(1, r.IntN(40)-20), 0)
		}
		fr, e := math.Frexp(sigma)
		ms := uint64(math.Ldexp(fr, 53))
		le := e - LatticeBits - 1
		lambda := math.Ldexp(1, le)
		var w float64
		switch it % 6 {
		case 0:
			w = 0
		case 1:
			w = math.Ldexp(float64(r.IntN(1<<30)-1<<29)+0.5, le) // half-lattice point
		case 2:
			w = math.Ldexp(float64(r.IntN(1<<30)-1<<29), le) // lattice point
		case 3:
			w = math.Nextafter(math.Ldexp(float64(r.IntN(1<<20))+0.5, le), math.Inf(1-2*r.IntN(2)))
		case 4:
			w = math.Ldexp(r.Float64()-0.5, -1074+r.IntN(10))
		default:
			w = -sigma * r.NormFloat64() * math.Ldexp(1, r.IntN(44))
		}
		b := uint64(r.IntN(nCore))
		neg := r.IntN(2) == 0
		// target: sigma x/lambda ~ j + 1/2 -/+ w/lambda for some j, x in piece b.
		xmid := (float64(b) + r.Float64()) / (1 << pieceBits)
		v := sigma * xmid / lambda
		wl := w / lambda
		var tgt float64
		if neg {
			tgt = wl - (math.Floor(wl-v) + 0.5)
		} else {
			tgt = math.Floor(wl+v) + 0.5 - wl
		}
		// X = tgt 2^104 / ms, t0 = X - b 2^64 (big to keep bits)
		X := new(big.Float).SetPrec(300).SetFloat64(tgt)
		X.SetMantExp(X, 104)
		X.Quo(X, new(big.Float).SetPrec(300).SetInt64(int64(ms)))
		Xi, _ := X.Int(nil)
		Xi.Sub(Xi, new(big.Int).Lsh(new(big.Int).SetUint64(b), 64))
		Xi.Add(Xi, big.NewInt(int64(r.IntN(2001)-1000)))
		if Xi.Sign() < 0 || Xi.BitLen() > 64 {
			continue
		}
		t0 := Xi.Uint64()
		total++
		k, ok := roundFast(w, ms, le, b, t0, neg)
		if !ok {
			continue
		}
		answered++
		s.t0, s.tw = t0, s.tw[:0]
		want := s.roundExact(w, ms, e-53, le, b, 1, neg)
		if !want.IsInt64() || want.Int64() != k {
			t.Fatalf("w %v sigma %v b %d t0 %d neg %v: fast %d exact %v", w, sigma, b, t0, neg, k, want)
		}
	}
	if answered < total/20 {
		t.Errorf("the fast rounding answered %d of %d boundary cases: the test lost its reach", answered, total)
	}
}

// TestRoundExactRat checks roundExact against the rounding of both ends of
// its last interval of w + s sigma x in exact rational arithmetic, over
// sigma and w across the float64 range (subnormal included).
func TestRoundExactRat(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	s := newTest(7)
	for it := 0; it < 20000; it++ {
		sigma := math.Ldexp(0.5+r.Float64()/2, r.IntN(2000)-1000)
		if it%5 == 0 {
			sigma = math.Ldexp(r.Float64(), -1074+r.IntN(60)) // subnormal-ish
			if sigma == 0 {
				continue
			}
		}
		fr, e := math.Frexp(sigma)
		ms := uint64(math.Ldexp(fr, 53))
		le := e - LatticeBits - 1
		w := math.Ldexp(r.Float64()-0.5, r.IntN(2098)-1074)
		b := uint64(r.IntN(nCore))
		neg := r.IntN(2) == 0
		t0 := r.Uint64()
		s.t0, s.tw = t0, s.tw[:0]
		k := s.roundExact(w, ms, e-53, le, b, 1, neg)
		// the words used
		m := len(s.tw)
		X := new(big.Int).SetUint64(b)
		for _, v := range s.tw {
			X.Lsh(X, 64).Add(X, new(big.Int).SetUint64(v))
		}
		for _, d := range []int64{0, 1} {
			x := new(big.Rat).SetFrac(new(big.Int).Add(X, big.NewInt(d)), new(big.Int).Lsh(big.NewInt(1), uint(pieceBits+64*m)))
			sg := new(big.Rat).SetFloat64(sigma)
			val := new(big.Rat).Mul(sg, x)
			if neg {
				val.Neg(val)
			}
			val.Add(val, new(big.Rat).SetFloat64(w))
			lam := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(max(le, 0))))
			lam.Quo(lam, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(max(-le, 0)))))
			val.Quo(val, lam) // lambda = 2^le, subnormal or below the float64 range too
			val.Add(val, big.NewRat(1, 2))
			fl := new(big.Int).Quo(val.Num(), val.Denom()) // trunc
			if val.Sign() < 0 && new(big.Int).Mul(fl, val.Denom()).Cmp(val.Num()) != 0 {
				fl.Sub(fl, big.NewInt(1))
			}
			if d == 1 && new(big.Rat).SetInt(fl).Cmp(val) == 0 {
				fl.Sub(fl, big.NewInt(1)) // upper end open
			}
			if fl.Cmp(k) != 0 {
				t.Fatalf("w %v sigma %v b %d neg %v words %d d %d: exact %v independent %v", w, sigma, b, neg, m, d, k, fl)
			}
		}
	}
}
