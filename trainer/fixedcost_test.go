package trainer

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// sameBits reports whether a and b hold the same float64s bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// objectiveByRow is problem.objective one row at a time, the loops the
// kernels stand for: for K > 1 sums in column and row order with each
// product rounded (the four-row kernels); for K = 1 each margin from four
// partial sums in gonum Ddot's order and each addition into the gradient
// with its product fused (the block kernels); the losses in row order.
func objectiveByRow(p *problem, w []float64) (f, gnorm float64) {
	grad, z, gz := make([]float64, p.k*p.d), make([]float64, p.k), make([]float64, p.k)
	for i := 0; i < p.n; i++ {
		x := p.x[i*p.d : (i+1)*p.d]
		for k := 0; k < p.k; k++ {
			var s float64
			if p.k == 1 {
				var q [4]float64
				m := p.d &^ 3
				for j := range m {
					q[j%4] = math.FMA(w[j], x[j], q[j%4])
				}
				for j := m; j < p.d; j++ {
					q[0] = math.FMA(w[j], x[j], q[0])
				}
				s = (q[0] + q[2]) + (q[1] + q[3])
			} else {
				for j, v := range w[k*p.d : (k+1)*p.d] {
					s += float64(v * x[j])
				}
			}
			z[k] = s
		}
		f += p.loss.Grad(gz, z, p.y[i])
		for k := 0; k < p.k; k++ {
			c := gz[k] / float64(p.n)
			row := grad[k*p.d : (k+1)*p.d]
			for j, v := range x {
				if p.k == 1 {
					row[j] = math.FMA(c, v, row[j])
				} else {
					row[j] += float64(c * v)
				}
			}
		}
	}
	f /= float64(p.n)
	f += p.cfg.Reg.Value(w)
	return f, p.cfg.Reg.MinNormSubgrad(grad, grad, w)
}

// TestObjectiveBitIdentical checks the objective against objectiveByRow bit
// for bit, for every loss of losses.All (K = 3 for a multiclass one) and
// the test-only softmax, on row counts around multiples of 4.
func TestObjectiveBitIdentical(t *testing.T) {
	cfgs := []Config{{Loss: testSoftmax{}, Classes: 3, Reg: regularizers.L2(0.01)}}
	for _, l := range losses.All() {
		cfg := Config{Loss: l, Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}}
		if l.Task() == losses.Multiclass {
			cfg.Classes = 3
		}
		if boundedOnly(l) {
			cfg.LabelBound, cfg.Radius = 1, 1
		}
		cfgs = append(cfgs, cfg)
	}
	for _, cfg := range cfgs {
		for _, n := range []int{1, 3, 4, 5, 8, 11, 103} {
			for _, d := range []int{1, 4, 7, 33} {
				X, y := synthData(n, d, classesOf(cfg), uint64(n*d))
				p := newTestProblem(t, cfg, X, y)
				k := p.k
				w := make([]float64, k*d)
				for j := range w {
					w[j] = math.Sin(float64(3*j + 1))
				}
				// large weights put margins past the logistic kernel's
				// range (the rows Grad computes)
				for _, scale := range []float64{1, 2000} {
					ws := slices.Clone(w)
					floats.Scale(scale, ws)
					f, g := p.objective(ws, make([]float64, k*d), make([]float64, k), make([]float64, k))
					wf, wg := objectiveByRow(p, ws)
					if math.Float64bits(f) != math.Float64bits(wf) || math.Float64bits(g) != math.Float64bits(wg) {
						t.Errorf("%s %dx%d, w x %v: objective (%v, %v), row by row (%v, %v)", cfg.Loss.Name(), n, d, scale, f, g, wf, wg)
					}
				}
			}
		}
	}
}

