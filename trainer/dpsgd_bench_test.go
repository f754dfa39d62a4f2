package trainer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// BenchmarkDPSGDOverEpoch36000x33 times DP-SGD epochs against non-private
// epochs on rows of Adult's shape (36,000 x 33), at the expected batch b =
// 1, 32 and 256: the target is a DP-SGD epoch within 3x of a non-private
// epoch. See benchDPSGDOverEpoch.
func BenchmarkDPSGDOverEpoch36000x33(b *testing.B) { benchDPSGDOverEpoch(b, 36000, 33) }

// BenchmarkDPSGDOverEpoch100kx100 is BenchmarkDPSGDOverEpoch36000x33 on
// 100,000 x 100 rows.
func BenchmarkDPSGDOverEpoch100kx100(b *testing.B) { benchDPSGDOverEpoch(b, 100_000, 100) }

// benchDPSGDOverEpoch times, in each round, one epoch of DP-SGD at the
// expected batch b (ceil(n/b) steps of TrainDPSGD's loop: Poisson
// sampling at q = b/n, the gradients clipped to C = 1, Gaussian noise on
// every step's sum, the update), one epoch of the native
// engine's non-private SGD at the same b (the Adult configuration of
// adultConfig, no clipping: BenchmarkNativePass's pass) and, for b > 1,
// one at b = 1, in an order that turns from one round to the next, after
// one untimed epoch of each. It reports their times in the CPU time of
// the benchmark's thread (Linux; wall time elsewhere) and the min and
// median over the rounds of the per-round ratio of DP-SGD to the
// non-private epoch at b (cpu-ratio) and at b = 1 (b1-cpu-ratio), and the
// median of the ratio at b in wall time. The DP-SGD epochs draw their
// noise from perturb.Seeded (b=...) and from perturb.Secure, the source of
// a release (secure/b=...); l1=0/b=... is the seeded one with the L1
// ratio 0 on both sides (the one stabpriv train takes with --mechanism),
// where the DP-SGD run merges the noise of the steps without rows. Run it
// with GOMAXPROCS=1.
func benchDPSGDOverEpoch(b *testing.B, n, d int) {
	X, y := synthData(n, d, 0, 1)
	seeded := func() GaussianNoise { return perturb.Seeded(1) }
	for _, c := range []struct {
		name  string
		noise func() GaussianNoise
		l1    float64
	}{{"", seeded, 0.15}, {"secure/", func() GaussianNoise { return perturb.Secure() }, 0.15}, {"l1=0/", seeded, 0}} {
		for _, batch := range []int{1, 32, 256} {
			cfg := adultConfig()
			cfg.Reg.L1Ratio = c.l1
			benchDPSGDRounds(b, c.name, cfg, batch, X, y, c.noise())
		}
	}
}

// benchDPSGDRounds is benchDPSGDOverEpoch at the expected batch batch
// with the noise of noise and the settings of base.
func benchDPSGDRounds(b *testing.B, prefix string, base Config, batch int, X *mat.Dense, y []float64, noise GaussianNoise) {
	n, _ := X.Dims()
	ctx := context.Background()
	// nonPrivate returns an epoch of the native engine at batch.
	nonPrivate := func(b *testing.B, batch int) func() {
		cfg := base
		cfg.Batch = batch
		cfg.Passes = min(MaxPasses, MaxSteps/((n+batch-1)/batch)) // as many as a run may have
		_, e := benchRun(b, X, y, cfg)
		pass := 0
		return func() {
			if _, _, err := e.pass(ctx, pass); err != nil {
				b.Fatal(err)
			}
			pass++
		}
	}
	b.Run(fmt.Sprintf("%sb=%d", prefix, batch), func(b *testing.B) {
		epochs := []func(){nil, nonPrivate(b, batch)} // DP-SGD, non-private at b, at b = 1
		if batch > 1 {
			epochs = append(epochs, nonPrivate(b, 1))
		}
		cfg := base
		cfg.Batch, cfg.Passes, cfg.Clip = batch, 1, 1
		r := newDPSGDRun(benchProblem(b, X, y, cfg), DPSGD{NoiseMultiplier: 1, Noise: noise, Coins: rand.NewChaCha8([32]byte{1})})
		t := 0
		epochs[0] = func() {
			for range (n + batch - 1) / batch {
				t++
				if err := r.step(t); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, epoch := range epochs {
			epoch()
		}
		var ratios, ratios1, wallRatios []float64
		cpu := make([]time.Duration, len(epochs))
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.ResetTimer()
		for j := 0; j < b.N; j++ {
			c := make([]time.Duration, len(epochs))
			w := make([]time.Duration, len(epochs))
			for k := range epochs {
				which := (j + k) % len(epochs) // turn the order
				t0, c0 := time.Now(), threadCPU(b)
				epochs[which]()
				w[which], c[which] = time.Since(t0), threadCPU(b)-c0
				cpu[which] += c[which]
			}
			ratios = append(ratios, float64(c[0])/float64(c[1]))
			wallRatios = append(wallRatios, float64(w[0])/float64(w[1]))
			if len(c) > 2 {
				ratios1 = append(ratios1, float64(c[0])/float64(c[2]))
			}
		}
		b.StopTimer()
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(b.N) }
		b.ReportMetric(ms(cpu[0]), "dpsgd-cpu-ms")
		b.ReportMetric(ms(cpu[1]), "sgd-cpu-ms")
		report := func(r []float64, name string) {
			if len(r) > 0 {
				slices.Sort(r)
				b.ReportMetric(r[0], "min-"+name)
				b.ReportMetric(r[len(r)/2], "median-"+name)
			}
		}
		report(ratios, "cpu-ratio")
		report(ratios1, "b1-cpu-ratio")
		slices.Sort(wallRatios)
		b.ReportMetric(wallRatios[len(wallRatios)/2], "median-ratio")
	})
}

// BenchmarkPoissonSample times the sampler's steps at b = 1 and 256 of
// 36,000 rows (Adult's shape), expected O(qn + 1) each, and reports the
// time per row drawn, also in the CPU time of the benchmark's thread.
func BenchmarkPoissonSample(b *testing.B) {
	for _, batch := range []int{1, 256} {
		b.Run(fmt.Sprintf("b=%d", batch), func(b *testing.B) {
			s := NewPoissonSampler(rand.NewChaCha8([32]byte{3}), 36000, batch)
			var rows []int
			drawn := 0
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			c0 := threadCPU(b)
			for range b.N {
				rows = s.Sample(rows)
				drawn += len(rows)
			}
			c1 := threadCPU(b)
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(drawn), "ns/row")
			b.ReportMetric(float64(c1-c0)/float64(drawn), "cpu-ns/row")
		})
	}
}
