package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// mustStep returns NewStep(cfg, beta) and fails the test on an error.
func mustStep(t *testing.T, cfg Config, beta float64) *Step {
	t.Helper()
	s, err := NewStep(cfg, beta)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewStepRejects(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		cfg  Config
		beta float64
	}{
		{"negative eta", Config{Eta: -1}, 1},
		{"infinite eta", Config{Eta: inf}, 1},
		{"NaN clip", Config{Eta: 1, Clip: nan}, 0},
		{"negative clip", Config{Eta: 1, Clip: -1}, 0},
		{"negative radius", Config{Eta: 1, Radius: -1}, 0},
		{"negative batch", Config{Eta: 1, Batch: -1}, 0},
		{"bad reg", Config{Eta: 1, Reg: regularizers.ElasticNet{Lambda: 1, L1Ratio: 2}}, 0},
		{"inverse-t without mu", Config{Schedule: InverseT, Reg: regularizers.L1(1)}, 1},
		{"custom without func", Config{Schedule: Custom}, 1},
		{"unknown schedule", Config{Schedule: Schedule(9), Eta: 1}, 1},
		{"no step size", Config{}, 0},
		{"NaN beta", Config{Eta: 1}, nan},
		{"negative beta", Config{Eta: 1}, -1},
	} {
		if s, err := NewStep(tc.cfg, tc.beta); !errors.Is(err, ErrConfig) || s != nil {
			t.Errorf("%s: got %v, %v; want an error wrapping ErrConfig", tc.name, s, err)
		}
	}
}

func TestStepEta(t *testing.T) {
	const mu, beta = 0.5, 2.0
	l2 := regularizers.L2(mu)
	for _, tc := range []struct {
		name string
		cfg  Config
		beta float64
		t    int
		want float64
		err  bool
	}{
		{"constant", Config{Eta: 0.3}, beta, 7, 0.3, false},
		{"constant default", Config{}, beta, 7, 1 / beta, false},
		{"inverse-t", Config{Schedule: InverseT, Reg: l2}, beta, 8, 1 / (mu * 8), false},
		{"inverse-t at 0", Config{Schedule: InverseT, Reg: l2}, beta, 0, 0, true},
		{"bounded early", Config{Schedule: BoundedInverseT, Reg: l2}, beta, 1, 1 / beta, false},
		{"bounded late", Config{Schedule: BoundedInverseT, Reg: l2}, beta, 10, 1 / (mu * 10), false},
		{"bounded, beta unknown", Config{Schedule: BoundedInverseT, Reg: l2}, 0, 1, 1 / mu, false},
		{"custom", Config{Schedule: Custom, StepFunc: func(t int) float64 { return 1 / float64(t*t) }}, beta, 3, 1.0 / 9, false},
		{"custom zero", Config{Schedule: Custom, StepFunc: func(int) float64 { return 0 }}, beta, 1, 0, true},
		{"custom Inf", Config{Schedule: Custom, StepFunc: func(int) float64 { return math.Inf(1) }}, beta, 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustStep(t, tc.cfg, tc.beta).Eta(tc.t)
			if (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrConfig)) {
				t.Fatalf("error %v, want an error wrapping ErrConfig: %v", err, tc.err)
			}
			if math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("eta_%d = %v, want %v", tc.t, got, tc.want)
			}
		})
	}
}

func TestStepClip(t *testing.T) {
	for _, tc := range []struct{ gnorm, clip, want float64 }{
		{3, 0, 1}, // no clipping
		{3, 6, 1}, // inside
		{3, 3, 1}, // on the boundary
		{3, 1.5, 0.5},
		{0, 1, 1},
		{math.NaN(), 1, 1}, // a NaN is not hidden by a zero scale
	} {
		s := mustStep(t, Config{Eta: 1, Clip: tc.clip}, 0)
		if got := s.ClipScale(tc.gnorm); got != tc.want {
			t.Errorf("ClipScale(%v) with G = %v: %v, want %v", tc.gnorm, tc.clip, got, tc.want)
		}
	}
	scale, norm := mustStep(t, Config{Eta: 1, Clip: 2.5}, 0).Clip([]float64{3, 0, -4})
	if scale != 0.5 || norm != 5 {
		t.Errorf("Clip((3, 0, -4)) with G = 2.5: scale %v, norm %v; want 0.5, 5", scale, norm)
	}
}

