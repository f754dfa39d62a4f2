package graph

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// graphLosses lists the built-in losses the graph engine is checked on, with
// the settings their constants need. A name that losses.ByName does not know
// fails the test.
var graphLosses = []struct {
	name    string
	classes int
}{
	{"logistic", 0},
	{"softmax", 3},
	{"huber-hinge", 0},
	{"huber", 0},
	{"squared", 0},
}

// graphLossConfig returns a Config for the named loss with a radius, and a
// label bound for regression losses (squared loss needs both).
func graphLossConfig(t testing.TB, name string, classes int) trainer.Config {
	t.Helper()
	l, err := losses.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := trainer.Config{Loss: l, Classes: classes, Radius: 5, Engine: trainer.Graph}
	if l.Task() == losses.Regression {
		cfg.LabelBound = 1
	}
	return cfg
}

// trainBoth trains cfg with the native and the graph engine on the same data.
func trainBoth(t *testing.T, cfg trainer.Config, X mat.Matrix, y []float64) (native, graph *trainer.Model, rn, rg *trainer.Run) {
	t.Helper()
	ctx := context.Background()
	var err error
	cfg.Engine = trainer.Native
	tr, err := trainer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if native, rn, err = tr.Train(ctx, X, y); err != nil {
		t.Fatalf("native: %v", err)
	}
	cfg.Engine = trainer.Graph
	if tr, err = trainer.New(cfg); err != nil {
		t.Fatal(err)
	}
	if graph, rg, err = tr.Train(ctx, X, y); err != nil {
		t.Fatalf("graph: %v", err)
	}
	return native, graph, rn, rg
}

func TestGraphMatchesNative(t *testing.T) {
	const tol = 1e-10
	en := regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}
	logistic := trainer.Config{Loss: losses.Logistic{}, Passes: 3, Seed: 11}
	with := func(c trainer.Config, f func(*trainer.Config)) trainer.Config { f(&c); return c }
	cases := []struct {
		name string
		cfg  trainer.Config
	}{
		{"plain", logistic},
		{"batch", with(logistic, func(c *trainer.Config) { c.Batch = 4 })},
		{"clip", with(logistic, func(c *trainer.Config) { c.Clip = 0.05; c.Eta = 2 })},
		{"dropout", with(logistic, func(c *trainer.Config) { c.Dropout = 0.5; c.Batch = 3 })},
		{"elastic-net", with(logistic, func(c *trainer.Config) { c.Reg = en; c.Eta = 1 })},
		{"average-radius", with(logistic, func(c *trainer.Config) { c.Average = true; c.Radius = 0.3; c.Eta = 3 })},
		{"inverse-t", with(logistic, func(c *trainer.Config) { c.Reg = regularizers.L2(0.1); c.Schedule = trainer.BoundedInverseT })},
		{"tolerance", with(logistic, func(c *trainer.Config) { c.Reg = regularizers.L2(0.5); c.Tolerance = 0.2; c.Passes = 50 })},
		{"all-knobs", with(logistic, func(c *trainer.Config) {
			c.Batch, c.Clip, c.Dropout, c.Reg, c.Average, c.Radius = 5, 0.2, 0.7, en, true, 1
		})},
		{"softmax", with(logistic, func(c *trainer.Config) {
			c.Loss, c.Classes = losses.Softmax{}, 3
			c.Batch, c.Clip, c.Dropout, c.Reg, c.Average, c.Radius = 4, 0.3, 0.8, en, true, 2
		})},
		{"huber-hinge", with(logistic, func(c *trainer.Config) {
			c.Loss = losses.HuberHinge{H: losses.DefaultHuberHingeH}
			c.Clip, c.Dropout = 0.5, 0.6
		})},
		{"squared", with(logistic, func(c *trainer.Config) {
			c.Loss, c.Radius, c.LabelBound, c.Batch, c.Reg = losses.Squared{}, 2, 1, 2, en
		})},
		// A loss with an expression of its own (built per row from slices
		// of the minibatch's margins), over many runs of one graph.
		{"expresser", with(logistic, func(c *trainer.Config) { c.Loss = userLoss{} })},
		{"expresser-batch", with(logistic, func(c *trainer.Config) { c.Loss, c.Batch, c.Clip = userLoss{}, 4, 0.3 })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			X, y := benchdata.Synth(50, 6, classesOf(tc.cfg), 5)
			mn, mg, rn, rg := trainBoth(t, tc.cfg, X, y)
			if mn.K != mg.K || mn.D != mg.D || len(mn.W) != len(mg.W) {
				t.Fatalf("graph model %dx%d (%d), native %dx%d (%d)", mg.K, mg.D, len(mg.W), mn.K, mn.D, len(mn.W))
			}
			for j := range mn.W {
				if math.Abs(mn.W[j]-mg.W[j]) > tol {
					t.Fatalf("w[%d]: graph %v, native %v", j, mg.W[j], mn.W[j])
				}
			}
			if tc.cfg.Tolerance > 0 && (!rg.Stats.Converged || rg.Stats.PassesDone == tc.cfg.Passes) {
				t.Errorf("tolerance %v not reached early: %d passes, grad norm %v", tc.cfg.Tolerance, rg.Stats.PassesDone, rg.Stats.GradNorm)
			}
			if rg.Stats.PassesDone != rn.Stats.PassesDone || rg.Stats.Converged != rn.Stats.Converged {
				t.Errorf("graph ran %d passes (converged %v), native %d (%v)", rg.Stats.PassesDone, rg.Stats.Converged, rn.Stats.PassesDone, rn.Stats.Converged)
			}
			for j := range rn.PassMaxStep {
				if rg.PassMaxStep[j] != rn.PassMaxStep[j] || rg.PassMinStep[j] != rn.PassMinStep[j] {
					t.Errorf("pass %d steps: graph [%v, %v], native [%v, %v]", j, rg.PassMinStep[j], rg.PassMaxStep[j], rn.PassMinStep[j], rn.PassMaxStep[j])
				}
			}
			if math.Abs(rg.Stats.Objective-rn.Stats.Objective) > tol || math.Abs(rg.Stats.GradNorm-rn.Stats.GradNorm) > tol {
				t.Errorf("objective %v, grad norm %v; native %v, %v", rg.Stats.Objective, rg.Stats.GradNorm, rn.Stats.Objective, rn.Stats.GradNorm)
			}
			if rg.Engine != "graph" || rg.UserModel {
				t.Errorf("run engine %q, user model %v", rg.Engine, rg.UserModel)
			}
		})
	}
}

