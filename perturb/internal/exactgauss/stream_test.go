package exactgauss

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Tests of AddSnapped's buffered, inline draw against the generator's
// stream and the step-by-step reference, on inputs chosen to reach the
// edges of the fast rounding and of the buffer.

// testKey is the key of newTest(seed).
func testKey(seed byte) [32]byte { return [32]byte{seed, 's', 'e', 'e', 'd'} }

// TestNextIsTheStream checks that the buffer gives ChaCha8's words in
// order, each once, whatever the position at which it is refilled (refill
// with 0 to 64 words not used yet, as AddSnapped's loop refills it at 62,
// 63 and 64).
func TestNextIsTheStream(t *testing.T) {
	raw := rand.NewChaCha8(testKey(12))
	s := newTest(12)
	n := 0
	for p := 0; p <= bufWords; p++ {
		for range p {
			if got, want := s.next(), raw.Uint64(); got != want {
				t.Fatalf("word %d: buffer %#x, generator %#x", n, got, want)
			}
			n++
		}
		s.refill()
		if got := s.wordsUsed(); got != uint64(n) {
			t.Fatalf("after word %d and a refill: %d words counted used", n, got)
		}
	}
}

// refSnapped is AddSnapped step by step: for each value magnitude, bit,
// then the exact rounding roundExact and latticeFloat, on s (its exact
// and latticeBits too). It returns the first index written as an
// infinity, -1 if none.
func refSnapped(s *Sampler, w []float64, sigma float64) int {
	fr, e := math.Frexp(sigma)
	ms := uint64(math.Ldexp(fr, 53))
	lb := LatticeBits
	if s.latticeBits != 0 {
		lb = s.latticeBits
	}
	le := e - lb - 1
	over := -1
	for i, x := range w {
		b, width := s.magnitude()
		neg := s.bit()
		w[i] = latticeFloat(s.roundExact(x, ms, e-53, le, b, width, neg), le)
		if over < 0 && math.IsInf(w[i], 0) {
			over = i
		}
	}
	return over
}

// edgeValues returns values w at the edges of the fast rounding for
// sigma: 0 and -0; lattice points, half-lattice points and their float64
// neighbours, at multipliers from 1 to 2^54 (the int64 range of the units
// ends at 2^42 lambda); subnormal values; the ends of the float64 range.
func edgeValues(sigma float64) []float64 {
	lambda := math.Ldexp(1, Lattice(sigma))
	ws := []float64{0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		0x1p-1060, -0x1p-1030, 0x1p-1022, math.MaxFloat64, -math.MaxFloat64, sigma, -sigma}
	for _, j := range []float64{1, 3, 0x1p19, 0x1p41 - 1, 0x1p41, 0x1p42 - 1, 0x1p42, 0x1p52, 0x1p53, 0x1p54} {
		for _, d := range []float64{0, 0.5} {
			for _, sg := range []float64{1, -1} {
				v := sg * (j + d) * lambda
				ws = appendFinite(ws, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)))
			}
		}
	}
	return ws
}

// appendFinite appends the finite ones of vs to ws.
func appendFinite(ws []float64, vs ...float64) []float64 {
	for _, v := range vs {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			ws = append(ws, v)
		}
	}
	return ws
}

// edgeSigmas are the sigmas of the edge tests: the usual scale; powers of
// two and their float64 predecessors; the ends of the lattice exponents
// where unitScale is 0 (le < -1003) or the float64(k) scale path stops
// (le outside [-1022, 970]); subnormal sigmas; the largest float64.
var edgeSigmas = []float64{
	3.7, 1, math.Nextafter(1, 0), 0x1p-30, math.Nextafter(0x1p-30, 0), 0x1p40, math.Nextafter(0x1p40, 0),
	0x1p-980, 0x1p-981, 0x1p-982, 0x1p-999, 0x1p-1000, 0x1p-1001, 0x1p-1002,
	math.Nextafter(0x1p991, 0), 0x1p991, 0x1p992, 1e-310, math.SmallestNonzeroFloat64, math.MaxFloat64,
}

