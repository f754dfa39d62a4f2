package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

func TestSolverConfig(t *testing.T) {
	ok := func(int) float64 { return 1 }
	cases := []struct {
		name string
		cfg  SolverConfig
		ok   bool
	}{
		{"eta", SolverConfig{Eta: 0.1}, true},
		{"step func", SolverConfig{StepFunc: ok}, true},
		{"all", SolverConfig{Eta: 0.1, Batch: 4, Clip: 1, Reg: regularizers.L1(0.1), Radius: 2, Average: true}, true},
		{"no step", SolverConfig{}, false},
		{"negative eta", SolverConfig{Eta: -1}, false},
		{"nan eta", SolverConfig{Eta: math.NaN()}, false},
		{"inf eta", SolverConfig{Eta: math.Inf(1)}, false},
		{"negative batch", SolverConfig{Eta: 1, Batch: -1}, false},
		{"nan clip", SolverConfig{Eta: 1, Clip: math.NaN()}, false},
		{"negative clip", SolverConfig{Eta: 1, Clip: -1}, false},
		{"negative radius", SolverConfig{Eta: 1, Radius: -1}, false},
		{"bad reg", SolverConfig{Eta: 1, Reg: regularizers.ElasticNet{Lambda: 1, L1Ratio: 2}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSolver(tc.cfg)
			if tc.ok {
				if err != nil || s == nil {
					t.Fatalf("got %v, want a solver", err)
				}
				return
			}
			if !errors.Is(err, trainer.ErrConfig) {
				t.Fatalf("got %v, want an error wrapping trainer.ErrConfig", err)
			}
		})
	}
}

// fakeParam is a ValueGrad with a fixed gradient, for checking the update
// arithmetic without a graph.
type fakeParam struct{ v, g gorgonia.Value }

func (f fakeParam) Value() gorgonia.Value         { return f.v }
func (f fakeParam) Grad() (gorgonia.Value, error) { return f.g, nil }

func vec(v ...float64) *tensor.Dense { return tensor.New(tensor.WithBacking(v)) }

// linearModel is the graph loss = <w, x> + c, whose gradient in (w, c) is
// (x, 1): the per-example gradients are the inputs themselves.
type linearModel struct {
	g    *gorgonia.ExprGraph
	w, c *gorgonia.Node
	x    *gorgonia.Node
	vm   gorgonia.VM
}

