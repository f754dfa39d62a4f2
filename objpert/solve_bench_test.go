package objpert

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// plantedSoftmax returns n rows of norm at most 1 (d-1 Gaussian coordinates
// scaled into the ball of radius 1/sqrt(2), then a bias 1/sqrt(2)) with
// labels drawn from a planted softmax model over k classes with unequal
// priors: a harder problem than uniform labels, where the minimizer has a
// sizeable norm and the class probabilities are far from uniform.
func plantedSoftmax(n, d, k int, seed uint64) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 3))
	W := make([]float64, k*d)
	for i := range W {
		W[i] = 4 * r.NormFloat64()
	}
	for c := range k {
		W[c*d+d-1] = -0.4 * float64(c) // bias: class 0 most frequent
	}
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	z := make([]float64, k)
	for i := range n {
		row := X.RawRowView(i)
		for j := range d - 1 {
			row[j] = r.NormFloat64()
		}
		nr := floats.Norm(row[:d-1], 2)
		floats.Scale(1/(math.Sqrt2*math.Max(nr, 1)), row[:d-1])
		row[d-1] = 1 / math.Sqrt2
		for c := range k {
			z[c] = floats.Dot(W[c*d:(c+1)*d], row)
		}
		zmax := floats.Max(z)
		var s float64
		for c := range z {
			z[c] = math.Exp(z[c] - zmax)
			s += z[c]
		}
		u := r.Float64() * s
		c := 0
		for ; c < k-1 && u > z[c]; c++ {
			u -= z[c]
		}
		y[i] = float64(c)
	}
	X.Scale(0.999, X) // norms of exactly 1 may round above it
	return X, y
}

// lastfmSized returns the objective of a LastFM-sized softmax problem (n =
// 6100, d = 33, K = 18) with objective perturbation's noise at eps, and the
// calibration.
func lastfmSized(tb testing.TB, eps, lambda float64, seed uint64) (*glm.Objective, Calibration) {
	tb.Helper()
	const n, d, k = 6100, 33, 18
	X, y := plantedSoftmax(n, d, k, seed)
	pr := Problem{Loss: losses.Softmax{}, N: n, D: d, K: k, Kappa: 1, Lambda: lambda}
	c, err := Calibrate(perturb.Objective, eps, 0, pr)
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]float64, k*d)
	if err := perturb.Seeded(seed).AddGammaNorm(b, 2*c.L, c.EpsNoise); err != nil {
		tb.Fatal(err)
	}
	return newObjective(tb, X, y, pr.Loss, k, lambda, b), c
}

// BenchmarkMinimizeSoftmaxLastFM is one softmax minimize of objective
// perturbation on a LastFM-sized problem, from w = 0 to GradTol.
func BenchmarkMinimizeSoftmaxLastFM(b *testing.B) {
	for _, lambda := range []float64{3.1623e-4, 1e-2} {
		b.Run("lambda="+strconv.FormatFloat(lambda, 'g', -1, 64), func(b *testing.B) {
			o, c := lastfmSized(b, 1, lambda, 1)
			benchMinimize(b, o, c)
		})
	}
}

// BenchmarkMinimizeLogistic is one binary (K = 1) minimize on an
// Adult-sized problem (n = 36177, d = 33).
func BenchmarkMinimizeLogistic(b *testing.B) {
	X, y := rows(36177, 33, 1, 5)
	X.Scale(0.999, X)
	pr := problem(losses.Logistic{}, X, 1, 1e-4)
	c, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		b.Fatal(err)
	}
	noise := make([]float64, 33)
	if err := perturb.Seeded(2).AddGammaNorm(noise, 2*c.L, c.EpsNoise); err != nil {
		b.Fatal(err)
	}
	benchMinimize(b, newObjective(b, X, y, pr.Loss, 1, pr.Lambda, noise), c)
}

// benchMinimize times minimize from w = 0 to GradTol on o, with the
// fallback of c, and reports the steps of the last run.
func benchMinimize(b *testing.B, o *glm.Objective, c Calibration) {
	w := make([]float64, o.Dim())
	var st SolveStats
	for b.Loop() {
		clear(w)
		var err error
		st, err = o.Minimize(context.Background(), w, glm.Settings{GradTol: c.GradTol, Fallback: c.FallbackSteps, Step: c.Step})
		if err != nil || !st.Reached {
			b.Fatalf("%+v, %v", st, err)
		}
	}
	b.ReportMetric(float64(st.NewtonSteps), "newton-steps")
	b.ReportMetric(float64(st.GradientSteps), "gradient-steps")
}

// BenchmarkReleaseLogistic is a whole binary release on the problem of
// BenchmarkMinimizeLogistic: calibration, the noise (seeded) and the solve
// from a fresh objective, the Gram matrices included.
func BenchmarkReleaseLogistic(b *testing.B) {
	X, y := rows(36177, 33, 1, 5)
	X.Scale(0.999, X)
	pr := problem(losses.Logistic{}, X, 1, 1e-4)
	for b.Loop() {
		c, err := Calibrate(perturb.Objective, 1, 0, pr)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Release(context.Background(), X, y, pr, c, perturb.Seeded(2)); err != nil {
			b.Fatal(err)
		}
	}
}
