package trainer

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkTrain100kx100 times whole one-pass Train calls (b = 1, the Adult
// configuration) on 100,000 x 100 rows in the unit ball, with the objective
// pass at the end (objective) and without (skip): the pass and Train's fixed
// cost (the check of X, the objective pass when asked for).
// BenchmarkPass100kx100/b=1 times the pass alone; the difference is the
// fixed cost.
func BenchmarkTrain100kx100(b *testing.B) {
	X, y := synthData(100_000, 100, 0, 1)
	for _, skip := range []bool{false, true} {
		b.Run(map[bool]string{false: "objective", true: "skip"}[skip], func(b *testing.B) {
			cfg := adultConfig()
			cfg.Passes, cfg.Seed, cfg.SkipObjective = 1, 1, skip
			tr, err := New(cfg)
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
		})
	}
}

// BenchmarkPass100kx100 times one pass of the native engine at b = 1, 32
// and 256 on 100,000 x 100 rows and reports ns per example.
func BenchmarkPass100kx100(b *testing.B) {
	for _, batch := range []int{1, 32, 256} {
		b.Run(fmt.Sprintf("b=%d", batch), func(b *testing.B) {
			cfg := adultConfig()
			cfg.Batch = batch
			benchNative(b, 100_000, 100, cfg)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/example")
		})
	}
}