// TestAddSnappedEdges checks AddSnapped against refSnapped on a Sampler
// with the same key, bit for bit, with the same first-overflow index and
// the same words used, over edgeValues and normal values at each of
// edgeSigmas, in calls of lengths 1, 2, 3, 61 to 65 and 127 to 129 (the
// buffer's refills at every offset of a call), by the usual paths, by
// the exact paths alone, and with a coarse lattice; then in calls near
// the float64 range that overflow at their first value and at several;
// and that the sampler's next word is then the generator's next.
func TestAddSnappedEdges(t *testing.T) {
	lengths := []int{1, 63, 64, 65, 2, 62, 3, 61, 127, 128, 129, 1, 1, 64}
	r := rand.New(rand.NewPCG(12, 13))
	for _, mode := range []struct {
		name  string
		exact bool
		lb    int
	}{{"usual", false, 0}, {"exact", true, 0}, {"coarse", false, 3}} {
		a, ref := newTest(13), newTest(13)
		a.exact, ref.exact = mode.exact, mode.exact
		a.latticeBits, ref.latticeBits = mode.lb, mode.lb
		same := func(w []float64, sigma float64) ([]float64, int) { return sameSnapped(t, mode.name, a, ref, w, sigma) }
		for _, sigma := range edgeSigmas {
			ws := edgeValues(sigma)
			for range 200 {
				ws = appendFinite(ws, sigma*r.NormFloat64()*math.Ldexp(1, r.IntN(30)-10))
			}
			r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
			for rep := range 3 {
				for off, c := 0, rep; off < len(ws); c++ {
					n := min(lengths[c%len(lengths)], len(ws)-off)
					same(ws[off:off+n], sigma)
					off += n
				}
			}
		}
		// Overflows: each value overflows with probability about 1/2, so
		// 64 calls see the first overflow and several but with
		// probability below 2^-60 (deterministic: the key is fixed).
		overFirst, overMany := false, false
		huge := []float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64, math.MaxFloat64}
		for range 64 {
			got, over := same(huge, math.MaxFloat64/2)
			overFirst = overFirst || over == 0
			overMany = overMany || countInf(got) > 1
		}
		if !overFirst || !overMany {
			t.Errorf("%s: overflow at the first value %v, at several %v: the test lost its reach", mode.name, overFirst, overMany)
		}
		if a.next() != ref.next() {
			t.Fatalf("%s: the next words differ", mode.name)
		}
	}
}

// sameSnapped runs a.AddSnapped and refSnapped(ref) on copies of w and
// fails t unless they write the same bits, report the same first
// overflow and leave a and ref at the same word of the generator; it
// returns AddSnapped's output and overflow index.
func sameSnapped(t *testing.T, what string, a, ref *Sampler, w []float64, sigma float64) ([]float64, int) {
	t.Helper()
	got, want := append([]float64(nil), w...), append([]float64(nil), w...)
	over, wantOver := a.AddSnapped(got, sigma), refSnapped(ref, want, sigma)
	for i := range w {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s, sigma %v, value %v (%d of a call of %d): AddSnapped %v, reference %v",
				what, sigma, w[i], i, len(w), got[i], want[i])
		}
	}
	if over != wantOver {
		t.Fatalf("%s, sigma %v: AddSnapped reports overflow at %d, the first infinity is at %d", what, sigma, over, wantOver)
	}
	if a.wordsUsed() != ref.wordsUsed() {
		t.Fatalf("%s, sigma %v: AddSnapped used %d words, the reference %d", what, sigma, a.wordsUsed(), ref.wordsUsed())
	}
	return got, over
}

// inject makes words the next words of s's stream, in place of the
// generator's (the buffer is refilled first if they do not fit in it).
func inject(s *Sampler, words ...uint64) {
	if s.pos > bufWords-len(words) {
		s.refill()
	}
	copy(s.buf[s.pos:], words)
}

// wordFor returns a first word of a proposal whose alias-table entry
// satisfies ok (given the entry and its flat squeeze), with the uniform
// bits y set to ylow.
func wordFor(tb *tables, ylow uint64, ok func(e, ytop uint64) bool) uint64 {
	for j := range uint64(nCols) {
		for _, v := range []uint64{0, colCap - 1} {
			u := j<<(64-colBits) | v<<yBits | ylow
			if e, ytop := tb.entry(u); ok(e, ytop) {
				return u
			}
		}
	}
	panic("no such word")
}

