package trainer

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/clip/cliptest"
	"github.com/stabpriv/stabpriv/losses"
)

// TestDPSGDClippedNormAtMostC checks the sensitivity claim of a step, bit
// for bit: an example's clipped contribution (c g) x has exact L2 norm at
// most C, on rows scaled to kappa (whose kept norm is kappa, not the
// norm of the scaled row) and a C that binds on every example. Steps
// whose batch holds one row isolate one contribution.
func TestDPSGDClippedNormAtMostC(t *testing.T) {
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
		if nrm := cliptest.Norm(cliptest.One, sum); nrm > cfg.Clip {
			over++
			worst = math.Max(worst, nrm/cfg.Clip-1)
		}
	})
	if singles == 0 || over > 0 {
		t.Errorf("%d of %d single-example sums have norm above C = %v (worst by a relative %.3g)", over, singles, cfg.Clip, worst)
	}
}
