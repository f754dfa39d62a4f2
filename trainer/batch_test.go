package trainer

import (
	"context"
	"fmt"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// TestBatchStepBitIdentical checks that the fused minibatch step (batchStep)
// gives the weights of every step, and the clipped margin gradient of every
// example, of the example-by-example step bit for bit: minibatches of 2 to
// 257 (a multiple of 4 or not, short last ones), rows gathered or read in
// place, with every knob batchStep handles, and every scalar loss of
// losses.All (the shapes and knobs are listed by hand with the loss whose
// path they exercise).
func TestBatchStepBitIdentical(t *testing.T) {
	enet := regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}
	type batchCase struct {
		n, d, b int
		cfg     Config
	}
	cases := []batchCase{
		{103, 6, 2, Config{Loss: losses.Logistic{}, Reg: enet}},
		{103, 6, 7, Config{Loss: losses.Logistic{}, Reg: enet, Clip: 0.2}},
		{200, 33, 32, Config{Loss: losses.Logistic{}, Reg: enet, Eta: 0.5}},
		{300, 100, 32, Config{Loss: losses.Logistic{}, Reg: enet, Clip: 0.1, Radius: 0.7, Average: true}},
		{600, 100, 256, Config{Loss: losses.Logistic{}, Reg: regularizers.L2(1e-3), Schedule: BoundedInverseT}},
		{300, 3, 5, Config{Loss: losses.HuberHinge{H: 0.5}, Reg: enet, Radius: 1, Average: true}},
		{300, 9, 13, Config{Loss: losses.Squared{}, LabelBound: 1, Radius: 2, Reg: regularizers.L2(0.1)}},
		{80, gatherMaxD + 3, 8, Config{Loss: losses.Logistic{}, Reg: enet, Clip: 0.3}},
		{2100, 4, 1030, Config{Loss: losses.Logistic{}, Reg: enet}},
		{50, 1, 50, Config{Loss: losses.Logistic{}, Reg: enet}},
	}
	for _, l := range losses.All() {
		if l.Task() == losses.Multiclass {
			continue // batchStep is for K = 1
		}
		cfg := Config{Loss: l, Reg: enet, Clip: 0.3, Radius: 1, Average: true}
		if boundedOnly(l) {
			cfg.LabelBound = 1
		}
		cases = append(cases, batchCase{150, 9, 13, cfg})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d/b=%d/%s", tc.n, tc.d, tc.b, tc.cfg.Loss.Name()), func(t *testing.T) {
			cfg := tc.cfg
			cfg.Batch, cfg.Passes, cfg.Seed = tc.b, 3, 7
			X, y := synthData(tc.n, tc.d, 0, 21)
			var runs [2][][]float64
			for v, fused := range []bool{true, false} {
				p := newTestProblem(t, cfg, X, y)
				p.obs = &observer{
					example: func(_, _ int, _, g []float64) { runs[v] = append(runs[v], append([]float64(nil), g...)) },
					step:    func(_ int, _ float64, w []float64) { runs[v] = append(runs[v], append([]float64(nil), w...)) },
				}
				e, err := newNative(p)
				if err != nil {
					t.Fatal(err)
				}
				if !e.fuseBatch {
					t.Fatal("the fused minibatch step is not selected")
				}
				e.fuseBatch = fused
				for j := 0; j < cfg.Passes; j++ {
					if _, _, err := e.pass(context.Background(), j); err != nil {
						t.Fatal(err)
					}
				}
				runs[v] = append(runs[v], append([]float64(nil), e.weights()...))
			}
			if len(runs[0]) != len(runs[1]) {
				t.Fatalf("%d records fused, %d not", len(runs[0]), len(runs[1]))
			}
			for r := range runs[0] {
				if !sameBits(runs[0][r], runs[1][r]) {
					t.Fatalf("record %d: fused %v, example by example %v", r, runs[0][r], runs[1][r])
				}
			}
		})
	}
}
