package preprocess

import (
	"errors"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestSignedLog2 checks g: odd, increasing, g(2^k - 1) = k, finite at the
// ends of float64.
func TestSignedLog2(t *testing.T) {
	for k := range 60 {
		x := math.Ldexp(1, k) - 1
		if g := SignedLog2(x); math.Abs(g-float64(k)) > 1e-12*float64(max(k, 1)) || SignedLog2(-x) != -g {
			t.Errorf("g(2^%d - 1) = %v, g(-x) = %v", k, g, SignedLog2(-x))
		}
	}
	prev := math.Inf(-1)
	for _, x := range []float64{-math.MaxFloat64, -1e300, -3, -1e-300, 0, 1e-300, 0.5, 3, 1e300, math.MaxFloat64} {
		g := SignedLog2(x)
		if !(g > prev) || math.IsInf(g, 0) || math.IsNaN(g) {
			t.Errorf("g(%v) = %v after %v", x, g, prev)
		}
		prev = g
	}
}

// TestLogMap checks the Bounds map on the log scale: z = clamp(g((x -
// m)/s)/W, -1, 1) with m = (lo + hi)/2 and s = (hi - lo)/2; monotone in x,
// 0 at the centre, +-1 far out (an infinite quotient included), and the
// unit-ball map after it; Check refuses a negative or infinite half-width
// and the log scale outside Bounds mode.
func TestLogMap(t *testing.T) {
	p := &RowMap{Mode: Bounds, Features: []string{"a"}, Lo: []float64{40}, Hi: []float64{56}, Log: 3}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	z := func(x float64) float64 {
		dst := make([]float64, 2)
		if err := p.Apply(dst, []float64{x}); err != nil {
			t.Fatal(err)
		}
		// One feature: x' = [clip_1(z), 1] / sqrt(2).
		return dst[0] * math.Sqrt2
	}
	for _, c := range []struct{ x, want float64 }{
		{48, 0},
		{56, 1.0 / 3},  // one spread: g(1) = 1
		{40, -1.0 / 3}, // and below
		{48 + 7*8, 1},  // seven spreads: g(7) = 3
		{1e308, 1},
		{-math.MaxFloat64, -1},
	} {
		if got := z(c.x); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("z(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	// A spread of 2^-24 and a huge value: the quotient overflows to +Inf.
	q := &RowMap{Mode: Bounds, Features: []string{"a"}, Lo: []float64{-math.Ldexp(1, -24)}, Hi: []float64{math.Ldexp(1, -24)}, Log: 3}
	dst := make([]float64, 2)
	if err := q.Apply(dst, []float64{math.MaxFloat64}); err != nil || math.Abs(dst[0]*math.Sqrt2-1) > 1e-15 {
		t.Errorf("an infinite quotient: %v, %v", dst, err)
	}
	prev := math.Inf(-1)
	for x := -100.0; x <= 200; x += 0.5 {
		if v := z(x); v < prev {
			t.Errorf("z not monotone at %v: %v < %v", x, v, prev)
		} else {
			prev = v
		}
	}
	for _, bad := range []*RowMap{
		{Mode: Bounds, Features: []string{"a"}, Lo: []float64{0}, Hi: []float64{1}, Log: -1},
		{Mode: Bounds, Features: []string{"a"}, Lo: []float64{0}, Hi: []float64{1}, Log: math.Inf(1)},
		{Mode: Bounds, Features: []string{"a"}, Lo: []float64{0}, Hi: []float64{1}, Log: math.NaN()},
		{Mode: None, Features: []string{"a"}, Log: 3},
	} {
		if err := bad.Check(); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
}
