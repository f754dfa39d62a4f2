package report_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestPeakHeap checks PeakHeap against the live heap of Simulate as the pdp
// command runs it (the data set dropped once passed), sampled after every
// collection with a collection every 5% of growth, on 2 cores (the
// live heap of a collection counts what the goroutines allocate while it
// runs): at most a tenth below it, and not more than a quarter above it
// plus its fixed part (about 14 MB).
func TestPeakHeap(t *testing.T) {
	const n, d = 60_000, 20
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	sim := report.Simulation{Rows: report.Rows{ExactTop: 100, Top: 10}, Loss: losses.Logistic{}, Lambda: 1e-3,
		Mechanism: perturb.AnalyticGaussian, Epsilon: 1, Delta: 1e-6, TestFrac: 0.2, Seed: 1, Standardize: true, Bias: true, Kappa: 1}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base, peak := read(), int64(0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	})
	if _, err := report.Simulate(synthDataset(n, d), sim); err != nil {
		t.Fatal(err)
	}
	close(done)
	wg.Wait()
	live, est := peak-base, report.PeakHeap(n, d, 1)
	t.Logf("live heap peak %.1f MB above the start, estimate %.1f MB", float64(live)/1e6, float64(est)/1e6)
	if fixed := report.PeakHeap(0, d, 1); live > est+est/10 || est > live+live/4+fixed {
		t.Errorf("PeakHeap(%d, %d, 1) = %d, live heap peaked %d above the start", n, d, est, live)
	}
}

// synthDataset returns benchdata.Synth's binary rows as a data set.
func synthDataset(n, d int) *datasets.Dataset {
	x, y := benchdata.Synth(n, d, 0, 1)
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprintf("x%d", j)
	}
	return &datasets.Dataset{X: x, Y: y, Features: names, Classes: []string{"neg", "pos"}}
}
