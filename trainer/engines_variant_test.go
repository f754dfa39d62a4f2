//go:build amd64.v3 || purego

package trainer_test

import "github.com/stabpriv/stabpriv/trainer"

// The kernel-variant builds of make test leave package graph out
// (engines_graph_test.go). In them a margin kernel of plain Go stands in
// for the graph engine, so that TestStepReplaysEveryPath still takes the
// pass driver's margin-kernel paths (b = 1 and b > 1) and holds them to
// Step's bits in those builds; the graph engine's own gradients are held
// to the native ones by package graph's tests.
func init() {
	trainer.RegisterEngine(trainer.Graph, func(p trainer.Problem) (trainer.MarginKernel, error) {
		return &goMarginKernel{p: p, z: make([]float64, p.K)}, nil
	})
}

// goMarginKernel computes the margin gradients of the problem's loss row by
// row: z = W x_i, then the loss's gradient in z.
type goMarginKernel struct {
	p trainer.Problem
	z []float64
}

func (k *goMarginKernel) MarginGrads(gz, w, x, y []float64) error {
	K, D := k.p.K, k.p.D
	for i := range y {
		row := x[i*D : (i+1)*D]
		for c := range K {
			var s float64
			for j, v := range row {
				s += w[c*D+j] * v
			}
			k.z[c] = s
		}
		k.p.Loss.Grad(gz[i*K:(i+1)*K], k.z, y[i])
	}
	return nil
}

func (k *goMarginKernel) Close() error { return nil }
