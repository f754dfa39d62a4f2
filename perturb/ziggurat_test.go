package perturb

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// fillNormal is the FillNormal of the seeded source of seed.
func fillNormal(seed uint64, z []float64) {
	Seeded(seed).(interface{ FillNormal([]float64) }).FillNormal(z)
}

// TestZigguratLayers checks the ziggurat's tables against their
// definition: every layer i >= 1 has area x_i (f(x_{i-1}) - f(x_i)) = v,
// the top one closing at f(x_0) = 1, the base's rectangle of width v/f(r)
// and height f(r) has area v, the widths increase up to x_255 = r, and the
// acceptance bounds are 2^53 x_{i-1}/x_i rounded down (2^53 r f(r)/v for
// the base).
func TestZigguratLayers(t *testing.T) {
	const m = 0x1p53
	x := func(i int) float64 { return zigW[i] * m }
	f := func(x float64) float64 { return math.Exp(-x * x / 2) }
	if x(255) != zigR || zigF[0] != 1 || zigK[1] != 0 {
		t.Fatalf("x_255 = %v, f(x_0) = %v, k_1 = %v; want r, 1, 0", x(255), zigF[0], zigK[1])
	}
	if a := x(0) * f(zigR); math.Abs(a-zigV) > 1e-15 {
		t.Errorf("base rectangle area %v, want v = %v", a, zigV)
	}
	// The base accepts at once below r: |j| < 2^53 r/(v/f(r)).
	if k, want := float64(zigK[0]), zigR*f(zigR)/zigV*m; k > want || k < want-2 {
		t.Errorf("base: k = %v, want floor(2^53 r f(r)/v) = %v", k, want)
	}
	for i := 1; i < 256; i++ {
		top := 1.0
		if i > 1 {
			top = f(x(i - 1))
		}
		if a := x(i) * (top - f(x(i))); math.Abs(a-zigV) > 1e-9*zigV {
			t.Errorf("layer %d: area %v, want v = %v", i, a, zigV)
		}
		if math.Abs(zigF[i]-f(x(i))) > 1e-15 {
			t.Errorf("layer %d: f = %v, want %v", i, zigF[i], f(x(i)))
		}
		if i > 1 {
			if !(x(i-1) < x(i)) {
				t.Errorf("layer %d: x = %v not above x_%d = %v", i, x(i), i-1, x(i-1))
			}
			if k := float64(zigK[i]); k > x(i-1)/x(i)*m || k < x(i-1)/x(i)*m-2 {
				t.Errorf("layer %d: k = %v, want floor(2^53 x_%d/x_%d) = %v", i, k, i-1, i, x(i-1)/x(i)*m)
			}
		}
	}
	// The share of the words accepted at once (the doc's 98.5%): layer i
	// accepts |j| < k_i of its 2^53 magnitudes.
	var fast float64
	for _, k := range zigK {
		fast += float64(k) / m / 256
	}
	if math.Abs(fast-0.985) > 5e-4 {
		t.Errorf("%v of the words accepted at once, want about 98.5%%", fast)
	}
	// The tail beyond r has the area the base leaves: v - r f(r).
	tail := math.Sqrt(math.Pi/2) * math.Erfc(zigR/math.Sqrt2)
	if d := math.Abs(zigV - zigR*f(zigR) - tail); d > 1e-12 {
		t.Errorf("v - r f(r) = %v, the tail's area %v", zigV-zigR*f(zigR), tail)
	}
}

// TestFillNormalLaw checks FillNormal's draws against N(0, 1): a
// Kolmogorov-Smirnov test at level ksAlpha (false rejection at most 1e-4
// by the DKW inequality) that must also reject N(0, 1.05^2) on the same
// draws; the shares beyond r and below -r (the tail path, each sign: a
// tail of one sign moves the mean by only 1e-3) and the share in each
// layer's wedge region (|x| between x_{i-1} and x_i for the widest
// layers), each inside the two-sided exact Clopper-Pearson interval at
// level 1e-6 (with the 41 intervals, a false rejection at most 5e-5); and the
// sample's mean and variance within 6 standard errors (false rejection
// below 1e-8 each by the CLT). The draws are seeded: deterministic.
func TestFillNormalLaw(t *testing.T) {
	const n = 2_000_000
	z := make([]float64, n)
	fillNormal(5, z)
	var s1, s2 float64
	for _, v := range z {
		s1 += v
		s2 += v * v
	}
	mean, vr := s1/n, s2/n-(s1/n)*(s1/n)
	if math.Abs(mean) > 6/math.Sqrt(n) || math.Abs(vr-1) > 6*math.Sqrt(2.0/n) {
		t.Errorf("mean %v, variance %v over %d draws, want 0 and 1", mean, vr, n)
	}
	norm := distuv.UnitNormal
	// checkShare checks the share of the draws with lo <= s x < hi for
	// a sign s (+1 or -1), or lo <= |x| < hi for s = 0.
	checkShare := func(what string, s, lo, hi float64) {
		t.Helper()
		k := 0
		for _, v := range z {
			a := s * v
			if s == 0 {
				a = math.Abs(v)
			}
			if lo <= a && a < hi {
				k++
			}
		}
		p := norm.CDF(hi) - norm.CDF(lo)
		if s == 0 {
			p *= 2
		}
		if a, b := clopperPearson(k, n, 1e-6); p < a || p > b {
			t.Errorf("%s: %d of %d draws in [%v, %v), share %v outside [%v, %v] around P = %v", what, k, n, lo, hi, float64(k)/n, a, b, p)
		}
	}
	checkShare("tail, x", 1, zigR, math.Inf(1))
	checkShare("tail, -x", -1, zigR, math.Inf(1))
	for i := 216; i < 255; i++ {
		checkShare("layer wedge, |x|", 0, zigW[i]*0x1p53, zigW[i+1]*0x1p53)
	}
	sample := slices.Clone(z[:200_000])
	checkFit(t, "FillNormal", sample, norm.CDF, distuv.Normal{Sigma: 1.05}.CDF)
}

