package preprocess

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestProjection checks the random projection: R depends on (K, p, seed)
// alone, it preserves squared norms on average, and the projected rows end
// in the unit ball.
func TestProjection(t *testing.T) {
	a := (&Projection{K: 8, Seed: 3}).Matrix(50)
	projCache.Clear()
	b := (&Projection{K: 8, Seed: 3}).Matrix(50)
	c := (&Projection{K: 8, Seed: 4}).Matrix(50)
	if !mat.Equal(a, b) || mat.Equal(a, c) {
		t.Fatal("the matrix is not a function of its seed")
	}
	// ||R z||^2 for a unit z is chi^2_8 / 8 for each seed: mean 1, standard
	// deviation 1/2. The mean over 400 seeds is off by more than 0.15 (six
	// standard deviations of the mean, 0.025) with probability below 1e-8.
	z := mat.NewVecDense(50, nil)
	z.SetVec(7, 0.6)
	z.SetVec(31, -0.8)
	var sum float64
	for seed := range uint64(400) {
		var u mat.VecDense
		u.MulVec((&Projection{K: 8, Seed: seed + 100}).Matrix(50), z)
		sum += mat.Dot(&u, &u)
	}
	if m := sum / 400; math.Abs(m-1) > 0.15 {
		t.Errorf("mean ||R z||^2 = %v for ||z|| = 1, want about 1", m)
	}
	features := make([]string, 50)
	for j := range features {
		features[j] = string(rune('a'+j%26)) + string(rune('a'+j/26))
	}
	p, err := NewRowMap(None, features, datasets.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{-1, 51} {
		if err := p.SetProjection(k, 1); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("k = %d: %v", k, err)
		}
	}
	if err := p.SetProjection(5, 9); err != nil || p.Dim() != 6 || p.Check() != nil {
		t.Fatalf("k = 5: %v, dim %d", err, p.Dim())
	}
	r := rand.New(rand.NewPCG(5, 5))
	x, dst := make([]float64, 50), make([]float64, 6)
	for range 500 {
		for j := range x {
			x[j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(20)))
		}
		if err := p.Apply(dst, x); err != nil {
			t.Fatal(err)
		}
		if s := mat.Dot(mat.NewVecDense(6, dst), mat.NewVecDense(6, dst)); s > 1 || dst[5] == 0 {
			t.Fatalf("||x'||^2 = %v, bias %v", s, dst[5])
		}
	}
	p.Project.K = 60
	if err := p.Check(); err == nil {
		t.Error("Check accepts a projection up")
	}
}

// TestProjectionCap: a model file cannot ask its reader for a projection
// matrix of more than MaxProjectionEntries entries.
func TestProjectionCap(t *testing.T) {
	features := make([]string, 10000)
	for j := range features {
		features[j] = "f" + string(rune('0'+j%10)) + string(rune('a'+j/10%26)) + string(rune('a'+j/260%26)) + string(rune('a'+j/6760))
	}
	p, err := NewRowMap(None, features, datasets.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetProjection(5000, 1); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("a 5000 x 10000 projection: %v", err)
	}
	p.Project = &Projection{K: 5000}
	if err := p.Check(); err == nil {
		t.Error("Check accepts a 5000 x 10000 projection")
	}
}
