package preprocess

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestComponents checks the principal directions of a map: SetComponents
// refuses a matrix of the wrong height, more directions than entries and
// directions that are not orthonormal; Apply gives [clip_1(V clip_1(z)),
// 1]/sqrt(2), after a projection too (V applies to R z); and Check refuses
// a direction edited after the fact.
func TestComponents(t *testing.T) {
	features := []string{"a", "b", "c"}
	p, err := NewRowMap(None, features, datasets.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := 1 / math.Sqrt2
	good := mat.NewDense(3, 2, []float64{s, 0, s, 0, 0, 1})
	for name, V := range map[string]*mat.Dense{
		"height":         mat.NewDense(2, 2, []float64{1, 0, 0, 1}),
		"too many":       mat.NewDense(3, 4, nil),
		"not normalized": mat.NewDense(3, 1, []float64{1, 1, 0}),
		"not orthogonal": mat.NewDense(3, 2, []float64{1, s, 0, s, 0, 0}),
		"not finite":     mat.NewDense(3, 1, []float64{math.NaN(), 0, 0}),
	} {
		if err := p.SetComponents(V); !errors.Is(err, datasets.ErrInvalid) || p.PCA != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := p.SetComponents(good); err != nil || p.Dim() != 3 || p.Check() != nil {
		t.Fatalf("%v, dim %d, check %v", err, p.Dim(), p.Check())
	}
	x := []float64{3, 1, -4} // norm above 1: clipped before V
	got := make([]float64, 3)
	if err := p.Apply(got, x); err != nil {
		t.Fatal(err)
	}
	z := floats.ScaleTo(make([]float64, 3), 1/floats.Norm(x, 2), x)
	want := []float64{s * (z[0] + z[1]) / math.Sqrt2, z[2] / math.Sqrt2, 1 / math.Sqrt2}
	if !floats.EqualApprox(got, want, 1e-15) {
		t.Errorf("Apply: %v, want %v", got, want)
	}
	p.PCA.V[1][2] = 0.9
	if err := p.Check(); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("an edited direction: %v", err)
	}
	// After a projection to 2 dimensions, V applies to R z.
	q, _ := NewRowMap(None, features, datasets.Schema{}, nil)
	if err := q.SetProjection(2, 5); err != nil {
		t.Fatal(err)
	}
	if err := q.SetComponents(good); err == nil {
		t.Error("directions of 3 entries after a projection to 2: accepted")
	}
	if err := q.SetComponents(mat.NewDense(2, 1, []float64{0, 1})); err != nil || q.Dim() != 2 {
		t.Fatalf("%v, dim %d", err, q.Dim())
	}
	if err := q.Apply(got[:2], []float64{0.1, 0.2, 0.3}); err != nil {
		t.Fatal(err)
	}
	var u mat.VecDense
	u.MulVec(q.Project.Matrix(3), mat.NewVecDense(3, []float64{0.1, 0.2, 0.3}))
	r := u.RawVector().Data
	if nrm := floats.Norm(r, 2); nrm > 1 {
		floats.Scale(1/nrm, r)
	}
	if w := r[1] / math.Sqrt2; math.Abs(got[0]-w) > 1e-15 {
		t.Errorf("after the projection: %v, want %v", got[0], w)
	}
}