// userLogistic builds by hand the logistic model l = softplus(-y <w, x>)
// with d weights initialized to init, as a user of the plugin path would.
func userLogistic(d int, init float64) *Model {
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.ValuesOf(init)))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	m := gorgonia.Must
	loss := m(gorgonia.Softplus(m(gorgonia.Mul(m(gorgonia.Neg(y)), m(gorgonia.Mul(w, x))))))
	return &Model{Graph: g, Params: []*gorgonia.Node{w}, Input: x, Label: y, Loss: loss}
}

// userAffine builds a logistic model with a weight vector and a scalar bias,
// z = <w, x> + c, initialized to zero.
func userAffine(d int) *Model {
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	c := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("c"), gorgonia.WithValue(0.0))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	m := gorgonia.Must
	z := m(gorgonia.Add(m(gorgonia.Mul(w, x)), c))
	loss := m(gorgonia.Softplus(m(gorgonia.Mul(m(gorgonia.Neg(y)), z))))
	return &Model{Graph: g, Params: []*gorgonia.Node{w, c}, Input: x, Label: y, Loss: loss}
}

func TestGraphUserModel(t *testing.T) {
	const d = 5
	X, y := benchdata.Synth(80, d, 0, 7)
	ctx := context.Background()
	base := trainer.Config{Passes: 4, Batch: 2, Clip: 0.5, Dropout: 0.8, Reg: regularizers.ElasticNet{Lambda: 0.01, L1Ratio: 0.2}, Eta: 1, Average: true, Seed: 3}

	// The same loop on a hand-written logistic model gives the weights of
	// the built-in logistic loss.
	ref := base
	ref.Loss, ref.Engine = losses.Logistic{}, trainer.Graph
	tr, err := trainer.New(ref)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := tr.Train(ctx, X, y)
	if err != nil {
		t.Fatal(err)
	}
	um := userLogistic(d, 0)
	cfg := base
	cfg.Model, cfg.Engine = um, trainer.Graph
	if tr, err = trainer.New(cfg); err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 2; trial++ { // a second run reuses the gradient nodes
		clear(um.Params[0].Value().Data().([]float64))
		m, run, err := tr.Train(ctx, X, y)
		if err != nil {
			t.Fatal(err)
		}
		if !run.UserModel || run.Loss != "user-graph" || m.K != 1 || m.D != d || len(m.W) != d {
			t.Fatalf("user run: user model %v, loss %q, model %dx%d with %d weights", run.UserModel, run.Loss, m.K, m.D, len(m.W))
		}
		for j := range want.W {
			if math.Abs(m.W[j]-want.W[j]) > 1e-10 {
				t.Fatalf("trial %d: w[%d] = %v, built-in loss gives %v", trial, j, m.W[j], want.W[j])
			}
		}
		left := um.Params[0].Value().Data().([]float64)
		for j := range left {
			if left[j] != m.W[j] {
				t.Fatalf("param value[%d] = %v, model has %v", j, left[j], m.W[j])
			}
		}
		if math.IsNaN(run.Stats.Objective) || math.IsNaN(run.Stats.GradNorm) || run.Stats.GradNorm <= 0 {
			t.Errorf("objective %v, grad norm %v", run.Stats.Objective, run.Stats.GradNorm)
		}
	}

	// A model with a bias learns the data.
	am := userAffine(d)
	cfg = trainer.Config{Model: am, Engine: trainer.Graph, Eta: 1, Passes: 20, Seed: 1}
	if tr, err = trainer.New(cfg); err != nil {
		t.Fatal(err)
	}
	m, run, err := tr.Train(ctx, X, y)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.W) != d+1 || m.D != d+1 {
		t.Fatalf("model has %d weights, D = %d, want %d", len(m.W), m.D, d+1)
	}
	if bias := float64(*am.Params[1].Value().(*gorgonia.F64)); bias != m.W[d] {
		t.Errorf("bias param %v, model %v", bias, m.W[d])
	}
	hit := 0
	for i := range y {
		z := dot(m.W[:d], X.RawRowView(i)) + m.W[d]
		if (z >= 0) == (y[i] > 0) {
			hit++
		}
	}
	if acc := float64(hit) / float64(len(y)); acc < 0.85 || run.Stats.Objective > 0.5 {
		t.Errorf("accuracy %v, objective %v; want >= 0.85 and <= 0.5", acc, run.Stats.Objective)
	}
}

