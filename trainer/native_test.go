package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// testSoftmax is a test-only multinomial logistic loss over classes outputs,
// l(z, y) = log sum_k exp(z_k) - z_y, to exercise the generic K path of the
// native engine independently of the losses package.
type testSoftmax struct{}

func (testSoftmax) Name() string                   { return "test-softmax" }
func (testSoftmax) Task() losses.Task              { return losses.Multiclass }
func (testSoftmax) Outputs(classes int) int        { return classes }
func (testSoftmax) Hess(_, _ []float64, _ float64) { panic("testSoftmax: no Hessian") }

func (testSoftmax) CheckLabel(y float64, classes int) error {
	if y != math.Trunc(y) || y < 0 || y >= float64(classes) {
		return fmt.Errorf("%w: %v, want a class in [0, %d)", losses.ErrLabel, y, classes)
	}
	return nil
}

func (s testSoftmax) Value(z []float64, y float64) float64 {
	return s.Grad(make([]float64, len(z)), z, y)
}

// Grad writes softmax(z) - e_y into dst and returns the loss.
func (testSoftmax) Grad(dst, z []float64, y float64) float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, v)
	}
	var sum float64
	for k, v := range z {
		dst[k] = math.Exp(v - m)
		sum += dst[k]
	}
	for k := range dst {
		dst[k] /= sum
	}
	dst[int(y)]--
	return m + math.Log(sum) - z[int(y)]
}

// Constants: ||softmax(z) - e_y|| <= sqrt(2), Hessian eigenvalues <= 1/2.
func (testSoftmax) Constants(losses.Domain) (losses.Constants, error) {
	return losses.Constants{Lz: math.Sqrt2, Sz: 0.5, Convex: true}, nil
}

// newTestProblem validates cfg and the data as Train does and returns the
// problem, so that a test can attach an observer.
func newTestProblem(t testing.TB, cfg Config, X mat.Matrix, y []float64) *problem {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tr.newProblem(X, y)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// classesOf returns the classes argument of synthData for cfg.
func classesOf(cfg Config) int {
	if cfg.Loss != nil && cfg.Loss.Task() == losses.Multiclass {
		return cfg.Classes
	}
	return 0
}

// referenceSGD is a plain transcription of the step of the Config doc, with
// none of the native engine's fusions: the per-example gradient is formed as
// the full K x d matrix g x^T and clipped by its Frobenius norm computed
// entry by entry, the minibatch sum is divided by b, then the prox, the
// projection and the average follow. It uses the sampler, as every engine must.
func referenceSGD(t *testing.T, p *problem) []float64 {
	t.Helper()
	n, d, k, b := p.n, p.d, p.k, p.cfg.Batch
	smp := newSampler(p)
	w, avg, sum := make([]float64, k*d), make([]float64, k*d), make([]float64, k*d)
	z, gz, xm := make([]float64, k), make([]float64, k), make([]float64, d)
	gi := make([]float64, k*d)
	step := 0
	for j := 0; j < p.cfg.Passes; j++ {
		order := append([]int(nil), smp.pass(j)...)
		for s := 0; s < n; s += b {
			step++
			eta, err := p.sgd.Eta(step)
			if err != nil {
				t.Fatal(err)
			}
			for q := range sum {
				sum[q] = 0
			}
			for pos := s; pos < min(s+b, n); pos++ {
				i := order[pos]
				smp.dropout(xm, p.x[i*d:(i+1)*d], p.norm[i], p.cfg.Dropout, j, pos)
				for c := 0; c < k; c++ {
					z[c] = 0
					for jj := 0; jj < d; jj++ {
						z[c] += w[c*d+jj] * xm[jj]
					}
				}
				p.loss.Grad(gz, z, p.y[i])
				var fro float64
				for c := 0; c < k; c++ {
					for jj := 0; jj < d; jj++ {
						gi[c*d+jj] = gz[c] * xm[jj]
						fro += gi[c*d+jj] * gi[c*d+jj]
					}
				}
				scale := 1.0
				if fro = math.Sqrt(fro); p.cfg.Clip > 0 && fro > p.cfg.Clip {
					scale = p.cfg.Clip / fro
				}
				for q := range sum {
					sum[q] += scale * gi[q]
				}
			}
			for q := range w {
				w[q] -= eta * (sum[q]/float64(b) + p.mu*w[q])
			}
			regularizers.SoftThreshold(w, eta*p.cfg.Reg.L1Weight())
			if r := p.cfg.Radius; r > 0 {
				if nw := gfloats.Norm(w, 2); nw > r {
					gfloats.Scale(r/nw, w)
				}
			}
			for q := range avg {
				avg[q] += (w[q] - avg[q]) / float64(step)
			}
		}
	}
	if p.cfg.Average {
		return avg
	}
	return w
}

// maxAbsDiff returns max_i |a_i - b_i|.
func maxAbsDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// knobConfigs covers every knob of a step, alone and together, for K = 1
// and K > 1, then every built-in loss (losses.All) with every knob. The
// knob cases name their losses by hand: each pairs a loss with the knobs
// whose path it exercises (the scalar margin for K = 1, the K x d update and
// a test-only softmax for K > 1).
func knobConfigs() []knobConfig {
	enet := regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}
	cs := []knobConfig{
		{"logistic", Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.01), Passes: 3}},
		{"logistic/enet/clip", Config{Loss: losses.Logistic{}, Reg: enet, Clip: 0.2, Passes: 3}},
		{"logistic/batch7", Config{Loss: losses.Logistic{}, Reg: enet, Batch: 7, Passes: 3}},
		{"logistic/dropout", Config{Loss: losses.Logistic{}, Reg: enet, Dropout: 0.6, Clip: 0.3, Passes: 3}},
		{"logistic/all", Config{Loss: losses.Logistic{}, Reg: enet, Batch: 4, Dropout: 0.7, Clip: 0.25,
			Radius: 0.5, Average: true, Schedule: BoundedInverseT, Passes: 3}},
		{"logistic/custom", Config{Loss: losses.Logistic{}, Schedule: Custom, Radius: 1,
			StepFunc: func(t int) float64 { return 2 / math.Sqrt(float64(t)) }, Passes: 3}},
		{"softmax", Config{Loss: testSoftmax{}, Classes: 3, Reg: regularizers.L2(0.01), Passes: 3}},
		{"softmax/all", Config{Loss: testSoftmax{}, Classes: 4, Reg: enet, Batch: 5, Dropout: 0.5, Clip: 0.1,
			Radius: 0.8, Average: true, Passes: 3}},
		{"softmax/b1/dropout", Config{Loss: testSoftmax{}, Classes: 3, Reg: enet, Dropout: 0.8, Clip: 0.2, Radius: 2, Passes: 3}},
		{"huber/dropout", Config{Loss: losses.Huber{Delta: 0.5}, Reg: enet, Dropout: 0.7, Passes: 3}},
		{"squared/radius", Config{Loss: losses.Squared{}, LabelBound: 1, Radius: 2, Reg: regularizers.L2(0.1), Passes: 3}},
		{"losses.Softmax/all", Config{Loss: losses.Softmax{}, Classes: 5, Reg: enet, Dropout: 0.9, Clip: 0.5,
			Radius: 3, Average: true, Passes: 3}},
	}
	for _, l := range losses.All() {
		cfg := Config{Loss: l, Reg: enet, Batch: 3, Dropout: 0.8, Clip: 0.3, Radius: 1, Average: true, Passes: 3}
		if l.Task() == losses.Multiclass {
			cfg.Classes = 4
		}
		if boundedOnly(l) {
			cfg.LabelBound = 1
		}
		cs = append(cs, knobConfig{"every-loss/" + l.Name(), cfg})
	}
	return cs
}

