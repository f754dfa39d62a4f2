package trainer_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	_ "github.com/stabpriv/stabpriv/graph" // registers trainer.Graph
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// epochData returns n rows of d features in the unit ball with logistic
// labels from a planted model.
func epochData(n, d int) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(1, 77))
	w := make([]float64, d)
	for j := range w {
		w[j] = 3 * r.NormFloat64()
	}
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		var sq, z float64
		for j := range row {
			row[j] = r.NormFloat64()
			sq += row[j] * row[j]
		}
		s := r.Float64() / math.Sqrt(sq)
		for j := range row {
			row[j] *= s
			z += w[j] * row[j]
		}
		y[i] = 1
		if z+0.5*r.NormFloat64() < 0 {
			y[i] = -1
		}
	}
	return X, y
}

// benchEpoch times whole Train calls of passes passes of the paper's Adult
// configuration (logistic loss, elastic net) on n x d data with engine e and
// minibatch b, and reports ns/epoch: the passes with Train's fixed cost (the
// copy and check of X, the objective at the end) spread over them.
func benchEpoch(b *testing.B, e trainer.Engine, n, d, batch, passes int) {
	X, y := epochData(n, d)
	tr, err := trainer.New(trainer.Config{
		Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 1e-4, L1Ratio: 0.15}, Eta: 0.5,
		Batch: batch, Passes: passes, Engine: e, Seed: 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		if _, _, err := tr.Train(ctx, X, y); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*passes), "ns/epoch")
}

// BenchmarkEpoch36000x33 compares the engines per epoch at b = 1, 64 and 256
// on 36000 x 33 data (the size of the paper's Adult training set). The graph
// engine runs its tape once per minibatch, so its cost per example falls
// with b.
func BenchmarkEpoch36000x33(b *testing.B) {
	for _, batch := range []int{1, 64, 256} {
		for _, e := range []trainer.Engine{trainer.Native, trainer.Graph} {
			passes := 3
			if e == trainer.Graph && batch == 1 {
				passes = 1 // about a second per pass
			}
			b.Run(fmt.Sprintf("engine=%v/b=%d", e, batch), func(b *testing.B) { benchEpoch(b, e, 36000, 33, batch, passes) })
		}
	}
}