func TestGraphBadModel(t *testing.T) {
	const d = 4
	X, y := benchdata.Synth(10, d, 0, 1)
	other := userLogistic(d, 0)
	cases := []struct {
		name string
		edit func(m *Model)
	}{
		{"nil graph", func(m *Model) { m.Graph = nil }},
		{"no params", func(m *Model) { m.Params = nil }},
		{"nil param", func(m *Model) { m.Params = []*gorgonia.Node{nil} }},
		{"nil input", func(m *Model) { m.Input = nil }},
		{"nil label", func(m *Model) { m.Label = nil }},
		{"nil loss", func(m *Model) { m.Loss = nil }},
		{"foreign param", func(m *Model) { m.Params = other.Params }},
		{"input size", func(m *Model) {
			m.Input = gorgonia.NewVector(m.Graph, tensor.Float64, gorgonia.WithShape(d+1), gorgonia.WithName("x2"))
		}},
		{"scalar input", func(m *Model) { m.Input = gorgonia.NewScalar(m.Graph, tensor.Float64, gorgonia.WithName("s")) }},
		{"vector label", func(m *Model) {
			m.Label = gorgonia.NewVector(m.Graph, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("y2"))
		}},
		{"vector loss", func(m *Model) { m.Loss = gorgonia.Must(gorgonia.HadamardProd(m.Params[0], m.Input)) }},
		{"input is param", func(m *Model) { m.Params = []*gorgonia.Node{m.Input} }},
		{"param without value", func(m *Model) {
			m.Params = []*gorgonia.Node{gorgonia.NewVector(m.Graph, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("v"))}
		}},
		{"float32 param", func(m *Model) {
			m.Params = []*gorgonia.Node{gorgonia.NewVector(m.Graph, tensor.Float32, gorgonia.WithShape(d), gorgonia.WithName("f"), gorgonia.WithInit(gorgonia.Zeroes()))}
		}},
		{"param is an op", func(m *Model) { m.Params = []*gorgonia.Node{m.Loss} }},
		{"loss without the param", func(m *Model) {
			m.Params = []*gorgonia.Node{gorgonia.NewVector(m.Graph, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("u"), gorgonia.WithInit(gorgonia.Zeroes()))}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := userLogistic(d, 0)
			tc.edit(m)
			tr, err := trainer.New(trainer.Config{Model: m, Engine: trainer.Graph, Eta: 0.1, Passes: 1})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = tr.Train(context.Background(), X, y)
			if !errors.Is(err, trainer.ErrConfig) {
				t.Fatalf("got %v, want an error wrapping ErrConfig", err)
			}
		})
	}
	if _, err := trainer.New(trainer.Config{Model: userLogistic(d, 0), Eta: 0.1}); !errors.Is(err, trainer.ErrConfig) {
		t.Errorf("user model on the native engine: got %v, want ErrConfig", err)
	}
}

