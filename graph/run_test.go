package graph

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestRunnerMatchesTape runs the margin-gradient graph of every built-in
// loss with the runner and with Gorgonia's TapeMachine on the same bound
// inputs, over several rounds of new weights, rows and labels (the rounds
// after the first write into the results of the round before), and
// requires the same bits. It also requires that some steps reuse their
// results, and that no step writes into a result that shares memory with
// another value (softmax's graph has reshapes, which return views).
func TestRunnerMatchesTape(t *testing.T) {
	cases := append([]struct {
		name    string
		classes int
	}{}, graphLosses...)
	// A loss with an expression of its own is built per row from slices
	// of Z and Y: the gradient of Slice adds into its result.
	cases = append(cases, struct {
		name    string
		classes int
	}{"expresser", 0})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cfg trainer.Config
			if tc.name == "expresser" {
				cfg = trainer.Config{Loss: userLoss{}}
			} else {
				cfg = graphLossConfig(t, tc.name, tc.classes)
			}
			const n, d, b = 24, 5, 6
			m, X, y, k := testKernel(t, cfg.Loss, tc.classes, n, d, b, 4)
			graphBuild.Lock()
			vm := gorgonia.NewTapeMachine(m.dz.Graph().ExactSubgraphRoots(m.dz), gorgonia.WithWatchlist())
			graphBuild.Unlock()
			defer vm.Close()
			r := rand.New(rand.NewPCG(2, 7))
			w := make([]float64, k*d)
			gz := make([]float64, b*k)
			for round := range n / b {
				for i := range w {
					w[i] = 2 * r.NormFloat64()
				}
				x := X.RawMatrix().Data[round*b*d : (round+1)*b*d]
				if err := m.MarginGrads(gz, w, x, y[round*b:(round+1)*b]); err != nil {
					t.Fatal(err)
				}
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				want, err := floats(m.dz.Value())
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range want {
					if math.Float64bits(v) != math.Float64bits(gz[i]) {
						t.Fatalf("round %d, element %d: runner %v, tape %v", round, i, gz[i], v)
					}
				}
				vm.Reset()
			}
			reused := 0
			for i := range m.run.steps {
				s := &m.run.steps[i]
				if s.mode == fresh {
					continue
				}
				reused++
				if m.run.shared(s.out) {
					t.Errorf("step %d (%v) writes into a result that shares memory with another value", i, s.op)
				}
			}
			if reused == 0 {
				t.Errorf("no step of %d reuses its result", len(m.run.steps))
			}
		})
	}
}

// TestRunnerSliceGradient runs, over several rounds of new values, the
// gradients of a model that reads its parameters through Slice (Gorgonia's
// gradient of Slice increments a result that must start at zero) with the
// runner and with a TapeMachine, and requires the same bits.
func TestRunnerSliceGradient(t *testing.T) {
	graphBuild.Lock()
	g := gorgonia.NewGraph()
	wb, xb := make([]float64, 6), make([]float64, 3)
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(6), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(6), tensor.WithBacking(wb))))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking(xb))))
	lo := gorgonia.Must(gorgonia.Slice(w, gorgonia.S(0, 3)))
	hi := gorgonia.Must(gorgonia.Slice(w, gorgonia.S(3, 6)))
	loss := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(gorgonia.Must(gorgonia.Tanh(gorgonia.Must(gorgonia.HadamardProd(lo, x)))), hi))))
	grads, err := gorgonia.Grad(loss, w)
	if err != nil {
		graphBuild.Unlock()
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	graphBuild.Unlock()
	defer vm.Close()
	r, err := newRunner(loss, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(4, 4))
	for round := range 4 {
		for i := range wb {
			wb[i] = rnd.NormFloat64()
		}
		for i := range xb {
			xb[i] = rnd.NormFloat64()
		}
		if err := r.run(); err != nil {
			t.Fatal(err)
		}
		got, err := floats(r.value(grads[0]))
		if err != nil {
			t.Fatal(err)
		}
		got = append([]float64(nil), got...)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		want, err := floats(grads[0].Value())
		if err != nil {
			t.Fatal(err)
		}
		vm.Reset()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("round %d: gradient %v, TapeMachine %v", round, got, want)
			}
		}
	}
}

// TestRunnerViews checks that a result another value views is not written
// into: x -> a = x + 1 -> v = Reshape(a) -> out = v * 2, where v shares
// a's memory, so a is computed afresh at each run, and the results follow
// new inputs.
func TestRunnerViews(t *testing.T) {
	graphBuild.Lock()
	g := gorgonia.NewGraph()
	xs := []float64{1, 2, 3, 4}
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking(xs))))
	a := gorgonia.Must(gorgonia.Add(x, constant(1)))
	v := gorgonia.Must(gorgonia.Reshape(a, tensor.Shape{2, 2}))
	out := gorgonia.Must(gorgonia.Mul(v, constant(2)))
	graphBuild.Unlock()
	r, err := newRunner(out)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		for i := range xs {
			xs[i] = float64(10*round + i)
		}
		if err := r.run(); err != nil {
			t.Fatal(err)
		}
		got, err := floats(r.value(out))
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if want := 2 * (xs[i] + 1); g != want {
				t.Fatalf("round %d: out[%d] = %v, want %v", round, i, g, want)
			}
		}
	}
	for _, s := range r.steps {
		if s.out == r.pos[a] && s.mode != fresh {
			t.Errorf("the viewed result a has mode %v, want fresh", s.mode)
		}
		if s.out == r.pos[out] && s.mode != prealloc {
			t.Errorf("the result out, viewed by nothing, has mode %v, want prealloc", s.mode)
		}
	}
}