// boundedOnly reports whether l has constants on a bounded domain only (the
// squared loss): a run needs a label bound and a radius.
func boundedOnly(l losses.Loss) bool {
	_, err := l.Constants(losses.Domain{Kappa: 1})
	return errors.Is(err, losses.ErrDomain)
}

// knobConfig is a named configuration of knobConfigs.
type knobConfig struct {
	name string
	cfg  Config
}

// TestNativeMatchesReference checks the order of operations of a step (the
// one every engine must follow, Config) against referenceSGD, for every knob.
// The two differ only in rounding, so 1e-12 is a wide margin.
func TestNativeMatchesReference(t *testing.T) {
	for _, tc := range knobConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(103, 6, classesOf(tc.cfg), 3)
			p := newTestProblem(t, tc.cfg, X, y)
			got, err := runPasses(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceSGD(t, newTestProblem(t, tc.cfg, X, y))
			if diff := maxAbsDiff(got, want); diff > 1e-12 || gfloats.Norm(want, 2) == 0 {
				t.Errorf("max |native - reference| = %g, want <= 1e-12 (|w| = %g)", diff, gfloats.Norm(want, 2))
			}
		})
	}
}

// TestNativeInvariants checks on every step, through the observer, that the
// clipped per-example gradient has norm <= G, that the dropout mask keeps a
// subset of the coordinates with ||M x|| <= s ||x||, that ||w|| <= R, and
// that every example is visited once per pass.
func TestNativeInvariants(t *testing.T) {
	const slack = 1e-12
	for _, tc := range knobConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(101, 6, classesOf(tc.cfg), 4)
			p := newTestProblem(t, tc.cfg, X, y)
			d, s := p.d, p.cfg.Dropout
			seen := make([]int, p.n)
			var steps, examples, bad int
			report := func(format string, args ...any) {
				if bad++; bad <= 5 {
					t.Errorf(format, args...)
				}
			}
			p.obs = &observer{
				example: func(step, i int, xm, g []float64) {
					examples++
					seen[i]++
					x := p.x[i*d : (i+1)*d]
					for j := range xm {
						if xm[j] != 0 && xm[j] != x[j] {
							report("step %d example %d: masked coordinate %d = %v, row has %v", step, i, j, xm[j], x[j])
						}
					}
					if nm, nx := gfloats.Norm(xm, 2), gfloats.Norm(x, 2); nm > s*nx+slack {
						report("step %d example %d: ||Mx|| = %v > s||x|| = %v", step, i, nm, s*nx)
					}
					if gn := gfloats.Norm(g, 2) * gfloats.Norm(xm, 2); p.cfg.Clip > 0 && gn > p.cfg.Clip+slack {
						report("step %d example %d: clipped gradient norm %v > G = %v", step, i, gn, p.cfg.Clip)
					}
				},
				step: func(step int, eta float64, w []float64) {
					steps++
					if step != steps {
						report("step %d reported as %d", steps, step)
					}
					if r := p.cfg.Radius; r > 0 && gfloats.Norm(w, 2) > r+slack {
						report("step %d: ||w|| = %v > R = %v", step, gfloats.Norm(w, 2), r)
					}
				},
			}
			if _, err := runPasses(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			passes := p.cfg.Passes
			if want := passes * p.run.StepsPerPass; steps != want {
				t.Errorf("%d steps, want %d", steps, want)
			}
			if examples != passes*p.n {
				t.Errorf("%d examples, want %d", examples, passes*p.n)
			}
			for i, c := range seen {
				if c != passes {
					t.Fatalf("example %d seen %d times in %d passes", i, c, passes)
				}
			}
		})
	}
}