func TestStepProject(t *testing.T) {
	for _, tc := range []struct {
		w      []float64
		radius float64
		want   []float64
	}{
		{[]float64{3, 4}, 0, []float64{3, 4}},
		{[]float64{3, 4}, 10, []float64{3, 4}},
		{[]float64{3, 4}, 5, []float64{3, 4}},
		{[]float64{3, 4}, 1, []float64{0.6, 0.8}},
		{[]float64{0, 0}, 1, []float64{0, 0}},
	} {
		w := slices.Clone(tc.w)
		mustStep(t, Config{Eta: 1, Radius: tc.radius}, 0).project(w)
		if maxAbsDiff(w, tc.want) > 1e-15 {
			t.Errorf("project(%v) onto R = %v: %v, want %v", tc.w, tc.radius, w, tc.want)
		}
	}
}

func TestStepAverage(t *testing.T) {
	s := mustStep(t, Config{Eta: 1}, 0)
	iterates := [][]float64{{1, -2}, {3, 0}, {8, 5}}
	avg := make([]float64, 2)
	for t1, w := range iterates {
		s.Average(avg, w, t1+1)
	}
	if want := []float64{4, 1}; maxAbsDiff(avg, want) > 1e-15 {
		t.Errorf("average %v, want %v", avg, want)
	}
}

// TestStepUpdate checks Update and UpdateOne against the formula of the step,
// written out: the decay, the move, the soft thresholding, the projection.
func TestStepUpdate(t *testing.T) {
	const eta = 0.5
	reg := regularizers.ElasticNet{Lambda: 0.3, L1Ratio: 1.0 / 3} // mu = 0.2, l1 weight 0.1
	w0 := []float64{1, -1, 0.01, 2}
	g := []float64{3, 0, 0.02, -0.5}
	for _, tc := range []struct {
		name   string
		batch  int
		radius float64
		c      float64 // the clip scale of g (UpdateOne), or 1/count (Update on c*g)
	}{
		{"b=1", 1, 0, 0.2},
		{"b=1/radius", 1, 0.3, 0.2},
		{"b=3", 3, 0, 1},
		{"b=3/radius", 3, 1.5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustStep(t, Config{Eta: 1, Batch: tc.batch, Reg: reg, Radius: tc.radius}, 0)
			want := make([]float64, len(w0))
			for j, v := range w0 {
				want[j] = v - eta*(tc.c*g[j]/float64(tc.batch)+0.2*v)
			}
			regularizers.SoftThreshold(want, eta*0.1)
			if n := math.Sqrt(sqNorm(want)); tc.radius > 0 {
				if n <= tc.radius {
					t.Fatalf("the case does not project: ||w|| = %v", n)
				}
				for j := range want {
					want[j] *= tc.radius / n
				}
			}
			if !slices.Contains(want, 0) {
				t.Fatalf("the case thresholds no weight to zero: %v", want)
			}
			w := slices.Clone(w0)
			if tc.batch == 1 {
				s.UpdateOne(w, eta, tc.c, g)
			} else {
				sum := make([]float64, len(g))
				s.Add(sum, tc.c, g)
				s.Update(w, eta, sum)
			}
			if d := maxAbsDiff(w, want); d > 1e-15 {
				t.Errorf("w = %v, want %v", w, want)
			}
		})
	}
}

// testLinear is a UserModel for the tests of this package: the logistic
// loss of the linear model <w, x> with its weights initialized to init, its
// gradient computed as a user's kernel would (not by the native engine).
type testLinear struct{ init float64 }

func (m testLinear) Kernel(d int) (ExampleKernel, error) {
	return &testLinearKernel{d: d, init: m.init}, nil
}

type testLinearKernel struct {
	d    int
	init float64
}

func (k *testLinearKernel) Dim() int { return k.d }

func (k *testLinearKernel) Init(w []float64) error {
	for j := range w {
		w[j] = k.init
	}
	return nil
}

func (k *testLinearKernel) ExampleGrad(g, w, x []float64, y float64) (float64, error) {
	z := dot(w, x)
	l := losses.Logistic{}
	for j, v := range x {
		g[j] = l.Deriv(z, y) * v
	}
	return l.Value1(z, y), nil
}

func (k *testLinearKernel) Finish([]float64) error { return nil }
func (k *testLinearKernel) Close() error           { return nil }

// nativePath names the path of the pass driver that e takes.
func nativePath(e *native) string {
	b := "b = 1"
	if e.p.cfg.Batch > 1 {
		b = "b > 1"
	}
	switch {
	case e.fuse, e.fuseBatch:
		return "fused, " + b
	case e.mk != nil:
		return "margin kernel, " + b
	case e.ek != nil:
		return "example kernel, " + b
	}
	return "unfused, " + b
}