func newLinearModel(t *testing.T, d int) *linearModel {
	t.Helper()
	m := &linearModel{g: gorgonia.NewGraph()}
	m.w = gorgonia.NewVector(m.g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	m.c = gorgonia.NewScalar(m.g, tensor.Float64, gorgonia.WithName("c"), gorgonia.WithValue(0.0))
	m.x = gorgonia.NewVector(m.g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	loss := gorgonia.Must(gorgonia.Add(gorgonia.Must(gorgonia.Mul(m.w, m.x)), m.c))
	if _, err := gorgonia.Grad(loss, m.w, m.c); err != nil {
		t.Fatal(err)
	}
	m.vm = gorgonia.NewTapeMachine(m.g, gorgonia.BindDualValues(m.w, m.c))
	t.Cleanup(func() { m.vm.Close() })
	return m
}

// run computes the gradient of the example x, accumulating it in the dual
// values of w and c.
func (m *linearModel) run(t *testing.T, x ...float64) {
	t.Helper()
	if err := gorgonia.Let(m.x, vec(x...)); err != nil {
		t.Fatal(err)
	}
	if err := m.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	m.vm.Reset()
}

func (m *linearModel) params() []gorgonia.ValueGrad { return []gorgonia.ValueGrad{m.w, m.c} }

func (m *linearModel) values() []float64 {
	return append(append([]float64(nil), m.w.Value().Data().([]float64)...), float64(*m.c.Value().(*gorgonia.F64)))
}

func closeTo(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}

// TestSolverClipsPerExample checks that each example's gradient is clipped
// in the L2 norm jointly over all parameters, before the minibatch average.
// The two examples have gradients (w, c) = (10, 0, 1) and (0, 1, 1). Per
// example, clipping to G = 1 gives (10, 0, 1)/sqrt(101) and (0, 1, 1)/sqrt(2),
// whose mean is the move. Gorgonia's VanillaSolver with WithClip(1) clamps
// each element of the mean gradient (5, 0.5, 1) instead and moves by
// eta*(1, 0.5, 1).
func TestSolverClipsPerExample(t *testing.T) {
	const eta = 1
	m := newLinearModel(t, 2)
	s, err := NewSolver(SolverConfig{Eta: eta, Batch: 2, Clip: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.run(t, 10, 0)
	if err := s.Step(m.params()); err != nil {
		t.Fatal(err)
	}
	if s.Steps() != 0 || s.Pending() != 1 {
		t.Fatalf("after one example: %d steps, %d pending", s.Steps(), s.Pending())
	}
	m.run(t, 0, 1)
	if err := s.Step(m.params()); err != nil {
		t.Fatal(err)
	}
	n1, n2 := math.Sqrt(101), math.Sqrt(2)
	want := []float64{-eta * 10 / n1 / 2, -eta / n2 / 2, -eta * (1/n1 + 1/n2) / 2}
	closeTo(t, "per-example clipping", m.values(), want, 1e-12)

	// Gorgonia's elementwise clamp of the summed gradient gives another answer.
	v := newLinearModel(t, 2)
	v.run(t, 10, 0)
	v.run(t, 0, 1) // the dual values now hold the sum of both gradients
	vs := gorgonia.NewVanillaSolver(gorgonia.WithLearnRate(eta), gorgonia.WithBatchSize(2), gorgonia.WithClip(1))
	if err := vs.Step(v.params()); err != nil {
		t.Fatal(err)
	}
	clamp := []float64{-1, -0.5, -1}
	closeTo(t, "gorgonia WithClip", v.values(), clamp, 1e-12)
}

func TestSolverUpdate(t *testing.T) {
	// One example, gradient g = (3, 4) (norm 5), clip 1, eta 0.5, b = 2
	// (flushed), mu = 0.2, l1 weight 0.1, radius 0.3, from w = (1, -1).
	reg := regularizers.ElasticNet{Lambda: 0.3, L1Ratio: 1.0 / 3}
	s, err := NewSolver(SolverConfig{Eta: 0.5, Batch: 2, Clip: 1, Reg: reg, Radius: 0.3, Average: true})
	if err != nil {
		t.Fatal(err)
	}
	w, c := vec(1, -1), gorgonia.NewF64(0)
	gw, gc := vec(3, 0), gorgonia.NewF64(4)
	if err := s.Step([]gorgonia.ValueGrad{fakeParam{w, gw}, fakeParam{c, gc}}); err != nil {
		t.Fatal(err)
	}
	if got := append(gw.Data().([]float64), float64(*gc)); got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Errorf("gradients not zeroed after Step: %v", got)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// v = w - 0.5*(g/5/2 + 0.2 w): (1 - 0.15 - 0.1, -1 + 0.1, 0 - 0.2)
	v := []float64{0.75, -0.9, -0.2}
	regularizers.SoftThreshold(v, 0.05)
	gfloats.Scale(0.3/gfloats.Norm(v, 2), v) // the projection: ||v|| > 0.3
	got := append(append([]float64(nil), w.Data().([]float64)...), float64(*c))
	closeTo(t, "update", got, v, 1e-12)
	closeTo(t, "average of one iterate", s.Averaged(), v, 1e-12)
	if err := s.Flush(); err != nil || s.Steps() != 1 {
		t.Fatalf("empty flush: %v, %d steps", err, s.Steps())
	}

	// A second step with zero gradient; the average is the mean of both.
	if err := s.Step([]gorgonia.ValueGrad{fakeParam{w, gw}, fakeParam{c, gc}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Step([]gorgonia.ValueGrad{fakeParam{w, gw}, fakeParam{c, gc}}); err != nil {
		t.Fatal(err)
	}
	second := append(append([]float64(nil), w.Data().([]float64)...), float64(*c))
	mean := make([]float64, 3)
	for i := range mean {
		mean[i] = (v[i] + second[i]) / 2
	}
	closeTo(t, "average", s.Averaged(), mean, 1e-12)
	if err := s.LoadAveraged(); err != nil {
		t.Fatal(err)
	}
	got = append(append([]float64(nil), w.Data().([]float64)...), float64(*c))
	closeTo(t, "loaded average", got, mean, 1e-12)
}

func TestSolverStepErrors(t *testing.T) {
	good := func() gorgonia.ValueGrad { return fakeParam{vec(1, 2), vec(0, 0)} }
	cases := []struct {
		name  string
		first []gorgonia.ValueGrad
		step  []gorgonia.ValueGrad
	}{
		{"empty", nil, []gorgonia.ValueGrad{}},
		{"nil param", nil, []gorgonia.ValueGrad{nil}},
		{"no value", nil, []gorgonia.ValueGrad{fakeParam{nil, vec(0)}}},
		{"float32", nil, []gorgonia.ValueGrad{fakeParam{tensor.New(tensor.WithBacking([]float32{1})), tensor.New(tensor.WithBacking([]float32{1}))}}},
		{"grad size", nil, []gorgonia.ValueGrad{fakeParam{vec(1, 2), vec(0)}}},
		{"nan grad", nil, []gorgonia.ValueGrad{fakeParam{vec(1, 2), vec(0, math.NaN())}}},
		{"inf grad", nil, []gorgonia.ValueGrad{fakeParam{vec(1, 2), vec(math.Inf(-1), 0)}}},
		{"panicking value", nil, []gorgonia.ValueGrad{panicParam{}}},
		{"param count changed", []gorgonia.ValueGrad{good()}, []gorgonia.ValueGrad{good(), good()}},
		{"param size changed", []gorgonia.ValueGrad{good()}, []gorgonia.ValueGrad{fakeParam{vec(1, 2, 3), vec(0, 0, 0)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSolver(SolverConfig{Eta: 1, Batch: 2})
			if err != nil {
				t.Fatal(err)
			}
			if tc.first != nil {
				if err := s.Step(tc.first); err != nil {
					t.Fatal(err)
				}
			}
			pending := s.Pending()
			if err := s.Step(tc.step); !errors.Is(err, ErrGraph) {
				t.Fatalf("got %v, want an error wrapping ErrGraph", err)
			}
			if s.Pending() != pending {
				t.Errorf("pending went from %d to %d on an error", pending, s.Pending())
			}
		})
	}

	// A bad step size fails the update and leaves the solver unchanged.
	s, err := NewSolver(SolverConfig{StepFunc: func(int) float64 { return math.NaN() }})
	if err != nil {
		t.Fatal(err)
	}
	p := fakeParam{vec(1, 2), vec(1, 1)}
	if err := s.Step([]gorgonia.ValueGrad{p}); !errors.Is(err, trainer.ErrConfig) {
		t.Fatalf("NaN step: got %v, want trainer.ErrConfig", err)
	}
	if s.Pending() != 0 || s.Steps() != 0 || p.v.Data().([]float64)[0] != 1 {
		t.Errorf("NaN step changed the solver or the values")
	}
}

// panicParam is a ValueGrad whose Value panics.
type panicParam struct{}

func (panicParam) Value() gorgonia.Value         { panic("broken parameter") }
func (panicParam) Grad() (gorgonia.Value, error) { return nil, nil }

// TestSolverTrainsUserLoop trains a logistic model with a weight vector and a
// bias in a user-written TapeMachine loop: let the example, RunAll, Step,
// Reset.
func TestSolverTrainsUserLoop(t *testing.T) {
	const d = 4
	X, y := benchdata.Synth(100, d, 0, 8)
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	c := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("c"), gorgonia.WithValue(0.0))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	lab := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	m := gorgonia.Must
	z := m(gorgonia.Add(m(gorgonia.Mul(w, x)), c))
	loss := m(gorgonia.Softplus(m(gorgonia.Mul(m(gorgonia.Neg(lab)), z))))
	if _, err := gorgonia.Grad(loss, w, c); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(w, c))
	defer vm.Close()
	s, err := NewSolver(SolverConfig{Eta: 1, Batch: 4, Clip: 1, Reg: regularizers.L2(1e-3), Average: true})
	if err != nil {
		t.Fatal(err)
	}
	params := []gorgonia.ValueGrad{w, c}
	n, _ := X.Dims()
	for pass := 0; pass < 30; pass++ {
		for i := 0; i < n; i++ {
			if err := gorgonia.Let(x, vec(X.RawRowView(i)...)); err != nil {
				t.Fatal(err)
			}
			if err := gorgonia.Let(lab, y[i]); err != nil {
				t.Fatal(err)
			}
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			if err := s.Step(params); err != nil {
				t.Fatal(err)
			}
			vm.Reset()
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.LoadAveraged(); err != nil {
		t.Fatal(err)
	}
	wv, cv := w.Value().Data().([]float64), float64(*c.Value().(*gorgonia.F64))
	hit := 0
	var mean float64
	for i := 0; i < n; i++ {
		zi := dot(wv, X.RawRowView(i)) + cv
		mean += math.Log1p(math.Exp(-y[i]*zi)) / float64(n)
		if (zi >= 0) == (y[i] > 0) {
			hit++
		}
	}
	if acc := float64(hit) / float64(n); acc < 0.85 || mean > 0.45 {
		t.Errorf("accuracy %v, mean loss %v; want >= 0.85 and <= 0.45", acc, mean)
	}
}

// ExampleSolver trains y = 2 x1 - x2 by least squares in a user-written
// TapeMachine loop: one RunAll per example, then Step, which clips the
// example's gradient and updates the weights every Batch examples.
func ExampleSolver() {
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	r := gorgonia.Must(gorgonia.Sub(gorgonia.Must(gorgonia.Mul(w, x)), y))
	loss := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Square(r)), gorgonia.NewConstant(0.5)))
	if _, err := gorgonia.Grad(loss, w); err != nil {
		fmt.Println(err)
		return
	}
	vm := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(w))
	defer vm.Close()

	s, err := NewSolver(SolverConfig{Eta: 0.5, Batch: 2, Clip: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	data := [][3]float64{{1, 0, 2}, {0, 1, -1}, {1, 1, 1}, {1, -1, 3}}
	for pass := 0; pass < 200; pass++ {
		for _, e := range data {
			if err := gorgonia.Let(x, tensor.New(tensor.WithBacking([]float64{e[0], e[1]}))); err != nil {
				fmt.Println(err)
				return
			}
			if err := gorgonia.Let(y, e[2]); err != nil {
				fmt.Println(err)
				return
			}
			if err := vm.RunAll(); err != nil {
				fmt.Println(err)
				return
			}
			if err := s.Step([]gorgonia.ValueGrad{w}); err != nil {
				fmt.Println(err)
				return
			}
			vm.Reset()
		}
	}
	fmt.Printf("w = %.3f after %d steps\n", w.Value().Data(), s.Steps())
	// Output: w = [2.000 -1.000] after 400 steps
}

// recordingModel is a trainer.UserModel that trains its Model and records
// the row (after s-dropout) and the label of every example its kernel is
// given, in order.
type recordingModel struct {
	m    *Model
	rows [][]float64
	ys   []float64
}

func (r *recordingModel) Kernel(d int) (trainer.ExampleKernel, error) {
	k, err := r.m.Kernel(d)
	if err != nil {
		return nil, err
	}
	return recordingKernel{k, r}, nil
}

type recordingKernel struct {
	trainer.ExampleKernel
	r *recordingModel
}

func (k recordingKernel) ExampleGrad(g, w, x []float64, y float64) (float64, error) {
	k.r.rows, k.r.ys = append(k.r.rows, slices.Clone(x)), append(k.r.ys, y)
	return k.ExampleKernel.ExampleGrad(g, w, x, y)
}

// TestSolverMatchesTrainer trains a logistic model with a bias (userAffine)
// with the trainer, recording the examples in the order its pass driver
// gives them, then runs a Solver in a user's TapeMachine loop over the same
// examples in the same order, flushing at the end of every pass, and
// requires the trainer's weights bit for bit, for every combination of the
// knobs the two share: the minibatch (1, one that divides n, one that
// leaves a short last minibatch), clipping, the penalty (none, L2, elastic
// net), the projection, averaging and the schedule (a constant or a
// function of t); with and without s-dropout, which the trainer applies to
// the rows before its kernel sees them. Both make the update with a
// trainer.Step, and the TapeMachine gives the bits of the trainer's runner
// (TestRunnerSliceGradient).
func TestSolverMatchesTrainer(t *testing.T) {
	const n, d, passes = 24, 3, 2
	X, y := benchdata.Synth(n, d, 0, 6)
	decay := func(t int) float64 { return 1.5 / math.Sqrt(float64(t)) }
	type stepKnob struct {
		eta float64
		f   func(int) float64
	}
	regs := []regularizers.ElasticNet{{}, regularizers.L2(0.01), {Lambda: 0.05, L1Ratio: 0.3}}
	runs := 0
	for _, b := range []int{1, 4, 5} {
		for _, clip := range []float64{0, 0.4} {
			for _, reg := range regs {
				for _, radius := range []float64{0, 0.5} {
					for _, avg := range []bool{false, true} {
						for _, st := range []stepKnob{{eta: 0.8}, {f: decay}} {
							for _, drop := range []float64{0, 0.7} {
								name := fmt.Sprintf("b=%d/clip=%v/reg=%v/radius=%v/average=%v/stepfunc=%v/dropout=%v",
									b, clip, reg, radius, avg, st.f != nil, drop)
								sc := SolverConfig{Eta: st.eta, StepFunc: st.f, Batch: b, Clip: clip, Reg: reg, Radius: radius, Average: avg}
								solverMatchesTrainer(t, name, sc, drop, passes, X, y)
								runs++
							}
						}
					}
				}
			}
		}
	}
	if runs != 3*2*3*2*2*2*2 {
		t.Errorf("%d combinations", runs)
	}
}

// solverMatchesTrainer is one case of TestSolverMatchesTrainer: the knobs of
// sc, s-dropout drop (0: none), passes passes over X, y.
func solverMatchesTrainer(t *testing.T, name string, sc SolverConfig, drop float64, passes int, X *mat.Dense, y []float64) {
	t.Helper()
	n, d := X.Dims()
	rec := &recordingModel{m: newAffine(t, d)}
	cfg := trainer.Config{
		Model: rec, Engine: trainer.Graph, Eta: sc.Eta, Batch: sc.Batch, Clip: sc.Clip, Reg: sc.Reg,
		Radius: sc.Radius, Average: sc.Average, Dropout: drop, Passes: passes, Seed: 5, SkipObjective: true,
	}
	if sc.StepFunc != nil {
		cfg.Schedule, cfg.StepFunc = trainer.Custom, sc.StepFunc
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, _, err := tr.Train(context.Background(), X, y)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(rec.rows) != passes*n {
		t.Fatalf("%s: the kernel saw %d examples, want %d", name, len(rec.rows), passes*n)
	}

	m := newAffine(t, d)
	vm := gorgonia.NewTapeMachine(m.Graph, gorgonia.BindDualValues(m.Params...))
	defer vm.Close()
	s, err := NewSolver(sc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	params := []gorgonia.ValueGrad{m.Params[0], m.Params[1]}
	for i, x := range rec.rows {
		if err := gorgonia.Let(m.Input, vec(x...)); err != nil {
			t.Fatal(err)
		}
		if err := gorgonia.Let(m.Label, rec.ys[i]); err != nil {
			t.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		if err := s.Step(params); err != nil {
			t.Fatalf("%s: example %d: %v", name, i, err)
		}
		vm.Reset()
		if (i+1)%n == 0 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := append(slices.Clone(m.Params[0].Value().Data().([]float64)), float64(*m.Params[1].Value().(*gorgonia.F64)))
	if sc.Average {
		got = s.Averaged()
	}
	if wantSteps := passes * ((n + sc.Batch - 1) / sc.Batch); s.Steps() != wantSteps {
		t.Errorf("%s: %d solver steps, want %d", name, s.Steps(), wantSteps)
	}
	for j := range want.W {
		if math.Float64bits(got[j]) != math.Float64bits(want.W[j]) {
			t.Fatalf("%s: solver %v, trainer %v", name, got, want.W)
		}
	}
}

// newAffine returns userAffine(d) with the gradient nodes of its loss
// added, built under the lock of this package's graphs.
func newAffine(t *testing.T, d int) *Model {
	t.Helper()
	graphBuild.Lock()
	defer graphBuild.Unlock()
	m := userAffine(d)
	if _, err := m.gradients(); err != nil {
		t.Fatal(err)
	}
	return m
}