// referenceProxGrad minimizes F_S of p with the accelerated proximal
// gradient method (FISTA, plain gradient steps when L1Ratio = 0) until the
// minimum-norm subgradient is below 1e-12. F_S is mu-strongly convex, so the
// result is within 1e-12/mu of the minimizer, whatever the path to it.
// TestReferenceMatchesOptimize checks it against gonum/optimize's LBFGS on
// the smooth objectives.
func referenceProxGrad(t *testing.T, p *problem) []float64 {
	t.Helper()
	kd := p.k * p.d
	w, v, prev, grad, sub := make([]float64, kd), make([]float64, kd), make([]float64, kd), make([]float64, kd), make([]float64, kd)
	z, gz := make([]float64, p.k), make([]float64, p.k)
	eta := 1 / p.beta
	theta := 1.0
	for it := 0; it < 100000; it++ {
		smoothGrad(p, grad, v, z, gz)
		copy(prev, w)
		for q := range w {
			w[q] = v[q] - eta*grad[q]
		}
		regularizers.SoftThreshold(w, eta*p.cfg.Reg.L1Weight())
		next := (1 + math.Sqrt(1+4*theta*theta)) / 2
		for q := range v {
			v[q] = w[q] + (theta-1)/next*(w[q]-prev[q])
		}
		theta = next
		smoothGrad(p, grad, w, z, gz)
		// Data part only: MinNormSubgrad adds the L2 and L1 parts.
		for q := range grad {
			grad[q] -= p.cfg.Reg.L2Weight() * w[q]
		}
		if p.cfg.Reg.MinNormSubgrad(sub, grad, w) < 1e-12 {
			return w
		}
	}
	t.Fatal("FISTA did not converge")
	return nil
}

// smoothGrad writes the gradient of the smooth part of F_S (data + L2) at w.
func smoothGrad(p *problem, grad, w, z, gz []float64) {
	for q := range grad {
		grad[q] = 0
	}
	for i := 0; i < p.n; i++ {
		x := p.x[i*p.d : (i+1)*p.d]
		for c := range z {
			z[c] = gfloats.Dot(w[c*p.d:(c+1)*p.d], x)
		}
		p.loss.Grad(gz, z, p.y[i])
		for c, g := range gz {
			gfloats.AddScaled(grad[c*p.d:(c+1)*p.d], g/float64(p.n), x)
		}
	}
	p.cfg.Reg.AddSmoothGrad(grad, w)
}

