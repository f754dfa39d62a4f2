package trainer_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// benchEpoch times whole Train calls of passes passes of the paper's Adult
// configuration (logistic loss, elastic net) on n x d data with engine e and
// minibatch b, and reports ns/epoch: the passes with Train's fixed cost (the
// copy and check of X, the objective at the end) spread over them.
func benchEpoch(b *testing.B, e trainer.Engine, n, d, batch, passes int) {
	X, y := benchdata.Synth(n, d, 0, 1)
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

// BenchmarkEpoch36000x33 compares the engines per epoch at b = 1, 64, 256
// and 1024 on 36000 x 33 data (the size of the paper's Adult training set).
// The graph engine runs its tape once per minibatch, so its cost per example
// falls with b towards the cost of its operations per row.
func BenchmarkEpoch36000x33(b *testing.B) {
	for _, batch := range []int{1, 64, 256, 1024} {
		for _, e := range []trainer.Engine{trainer.Native, trainer.Graph} {
			passes := 3
			if e == trainer.Graph && batch == 1 {
				passes = 1 // about a second per pass
			}
			b.Run(fmt.Sprintf("engine=%v/b=%d", e, batch), func(b *testing.B) { benchEpoch(b, e, 36000, 33, batch, passes) })
		}
	}
}
