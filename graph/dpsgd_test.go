package graph

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/clip"
	"github.com/stabpriv/stabpriv/internal/clip/cliptest"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release/dpsgd"
	"github.com/stabpriv/stabpriv/trainer"
)

// mlp returns a 2-layer perceptron of d inputs and h hidden units with
// the activation act (gorgonia.Tanh, gorgonia.Rectify), one logit and the
// logistic loss of the logit, its weights seeded draws of scale 1/sqrt of
// the fan-in (the biases too, so that ReLU units are not all dead). The
// hidden layer's output goes through stage when it is not nil (a test's
// extra operation).
func mlp(t testing.TB, d, h int, act func(*gorgonia.Node) (*gorgonia.Node, error), stage func(*gorgonia.Node) *gorgonia.Node) *Model {
	t.Helper()
	r := rand.New(rand.NewPCG(3, uint64(d*h)))
	g := gorgonia.NewGraph()
	param := func(name string, fanIn int, shape ...int) *gorgonia.Node {
		v := make([]float64, tensor.Shape(shape).TotalSize())
		for i := range v {
			v[i] = r.NormFloat64() / math.Sqrt(float64(fanIn))
		}
		val := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
		if len(shape) == 1 {
			return gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(val))
		}
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(val))
	}
	w1, b1 := param("w1", d, h, d), param("b1", d, h)
	w2, b2 := param("w2", h, 1, h), param("b2", h, 1)
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	must := gorgonia.Must
	hid := must(act(must(gorgonia.Add(must(gorgonia.Mul(w1, x)), b1))))
	if stage != nil {
		hid = stage(hid)
	}
	z := must(gorgonia.Add(must(gorgonia.Mul(w2, hid)), b2))
	loss, err := Expr(losses.Logistic{}, z, y)
	if err != nil {
		t.Fatal(err)
	}
	return &Model{Graph: g, Params: []*gorgonia.Node{w1, b1, w2, b2}, Input: x, Label: y, Loss: loss}
}

// xorRows returns n seeded rows of d features in [-1, 1] labelled by the
// sign of x0 x1 (not linearly separable).
func xorRows(n, d int, seed uint64) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 9))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range d {
			X.Set(i, j, 2*r.Float64()-1)
		}
		y[i] = math.Copysign(1, X.At(i, 0)*X.At(i, 1))
	}
	return X, y
}

// dpsgdCfg is the DP-SGD of a test: C = 0.1 binds on most examples.
func dpsgdCfg(m *Model, seed uint64) DPSGD {
	return DPSGD{Model: m, Epsilon: 1, Delta: 1e-5, Clip: 0.1, Batch: 10, Passes: 3, Eta: 0.5, Noise: perturb.Seeded(seed)}
}

