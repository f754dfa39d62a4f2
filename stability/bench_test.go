package stability

import (
	"testing"

	"github.com/stabpriv/stabpriv/trainer"
)

// BenchmarkAnalyzeAdult analyzes the record of an Adult-sized run: n =
// 36,178, d = 33, 10 passes of b = 1 with bounded inverse-t steps and the
// elastic net (lambda 1e-3, l1 ratio 0.15), the protocol's output
// perturbation fit: the growth recursions run over its 361,780 steps.
func BenchmarkAnalyzeAdult(b *testing.B) {
	r := handRun()
	r.N, r.D, r.Passes = 36178, 33, 10
	r.Schedule, r.Lambda, r.L1Ratio = trainer.BoundedInverseT.String(), 1e-3, 0.15
	fillSteps(r)
	for b.Loop() {
		if _, err := Analyze(r); err != nil {
			b.Fatal(err)
		}
	}
}
