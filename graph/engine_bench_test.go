package graph

import (
	"fmt"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/trainer"
)

// BenchmarkTapeRunAll times RunAll and Reset of a tape machine on a graph of
// one scalar input and no operation: the cost of a run that no graph can
// avoid (the goroutine RunAll starts, the thread it locks, the channels).
func BenchmarkTapeRunAll(b *testing.B) {
	g := gorgonia.NewGraph()
	gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("x"), gorgonia.WithValue(1.0))
	vm := gorgonia.NewTapeMachine(g, gorgonia.WithWatchlist())
	defer vm.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
}

// BenchmarkMarginGrads times one call of the batched kernel of the logistic
// loss on a minibatch of b rows of 33 features (the Adult benchmark's), the
// graph engine's work per step of the trainer.
func BenchmarkMarginGrads(b *testing.B) {
	const d = 33
	for _, batch := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("b=%d", batch), func(b *testing.B) {
			X, y := benchdata.Synth(batch, d, 0, 1)
			mk, err := newMarginKernel(trainer.Problem{Loss: losses.Logistic{}, N: batch, D: d, K: 1, Batch: batch})
			if err != nil {
				b.Fatal(err)
			}
			defer mk.Close()
			w, gz := make([]float64, d), make([]float64, batch)
			for j := range w {
				w[j] = 0.1 * float64(j%5-2)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := mk.MarginGrads(gz, w, X.RawMatrix().Data, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
