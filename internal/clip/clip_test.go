package clip

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/internal/clip/cliptest"
)

// draw returns a seeded value of magnitude 10^e, e uniform in [lo, hi],
// of either sign.
func draw(r *rand.Rand, lo, hi float64) float64 {
	return math.Copysign(math.Pow(10, lo+(hi-lo)*r.Float64()), r.NormFloat64())
}

// TestScaleExact checks Scale bit for bit against exact norms: over
// seeded gradients of 1 to 3 coefficients and 1 to 300 elements, with
// magnitudes from subnormal to 1e300 and clipping norms from 1e-300 to
// 1e300, the rounded products after Scale have exact norm at most C,
// and (unless C or the scaled coefficients are near the subnormal range,
// where they have few bits) at least C (1 - 1e-6): the clipping costs no accuracy. Gradients that Fast
// accepts from their exact norm are within C unscaled.
func TestScaleExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 3000 {
		k, d := 1+r.IntN(3), 1+r.IntN(300)
		if i%3 == 0 {
			d = 1 + r.IntN(8)
		}
		a, x := make([]float64, k), make([]float64, d)
		spread := 20 * r.Float64()
		ea, ex := -300+600*r.Float64(), -300+600*r.Float64()
		for j := range a {
			a[j] = draw(r, ea-spread, ea)
		}
		for j := range x {
			x[j] = draw(r, ex-spread, ex)
			if i%7 == 0 && j%3 == 0 {
				x[j] = math.Float64frombits(1 + r.Uint64N(1<<52)) // subnormal
			}
		}
		before := cliptest.Norm(a, x)
		C := before * math.Pow(10, -3+4*r.Float64())
		if i%5 == 0 {
			C = math.Pow(10, -300+600*r.Float64())
		}
		if C == 0 || math.IsInf(C, 0) {
			continue
		}
		b := New(C, k*d)
		fast := b.Fast(before)
		scaled := b.Scale(a, x)
		after := cliptest.Norm(a, x)
		switch {
		case after > C:
			t.Fatalf("case %d: %d x %d products of norm %v scaled to %v > C = %v", i, k, d, before, after, C)
		case fast && scaled:
			t.Fatalf("case %d: norm %v, Fast with C = %v, but scaled", i, before, C)
		case !scaled && after != before:
			t.Fatalf("case %d: not scaled, norm %v changed to %v", i, before, after)
		case scaled && after < C*(1-1e-6) && C > 1e-290 && math.Abs(a[0]) > 1e-290:
			t.Fatalf("case %d: norm %v scaled to %v, far below C = %v", i, before, after, C)
		}
	}
}

// TestScaleBoundary checks Scale on products whose exact norm is within
// rounding of C, where scaling by C/||a x|| alone leaves a norm an ulp or
// two above C: the row x scaled to norm C, times 1.
func TestScaleBoundary(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	over := 0
	for range 2000 {
		x := make([]float64, 1+r.IntN(64))
		for j := range x {
			x[j] = r.NormFloat64()
		}
		C := 0.01
		s := C / cliptest.Norm(cliptest.One, x)
		for j := range x {
			x[j] *= s
		}
		a := []float64{1}
		if cliptest.Norm(a, x) > C {
			over++
		}
		New(C, len(x)).Scale(a, x)
		if n := cliptest.Norm(a, x); n > C {
			t.Fatalf("norm %v > C = %v after Scale", n, C)
		}
	}
	if over == 0 {
		t.Errorf("no row scaled to C has a norm above C: the test does not test")
	}
}

// TestZero checks that a zero gradient is left as is and that New and
// Scale refuse what they cannot bound.
func TestZero(t *testing.T) {
	a := []float64{0}
	if New(1, 3).Scale(a, []float64{1, 2, 3}) || a[0] != 0 {
		t.Errorf("a zero gradient scaled")
	}
	for _, f := range []func(){
		func() { New(0, 1) },
		func() { New(math.Inf(1), 1) },
		func() { New(1, 0) },
		func() { New(1, 2).Scale([]float64{1, 1}, []float64{1, 1}) },
		func() { New(1, 2).Scale([]float64{math.NaN()}, []float64{1, 1}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			f()
		}()
	}
}
