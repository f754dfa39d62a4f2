package report_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

// cpuNow returns the CPU time (user and system) the process has used.
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakHeap runs f and returns its CPU time and the peak, sampled every
// 2 ms, of the heap's object bytes above the live heap it started from
// (after a collection).
func peakHeap(b *testing.B, f func()) (time.Duration, float64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() float64 {
		metrics.Read(sample)
		return float64(sample[0].Value.Uint64())
	}
	base := read()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	})
	start := cpuNow(b)
	f()
	cpu := cpuNow(b) - start
	close(done)
	wg.Wait()
	return cpu, max(peak, read()) - base
}

// benchAnalyze times, paired by round (A B A B), a private fit of n
// synthetic binary rows of d features (private.FitMatrix at eps = 1 by
// the public rule, what train does) and the pDP analysis the pdp command
// runs on them (report.Simulate with its defaults: logistic, lambda 1e-3,
// the analytic Gaussian at eps = 1, delta 1e-6, a 20% split, the exact top
// 100, figure data aside), and reports the CPU ratio pdp/fit per round
// (min and median over the rounds of all the iterations) and the ratio of
// their peak heaps above the data. The fit starts from the matrix, so its
// time includes the table FitMatrix writes (cells formatted), which the
// CSV reader of train parses instead; the analysis starts from the
// Dataset.
func benchAnalyze(b *testing.B, n, d int) {
	x, y := benchdata.Synth(n, d, 0, 1)
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprintf("x%d", j)
	}
	ds := &datasets.Dataset{X: x, Y: y, Features: names, Classes: []string{"neg", "pos"}}
	fit := func() {
		if _, err := private.FitMatrix(context.Background(), x, y, private.Domain{Classes: []float64{-1, 1}, Features: names}, dp.Budget{Epsilon: 1}, private.Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	sim := report.Simulation{Rows: report.Rows{ExactTop: 100, Top: 10}, Loss: losses.Logistic{}, Lambda: 1e-3,
		Mechanism: perturb.AnalyticGaussian, Epsilon: 1, Delta: 1e-6, TestFrac: 0.2, Seed: 1, Standardize: true, Bias: true, Kappa: 1}
	analyze := func() {
		if _, err := report.Simulate(ds, sim); err != nil {
			b.Fatal(err)
		}
	}
	const rounds = 2
	var ratios, memRatios []float64
	var fitCPU, pdpCPU time.Duration
	var fitPeak, pdpPeak float64
	b.ResetTimer()
	for range b.N {
		for range rounds {
			fc, fm := peakHeap(b, fit)
			pc, pm := peakHeap(b, analyze)
			fitCPU, pdpCPU = fitCPU+fc, pdpCPU+pc
			fitPeak, pdpPeak = max(fitPeak, fm), max(pdpPeak, pm)
			ratios = append(ratios, float64(pc)/float64(fc))
			memRatios = append(memRatios, pm/fm)
		}
	}
	b.StopTimer()
	slices.Sort(ratios)
	slices.Sort(memRatios)
	b.ReportMetric(ratios[0], "cpu-ratio-min")
	b.ReportMetric(ratios[len(ratios)/2], "cpu-ratio-median")
	b.ReportMetric(memRatios[len(memRatios)/2], "peak-ratio-median")
	b.ReportMetric(float64(pdpCPU)/float64(b.N*rounds), "pdp-cpu-ns/op")
	b.ReportMetric(float64(fitCPU)/float64(b.N*rounds), "fit-cpu-ns/op")
	b.ReportMetric(pdpPeak/(1<<20), "pdp-peak-MB")
	b.ReportMetric(fitPeak/(1<<20), "fit-peak-MB")
}

func BenchmarkAnalyze1e5x20(b *testing.B) { benchAnalyze(b, 100_000, 20) }
func BenchmarkAnalyze1e6x20(b *testing.B) { benchAnalyze(b, 1_000_000, 20) }
