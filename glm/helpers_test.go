package glm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
)

// lossCase is a loss with the number of classes its tests use.
type lossCase struct {
	name    string
	loss    losses.Loss
	classes int
}

// allLosses returns a case for every built-in loss (losses.All), with K =
// 3 for a multiclass one.
func allLosses() []lossCase {
	var cs []lossCase
	for _, l := range losses.All() {
		c := lossCase{name: l.Name(), loss: l}
		if l.Task() == losses.Multiclass {
			c.classes = 3
		}
		cs = append(cs, c)
	}
	return cs
}

// rows returns n rows in the unit ball and labels for the loss
// (benchdata.Synth): signs for a binary loss, classes for a multiclass
// one, a noisy linear response for regression.
func rows(n, d int, l losses.Loss, classes int, seed uint64) (*mat.Dense, []float64) {
	switch l.Task() {
	case losses.Binary:
		return benchdata.Synth(n, d, 0, seed)
	case losses.Multiclass:
		return benchdata.Synth(n, d, classes, seed)
	}
	X, y := benchdata.Synth(n, d, 0, seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range y {
		y[i] = 2*X.At(i, 0) + 0.3*r.NormFloat64()
	}
	return X, y
}

// randVec returns p Gaussian entries times s.
func randVec(r *rand.Rand, p int, s float64) []float64 {
	v := make([]float64, p)
	for i := range v {
		v[i] = s * r.NormFloat64()
	}
	return v
}

// mustNew is New that fails the test on an error.
func mustNew(tb testing.TB, X *mat.Dense, y []float64, cfg Config) *Objective {
	tb.Helper()
	o, err := New(X, y, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// hess returns the Hessian of o at w.
func hess(o *Objective, w []float64) *mat.SymDense {
	var H mat.SymDense
	o.Hess(&H, w)
	return &H
}

// maxDiff returns the largest entry of |A - B| over the upper triangle and
// the largest |B|.
func maxDiff(a, b mat.Symmetric) (worst, top float64) {
	p := b.SymmetricDim()
	for i := range p {
		for j := i; j < p; j++ {
			top = math.Max(top, math.Abs(b.At(i, j)))
			worst = math.Max(worst, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return worst, top
}

// sameBits reports whether a and b hold the same float64s bit for bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
