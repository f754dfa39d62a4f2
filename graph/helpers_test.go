package graph

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/trainer"
)

// synthData returns n dense rows of d features in the unit ball and labels
// from a planted linear model with label noise: y in {-1, +1} for
// classes = 0, y in {0, ..., classes-1} otherwise (the trainer tests' data).
func synthData(n, d, classes int, seed uint64) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 77))
	k := max(classes, 1)
	planted := make([]float64, k*d)
	for i := range planted {
		planted[i] = 3 * r.NormFloat64()
	}
	X := mat.NewDense(n, d, nil)
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

// classesOf returns the classes argument of synthData for cfg.
func classesOf(cfg trainer.Config) int {
	if cfg.Loss != nil && cfg.Loss.Task() == losses.Multiclass {
		return cfg.Classes
	}
	return 0
}

func dot(a, b []float64) float64 {
	var s float64
	for j, v := range a {
		s += v * b[j]
	}
	return s
}
