// Package pdptest holds the test data and reference computations that
// the tests of package pdp and of the packages built on it (pdp/ridge,
// pdp/report) share: synthetic rows for each task, a data set with one row
// removed or added, and the KL divergence between two Gaussians.
package pdptest

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// Synth returns n rows in the unit ball (the last feature a constant 1/2,
// a bias) and labels for the loss: -1/+1 from a planted logistic model,
// class indices for softmax, a noisy linear response for regression.
func Synth(n, d int, loss losses.Loss, classes int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := mat.NewDense(n, d, nil)
	theta := make([]float64, d*max(1, classes))
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		var s float64
		for j := 0; j < d-1; j++ {
			row[j] = rng.NormFloat64()
			s += row[j] * row[j]
		}
		r := math.Pow(rng.Float64(), 1/float64(d-1)) / math.Sqrt(s) * math.Sqrt(0.75)
		for j := 0; j < d-1; j++ {
			row[j] *= r
		}
		row[d-1] = 0.5
		m := 0.0
		for j, v := range row {
			m += 3 * theta[j] * v
		}
		switch loss.Task() {
		case losses.Binary:
			y[i] = -1
			if rng.Float64() < 1/(1+math.Exp(-m)) {
				y[i] = 1
			}
		case losses.Regression:
			y[i] = m/3 + 0.3*rng.NormFloat64()
		case losses.Multiclass:
			best, arg := math.Inf(-1), 0
			for c := 0; c < classes; c++ {
				var mc float64
				for j, v := range row {
					mc += 3 * theta[c*d+j] * v
				}
				mc += rng.NormFloat64() // Gumbel-ish noise keeps classes overlapping
				if mc > best {
					best, arg = mc, c
				}
			}
			y[i] = float64(arg)
		}
	}
	return x, y
}

// Without returns x and y with row i removed.
func Without(x *mat.Dense, y []float64, i int) (*mat.Dense, []float64) {
	n, d := x.Dims()
	xo := mat.NewDense(n-1, d, nil)
	yo := make([]float64, 0, n-1)
	r := 0
	for k := 0; k < n; k++ {
		if k == i {
			continue
		}
		xo.SetRow(r, x.RawRowView(k))
		yo = append(yo, y[k])
		r++
	}
	return xo, yo
}

// With returns x and y with the row (t, ty) appended.
func With(x *mat.Dense, y []float64, t []float64, ty float64) (*mat.Dense, []float64) {
	n, d := x.Dims()
	xo := mat.NewDense(n+1, d, nil)
	for k := 0; k < n; k++ {
		xo.SetRow(k, x.RawRowView(k))
	}
	xo.SetRow(n, t)
	return xo, append(append([]float64(nil), y...), ty)
}

// Dist returns the Euclidean distance between a and b.
func Dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// KLGauss returns KL(N(m0, s0) || N(m1, s1)).
func KLGauss(m0 *mat.VecDense, s0 *mat.SymDense, m1 *mat.VecDense, s1 *mat.SymDense) float64 {
	d := m0.Len()
	var c1 mat.Cholesky
	c1.Factorize(s1)
	var c0 mat.Cholesky
	c0.Factorize(s0)
	var prod mat.Dense
	_ = c1.SolveTo(&prod, s0)
	var tr float64
	for j := 0; j < d; j++ {
		tr += prod.At(j, j)
	}
	var dm, sol mat.VecDense
	dm.SubVec(m1, m0)
	_ = c1.SolveVecTo(&sol, &dm)
	return 0.5 * (tr - float64(d) + mat.Dot(&dm, &sol) + c1.LogDet() - c0.LogDet())
}
