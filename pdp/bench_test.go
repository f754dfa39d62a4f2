package pdp

import (
	"syscall"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
	"github.com/stabpriv/stabpriv/perturb"
)

// benchAnalysis returns the analysis of a logistic problem of n rows and d
// features (synthetic, rows in the unit ball, the last feature a bias).
func benchAnalysis(b *testing.B, n, d int) *Analysis {
	b.Helper()
	x, y := pdptest.Synth(n, d, losses.Logistic{}, 0, 1)
	a, err := New(x, y, Config{Loss: losses.Logistic{}, Lambda: 1e-4})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeCPU runs f b.N times and reports, beside the wall time, the CPU
// time per run (cpu-ns/op): on a machine shared with other work the wall
// time measures the neighbours too.
func timeCPU(b *testing.B, f func()) {
	b.ResetTimer()
	start := cpuTime(b)
	for i := 0; i < b.N; i++ {
		f()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// benchOneStep times the one-step pDP of every row: sensitivities and the
// analytic Gaussian epsilon of each.
func benchOneStep(b *testing.B, n, d int) {
	a := benchAnalysis(b, n, d)
	m, err := NewPrivacyLoss(perturb.AnalyticGaussian, 0.05, 1e-6)
	if err != nil {
		b.Fatal(err)
	}
	timeCPU(b, func() {
		diffs, err := a.RemoveAll()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Epsilons(diffs); err != nil {
			b.Fatal(err)
		}
	})
}

// benchExact times the exact refinement of the k most exposed rows.
func benchExact(b *testing.B, n, d, k int) {
	a := benchAnalysis(b, n, d)
	diffs, err := a.RemoveAll()
	if err != nil {
		b.Fatal(err)
	}
	timeCPU(b, func() {
		cp := append([]Diff(nil), diffs...)
		if _, err := a.RefineTop(cp, k); err != nil {
			b.Fatal(err)
		}
	})
}

// benchSolve times the exact ERM solve and the factorization.
func benchSolve(b *testing.B, n, d int) {
	x, y := pdptest.Synth(n, d, losses.Logistic{}, 0, 1)
	timeCPU(b, func() {
		if _, err := New(x, y, Config{Loss: losses.Logistic{}, Lambda: 1e-4}); err != nil {
			b.Fatal(err)
		}
	})
}

// Adult-sized: 36,178 training rows (80% of 45,222), d = 33.
const adultN, adultD = 36178, 33

func BenchmarkOneStepAdult(b *testing.B)     { benchOneStep(b, adultN, adultD) }
func BenchmarkExactTop100Adult(b *testing.B) { benchExact(b, adultN, adultD, 100) }
func BenchmarkSolveAdult(b *testing.B)       { benchSolve(b, adultN, adultD) }
func BenchmarkOneStep5k(b *testing.B)        { benchOneStep(b, 5000, adultD) }

// Wide: Adult's rows with d = 300 features, where the exact refinement's
// cost in d shows.
const wideN, wideD = 36178, 300

func BenchmarkSolve36kx300(b *testing.B)        { benchSolve(b, wideN, wideD) }
func BenchmarkOneStep36kx300(b *testing.B)      { benchOneStep(b, wideN, wideD) }
func BenchmarkExactTop100_36kx300(b *testing.B) { benchExact(b, wideN, wideD, 100) }

// The pdp command's shape at 1e5 x 20: 80,000 training rows (a 20%
// split), d = 20.
const cmdN, cmdD = 80000, 20

func BenchmarkExactTop100_80kx20(b *testing.B) { benchExact(b, cmdN, cmdD, 100) }
