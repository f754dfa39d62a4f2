package preprocess

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestProjectionHugeRow: a row of finite cells whose projection R z
// overflows float64 maps to the direction of R z (its clip_1 in exact
// arithmetic, computed as R (z/m) scaled to norm 1), not to an error; a row
// whose projection fits maps to UnitBallRow(R z) bit for bit, as before.
func TestProjectionHugeRow(t *testing.T) {
	p, err := NewRowMap(None, []string{"x1", "x2", "x3", "x4", "x5", "x6"}, datasets.Schema{Label: "class"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetProjection(3, 3); err != nil {
		t.Fatal(err)
	}
	R := p.stages().R
	overflowed := 0
	for _, x := range [][]float64{
		{1.7e308, 1.7e308, 1.7e308, 1.7e308, 1.7e308, 1.7e308},
		{1.7e308, -1.7e308, -1.7e308, 1.7e308, -1.7e308, 1.7e308},
		{1e308, -1e308, 1e308, -1e308, 1e308, -1e308},
		{0.5, -2, 3, 1e-3, 0, 7},
		{1e-300, 0, 0, 0, 0, -1e-300},
	} {
		plain := make([]float64, 3)
		mat.NewVecDense(3, plain).MulVec(R, mat.NewVecDense(6, x))
		want := make([]float64, 4)
		if floats.HasNaN(plain) || math.IsInf(floats.Norm(plain, 1), 0) {
			overflowed++
			// The direction of R z, from R (z/m) in exact arithmetic.
			m := floats.Norm(x, math.Inf(1))
			zs := make([]float64, 6)
			floats.ScaleTo(zs, 1/m, x)
			mat.NewVecDense(3, plain).MulVec(R, mat.NewVecDense(6, zs))
			floats.Scale(1/floats.Norm(plain, 2), plain)
			if err := UnitBallRow(want, plain); err != nil {
				t.Fatal(err)
			}
			got := make([]float64, 4)
			if err := p.Apply(got, x); err != nil {
				t.Fatalf("%v: %v", x, err)
			}
			if d := floats.Distance(got, want, 2); d > 1e-15 {
				t.Errorf("%v: mapped to %v, want %v", x, got, want)
			}
			continue
		}
		if err := UnitBallRow(want, plain); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, 4)
		if err := p.Apply(got, x); err != nil || !floats.Same(got, want) {
			t.Errorf("%v: mapped to %v (%v), want %v bit for bit", x, got, err, want)
		}
	}
	if overflowed < 2 {
		t.Errorf("%d of the huge rows overflow R z: the test does not reach the scaled projection", overflowed)
	}
}
