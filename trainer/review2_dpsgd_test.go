package trainer

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// exactNorm returns the L2 norm of v computed without rounding of the
// sum of squares (big.Float at 400 bits), rounded once.
func exactNorm(v []float64) float64 {
	s := new(big.Float).SetPrec(400)
	for _, x := range v {
		b := new(big.Float).SetPrec(400).SetFloat64(x)
		s.Add(s, b.Mul(b, b))
	}
	f, _ := s.Sqrt(s).Float64()
	return f
}

// TestReview2DPSGDClippedNormAtMostC checks the sensitivity claim of a
// step, bit for bit: an example's clipped contribution (c g) x has L2
// norm at most C. The native trainer takes the scale from ||x|| as kept in
// p.norm (kappa for a row it scaled, not the norm of the scaled row) and
// does not re-check the rounded product, so a contribution can exceed C by
// an ulp or two (graph.TrainDPSGD lowers c until the computed norm is at
// most C). Steps whose batch holds one row isolate one contribution.
func TestReview2DPSGDClippedNormAtMostC(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	n, d := 400, 31
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range d {
			X.Set(i, j, 3*r.NormFloat64()) // norms well above kappa = 1
		}
		y[i] = float64(2*r.IntN(2) - 1)
	}
	cfg := Config{Loss: losses.Logistic{}, Eta: 0.5, Batch: 1, Passes: 30, Clip: 0.01, Seed: 7}
	over, singles := 0, 0
	worst := 0.0
	trainDP(t, cfg, X, y, DPSGD{NoiseMultiplier: 1, Noise: zeroNoise{}, Coins: rand.NewPCG(5, 6)}, func(_ int, _ []float64, batch []int, sum []float64) {
		if len(batch) != 1 {
			return
		}
		singles++
		if nrm := exactNorm(sum); nrm > cfg.Clip {
			over++
			worst = math.Max(worst, nrm/cfg.Clip-1)
		}
	})
	if over > 0 {
		t.Errorf("%d of %d single-example sums have norm above C = %v (worst by a relative %.3g)", over, singles, cfg.Clip, worst)
	}
}
