package featsel

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mathext"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/perturb/marginal"
)

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// noiseKind names the noise of a test case.
type noiseKind int

const (
	Laplace noiseKind = iota + 1
	Gaussian
	GammaNorm
)

// noiseSpec is a test case's noise: Laplace scale b, Gaussian sigma, or
// gamma-norm theta in dimension Dim.
type noiseSpec struct {
	Kind  noiseKind
	Scale float64
	Dim   int
}

// law returns the marginal law of the noise: the law that the perturb
// mechanism gives (gamma-norm noise through perturb's gamma mechanism).
func (s noiseSpec) law() NoiseModel {
	switch s.Kind {
	case Laplace:
		return marginal.Independent(marginal.Laplace, s.Scale)
	case Gaussian:
		return marginal.Independent(marginal.Normal, s.Scale)
	}
	n, err := perturb.Lookup(perturb.Gamma)
	if err != nil {
		panic(err)
	}
	l, err := n.Marginal(perturb.Calibration{Mechanism: perturb.Gamma, Scale: s.Scale, Dim: s.Dim})
	if err != nil {
		panic(err)
	}
	return l
}

// normTailBound returns theta * Q^{-1}(dim, q), Q the regularized upper
// incomplete gamma function: the t at which P(||N|| > t) = q for gamma-norm
// noise, an upper bound on the per-coordinate threshold (|N_j| <= ||N||).
func normTailBound(dim int, theta, q float64) float64 {
	return theta * mathext.GammaIncRegCompInv(float64(dim), q)
}

var noiseKinds = []noiseSpec{
	{Kind: Laplace, Scale: 0.5},
	{Kind: Gaussian, Scale: 0.5},
	{Kind: GammaNorm, Scale: 0.5, Dim: 1},
	{Kind: GammaNorm, Scale: 0.5, Dim: 2},
	{Kind: GammaNorm, Scale: 0.5, Dim: 50},
	{Kind: GammaNorm, Scale: 0.5, Dim: 20000},
}

func TestDynamicThresholdClosedForms(t *testing.T) {
	tests := []struct {
		noise noiseSpec
		q     float64
		want  float64
	}{
		{noiseSpec{Kind: Laplace, Scale: 2}, 0.05, 2 * math.Log(20)},
		{noiseSpec{Kind: Laplace, Scale: 1}, 1 / math.E, 1},
		{noiseSpec{Kind: Gaussian, Scale: 1}, 0.05, 1.959963984540054},
		{noiseSpec{Kind: Gaussian, Scale: 3}, 0.3173105078629141, 3},
		// Dim 1 gamma-norm noise is Laplace(theta).
		{noiseSpec{Kind: GammaNorm, Scale: 2, Dim: 1}, 0.05, 2 * math.Log(20)},
	}
	for _, tc := range tests {
		got, err := DynamicThreshold(tc.q).Resolve(tc.noise.law(), 1)
		if err != nil {
			t.Fatalf("%v q=%v: %v", tc.noise, tc.q, err)
		}
		if !near(got, tc.want, 1e-10) {
			t.Errorf("%v q=%v: T = %v, want %v", tc.noise, tc.q, got, tc.want)
		}
	}
}