// TestFillNormalStream checks that FillNormal draws from a stream of its
// own: reproducible from the seed, another seed gives other draws, and the
// source's other draws (Normal, AddGaussian) are those of a source that
// never called it, and the other way round: its normals do not depend on
// how the calls to the two streams interleave.
func TestFillNormalStream(t *testing.T) {
	a, b := make([]float64, 100), make([]float64, 100)
	fillNormal(3, a)
	fillNormal(3, b)
	if !slices.Equal(a, b) {
		t.Error("two sources of one seed fill different normals")
	}
	fillNormal(4, b)
	if slices.Equal(a, b) {
		t.Error("another seed fills the same normals")
	}
	s, ref := Seeded(9), Seeded(9)
	s.(interface{ FillNormal([]float64) }).FillNormal(a)
	w, wref := make([]float64, 5), make([]float64, 5)
	if err := s.AddGaussian(w, 2); err != nil {
		t.Fatal(err)
	}
	if err := ref.AddGaussian(wref, 2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w, wref) || s.Normal() != ref.Normal() {
		t.Error("FillNormal moved the stream of AddGaussian and Normal")
	}
	// ref drew from the other stream first: its normals are s's next.
	s.(interface{ FillNormal([]float64) }).FillNormal(a)
	ref.(interface{ FillNormal([]float64) }).FillNormal(b)
	ref.(interface{ FillNormal([]float64) }).FillNormal(b)
	if !slices.Equal(a, b) {
		t.Error("AddGaussian and Normal moved the stream of FillNormal")
	}
}

// TestZigguratTail checks the tail path alone (the draws the base layer
// sends beyond r, 2.6e-4 of FillNormal's draws) against the law of |Z|
// given |Z| > r, 1 - Q(x)/Q(r) for the normal tail Q, by a
// Kolmogorov-Smirnov test at level ksAlpha on 600,000 draws, half of
// either sign (the sign of the layer's integer, kept), that must also
// reject the same law beyond r scaled by 1.01.
func TestZigguratTail(t *testing.T) {
	g := &pcg{1, 2}
	x := make([]float64, 600_000)
	for i := range x {
		// Layer 0 past its rectangle: the tail, of j's sign.
		j, s := int64(1<<53-1), 1.0
		if i%2 == 1 {
			j, s = -1<<53, -1
		}
		if x[i] = s * zigSlow(g, 0, j); !(x[i] > zigR) {
			t.Fatalf("draw %d of sign %v: %v, not beyond r in that sign", i, s, s*x[i])
		}
	}
	q := func(x float64) float64 { return math.Erfc(x / math.Sqrt2) }
	law := func(x float64) float64 { return max(0, 1-q(x)/q(zigR)) }
	wrong := func(x float64) float64 { return law(zigR + (x-zigR)/1.01) }
	checkFit(t, "tail", x, law, wrong)
}

// TestZigguratAfresh checks the draws that a wedge test sends back to
// fresh words: started at the outer edge of layer 255 (x = r (1 -
// 2^-53), where f(x) - f(r) is 2e-15 of the layer's height, the wedge's
// acceptance probability), zigSlow returns the law of a
// whole new draw, N(0, 1): a Kolmogorov-Smirnov test at level ksAlpha on
// 200,000 draws that must also reject N(0, 1.05^2).
func TestZigguratAfresh(t *testing.T) {
	g := &pcg{3, 4}
	x := make([]float64, 200_000)
	for i := range x {
		j := int64(1<<53 - 1)
		if i%2 == 1 {
			j = -1 << 53
		}
		x[i] = zigSlow(g, 255, j)
	}
	checkFit(t, "afresh", x, distuv.UnitNormal.CDF, distuv.Normal{Sigma: 1.05}.CDF)
}

// TestPCGMatchesRand checks that the ziggurat's generator gives the words
// of math/rand/v2's PCG on the same seeds, and that zigFill leaves it
// where the words it drew leave rand's (its tail and wedges included).
func TestPCGMatchesRand(t *testing.T) {
	g, ref := &pcg{7, normalSalt}, rand.NewPCG(7, normalSalt)
	for i := range 10000 {
		if a, b := g.Uint64(), ref.Uint64(); a != b {
			t.Fatalf("word %d: %#x, rand.PCG's %#x", i, a, b)
		}
	}
	// zigFill with the state in registers, against a copy drawing word by
	// word through the method.
	z := make([]float64, 5000)
	zigFill(g, z)
	h := &pcg{7, normalSalt}
	for range 10000 {
		h.Uint64()
	}
	for k := range z {
		u := h.Uint64()
		i, j := u&0xff, int64(u)>>10
		a := max(j, -j)
		want := float64(j) * zigW[i]
		if uint64(a) >= zigK[i] {
			want = zigSlow(h, i, j)
		}
		if z[k] != want {
			t.Fatalf("draw %d: %v, word by word %v", k, z[k], want)
		}
	}
	if *g != *h {
		t.Error("zigFill leaves its generator elsewhere than the words it drew")
	}
}