// TestLogisticOp checks the softplus and sigmoid operations against
// losses.Logistic bit for bit (tensor and scalar inputs, margins far out in
// both tails, signed zeros), their symbolic derivatives (sigmoid, and
// s(1 - s) against Deriv2), and the errors of a wrong input.
func TestLogisticOp(t *testing.T) {
	ms := []float64{-800, -40, -19.5, -1, math.Copysign(0, -1), 0, 1e-300, 0.5, 16.5, 19.5, 40, 800}
	l := losses.Logistic{}
	for _, op := range []logisticOp{softplusOp, sigmoidOp} {
		in := tensor.New(tensor.WithShape(len(ms)), tensor.WithBacking(append([]float64(nil), ms...)))
		v, err := op.Do(in)
		if err != nil {
			t.Fatal(err)
		}
		got := v.(float64s).Float64s()
		for i, m := range ms {
			want := l.Value1(-m, 1)
			if op.deriv {
				want = -l.Deriv(-m, 1)
			}
			s, err := op.Do(gorgonia.NewF64(m))
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(got[i]) != math.Float64bits(want) || float64(*s.(*gorgonia.F64)) != want {
				t.Errorf("%v(%v) = %v (scalar %v), want %v", op, m, got[i], *s.(*gorgonia.F64), want)
			}
		}
		if _, err := op.UsePreallocDo(tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2)), in); err == nil {
			t.Errorf("%v: a result of the wrong size accepted", op)
		}
		if _, err := op.Do(in, in); err == nil {
			t.Errorf("%v: two inputs accepted", op)
		}
		for _, bad := range []gorgonia.Value{
			tensor.New(tensor.WithShape(2), tensor.WithBacking([]int64{1, 2})),
			tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2})),
		} {
			if _, err := op.Do(bad); err == nil {
				t.Errorf("%v: a %v input accepted", op, bad.Dtype())
			}
		}
		// A view (a column of a matrix) is read as its own elements.
		mat := tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{1, -1, 2, -2, 3, -3}))
		col, err := mat.Slice(nil, gorgonia.S(1))
		if err != nil {
			t.Fatal(err)
		}
		cv, err := op.Do(col.(*tensor.Dense))
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range []float64{-1, -2, -3} {
			if got := cv.(float64s).Float64s()[i]; got != op.apply(m) {
				t.Errorf("%v of a column view: element %d = %v, want %v", op, i, got, op.apply(m))
			}
		}
	}

	// d softplus = sigmoid, d sigmoid = Deriv2, through Gorgonia's Grad.
	for _, m := range []float64{-3, -0.25, 0, 0.7, 5} {
		graphBuild.Lock()
		g := gorgonia.NewGraph()
		x := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("m"), gorgonia.WithValue(m))
		g1, err1 := gorgonia.Grad(gorgonia.Must(gorgonia.ApplyOp(softplusOp, x)), x)
		g2, err2 := gorgonia.Grad(gorgonia.Must(gorgonia.ApplyOp(sigmoidOp, x)), x)
		graphBuild.Unlock()
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		d1, d2 := g1[0], g2[0]
		for _, c := range []struct {
			node *gorgonia.Node
			want float64
			tol  float64
		}{{d1, -l.Deriv(-m, 1), 0}, {d2, l.Deriv2(m, 1), 1e-15}} {
			r, err := newRunner(c.node)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.run(); err != nil {
				t.Fatal(err)
			}
			got, err := floats(r.value(c.node))
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got[0]-c.want) > c.tol {
				t.Errorf("m = %v: derivative %v, want %v", m, got[0], c.want)
			}
		}
	}
}

// panicOp is softplus with a Do that panics.
type panicOp struct{ logisticOp }

func (panicOp) Do(...gorgonia.Value) (gorgonia.Value, error) { panic("an operation that panics") }

// TestRunPanicRecovered checks that a panic inside an operation of a user
// model, now run on the calling goroutine, comes back as an error wrapping
// ErrGraph.
func TestRunPanicRecovered(t *testing.T) {
	const d = 3
	X, y := benchdata.Synth(8, d, 0, 1)
	m := userLogistic(d, 0)
	graphBuild.Lock()
	m.Loss = gorgonia.Must(gorgonia.ApplyOp(panicOp{softplusOp}, m.Loss))
	graphBuild.Unlock()
	tr, err := trainer.New(trainer.Config{Model: m, Engine: trainer.Graph, Eta: 0.1, Passes: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = tr.Train(context.Background(), X, y)
	if !errors.Is(err, ErrGraph) || !strings.Contains(err.Error(), "an operation that panics") {
		t.Fatalf("got %v, want the recovered panic wrapping ErrGraph", err)
	}
}
