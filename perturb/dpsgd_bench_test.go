package perturb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/differential-privacy/go/v3/noise"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// googleGaussian is the secure source's AddGaussian before the exact
// sampler: google/differential-privacy's noise.Gaussian() per coordinate,
// sigma passed as the lInf sensitivity of googleLInf. The benchmarks below
// compare it with the exact sampler in the same rounds.
type googleGaussian struct{}

func (googleGaussian) AddGaussian(w []float64, sigma float64) error {
	lInf, _, err := googleLInf(sigma)
	if err != nil {
		return err
	}
	g := noise.Gaussian()
	for i, x := range w {
		if w[i], err = g.AddNoiseFloat64(x, 1, lInf, refEpsilon, refDelta); err != nil {
			return err
		}
	}
	return nil
}

// cpuNow returns the CPU time of the process (user and system).
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pairedRounds runs every job once untimed, then once per round in an order
// that turns from one round to the next, and reports for each job the
// median CPU time of a run (name-ms, in milliseconds, scaled by per) and
// the min and median over the rounds of its ratio to the first job's
// (min-/median-name/first). Run it with GOMAXPROCS=1: the CPU time is the
// process's.
func pairedRounds(b *testing.B, per float64, unit string, names []string, jobs []func()) {
	for _, job := range jobs {
		job()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	times := make([][]float64, len(jobs))
	ratios := make([][]float64, len(jobs))
	b.ResetTimer()
	for j := 0; j < b.N; j++ {
		c := make([]float64, len(jobs))
		for k := range jobs {
			which := (j + k) % len(jobs)
			c0 := cpuNow(b)
			jobs[which]()
			c[which] = float64(cpuNow(b) - c0)
		}
		for k := range jobs {
			times[k] = append(times[k], c[k]/per)
			ratios[k] = append(ratios[k], c[k]/c[0])
		}
	}
	b.StopTimer()
	for k, name := range names {
		slices.Sort(times[k])
		b.ReportMetric(times[k][len(times[k])/2], name+"-"+unit)
		if k > 0 {
			slices.Sort(ratios[k])
			b.ReportMetric(ratios[k][0], "min-"+name+"/"+names[0])
			b.ReportMetric(ratios[k][len(ratios[k])/2], "median-"+name+"/"+names[0])
		}
	}
}

// BenchmarkSecureGaussianPerCoord compares the secure AddGaussian per
// coordinate (ns-per-coord) with google/differential-privacy's sampler that
// it replaced and with the seeded source's NormFloat64, on 33 and 1000
// coordinates, in paired rounds (GOMAXPROCS=1).
func BenchmarkSecureGaussianPerCoord(b *testing.B) {
	for _, d := range []int{33, 1000} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			w := make([]float64, d)
			const reps = 200
			job := func(src trainer.GaussianNoise) func() {
				return func() {
					for range reps {
						if err := src.AddGaussian(w, 3.7); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			pairedRounds(b, reps*float64(d), "ns-per-coord", []string{"exact", "google", "seeded"},
				[]func(){job(Secure()), job(googleGaussian{}), job(Seeded(1))})
		})
	}
}

// BenchmarkSecureDPSGDEpoch36000x33 times one DP-SGD epoch (TrainDPSGD,
// one pass at the expected batch b, noise multiplier 1, clip C = 1) on
// synthetic rows of Adult's shape with the secure source's exact sampler,
// with google/differential-privacy's sampler that it replaced, with the
// seeded source, and one non-private epoch (Train) at the same b, in
// paired rounds (GOMAXPROCS=1, -benchtime=3x: google's b = 1 epoch takes
// seconds).
func BenchmarkSecureDPSGDEpoch36000x33(b *testing.B) {
	X, y := benchdata.Synth(36000, 33, 0, 1)
	ctx := context.Background()
	for _, batch := range []int{1, 256} {
		b.Run(fmt.Sprintf("b=%d", batch), func(b *testing.B) {
			cfg := trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 1e-4, L1Ratio: 0.15}, Eta: 0.5, Batch: batch, Passes: 1, Clip: 1}
			tr, err := trainer.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			dpsgd := func(src trainer.GaussianNoise) func() {
				return func() {
					priv := trainer.DPSGD{NoiseMultiplier: 1, Noise: src, Coins: rand.NewChaCha8([32]byte{1})}
					if _, _, err := tr.TrainDPSGD(ctx, X, y, priv); err != nil {
						b.Fatal(err)
					}
				}
			}
			sgd := func() {
				if _, _, err := tr.Train(ctx, X, y); err != nil {
					b.Fatal(err)
				}
			}
			pairedRounds(b, 1e6, "cpu-ms", []string{"exact", "google", "seeded", "sgd"},
				[]func(){dpsgd(Secure()), dpsgd(googleGaussian{}), dpsgd(Seeded(1)), sgd})
		})
	}
}