// TestNativeReachesMinimizer checks that the engine lands on the exact
// minimizer of F_S, found independently by referenceProxGrad. With b = n a step is a full (proximal) gradient step
// of size 1/beta, which converges linearly at rate 1 - mu/beta, so 400
// passes must reach 1e-9. With b = 1 and the step min(1/beta, 1/(mu t)) the
// distance after T steps is O(1/sqrt(mu^2 T)) in expectation (faster in
// practice for passes without replacement); the tolerances below are about
// five times the largest distance measured over seeds 0..39 (6.4e-5 and
// 5.2e-4 for the smooth and the elastic-net case). The runs are seeded, so the
// tests are deterministic: they fail only if the engine changes.
func TestNativeReachesMinimizer(t *testing.T) {
	const n, d = 80, 5
	for _, tc := range []struct {
		name string
		cfg  Config
		tol  float64
	}{
		{"logistic/L2/full-batch", Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.1), Batch: n, Passes: 400}, 1e-9},
		{"logistic/enet/full-batch", Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.1, L1Ratio: 0.5}, Batch: n, Passes: 400}, 1e-9},
		{"softmax/L2/full-batch", Config{Loss: testSoftmax{}, Classes: 3, Reg: regularizers.L2(0.1), Batch: n, Passes: 400}, 1e-9},
		{"softmax/enet/full-batch", Config{Loss: testSoftmax{}, Classes: 3, Reg: regularizers.ElasticNet{Lambda: 0.1, L1Ratio: 0.5}, Batch: n, Passes: 400}, 1e-9},
		{"logistic/L2/sgd", Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.1), Schedule: BoundedInverseT, Passes: 500}, 3e-4},
		{"logistic/enet/sgd", Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.1, L1Ratio: 0.5}, Schedule: BoundedInverseT, Passes: 500}, 2.5e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(n, d, classesOf(tc.cfg), 5)
			p := newTestProblem(t, tc.cfg, X, y)
			want := referenceProxGrad(t, p)
			got, err := runPasses(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			dist := gfloats.Distance(got, want, 2)
			t.Logf("||w - w*|| = %.3g, ||w*|| = %.3g, grad norm %.3g", dist, gfloats.Norm(want, 2), p.run.Stats.GradNorm)
			if dist > tc.tol {
				t.Errorf("||w - w*|| = %g, want <= %g", dist, tc.tol)
			}
			if tc.tol < 1e-6 && p.run.Stats.GradNorm > 1e-8 {
				t.Errorf("min-norm subgradient %g at the full-batch solution, want <= 1e-8", p.run.Stats.GradNorm)
			}
		})
	}
}

// TestNativeAllocs checks that a step, and a whole pass (with its
// permutation), allocate nothing, for every knob.
func TestNativeAllocs(t *testing.T) {
	for _, tc := range knobConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(300, 8, classesOf(tc.cfg), 9)
			p := newTestProblem(t, tc.cfg, X, y)
			e, err := newNative(p)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, _, err := e.pass(ctx, 0); err != nil {
				t.Fatal(err)
			}
			order := e.smp.pass(1)
			b := p.cfg.Batch
			if e.cx != nil {
				e.gather(order[:gatherChunk], 0)
			}
			if a := testing.AllocsPerRun(100, func() { e.step(order[:b], 0, 0.01) }); a != 0 {
				t.Errorf("%v allocations per step", a)
			}
			j := 1
			if a := testing.AllocsPerRun(5, func() {
				j++
				if _, _, err := e.pass(ctx, j); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%v allocations per pass", a)
			}
		})
	}
}

// TestNativeCancelMidRun cancels the context from inside a step and checks
// that training stops at the next check: the start of the next pass here,
// since a pass of 1000 steps is shorter than ctxEvery.
func TestNativeCancelMidRun(t *testing.T) {
	X, y := synthData(1000, 4, 0, 10)
	p := newTestProblem(t, Config{Loss: losses.Logistic{}, Passes: 50}, X, y)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	last := 0
	p.obs = &observer{step: func(step int, _ float64, _ []float64) {
		last = step
		if step == 1500 {
			cancel()
		}
	}}
	w, err := runPasses(ctx, p)
	if !errors.Is(err, context.Canceled) || w != nil {
		t.Fatalf("weights %v, error %v; want nil and context.Canceled", w, err)
	}
	if last != 2000 {
		t.Errorf("stopped after step %d, want 2000 (the end of the pass)", last)
	}
}

// TestNativeWideRows covers b = 1 on rows too long to gather (d >
// gatherMaxD), which are read in place.
func TestNativeWideRows(t *testing.T) {
	cfg := Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}, Dropout: 0.7, Clip: 0.3, Passes: 2}
	X, y := synthData(40, gatherMaxD+1, 0, 13)
	p := newTestProblem(t, cfg, X, y)
	if e, err := newNative(p); err != nil || e.cx != nil {
		t.Fatalf("rows of %d features gathered (err %v)", p.d, err)
	}
	got, err := runPasses(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceSGD(t, newTestProblem(t, cfg, X, y))
	if diff := maxAbsDiff(got, want); diff > 1e-12 {
		t.Errorf("max |native - reference| = %g, want <= 1e-12", diff)
	}
}