func TestGraphContext(t *testing.T) {
	X, y := benchdata.Synth(40, 3, 0, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr, err := trainer.New(trainer.Config{Loss: losses.Logistic{}, Engine: trainer.Graph})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Train(ctx, X, y); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before training: got %v, want context.Canceled", err)
	}

	// Cancel during the run, from the step schedule at step 5.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	last := 0
	tr, err = trainer.New(trainer.Config{Loss: losses.Logistic{}, Engine: trainer.Graph, Schedule: trainer.Custom, Passes: 5, StepFunc: func(t int) float64 {
		last = t
		if t == 5 {
			cancel()
		}
		return 0.1
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Train(ctx, X, y); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled at step 5: got %v, want context.Canceled", err)
	}
	if last != 5 {
		t.Errorf("training went on to step %d after cancellation at step 5", last)
	}
}

func TestGraphDiverges(t *testing.T) {
	X, y := benchdata.Synth(40, 3, 0, 2)
	tr, err := trainer.New(trainer.Config{Loss: losses.Logistic{}, Engine: trainer.Graph, Eta: 1e308, Passes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Train(context.Background(), X, y); !errors.Is(err, trainer.ErrConfig) {
		t.Fatalf("a step size of 1e308: got %v, want an error wrapping trainer.ErrConfig as the native engine gives", err)
	}
}

// TestGraphConcurrent trains from several goroutines at once, as Trainer
// allows; run with -race it checks the graph building is serialized.
func TestGraphConcurrent(t *testing.T) {
	X, y := benchdata.Synth(30, 4, 0, 1)
	tr, err := trainer.New(trainer.Config{Loss: losses.Logistic{}, Engine: trainer.Graph, Passes: 2, Dropout: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := tr.Train(context.Background(), X, y)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]*trainer.Model, 3)
	errs := make([]error, 3)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g], _, errs[g] = tr.Train(context.Background(), X, y)
		}()
	}
	wg.Wait()
	for g, m := range got {
		if errs[g] != nil {
			t.Fatal(errs[g])
		}
		for j := range want.W {
			if m.W[j] != want.W[j] {
				t.Fatalf("goroutine %d: w[%d] = %v, want %v", g, j, m.W[j], want.W[j])
			}
		}
	}
}

// TestMarginKernel checks the batched kernel of every built-in loss against
// the loss's Grad at the margins W x, for full and short minibatches, to
// 1e-10.
func TestMarginKernel(t *testing.T) {
	for _, tc := range graphLosses {
		t.Run(tc.name, func(t *testing.T) {
			cfg := graphLossConfig(t, tc.name, tc.classes)
			const n, d, b = 20, 7, 6
			mk, X, y, k := testKernel(t, cfg.Loss, tc.classes, n, d, b, 3)
			defer mk.Close()
			r := rand.New(rand.NewPCG(9, 9))
			w := make([]float64, k*d)
			for i := range w {
				w[i] = r.NormFloat64()
			}
			z, want := make([]float64, k), make([]float64, k)
			for _, m := range []int{b, 1, b - 2} {
				for s := 0; s+m <= n; s += m {
					x := X.RawMatrix().Data[s*d : (s+m)*d]
					gz := make([]float64, m*k)
					if err := mk.MarginGrads(gz, w, x, y[s:s+m]); err != nil {
						t.Fatal(err)
					}
					for q := 0; q < m; q++ {
						for c := range z {
							z[c] = dot(w[c*d:(c+1)*d], x[q*d:(q+1)*d])
						}
						cfg.Loss.Grad(want, z, y[s+q])
						for c := range want {
							if math.Abs(gz[q*k+c]-want[c]) > 1e-10 {
								t.Fatalf("batch of %d at %d, example %d: margin gradient %v, want %v", m, s, q, gz[q*k:(q+1)*k], want)
							}
						}
					}
				}
			}
		})
	}
}

// testKernel returns the batched kernel of loss for minibatches of b rows
// of d features, n rows of synthetic data (seed) for it, and K.
func testKernel(t *testing.T, loss losses.Loss, classes, n, d, b int, seed uint64) (*marginKernel, *mat.Dense, []float64, int) {
	t.Helper()
	cls := 0
	if loss.Task() == losses.Multiclass {
		cls = classes
	}
	X, y := benchdata.Synth(n, d, cls, seed)
	k := loss.Outputs(classes)
	mk, err := newMarginKernel(trainer.Problem{Loss: loss, Classes: classes, N: n, D: d, K: k, Batch: b})
	if err != nil {
		t.Fatal(err)
	}
	return mk.(*marginKernel), X, y, k
}
