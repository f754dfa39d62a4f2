package trainer

import (
	"testing"
)

// benchGraph times the graph engine's per-example work on synthetic n x d
// data (the row after dropout, one run of the tape, the clipping and the
// update of a Solver) cycling through the passes, and reports ns/step with
// the native engine's meaning (one step = one minibatch, so ns/step equals
// ns/example for b = 1; compare with the BenchmarkNativePass figures).
func benchGraph(b *testing.B, n, d int, cfg Config) {
	X, y := synthData(n, d, classesOf(cfg), 1)
	cfg.Engine = Graph
	p := newTestProblem(b, cfg, X, y)
	e, err := newGraphEngine(p)
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	sol, err := e.newSolver(func(float64) {})
	if err != nil {
		b.Fatal(err)
	}
	smp := newSampler(p)
	order := smp.pass(0)
	b.ReportAllocs()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		pos := it % n
		j := it / n
		if pos == 0 && j > 0 {
			order = smp.pass(j)
		}
		if err := e.example(sol, smp, order[pos], j, pos); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	steps := float64(b.N) / float64(p.cfg.Batch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
}

// BenchmarkGraphStep3600x33 is the per-example step overhead of the graph
// engine on the 33-feature logistic model of the paper's Adult runs.
func BenchmarkGraphStep3600x33(b *testing.B) { benchGraph(b, 3600, 33, adultConfig()) }

func BenchmarkGraphStep3600x33Batch32(b *testing.B) {
	cfg := adultConfig()
	cfg.Batch = 32
	benchGraph(b, 3600, 33, cfg)
}

func BenchmarkGraphStep3600x33Dropout(b *testing.B) {
	cfg := adultConfig()
	cfg.Dropout = 0.5
	benchGraph(b, 3600, 33, cfg)
}