// TestStepReplaysEveryPath checks that every path of the pass driver makes
// the update of its Step bit for bit: the fused b = 1 loop (passFused), the
// fused minibatch step (batchStep), the example-by-example step, and the
// steps on the gradients of a margin kernel (the Graph engine, which the
// external tests of this package link by importing package graph) and of a
// user model's example kernel, for b = 1 and b > 1. Through the observer it
// replays every step from the clipped per-example gradients the path
// reports with Step's pieces alone (Add, Update, UpdateOne, Average) and
// requires the weights after every step and at the end to have the same
// bits. The gradients themselves are the path's: how they are computed is
// held to the unfused step elsewhere (TestBatchStepBitIdentical,
// TestNativeMatchesReference, TestGraphMatchesNative).
func TestStepReplaysEveryPath(t *testing.T) {
	enet := regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}
	cases := knobConfigs()
	for _, cfg := range []Config{
		{Loss: losses.Logistic{}, Reg: enet, Clip: 0.2, Passes: 3},
		{Loss: losses.Logistic{}, Reg: enet, Batch: 4, Dropout: 0.7, Clip: 0.25, Radius: 0.5, Average: true, Passes: 3},
		{Loss: losses.Softmax{}, Classes: 3, Reg: enet, Dropout: 0.8, Clip: 0.2, Radius: 2, Passes: 3},
		{Loss: losses.Softmax{}, Classes: 4, Reg: enet, Batch: 5, Clip: 0.1, Radius: 0.8, Average: true, Passes: 3},
	} {
		cfg.Engine = Graph
		cases = append(cases, knobConfig{fmt.Sprintf("graph/%s/b=%d", cfg.Loss.Name(), cfg.Batch), cfg})
	}
	user := Config{Model: testLinear{init: 0.1}, Engine: Graph, Eta: 0.7, Reg: enet, Passes: 3}
	for _, b := range []int{1, 4} {
		for _, knobs := range []Config{{}, {Clip: 0.2, Dropout: 0.7, Radius: 0.3, Average: true}} {
			cfg := user
			cfg.Batch, cfg.Clip, cfg.Dropout, cfg.Radius, cfg.Average = b, knobs.Clip, knobs.Dropout, knobs.Radius, knobs.Average
			cases = append(cases, knobConfig{fmt.Sprintf("user/b=%d/clip=%v", b, knobs.Clip), cfg})
		}
	}
	paths := make(map[string]bool)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(103, 6, classesOf(tc.cfg), 3)
			p := newTestProblem(t, tc.cfg, X, y)
			s, d := &p.sgd, p.d
			var (
				e           *native
				w, avg, sum []float64   // the replayed step
				xs, gs      [][]float64 // the examples of the current step
				bad         int
			)
			p.obs = &observer{
				example: func(_, _ int, xm, g []float64) {
					xs, gs = append(xs, slices.Clone(xm)), append(gs, slices.Clone(g))
				},
				step: func(step int, eta float64, got []float64) {
					switch {
					case e.ek != nil && p.cfg.Batch == 1:
						c, _ := s.Clip(gs[0])
						s.UpdateOne(w, eta, c, gs[0])
					case e.ek != nil:
						clear(sum)
						for _, g := range gs {
							c, _ := s.Clip(g)
							s.Add(sum, c, g)
						}
						s.Update(w, eta, sum)
					case p.cfg.Batch == 1:
						s.updateOneGLM(w, eta, gs[0], xs[0])
					default:
						clear(sum)
						for q, x := range xs {
							for k, g := range gs[q] {
								s.Add(sum[k*d:(k+1)*d], g, x)
							}
						}
						s.Update(w, eta, sum)
					}
					s.Average(avg, w, step)
					if !sameBits(got, w) {
						if bad++; bad <= 3 {
							t.Errorf("step %d: weights %v, the Step's update gives %v", step, got, w)
						}
					}
					xs, gs = xs[:0], gs[:0]
				},
			}
			e, err := newNative(p)
			if err != nil {
				t.Fatal(err)
			}
			defer e.close()
			paths[nativePath(e)] = true
			w = slices.Clone(e.w)
			avg, sum = make([]float64, len(w)), make([]float64, len(w))
			for j := 0; j < p.cfg.Passes; j++ {
				if _, _, err := e.pass(context.Background(), j); err != nil {
					t.Fatal(err)
				}
			}
			want := w
			if p.cfg.Average {
				want = avg
			}
			if !sameBits(e.weights(), want) {
				t.Errorf("returned weights %v, the Step's updates give %v", e.weights(), want)
			}
		})
	}
	for _, path := range []string{"fused, b = 1", "fused, b > 1", "unfused, b = 1", "unfused, b > 1",
		"margin kernel, b = 1", "margin kernel, b > 1", "example kernel, b = 1", "example kernel, b > 1"} {
		if !paths[path] {
			t.Errorf("no case takes the path %q", path)
		}
	}
}