// straddle returns off plus the first word t0 of the fraction of piece b
// whose sigma x/lambda (ms as in AddSnapped at sigma, lambda its lattice)
// is at least a half-lattice point: for off < 0 the interval [P, P + 2)
// 2^-fastBits of roundUnits holds that point, and -[P, P + 2) holds its
// opposite for off <= 0 (roundUnits cannot settle w = 0 then).
func straddle(ms, b uint64, off int64) uint64 {
	// sigma x/lambda = ms X 2^-104, X = b 2^64 + t0: the half-point
	// (j + 1/2) for j = ceil(ms b 2^-40), X = ceil((j + 1/2) 2^104 / ms).
	msb := new(big.Int).SetUint64(ms)
	j := new(big.Int).Mul(msb, new(big.Int).SetUint64(b))
	j.Add(j, new(big.Int).Lsh(big.NewInt(1), 40)).Rsh(j, 40)
	x := new(big.Int).Lsh(j.Lsh(j, 1).Add(j, big.NewInt(1)), 103)
	x.Add(x, new(big.Int).Sub(msb, big.NewInt(1))).Quo(x, msb)
	x.Sub(x, new(big.Int).Lsh(new(big.Int).SetUint64(b), 64))
	return x.Uint64() + uint64(off)
}

// TestAddSnappedCraftedWords checks AddSnapped against refSnapped (as
// TestAddSnappedEdges) with crafted words put in the stream of both at
// every offset 0 to 64 of the buffer: a proposal of the rest entry
// followed by an accepted tail piece; a core proposal that the flat
// squeeze leaves to the lines (y's bits all ones, or just at its bound);
// and usual draws whose fraction puts w + sigma x at a half-lattice
// point, just below or just above it (roundUnits cannot settle them,
// roundExact draws more words after the sign's). It checks that the
// crafted tail draw was accepted (its output is beyond 7.99 sigma) and
// that roundFast leaves the straddles.
func TestAddSnappedCraftedWords(t *testing.T) {
	const sigma = 3.7
	tb := theTables()
	fr, _ := math.Frexp(sigma)
	ms := uint64(math.Ldexp(fr, 53))
	rest := wordFor(tb, 0, func(e, _ uint64) bool { return e == nCore })
	lines := wordFor(tb, 1<<yBits-1, func(e, ytop uint64) bool { return e < nCore && ytop < 1<<yBits })
	usual := wordFor(tb, 0, func(e, ytop uint64) bool { return e > 100 && e < nCore && ytop > 0 })
	edge := wordFor(tb, 0, func(e, ytop uint64) bool { return e < nCore && 0 < ytop && ytop < 1<<yBits })
	_, ytop := tb.entry(edge)
	edge |= ytop // y's first bits at the flat squeeze: left to the lines
	b, _ := tb.entry(usual)
	kinds := []struct {
		name  string
		words []uint64
		check func(out float64) bool
	}{
		{"tail", []uint64{rest, 0, 1, 1 << 63, 0}, func(out float64) bool { return math.Abs(out) > 7.99*sigma }},
		{"lines", []uint64{lines}, func(float64) bool { return true }},
		{"flat squeeze's edge", []uint64{edge}, func(float64) bool { return true }},
	}
	for _, off := range []int64{-2, -1, 0} {
		t0 := straddle(ms, b, off)
		negs := []bool{true}
		if off < 0 {
			negs = append(negs, false) // at off 0, x > 0 rounds up, settled
		}
		for _, neg := range negs {
			if _, ok := roundFast(0, ms, Lattice(sigma), b, t0, neg); ok {
				t.Fatalf("straddle %d: roundFast settles it (neg %v)", off, neg)
			}
		}
		kinds = append(kinds, struct {
			name  string
			words []uint64
			check func(out float64) bool
		}{"straddle", []uint64{usual, t0}, func(float64) bool { return true }})
	}
	a, ref := newTest(15), newTest(15)
	w := make([]float64, 3)
	for p := 0; p <= bufWords; p++ {
		for _, k := range kinds {
			a.refill()
			for range p {
				if a.next() != ref.next() {
					t.Fatalf("offset %d: the streams differ", p)
				}
			}
			inject(a, k.words...)
			inject(ref, k.words...)
			out, _ := sameSnapped(t, k.name, a, ref, w[:1+p%3], sigma)
			if !k.check(out[0]) {
				t.Fatalf("%s at offset %d: output %v, not of the crafted path", k.name, p, out[0])
			}
		}
	}
}

