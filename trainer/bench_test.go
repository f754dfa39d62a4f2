package trainer

import (
	"context"
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// synthData returns the tests' synthetic data: n rows of d features in the
// unit ball with binary (classes = 0) or multiclass labels from a planted
// model (benchdata.Synth, shared with the graph engine's tests).
func synthData(n, d, classes int, seed uint64) (*mat.Dense, []float64) {
	return benchdata.Synth(n, d, classes, seed)
}

// benchEngine returns the problem and the native engine of a one-pass run
// of cfg on (X, y).
func benchEngine(b *testing.B, X *mat.Dense, y []float64, cfg Config) (*problem, *native) {
	cfg.Passes = 1
	return benchRun(b, X, y, cfg)
}

// benchRun is benchEngine for a run of cfg.Passes passes.
func benchRun(b *testing.B, X *mat.Dense, y []float64, cfg Config) (*problem, *native) {
	p := benchProblem(b, X, y, cfg)
	e, err := newNative(p)
	if err != nil {
		b.Fatal(err)
	}
	return p, e
}

// benchProblem returns the problem of a run of cfg on (X, y).
func benchProblem(b *testing.B, X *mat.Dense, y []float64, cfg Config) *problem {
	tr, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p, err := tr.newProblem(X, y)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// benchNative times one pass of the native engine over synthetic data of
// n x d, and reports ns/step, in wall time and in the CPU time of its
// thread (which excludes the time other processes held the core).
func benchNative(b *testing.B, n, d int, cfg Config) {
	classes := 0
	if cfg.Loss.Task() == losses.Multiclass {
		classes = cfg.Classes
	}
	X, y := synthData(n, d, classes, 1)
	p, e := benchEngine(b, X, y, cfg)
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	c0 := threadCPU(b)
	for j := 0; j < b.N; j++ {
		if _, _, err := e.pass(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	c1 := threadCPU(b)
	b.StopTimer()
	steps := float64(b.N) * float64((n+p.cfg.Batch-1)/p.cfg.Batch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
	b.ReportMetric(float64(c1-c0)/steps, "cpu-ns/step")
}

// adultConfig is the configuration of the paper's Adult runs: logistic loss,
// elastic net with lambda 1e-4 and l1 ratio 0.15.
func adultConfig() Config {
	return Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 1e-4, L1Ratio: 0.15}, Eta: 0.5}
}

func BenchmarkNativePass36000x33(b *testing.B) { benchNative(b, 36000, 33, adultConfig()) }

func BenchmarkNativePass36000x33Batch32(b *testing.B) {
	cfg := adultConfig()
	cfg.Batch = 32
	benchNative(b, 36000, 33, cfg)
}

func BenchmarkNativePass36000x33Dropout(b *testing.B) {
	cfg := adultConfig()
	cfg.Dropout = 0.8
	cfg.Clip = 0.5
	benchNative(b, 36000, 33, cfg)
}

func BenchmarkNativePass36000x33AverageRadius(b *testing.B) {
	cfg := adultConfig()
	cfg.Average = true
	cfg.Radius = 10
	benchNative(b, 36000, 33, cfg)
}

func BenchmarkNativePass7624x64Softmax18(b *testing.B) {
	benchNative(b, 7624, 64, Config{Loss: losses.Softmax{}, Classes: 18, Reg: regularizers.L2(1e-4), Eta: 0.5})
}

// benchDot times a dot product of rows of length d: the engine's dot (gonum's
// native BLAS, called directly) against a plain Go loop with four partial
// sums and against the blas64 dispatch.
func benchDot(b *testing.B, d int, f func(a, c []float64) float64) {
	x, w := make([]float64, d), make([]float64, d)
	for i := range x {
		x[i], w[i] = float64(i), 1/float64(i+1)
	}
	var s float64
	for i := 0; i < b.N; i++ {
		s += f(w, x)
	}
	if math.IsNaN(s) {
		b.Fatal("NaN")
	}
}

func blasDot(a, c []float64) float64 {
	return blas64.Dot(blas64.Vector{N: len(a), Inc: 1, Data: a}, blas64.Vector{N: len(c), Inc: 1, Data: c})
}

// loopDot is <a, c> in plain Go with four partial sums.
func loopDot(a, c []float64) float64 {
	c = c[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		aa, cc := a[j:j+4:j+4], c[j:j+4:j+4]
		s0 += aa[0] * cc[0]
		s1 += aa[1] * cc[1]
		s2 += aa[2] * cc[2]
		s3 += aa[3] * cc[3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * c[j]
	}
	return (s0 + s1) + (s2 + s3)
}

func BenchmarkDot33(b *testing.B)       { benchDot(b, 33, dot) }
func BenchmarkDot33Loop(b *testing.B)   { benchDot(b, 33, loopDot) }
func BenchmarkDot33Blas64(b *testing.B) { benchDot(b, 33, blasDot) }
func BenchmarkDot64(b *testing.B)       { benchDot(b, 64, dot) }
func BenchmarkDot64Loop(b *testing.B)   { benchDot(b, 64, loopDot) }
func BenchmarkDot256(b *testing.B)      { benchDot(b, 256, dot) }
func BenchmarkDot256Loop(b *testing.B)  { benchDot(b, 256, loopDot) }

// BenchmarkNativePass3600x33 is the in-cache counterpart of
// BenchmarkNativePass36000x33: its 950 kB of rows fit in the L2 cache, so the
// difference in ns/step is the cost of fetching rows from memory.
func BenchmarkNativePass3600x33(b *testing.B) { benchNative(b, 3600, 33, adultConfig()) }
