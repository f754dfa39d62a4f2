package trainer

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkEpochOverStream1Mx100 times one b = 1 epoch of the native engine
// (logistic loss, elastic net: the Adult configuration) on 1,000,000 x 100
// rows, 800 MB, against one streaming read of the same rows (their sum of
// squares by the engine's dot product, which reads them at memory
// bandwidth). Each iteration runs the read and then the epoch, back to back,
// so that both see the same load on the machine; it reports their times
// and the min and median over the iterations of the per-iteration ratio
// epoch/stream. On a shared machine the wall times include the time other
// processes held the core; the same figures are also reported in the CPU
// time of the benchmark's thread (Linux; the wall times elsewhere), which
// does not. Each iteration is one epoch of a long run (MaxSteps/n passes;
// a run has 10 by default), after one untimed epoch: the steady state, in
// which an epoch also draws the order of the next (orderAhead). Run it
// with -benchtime Nx (N rounds, fewer than the passes) and GOMAXPROCS=1.
func BenchmarkEpochOverStream1Mx100(b *testing.B) {
	benchEpochOverStream(b, 1_000_000, 100)
}

// BenchmarkEpochOverStream1Mx20 is BenchmarkEpochOverStream1Mx100 on rows
// of 20 features (160 MB): narrow rows, where a step's own arithmetic is
// short and its per-step costs show.
func BenchmarkEpochOverStream1Mx20(b *testing.B) {
	benchEpochOverStream(b, 1_000_000, 20)
}

// BenchmarkEpochOverStream100kx1000 is BenchmarkEpochOverStream1Mx100 on
// rows of 1,000 features (the b = 1 loop beyond gatherMaxD features).
func BenchmarkEpochOverStream100kx1000(b *testing.B) {
	benchEpochOverStream(b, 100_000, 1000)
}

func benchEpochOverStream(b *testing.B, n, d int) {
	X, y := synthData(n, d, 0, 1)
	cfg := adultConfig()
	cfg.Passes = MaxSteps / n // as many as a run may have
	p, e := benchRun(b, X, y, cfg)
	ctx := context.Background()
	if _, _, err := e.pass(ctx, 0); err != nil {
		b.Fatal(err)
	}
	var sink float64
	var ratios, cpuRatios []float64
	var stream, epoch, cpuStream, cpuEpoch time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for j := 0; j < b.N; j++ {
		t0, c0 := time.Now(), threadCPU(b)
		sink += sqNorm(p.x)
		t1, c1 := time.Now(), threadCPU(b)
		if _, _, err := e.pass(ctx, j+1); err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), threadCPU(b)
		stream += t1.Sub(t0)
		epoch += t2.Sub(t1)
		cpuStream += c1 - c0
		cpuEpoch += c2 - c1
		ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
		cpuRatios = append(cpuRatios, float64(c2-c1)/float64(c1-c0))
	}
	b.StopTimer()
	if sink == 0 {
		b.Fatal("empty rows")
	}
	slices.Sort(ratios)
	slices.Sort(cpuRatios)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(ms(stream), "stream-ms")
	b.ReportMetric(ms(epoch), "epoch-ms")
	b.ReportMetric(ms(cpuStream), "stream-cpu-ms")
	b.ReportMetric(ms(cpuEpoch), "epoch-cpu-ms")
	b.ReportMetric(float64(epoch.Nanoseconds())/float64(b.N)/float64(n), "ns/step")
	b.ReportMetric(ratios[0], "min-ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(cpuRatios[0], "min-cpu-ratio")
	b.ReportMetric(cpuRatios[len(cpuRatios)/2], "median-cpu-ratio")
}