// b2n returns 1 for true, 0 for false.
func b2n(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countInf returns how many of w are infinite.
func countInf(w []float64) int {
	n := 0
	for _, v := range w {
		n += b2n(math.IsInf(v, 0))
	}
	return n
}

// TestWUnits checks wUnits against the floor and ceiling of w 2^(fastBits
// - le) in exact arithmetic, wherever it says they bracket w/lambda, over
// the edge values of the sigmas at lattice exponents from -1074 to 1003,
// and that it says so for every w with |w/lambda| < 2^41 whose units are a
// normal float64.
func TestWUnits(t *testing.T) {
	checked := 0
	for le := -1074; le <= 1003; le++ {
		sw := unitScale(le)
		sigma := math.Ldexp(1.5, le+LatticeBits)
		if sigma == 0 || math.IsInf(sigma, 0) {
			continue
		}
		for _, w := range edgeValues(sigma) {
			w0, w1, ok := wUnits(w, sw)
			v := new(big.Float).SetMantExp(new(big.Float).SetFloat64(w), fastBits-le) // exact
			fl, _ := v.Int(nil)                                                       // toward 0
			cl := new(big.Int).Set(fl)
			if exact := new(big.Float).SetInt(fl).Cmp(v) == 0; !exact {
				if v.Sign() < 0 {
					fl.Sub(fl, big.NewInt(1))
				} else {
					cl.Add(cl, big.NewInt(1))
				}
			}
			units, _ := new(big.Float).SetMantExp(v, -fastBits).Float64() // w/lambda
			vf, _ := v.Float64()
			if !ok {
				if sw != 0 && math.Abs(units) < 0x1p41 && (v.Sign() == 0 || math.Abs(vf) >= 0x1p-1022) {
					t.Errorf("le %d, w %v: wUnits does not answer", le, w)
				}
				continue
			}
			checked++
			if !fl.IsInt64() || !cl.IsInt64() || fl.Int64() != w0 || cl.Int64() != w1 {
				t.Fatalf("le %d, w %v (%g units): wUnits [%d, %d], exact [%v, %v]", le, w, vf, w0, w1, fl, cl)
			}
		}
	}
	if checked < 50000 {
		t.Errorf("wUnits answered %d cases: the test lost its reach", checked)
	}
}

// TestAddSnappedStreamLaw checks AddSnapped's output law where the
// buffer turns over inside calls (calls of 63 values, each refilling at
// a different offset), at a power of two, the float64 below one and a
// sigma whose lattice makes unitScale 0 (w = 0 alone takes the int64
// rounding): (out - w)/sigma follows N(0, 1) in 100 equiprobable bins,
// with w a half-lattice point (0 at the small sigma), and the lag-one
// correlation of consecutive deviates (across calls and refills too) is
// within 4.4/sqrt(n) of 0. A correct sampler fails each chi-square with
// probability alpha = 1e-4 and each correlation bound with about 1e-5: a
// few 1e-4 for the test (deterministic: the key is fixed); N(0, 1.02^2)
// fails the chi-square (checkNormal's control).
func TestAddSnappedStreamLaw(t *testing.T) {
	const n, call = 126000, 63
	for _, sigma := range []float64{0x1p-30, math.Nextafter(0x1p10, 0), 0x1p-1000} {
		s := newTest(14)
		w0 := 0.5 * math.Ldexp(1, Lattice(sigma))
		if unitScale(Lattice(sigma)) == 0 {
			w0 = 0
		}
		z := make([]float64, 0, n)
		w := make([]float64, call)
		for len(z) < n {
			for i := range w {
				w[i] = w0
			}
			if i := s.AddSnapped(w, sigma); i >= 0 {
				t.Fatalf("sigma %v: an overflow at %d", sigma, i)
			}
			for _, v := range w {
				z = append(z, (v-w0)/sigma)
			}
		}
		checkNormal(t, "stream", z, 100, 1.02)
		var sxy, sxx float64
		for i := 1; i < len(z); i++ {
			sxy += z[i] * z[i-1]
			sxx += z[i] * z[i]
		}
		if c := sxy / sxx; math.Abs(c) > 4.4/math.Sqrt(n) {
			t.Errorf("sigma %v: lag-one correlation %.4f, beyond %.4f", sigma, c, 4.4/math.Sqrt(n))
		}
	}
}