func runDPSGD(t *testing.T, cfg DPSGD, X mat.Matrix, y []float64, hook dpsgdHook) *DPSGDResult {
	t.Helper()
	res, err := trainDPSGD(context.Background(), cfg, X, y, hook)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// onRows returns a run state of s's kernel and clipping norm on other
// rows, at s's parameters, with buffers of its own.
func (s *graphSGD) onRows(t *testing.T, X mat.Matrix, y []float64) *graphSGD {
	t.Helper()
	rows, labels, _, d, err := dpsgdRows(X, y)
	if err != nil {
		t.Fatal(err)
	}
	o := newGraphSGD(s.kern, s.clip, rows, labels, d)
	copy(o.w, s.w)
	return o
}

// TestDPSGDGradFiniteDifferences checks the per-example gradients that a
// step clips against central differences of each example's loss, in every
// parameter of a tanh and a ReLU perceptron, to 1e-6.
func TestDPSGDGradFiniteDifferences(t *testing.T) {
	acts := map[string]func(*gorgonia.Node) (*gorgonia.Node, error){"tanh": gorgonia.Tanh, "relu": gorgonia.Rectify}
	for name, act := range acts {
		t.Run(name, func(t *testing.T) {
			const d, h, n = 3, 4, 6
			X, y := xorRows(n, d, 1)
			kern, err := mlp(t, d, h, act, nil).Kernel(d)
			if err != nil {
				t.Fatal(err)
			}
			rows, labels, _, _, _ := dpsgdRows(X, y)
			s := newGraphSGD(kern, 1, rows, labels, d)
			if err := kern.Init(s.w); err != nil {
				t.Fatal(err)
			}
			if len(s.w) != h*d+h+h+1 {
				t.Fatalf("%d parameters, want %d", len(s.w), h*d+h+h+1)
			}
			lossAt := func(w []float64, i int) float64 {
				l, err := kern.ExampleGrad(make([]float64, len(w)), w, rows[i*d:(i+1)*d], labels[i])
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			const eps = 1e-6
			for i := range n {
				if err := s.exampleGrad(i); err != nil {
					t.Fatal(err)
				}
				g := slices.Clone(s.g)
				for j := range s.w {
					wp, wm := slices.Clone(s.w), slices.Clone(s.w)
					wp[j] += eps
					wm[j] -= eps
					fd := (lossAt(wp, i) - lossAt(wm, i)) / (2 * eps)
					if math.Abs(fd-g[j]) > 1e-6 {
						t.Errorf("example %d, parameter %d: gradient %v, finite difference %v", i, j, g[j], fd)
					}
				}
			}
		})
	}
}

// TestDPSGDClipNorm checks at every step that each example's clipped
// gradient has norm at most C, that the clipping binds, and that the
// step's sum is the sum of the clipped gradients.
func TestDPSGDClipNorm(t *testing.T) {
	X, y := xorRows(80, 3, 2)
	cfg := dpsgdCfg(mlp(t, 3, 5, gorgonia.Tanh, nil), 1)
	cfg.Clip = 0.05
	bound := 0
	res := runDPSGD(t, cfg, X, y, func(step int, s *graphSGD, batch []int) {
		o := s.onRows(t, X, y)
		want := make([]float64, len(s.sum))
		for _, i := range batch {
			if err := o.exampleGrad(i); err != nil {
				t.Fatal(err)
			}
			if !o.clipped() {
				t.Fatalf("step %d, row %d: non-finite gradient", step, i)
			}
			if n := gfloats.Norm(o.cg, 2); n > cfg.Clip {
				t.Errorf("step %d, row %d: clipped norm %v > C = %v", step, i, n, cfg.Clip)
			}
			if gfloats.Norm(o.g, 2) > cfg.Clip {
				bound++
			}
			gfloats.Add(want, o.cg)
		}
		if !slices.Equal(want, s.sum) {
			t.Errorf("step %d: the sum is not the sum of the clipped gradients", step)
		}
	})
	if bound == 0 || res.Stats.Clipped != bound || res.Stats.NonFinite != 0 {
		t.Errorf("clipping bound on %d examples, Stats %+v", bound, res.Stats)
	}
}

// TestDPSGDClipRounding checks that clipping a gradient whose norm is
// far above C, or within rounding of it, gives an exact norm at most C,
// for many directions.
func TestDPSGDClipRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	s := &graphSGD{clip: 0.3, bound: clip.New(0.3, 37), g: make([]float64, 37), cg: make([]float64, 37)}
	for i := range 4000 {
		for j := range s.g {
			s.g[j] = r.NormFloat64() * math.Exp(10*r.Float64())
		}
		if i%2 == 1 {
			gfloats.Scale(s.clip/gfloats.Norm(s.g, 2), s.g) // at C, but for rounding
		}
		if !s.clipped() || cliptest.Norm(cliptest.One, s.cg) > s.clip {
			t.Fatalf("clipped norm %v > C = %v", cliptest.Norm(cliptest.One, s.cg), s.clip)
		}
	}
	s.g[3] = math.NaN()
	if s.clipped() || s.stats.NonFinite != 1 {
		t.Errorf("a NaN gradient was not counted as zero: %+v", s.stats)
	}
}

// TestDPSGDNeighbourSums is the gradient-level neighbour test: on two data
// sets that differ in one row, with the same seeds, every step draws the
// same batch, and at the parameters of the run on the first the clipped
// sums differ by at most 2C, and not at all in a step without the row.
func TestDPSGDNeighbourSums(t *testing.T) {
	X, y := xorRows(80, 3, 3)
	X2, y2 := mat.DenseCopyOf(X), slices.Clone(y)
	const diff = 11
	X2.SetRow(diff, []float64{0.9, -0.8, 0.7})
	y2[diff] = -y[diff]
	cfg := dpsgdCfg(mlp(t, 3, 5, gorgonia.Tanh, nil), 4)
	var batches [][]int
	with, far := 0, 0
	runDPSGD(t, cfg, X, y, func(step int, s *graphSGD, batch []int) {
		batches = append(batches, slices.Clone(batch))
		o := s.onRows(t, X2, y2)
		o.clippedSum(batch)
		dn := gfloats.Distance(s.sum, o.sum, 2)
		in := slices.Contains(batch, diff)
		switch {
		case dn > 2*cfg.Clip*(1+1e-12):
			t.Errorf("step %d: the clipped sums differ by %v > 2C = %v", step, dn, 2*cfg.Clip)
		case !in && dn != 0:
			t.Errorf("step %d: the sums differ by %v without the replaced row", step, dn)
		}
		if in {
			with++
			if dn > cfg.Clip {
				far++
			}
		}
	})
	if with == 0 || far == 0 {
		t.Fatalf("the replaced row was in %d batches, %d with a difference above C: the test shows nothing", with, far)
	}
	cfg.Model = mlp(t, 3, 5, gorgonia.Tanh, nil)
	var batches2 [][]int
	runDPSGD(t, cfg, X2, y2, func(_ int, _ *graphSGD, batch []int) { batches2 = append(batches2, slices.Clone(batch)) })
	if !slices.EqualFunc(batches, batches2, slices.Equal) {
		t.Error("the neighbouring data set drew other batches with the same seeds: the coins read the rows")
	}
}

// TestDPSGDExpectedBatch checks the step: the parameters move by -eta/b
// times the noisy sum, b the expected batch, not the number of rows drawn
// (the noise of the first step is the first draw of a fresh seeded
// source, the coins being drawn from a generator of their own).
func TestDPSGDExpectedBatch(t *testing.T) {
	X, y := xorRows(80, 3, 5)
	cfg := dpsgdCfg(mlp(t, 3, 4, gorgonia.Tanh, nil), 3)
	var w0, sum1 []float64
	size := 0
	res := runDPSGD(t, cfg, X, y, func(step int, s *graphSGD, batch []int) {
		switch step {
		case 1:
			w0, sum1, size = slices.Clone(s.w), slices.Clone(s.sum), len(batch)
		case 2:
			noise := make([]float64, len(sum1))
			if err := perturb.Seeded(3).AddGaussian(noise, s.stepStd(t, cfg, X)); err != nil {
				t.Fatal(err)
			}
			for i := range w0 {
				want := w0[i] - cfg.Eta/float64(cfg.Batch)*(sum1[i]+noise[i])
				if math.Abs(s.w[i]-want) > 1e-12 {
					t.Errorf("w[%d] = %v after the first step, want %v (b = %d, %d rows drawn)", i, s.w[i], want, cfg.Batch, size)
				}
			}
		}
	})
	if size == cfg.Batch {
		t.Fatalf("the first batch has b = %d rows: pick another seed", size)
	}
	if res.Certificate.NoiseScale != res.Certificate.Run.DPSGD.NoiseMultiplier*cfg.Clip {
		t.Errorf("noise scale %v, want sigma C", res.Certificate.NoiseScale)
	}
}

// stepStd returns sigma C of cfg on the rows of X, from the calibration.
func (s *graphSGD) stepStd(t *testing.T, cfg DPSGD, X mat.Matrix) float64 {
	n, _ := X.Dims()
	noise, err := dpsgd.Calibrate(dp.Budget{Epsilon: cfg.Epsilon, Delta: cfg.Delta}, n, cfg.Batch, cfg.Passes)
	if err != nil {
		t.Fatal(err)
	}
	return noise.NoiseMultiplier * s.clip
}

// TestDPSGDCertificate checks the certificate against the accountant: the
// noise multiplier is the calibration's, the accountant recomputed at the
// published q, sigma and T gives the recorded add/remove and replace-one
// eps, within the claim and close to it (the smallest sigma); and the
// parameters are set into the graph's nodes and hashed.
func TestDPSGDCertificate(t *testing.T) {
	X, y := xorRows(90, 3, 6)
	m := mlp(t, 3, 4, gorgonia.Tanh, nil)
	cfg := dpsgdCfg(m, 7)
	cfg.Notes = []string{"rows: synthetic"}
	res := runDPSGD(t, cfg, X, y, nil)
	c := res.Certificate
	rec := c.Run.DPSGD
	noise, err := dpsgd.Calibrate(dp.Budget{Epsilon: 1, Delta: 1e-5}, 90, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case c.Mechanism != perturb.DPSGD || c.Epsilon != 1 || c.Delta != 1e-5 || c.Private || c.Source != perturb.SourceSeeded:
		t.Errorf("claim %s (%v, %v), private %v, source %q", c.Mechanism, c.Epsilon, c.Delta, c.Private, c.Source)
	case rec.NoiseMultiplier != noise.NoiseMultiplier || rec.SampleRate != 10.0/90 || rec.Steps != 27 || c.Clip != 0.1 || c.L2Sensitivity != 0.1:
		t.Errorf("record %+v, clip %v; the calibration's sigma %v", rec, c.Clip, noise.NoiseMultiplier)
	case c.Dim != len(res.Model.W) || c.WeightsSHA256 != dp.WeightsSHA256(res.Model.W) || c.NoiseSeed == nil || *c.NoiseSeed != 7:
		t.Errorf("dim %d, hash %s, seed %v for %d weights", c.Dim, c.WeightsSHA256, c.NoiseSeed, len(res.Model.W))
	case !c.UserModel || c.Convex || c.Loss != userGraphLoss || c.Sampling != trainer.SamplingPoisson:
		t.Errorf("run record %+v", c.Run)
	}
	g, err := accountant.PLD{}.Epsilon(accountant.SampledGaussian{SampleRate: rec.SampleRate, NoiseMultiplier: rec.NoiseMultiplier, Steps: rec.Steps}, rec.AddRemoveDelta)
	if err != nil {
		t.Fatal(err)
	}
	rep := g.ReplaceOne()
	if g.Epsilon != rec.AddRemoveEpsilon || rep.Epsilon != rec.ReplaceOneEpsilon || rep.Delta != rec.ReplaceOneDelta || rep.Epsilon > 1 || rep.Delta > 1e-5 || rep.Epsilon < 0.95 {
		t.Errorf("the accountant gives %+v (replace-one %+v), the certificate %+v", g, rep, rec)
	}
	text := strings.Join(c.Assumptions, "\n")
	for _, want := range []string{"nothing about the graph's loss is assumed", "one run of the graph per example", "rows: synthetic", "Poisson sampling"} {
		if !strings.Contains(text, want) {
			t.Errorf("the assumptions lack %q:\n%s", want, text)
		}
	}
	var inNodes []float64
	for _, p := range m.Params {
		v, _ := floats(p.Value())
		inNodes = append(inNodes, v...)
	}
	if !slices.Equal(inNodes, res.Model.W) {
		t.Error("the graph's parameter nodes do not hold the trained values")
	}
}

// TestDPSGDReproducible checks that a seeded run is reproduced bit for
// bit, from a graph built afresh, and that another seed gives other
// parameters.
func TestDPSGDReproducible(t *testing.T) {
	X, y := xorRows(60, 3, 8)
	w := func(seed uint64) []float64 {
		return runDPSGD(t, dpsgdCfg(mlp(t, 3, 4, gorgonia.Tanh, nil), seed), X, y, nil).Model.W
	}
	a, b, c := w(3), w(3), w(4)
	if !slices.Equal(a, b) {
		t.Error("two runs with seed 3 differ")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 3 and 4 give the same parameters")
	}
}

// statefulOp is the identity in value plus a count of its runs times
// 1e-3: a graph that carries state from one example to the next.
type statefulOp struct {
	runs  *int
	panic bool // panic when it runs instead
}

func (op statefulOp) Arity() int { return 1 }
func (op statefulOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (op statefulOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return ds[0].(tensor.Shape).Clone(), nil
}
func (op statefulOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if op.panic {
		panic("statefulOp: a panic inside an operation")
	}
	*op.runs++
	v := in[0].(*tensor.Dense)
	out := tensor.New(tensor.WithShape(v.Shape().Clone()...), tensor.WithBacking(slices.Clone(v.Float64s())))
	for i := range out.Float64s() {
		out.Float64s()[i] += 1e-3 * float64(*op.runs)
	}
	return out, nil
}
func (op statefulOp) ReturnsPtr() bool      { return false }
func (op statefulOp) CallsExtern() bool     { return false }
func (op statefulOp) OverwritesInput() int  { return -1 }
func (op statefulOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op statefulOp) Hashcode() uint32      { return 7 }
func (op statefulOp) String() string        { return "statefulOp" }
func (op statefulOp) DiffWRT(int) []bool    { return []bool{true} }
func (op statefulOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{grad}, nil
}

// withOp returns the stage of mlp that applies op to the hidden layer.
func withOp(op statefulOp) func(*gorgonia.Node) *gorgonia.Node {
	return func(n *gorgonia.Node) *gorgonia.Node { return gorgonia.Must(gorgonia.ApplyOp(op, n)) }
}

// TestDPSGDRefuses checks the errors: the settings, the rows, the budget,
// malformed graphs, a graph that keeps state between examples (the
// independence probe), a panic inside an operation, a cancelled context.
func TestDPSGDRefuses(t *testing.T) {
	X, y := xorRows(60, 3, 9)
	runs := 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		edit func(*DPSGD, *mat.Dense, *[]float64) context.Context
		is   error
		msg  string
	}{
		{"no model", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context { c.Model = nil; return nil }, trainer.ErrConfig, "without a Model"},
		{"no step", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context { c.Eta = 0; return nil }, trainer.ErrConfig, "Eta = 0"},
		{"clip", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context { c.Clip = math.Inf(1); return nil }, trainer.ErrConfig, "C = +Inf"},
		{"batch", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context { c.Batch = 61; return nil }, trainer.ErrConfig, "batch 61 of 60"},
		{"pure", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context { c.Delta = 0; return nil }, dp.ErrBudget, "delta > 0"},
		{"delta above 1/n", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context { c.Delta = 0.1; return nil }, dp.ErrBudget, ""},
		{"labels", func(_ *DPSGD, _ *mat.Dense, y *[]float64) context.Context { *y = (*y)[1:]; return nil }, trainer.ErrData, "60 rows and 59 labels"},
		{"NaN row", func(_ *DPSGD, X *mat.Dense, _ *[]float64) context.Context { X.Set(4, 1, math.NaN()); return nil }, trainer.ErrData, "X[4][1] = NaN"},
		{"columns", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context {
			c.Model = mlp(t, 4, 3, gorgonia.Tanh, nil)
			return nil
		}, trainer.ErrConfig, "want 3 elements"},
		{"loss not scalar", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context {
			c.Model.Loss = gorgonia.NewVector(c.Model.Graph, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("v"))
			return nil
		}, trainer.ErrConfig, "want a scalar"},
		{"state", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context {
			c.Model = mlp(t, 3, 3, gorgonia.Tanh, withOp(statefulOp{runs: &runs}))
			return nil
		}, ErrGraph, "the graph must not keep state"},
		{"panic", func(c *DPSGD, _ *mat.Dense, _ *[]float64) context.Context {
			c.Model = mlp(t, 3, 3, gorgonia.Tanh, withOp(statefulOp{runs: &runs, panic: true}))
			return nil
		}, ErrGraph, "a panic inside an operation"},
		{"cancelled", func(*DPSGD, *mat.Dense, *[]float64) context.Context { return ctx }, context.Canceled, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := dpsgdCfg(mlp(t, 3, 3, gorgonia.Tanh, nil), 1)
			X, y := mat.DenseCopyOf(X), slices.Clone(y)
			c := tc.edit(&cfg, X, &y)
			if c == nil {
				c = context.Background()
			}
			_, err := TrainDPSGD(c, cfg, X, y)
			if !errors.Is(err, tc.is) || !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Errorf("error %v, want %v with %q", err, tc.is, tc.msg)
			}
			if tc.msg != "" && len(err.Error()) > 120 {
				t.Errorf("error of %d characters: %v", len(err.Error()), err)
			}
		})
	}
}
