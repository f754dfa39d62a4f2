package exactgauss

import (
	"math"
	"math/rand/v2"
	"testing"
)

// benchmarkAddSnapped adds the noise at sigma = 3.7 to d weights drawn
// from N(0, 10^2) per iteration and reports the cost and the words of the generator used
// per coordinate.
func benchmarkAddSnapped(b *testing.B, d int) {
	s := New([32]byte{1})
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, d)
	for i := range w {
		w[i] = 10 * r.NormFloat64()
	}
	b.ReportAllocs()
	w0 := s.wordsUsed()
	for b.Loop() {
		s.AddSnapped(w, 3.7)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*d), "ns/coord")
	b.ReportMetric(float64(s.wordsUsed()-w0)/float64(b.N*d), "words/coord")
}

func BenchmarkAddSnapped_D33(b *testing.B)   { benchmarkAddSnapped(b, 33) }
func BenchmarkAddSnapped_D1000(b *testing.B) { benchmarkAddSnapped(b, 1000) }

func BenchmarkTables(b *testing.B) {
	for b.Loop() {
		if _, err := buildTables(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNormFloat64_D1000 is the float64 sampler of the seeded source
// (math/rand/v2's NormFloat64 on PCG) at the same size, for comparison.
func BenchmarkNormFloat64_D1000(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, 1000)
	for b.Loop() {
		for i := range w {
			w[i] += 3.7 * r.NormFloat64()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/coord")
}

// The parts of a draw, for the breakdown of AddSnapped's cost per
// coordinate: words of the generator times their cost, the alias lookup,
// the rounding.

// BenchmarkChaCha8Word is the cost of a word of the generator, called one
// at a time (rand.ChaCha8.Uint64) as the buffer's refill calls it.
func BenchmarkChaCha8Word(b *testing.B) {
	r := rand.NewChaCha8([32]byte{1})
	var x uint64
	for b.Loop() {
		for range 1024 {
			x += r.Uint64()
		}
	}
	sinkU = x
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/word")
}

var sinkU uint64

// BenchmarkMagnitude draws |Z| alone (the alias lookup, the squeezes and
// their words) and reports the words used per deviate.
func BenchmarkMagnitude(b *testing.B) {
	s := New([32]byte{1})
	w0 := s.wordsUsed()
	var x uint64
	for b.Loop() {
		b, _ := s.magnitude()
		x += b
	}
	sinkU = x
	b.ReportMetric(float64(s.wordsUsed()-w0)/float64(b.N), "words/deviate")
}

// BenchmarkEntry is the alias lookup of a word (tables.entry).
func BenchmarkEntry(b *testing.B) {
	t := theTables()
	r := rand.NewPCG(1, 2)
	u := make([]uint64, 1024)
	for i := range u {
		u[i] = r.Uint64()
	}
	var x uint64
	for b.Loop() {
		for _, v := range u {
			e, y := t.entry(v)
			x += e + y
		}
	}
	sinkU = x
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(u)), "ns/lookup")
}

// BenchmarkRoundFast is the int64 rounding of AddSnapped's usual draw at
// sigma = 3.7, for weights of N(0, 10^2) and uniform deviates in the core.
func BenchmarkRoundFast(b *testing.B) {
	fr, e := math.Frexp(3.7)
	ms, sw := uint64(math.Ldexp(fr, 53)), unitScale(e-LatticeBits-1)
	r := rand.New(rand.NewPCG(1, 2))
	type in struct {
		w     float64
		i, t0 uint64
		neg   bool
	}
	ins := make([]in, 1024)
	for j := range ins {
		ins[j] = in{10 * r.NormFloat64(), uint64(r.IntN(nCore)), r.Uint64(), r.IntN(2) == 0}
	}
	var x int64
	for b.Loop() {
		for _, v := range ins {
			k, _ := roundFastScaled(v.w, sw, ms, v.i, v.t0, v.neg)
			x += k
		}
	}
	sinkU = uint64(x)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ins)), "ns/call")
}
