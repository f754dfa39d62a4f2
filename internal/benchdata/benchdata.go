package benchdata

import (
	"math"
	"math/rand/v2"

	gonumblas "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/hugepage"
)

// Synth returns n dense rows of d features, each drawn uniformly in
// direction with norm uniform in [0, 1] (so rows lie in the unit ball), and
// labels from a planted linear model with Gaussian noise of standard
// deviation 0.5 on the margins: y in {-1, +1} for classes = 0 (binary), y in
// {0, ..., classes-1}, the class of the largest noisy margin, otherwise. The
// draws depend on seed alone. Norms and margins are gonum's native BLAS dot
// products (the trainer's own), so the data are the same bits on every run.
func Synth(n, d, classes int, seed uint64) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 77))
	k := max(classes, 1)
	planted := make([]float64, k*d)
	for i := range planted {
		planted[i] = 3 * r.NormFloat64()
	}
	X := mat.NewDense(n, d, hugepage.Make(n*d))
	y := make([]float64, n)
	z := make([]float64, k)
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		for j := range row {
			row[j] = r.NormFloat64()
		}
		s := r.Float64() / math.Sqrt(dot(row, row))
		for j := range row {
			row[j] *= s
		}
		for c := range z {
			z[c] = dot(planted[c*d:(c+1)*d], row) + 0.5*r.NormFloat64()
		}
		if classes == 0 {
			y[i] = 1
			if z[0] < 0 {
				y[i] = -1
			}
			continue
		}
		best := 0
		for c, v := range z {
			if v > z[best] {
				best = c
			}
		}
		y[i] = float64(best)
	}
	return X, y
}

// dot returns <a, b> with gonum's native BLAS.
func dot(a, b []float64) float64 {
	return gonumblas.Implementation{}.Ddot(len(a), a, 1, b, 1)
}