// TestTrainRowsInPlace checks when Train reads the caller's rows in place:
// a *mat.Dense with contiguous rows all within Kappa is read in place; a
// clipped row, a strided view, another mat.Matrix or a user model gets a
// copy; the weights are the same bit for bit either way and X is never
// modified.
func TestTrainRowsInPlace(t *testing.T) {
	X, y := synthData(57, 5, 0, 8) // rows in the unit ball
	cfg := Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.01), Passes: 2, Seed: 3}
	aliases := func(p *problem, m *mat.Dense) bool { return &p.x[0] == &m.RawMatrix().Data[0] }
	p := newTestProblem(t, cfg, X, y)
	if !aliases(p, X) {
		t.Error("rows within kappa were copied")
	}
	want, _ := train(t, cfg, X, y)

	wide := mat.NewDense(57, 7, nil)
	view := wide.Slice(0, 57, 1, 6).(*mat.Dense)
	view.Copy(X)
	if p := newTestProblem(t, cfg, view, y); aliases(p, view) {
		t.Error("a strided view read in place")
	}
	if got, _ := train(t, cfg, view, y); !sameBits(got.W, want.W) {
		t.Errorf("strided view: w = %v, want %v", got.W, want.W)
	}
	if got, _ := train(t, cfg, X.T().T(), y); !sameBits(got.W, want.W) {
		t.Errorf("through mat.Matrix: w = %v, want %v", got.W, want.W)
	}
	if p := newTestProblem(t, Config{Model: fakeModel{}, Engine: Graph, Eta: 1}, X, y); aliases(p, X) {
		t.Error("rows read in place for a user model")
	}

	long := mat.DenseCopyOf(X)
	row := long.RawRowView(9)
	for j := range row {
		row[j] *= 3 / math.Sqrt(sqNorm(row))
	}
	before := mat.DenseCopyOf(long)
	p = newTestProblem(t, cfg, long, y)
	if aliases(p, long) || p.run.Stats.ClippedRows != 1 {
		t.Errorf("a row longer than kappa: read in place %v, %d clipped", aliases(p, long), p.run.Stats.ClippedRows)
	}
	train(t, cfg, long, y)
	if !mat.Equal(long, before) {
		t.Error("Train modified the caller's matrix")
	}
}

// TestSkipObjective checks that SkipObjective leaves the weights as they
// are, skips the statistics only when nothing else needs them, and says so.
func TestSkipObjective(t *testing.T) {
	X, y := synthData(90, 4, 0, 6)
	cfg := Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.01), Passes: 3, Seed: 2}
	m, run := train(t, cfg, X, y)
	if !run.Stats.Evaluated || run.Stats.Objective <= 0 || run.Stats.GradNorm <= 0 {
		t.Errorf("default: evaluated %v, objective %v, grad norm %v", run.Stats.Evaluated, run.Stats.Objective, run.Stats.GradNorm)
	}
	cfg.SkipObjective = true
	ms, rs := train(t, cfg, X, y)
	if !sameBits(ms.W, m.W) {
		t.Errorf("SkipObjective changed the weights: %v, want %v", ms.W, m.W)
	}
	if rs.Stats.Evaluated || rs.Stats.Objective != 0 || rs.Stats.GradNorm != 0 {
		t.Errorf("skipped: evaluated %v, objective %v, grad norm %v", rs.Stats.Evaluated, rs.Stats.Objective, rs.Stats.GradNorm)
	}
	cfg.Tolerance = 1e-12
	if _, rt := train(t, cfg, X, y); !rt.Stats.Evaluated || rt.Stats.GradNorm != run.Stats.GradNorm {
		t.Errorf("with a tolerance: evaluated %v, grad norm %v, want %v", rt.Stats.Evaluated, rt.Stats.GradNorm, run.Stats.GradNorm)
	}
}

// TestObjectiveParts checks the objective pass on enough rows to run in
// parallel parts: within rounding of the one-row loops, and the same bits
// whatever GOMAXPROCS.
func TestObjectiveParts(t *testing.T) {
	for _, cfg := range []Config{
		{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}},
		{Loss: testSoftmax{}, Classes: 3, Reg: regularizers.L2(0.01)},
	} {
		n, d := 1<<16+7, 5 // past glm's threshold of the row parts (16384)
		X, y := synthData(n, d, classesOf(cfg), 3)
		p := newTestProblem(t, cfg, X, y)
		w := make([]float64, p.k*d)
		for j := range w {
			w[j] = math.Sin(float64(3*j + 1))
		}
		run := func(procs int) (float64, float64) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			return p.objective(w, make([]float64, p.k*d), make([]float64, p.k), make([]float64, p.k))
		}
		f1, g1 := run(1)
		f4, g4 := run(4)
		if math.Float64bits(f1) != math.Float64bits(f4) || math.Float64bits(g1) != math.Float64bits(g4) {
			t.Errorf("%s: GOMAXPROCS 1 gives (%v, %v), 4 gives (%v, %v)", cfg.Loss.Name(), f1, g1, f4, g4)
		}
		wf, wg := objectiveByRow(p, w)
		if math.Abs(f1-wf) > 1e-12*math.Abs(wf) || math.Abs(g1-wg) > 1e-10*math.Abs(wg) {
			t.Errorf("%s: objective (%v, %v), one row at a time (%v, %v)", cfg.Loss.Name(), f1, g1, wf, wg)
		}
	}
}