// The dynamic threshold selects a true-zero weight (or a feature of K zero
// weights, PerFeature) with probability exactly q.
func TestDynamicThresholdRate(t *testing.T) {
	for _, spec := range noiseKinds {
		noise := spec.law()
		for _, q := range []float64{0.5, 0.05, 1e-4, 1e-9} {
			T, err := DynamicThreshold(q).Resolve(noise, 4)
			if err != nil {
				t.Fatal(err)
			}
			g, err := TailProb(noise, T)
			if err != nil {
				t.Fatal(err)
			}
			if !near(g, q, 1e-9) {
				t.Errorf("%v q=%v: P(|N| > T=%v) = %v", noise, q, T, g)
			}
			// The norm tail bounds the gamma-norm threshold from above.
			if spec.Kind == GammaNorm {
				if b := normTailBound(spec.Dim, spec.Scale, q); T > b*(1+1e-12) {
					t.Errorf("%v q=%v: T = %v above the norm bound %v", noise, q, T, b)
				}
			}
			perFeature := ThresholdSpec{Kind: Dynamic, Rate: q, PerFeature: true}
			const k = 4
			Tf, err := perFeature.Resolve(noise, k)
			if spec.Kind == GammaNorm && spec.Dim < k {
				if !errors.Is(err, ErrShape) {
					t.Errorf("%v: %d rows per feature, error %v, want ErrShape", noise, k, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := FeatureFlipProbability(make([]float64, k), Tf, noise)
			if err != nil {
				t.Fatal(err)
			}
			if !near(p, q, 1e-9) {
				t.Errorf("%v q=%v per feature: P(null feature selected) = %v at T=%v", noise, q, p, Tf)
			}
			if !(Tf > T) {
				t.Errorf("%v q=%v: per-feature T %v not above per-coordinate T %v", noise, q, Tf, T)
			}
			if spec.Kind == GammaNorm {
				if b := normTailBound(spec.Dim, spec.Scale, q); Tf > b*(1+1e-12) {
					t.Errorf("%v q=%v per feature: T = %v above the norm bound %v", noise, q, Tf, b)
				}
			}
		}
	}
}

func TestDynamicThresholdMonotone(t *testing.T) {
	qs := []float64{0.9, 0.5, 0.1, 1e-2, 1e-4, 1e-8}
	for _, spec := range noiseKinds {
		noise := spec.law()
		prev := -1.0
		for _, q := range qs {
			T, err := DynamicThreshold(q).Resolve(noise, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !(T > prev) {
				t.Errorf("%v: T(q=%v) = %v not above %v", noise, q, T, prev)
			}
			prev = T
			// Scale family: doubling the scale doubles T.
			big := spec
			big.Scale *= 2
			T2, err := DynamicThreshold(q).Resolve(big.law(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if !near(T2, 2*T, 1e-9) {
				t.Errorf("%v q=%v: T(2 scale) = %v, want 2*%v", noise, q, T2, T)
			}
		}
	}
}

// The exact gamma-norm marginal against closed forms: Dim 1 is Laplace(theta);
// for odd Dim = 2n+1 the density |x|^{n+1/2} K_{n+1/2}(|x|/theta) is
// elementary, and with u = x/theta the tail P(|N_j| > x) is
// (1 + u/2) exp(-u) for Dim 3 and (1 + 5u/8 + u^2/8) exp(-u) for Dim 5.
func TestGammaNormTailClosedForms(t *testing.T) {
	const theta = 0.7
	for _, x := range []float64{0.01, 0.3, 1, 4, 15, 25} {
		g1, err := TailProb(noiseSpec{Kind: GammaNorm, Scale: theta, Dim: 1}.law(), x)
		if err != nil {
			t.Fatal(err)
		}
		if want := math.Exp(-x / theta); !near(g1, want, 1e-11) {
			t.Errorf("Dim 1, x=%v: tail %v, want %v", x, g1, want)
		}
		g3, err := TailProb(noiseSpec{Kind: GammaNorm, Scale: theta, Dim: 3}.law(), x)
		if err != nil {
			t.Fatal(err)
		}
		if want := (1 + x/(2*theta)) * math.Exp(-x/theta); !near(g3, want, 1e-11) {
			t.Errorf("Dim 3, x=%v: tail %v, want %v", x, g3, want)
		}
		g5, err := TailProb(noiseSpec{Kind: GammaNorm, Scale: theta, Dim: 5}.law(), x)
		if err != nil {
			t.Fatal(err)
		}
		u := x / theta
		if want := (1 + 5*u/8 + u*u/8) * math.Exp(-u); !near(g5, want, 1e-11) {
			t.Errorf("Dim 5, x=%v: tail %v, want %v", x, g5, want)
		}
	}
}

func TestFlipProbabilityClosedForms(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	for _, tc := range []struct{ w, T float64 }{
		{0, 0}, {0, 1}, {0.3, 1}, {-0.9, 1}, {1, 1}, {1.2, 1}, {-2.5, 1}, {6, 0.5}, {0.2, 0},
	} {
		const b, sigma = 0.8, 0.6
		a := math.Abs(tc.w)
		var wantLap, wantGauss float64
		if a > tc.T {
			wantLap = math.Exp(-a/b) * math.Sinh(tc.T/b)
			wantGauss = phi((tc.T-a)/sigma) - phi((-tc.T-a)/sigma)
		} else {
			wantLap = math.Exp(-tc.T/b) * math.Cosh(a/b)
			wantGauss = 1 - (phi((tc.T-a)/sigma) - phi((-tc.T-a)/sigma))
		}
		got, err := FlipProbability(tc.w, tc.T, noiseSpec{Kind: Laplace, Scale: b}.law())
		if err != nil {
			t.Fatal(err)
		}
		if !near(got, wantLap, 1e-12) {
			t.Errorf("Laplace w=%v T=%v: %v, want %v", tc.w, tc.T, got, wantLap)
		}
		got1, err := FlipProbability(tc.w, tc.T, noiseSpec{Kind: GammaNorm, Scale: b, Dim: 1}.law())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got1-wantLap) > 1e-12 {
			t.Errorf("gamma-norm Dim 1 w=%v T=%v: %v, want Laplace %v", tc.w, tc.T, got1, wantLap)
		}
		got, err = FlipProbability(tc.w, tc.T, noiseSpec{Kind: Gaussian, Scale: sigma}.law())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-wantGauss) > 1e-14 {
			t.Errorf("Gaussian w=%v T=%v: %v, want %v", tc.w, tc.T, got, wantGauss)
		}
	}
}

// sampleNoise fills z with one draw of the noise, drawn the way the perturb
// package describes it (gamma-norm: Gamma(Dim, theta) norm times a uniform
// direction, not the scale-mixture form used by featsel).
func sampleNoise(rng *rand.Rand, noise noiseSpec, z []float64) {
	switch noise.Kind {
	case Laplace:
		for i := range z {
			z[i] = noise.Scale * rng.ExpFloat64()
			if rng.IntN(2) == 0 {
				z[i] = -z[i]
			}
		}
	case Gaussian:
		for i := range z {
			z[i] = noise.Scale * rng.NormFloat64()
		}
	case GammaNorm:
		var r, n2 float64
		for i := 0; i < noise.Dim; i++ {
			r += noise.Scale * rng.ExpFloat64() // integer shape: sum of exponentials
		}
		for i := range z {
			z[i] = rng.NormFloat64()
			n2 += z[i] * z[i]
		}
		for i := range z {
			z[i] *= r / math.Sqrt(n2)
		}
	}
}

// Monte Carlo check of the flip probabilities. Each comparison draws n = 1e5
// releases with a fixed seed and accepts when |p_hat - p| <= 5.33 sd + 1/n,
// sd = sqrt(p(1-p)/n): the normal two-sided tail beyond 5.33 sd is 1e-7, so
// with 36 comparisons the false-rejection probability of the test is at most
// about 4e-6 (union bound; the 1/n slack covers the discreteness of p_hat).
// The gamma-norm case also checks that the test has power: the naive
// Laplace(theta)-per-coordinate marginal must be rejected.
func TestFlipProbabilityMonteCarlo(t *testing.T) {
	const n, z = 100000, 5.33
	rng := rand.New(rand.NewPCG(7, 11))
	accept := func(hits int, p float64) bool {
		ph := float64(hits) / n
		return math.Abs(ph-p) <= z*math.Sqrt(p*(1-p)/n)+1.0/n
	}
	const k, d = 3, 2
	models := []noiseSpec{
		{Kind: Laplace, Scale: 0.5},
		{Kind: Gaussian, Scale: 0.5},
		{Kind: GammaNorm, Scale: 0.5, Dim: k * d},
	}
	// True K x D weights; feature 0 is selected at T = 0.8 via row 2,
	// feature 1 is not.
	cols := [][]float64{{0.1, -0.5, 1.1}, {0.3, 0, -0.7}}
	w := make([]float64, k*d)
	for j, c := range cols {
		for r, v := range c {
			w[r*d+j] = v
		}
	}
	buf := make([]float64, k*d)
	for _, spec := range models {
		noise := spec.law()
		for _, T := range []float64{0.2, 0.8, 1.5} {
			pCoord := make([]float64, k*d)
			for i, v := range w {
				p, err := FlipProbability(v, T, noise)
				if err != nil {
					t.Fatal(err)
				}
				pCoord[i] = p
			}
			pFeat := make([]float64, d)
			for j, c := range cols {
				p, err := FeatureFlipProbability(c, T, noise)
				if err != nil {
					t.Fatal(err)
				}
				pFeat[j] = p
			}
			coordHits := make([]int, k*d)
			featHits := make([]int, d)
			_, refMask, _ := Select(w, k, d, T)
			for it := 0; it < n; it++ {
				sampleNoise(rng, spec, buf)
				for i := range buf {
					buf[i] += w[i]
					if (math.Abs(buf[i]) > T) != (math.Abs(w[i]) > T) {
						coordHits[i]++
					}
				}
				_, mask, _ := Select(buf, k, d, T)
				for j := range mask {
					if mask[j] != refMask[j] {
						featHits[j]++
					}
				}
			}
			// Coordinates 0 and 5 (w = 0.1 and -0.7) and both features.
			for _, i := range []int{0, 5} {
				if !accept(coordHits[i], pCoord[i]) {
					t.Errorf("%v T=%v w=%v: flip rate %v, formula %v", noise, T, w[i], float64(coordHits[i])/n, pCoord[i])
				}
			}
			for j := range cols {
				if !accept(featHits[j], pFeat[j]) {
					t.Errorf("%v T=%v feature %v: flip rate %v, formula %v", noise, T, cols[j], float64(featHits[j])/n, pFeat[j])
				}
			}
			if spec.Kind == GammaNorm {
				naive, _ := FlipProbability(w[5], T, noiseSpec{Kind: Laplace, Scale: spec.Scale}.law())
				if accept(coordHits[5], naive) {
					t.Errorf("T=%v: Monte Carlo cannot tell the gamma-norm marginal from Laplace(theta) (%v vs %v)", T, pCoord[5], naive)
				}
			}
		}
	}
}

func TestExpectedFlips(t *testing.T) {
	const k, d = 2, 5
	w := []float64{
		0, 0.4, -1, 2, 0,
		0, 0, 0.9, -0.1, 0,
	}
	for _, spec := range noiseKinds[:5] {
		noise := spec.law()
		if spec.Kind == GammaNorm && spec.Dim < k*d {
			if _, err := ExpectedFlips(w, k, d, 0.7, noise); !errors.Is(err, ErrShape) {
				t.Errorf("%v: %d x %d model, error %v, want ErrShape", noise, k, d, err)
			}
			continue
		}
		got, err := ExpectedFlips(w, k, d, 0.7, noise)
		if err != nil {
			t.Fatal(err)
		}
		var want float64
		for j := 0; j < d; j++ {
			p, err := FeatureFlipProbability([]float64{w[j], w[d+j]}, 0.7, noise)
			if err != nil {
				t.Fatal(err)
			}
			want += p
		}
		if !near(got, want, 1e-12) {
			t.Errorf("%v: %v, want %v", noise, got, want)
		}
		// All-zero model at the per-feature dynamic threshold: d*q flips.
		const q = 0.01
		T, err := ThresholdSpec{Kind: Dynamic, Rate: q, PerFeature: true}.Resolve(noise, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err = ExpectedFlips(make([]float64, k*d), k, d, T, noise)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got, d*q, 1e-9) {
			t.Errorf("%v: %v expected flips of a zero model, want %v", noise, got, d*q)
		}
	}
}

func TestSelectAnyClass(t *testing.T) {
	const k, d = 3, 4
	w := []float64{
		0.1, -0.6, 0, 0.5,
		-0.2, 0.1, 0, -0.5,
		0.3, 0, 0.5, 0.49,
	}
	tests := []struct {
		T    float64
		want []int
	}{
		{0, []int{0, 1, 2, 3}},
		{0.25, []int{0, 1, 2, 3}},
		{0.3, []int{1, 2, 3}},
		{0.5, []int{1}},
		{0.6, []int{}},
	}
	for _, tc := range tests {
		idx, mask, err := Select(w, k, d, tc.T)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(idx, tc.want) {
			t.Errorf("T=%v: %v, want %v", tc.T, idx, tc.want)
		}
		for j := range mask {
			in := false
			for _, i := range tc.want {
				in = in || i == j
			}
			if mask[j] != in {
				t.Errorf("T=%v: mask %v disagrees with %v", tc.T, mask, tc.want)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name     string
		sel, ref []int
		want     Metrics
	}{
		{"both empty", nil, []int{}, Metrics{1, 1, 1, 1}},
		{"selected empty", nil, []int{1}, Metrics{}},
		{"reference empty", []int{2}, nil, Metrics{}},
		{"equal", []int{3, 1}, []int{1, 3}, Metrics{1, 1, 1, 1}},
		{"disjoint", []int{0}, []int{1}, Metrics{}},
		// tp = 2, |S| = 3, |R| = 4, |S u R| = 5.
		{"overlap", []int{0, 1, 2}, []int{1, 2, 3, 4}, Metrics{2.0 / 3, 0.5, 4.0 / 7, 0.4}},
	}
	for _, tc := range tests {
		got, err := Compare(tc.sel, tc.ref)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !near(got.Precision, tc.want.Precision, 1e-15) || !near(got.Recall, tc.want.Recall, 1e-15) ||
			!near(got.F1, tc.want.F1, 1e-15) || !near(got.Jaccard, tc.want.Jaccard, 1e-15) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestValidation(t *testing.T) {
	lap := noiseSpec{Kind: Laplace, Scale: 1}.law()
	ok := []float64{1, 2, 3, 4}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"NaN weight", second(Select([]float64{1, math.NaN()}, 1, 2, 0)), ErrInvalid},
		{"Inf weight", second(Select([]float64{math.Inf(1), 0}, 2, 1, 0)), ErrInvalid},
		{"negative T", second(Select(ok, 2, 2, -1)), ErrInvalid},
		{"NaN T", second(Select(ok, 2, 2, math.NaN())), ErrInvalid},
		{"shape", second(Select(ok, 3, 2, 0)), ErrShape},
		{"zero rows", second(Select(nil, 0, 2, 0)), ErrShape},
		{"q = 0", errOf(DynamicThreshold(0).Resolve(lap, 1)), ErrInvalid},
		{"q = 1", errOf(DynamicThreshold(1).Resolve(lap, 1)), ErrInvalid},
		{"q NaN", errOf(DynamicThreshold(math.NaN()).Resolve(lap, 1)), ErrInvalid},
		{"static negative", errOf(StaticThreshold(-0.1).Resolve(lap, 1)), ErrInvalid},
		{"zero spec", errOf(ThresholdSpec{}.Resolve(lap, 1)), ErrInvalid},
		{"zero noise", errOf(DynamicThreshold(0.1).Resolve(NoiseModel{}, 1)), ErrInvalid},
		{"negative scale", errOf(FlipProbability(0, 1, noiseSpec{Kind: Gaussian, Scale: -1}.law())), ErrInvalid},
		{"NaN scale", errOf(FlipProbability(0, 1, noiseSpec{Kind: Laplace, Scale: math.NaN()}.law())), ErrInvalid},
		{"gamma-norm Dim 0", errOf(TailProb(noiseSpec{Kind: GammaNorm, Scale: 1}.law(), 1)), ErrInvalid},
		{"NaN tail point", errOf(TailProb(lap, math.NaN())), ErrInvalid},
		{"flip NaN weight", errOf(FlipProbability(math.NaN(), 1, lap)), ErrInvalid},
		{"flip negative T", errOf(FlipProbability(0, -1, lap)), ErrInvalid},
		{"feature empty", errOf(FeatureFlipProbability(nil, 1, lap)), ErrShape},
		{"flips shape", errOf(ExpectedFlips(ok, 1, 3, 1, lap)), ErrShape},
		{"compare negative", errOf(Compare([]int{-1}, nil)), ErrInvalid},
		{"compare repeated", errOf(Compare(nil, []int{2, 2})), ErrInvalid},
		{"report shape", errOf(NewReport(ok, ok[:3], 2, 2, StaticThreshold(0), lap)), ErrShape},
		{"report NaN", errOf(NewReport(ok, []float64{1, 2, math.NaN(), 4}, 2, 2, StaticThreshold(0), lap)), ErrInvalid},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

func second[A, B any](_ A, _ B, err error) error { return err }
func errOf[A any](_ A, err error) error          { return err }

func TestNewReport(t *testing.T) {
	ref := []float64{0, 1.5, 0, -2, 0.2, 0}
	noisy := []float64{0.4, 1.1, -0.1, -2.3, 1.2, 0.05}
	noise := noiseSpec{Kind: Laplace, Scale: 0.25}.law()
	r, err := NewReport(noisy, ref, 1, 6, StaticThreshold(1), noise)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Selected, []int{1, 3, 4}) || !reflect.DeepEqual(r.Reference, []int{1, 3}) {
		t.Fatalf("selected %v reference %v", r.Selected, r.Reference)
	}
	if !near(r.Precision, 2.0/3, 1e-15) || r.Recall != 1 || !near(r.F1, 0.8, 1e-15) || !near(r.Jaccard, 2.0/3, 1e-15) {
		t.Errorf("metrics %+v", r)
	}
	want, _ := ExpectedFlips(ref, 1, 6, 1, noise)
	if r.ExpectedFlips != want || r.Threshold != 1 {
		t.Errorf("report %+v, want %v expected flips", r, want)
	}
}
