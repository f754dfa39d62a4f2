package graph

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// linearBelow16 is the loss -u + c relu(u - 16)^2 of u = y z: it obeys
// Lz = 1, Sz = 0.25 and convexity on [-16, 16] but not beyond (l” = 2c >
// Sz for u > 16).
func linearBelow16(c float64) func(z, y *gorgonia.Node) *gorgonia.Node {
	return func(z, y *gorgonia.Node) *gorgonia.Node {
		m := gorgonia.Must
		u := m(gorgonia.HadamardProd(y, z))
		r := m(gorgonia.Rectify(m(gorgonia.Sub(u, gorgonia.NewConstant(16.0)))))
		return m(gorgonia.Add(m(gorgonia.Neg(u)), m(gorgonia.Mul(gorgonia.NewConstant(c), m(gorgonia.Square(r))))))
	}
}

// TestTrainerMarginsBeyondBaseGrid: a declared loss that matches its
// declaration on [-16, 16] but not beyond is refused by Train (before it
// trains) when the run's margins can leave [-16, 16] (lambda = 0.01: ||w||
// up to 1/lambda = 100), with the reach and the remedy in the error; with a
// projection radius that keeps the margins inside, it trains, and two
// neighbouring data sets (same seed) stay within the certified Delta.
func TestTrainerMarginsBeyondBaseGrid(t *testing.T) {
	const d, n = 2, 40
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		X.Set(i, 0, 1)
		y[i] = 1
	}
	X2 := mat.DenseCopyOf(X)
	X2.Set(0, 0, 0)
	X2.Set(0, 1, 1)
	decl := &Declared{Name: "linear-below-16", Constants: losses.Constants{Lz: 1, Sz: 0.25, Convex: true, Smooth: true}}
	knobs := trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Schedule: trainer.Constant, Eta: 4, Passes: 10, Seed: 1}
	for _, c := range []float64{0.5, 2, 10} {
		newTrainer := func(k trainer.Config) *Trainer {
			m, z := linearGraph(d, linearBelow16(c))
			tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: decl, Knobs: k})
			if err != nil {
				t.Fatalf("c = %g: NewTrainer (the base grid): %v", c, err)
			}
			return tr
		}
		_, err := newTrainer(knobs).Train(context.Background(), X, y)
		if !errors.Is(err, ErrDeclared) || !strings.Contains(err.Error(), "margins reach ±100: set Knobs.Radius") {
			t.Errorf("c = %g: margins up to 100: %v, want ErrDeclared naming the reach", c, err)
		}

		k := knobs
		k.Radius = 10 // margins within 10
		train := func(X *mat.Dense) ([]float64, float64) {
			fit, err := newTrainer(k).Train(context.Background(), X, y)
			if err != nil {
				t.Fatalf("c = %g, radius 10: Train: %v", c, err)
			}
			delta := fit.Report().Delta
			w, err := fit.Reveal()
			if err != nil {
				t.Fatal(err)
			}
			return w.W, delta
		}
		w1, delta := train(X)
		w2, _ := train(X2)
		diff := make([]float64, len(w1))
		gfloats.SubTo(diff, w1, w2)
		if dist := gfloats.Norm(diff, 2); !(dist <= delta*(1+1e-9)) {
			t.Errorf("c = %g, radius 10: certified Delta = %.4g, neighbours realize ||w - w'|| = %.4g", c, delta, dist)
		}
	}
}

// bumpBetweenPoints is -u plus a quadratic spline in u = y z whose l' is a
// triangle of height c/64 on (0, 1/32), between two points of the base
// grid: l' = -1 at every grid point, 2.2 at u = 0.01 for c = 320.
func bumpBetweenPoints(c float64) func(z, y *gorgonia.Node) *gorgonia.Node {
	return func(z, y *gorgonia.Node) *gorgonia.Node {
		m := gorgonia.Must
		u := m(gorgonia.HadamardProd(y, z))
		sq := func(a float64) *gorgonia.Node {
			return m(gorgonia.Square(m(gorgonia.Rectify(m(gorgonia.Sub(u, gorgonia.NewConstant(a)))))))
		}
		tri := m(gorgonia.Add(m(gorgonia.Sub(sq(0), m(gorgonia.Mul(gorgonia.NewConstant(2.0), sq(1.0/64))))), sq(1.0/32)))
		return m(gorgonia.Add(m(gorgonia.Neg(u)), m(gorgonia.Mul(gorgonia.NewConstant(c/2), tri))))
	}
}

// TestTrainerSafetyNet: a declared loss that passes the grid but breaks
// |l'| <= Lz between two of its points, at a margin the run visits, trains
// and reveals, but its Release is refused with ErrDeclared; the same run of
// a loss that keeps its declaration releases.
func TestTrainerSafetyNet(t *testing.T) {
	const n = 20
	X := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		X.Set(i, 0, 1)
		y[i] = 1
	}
	decl := &Declared{Name: "bump", Constants: losses.Constants{Lz: 1, Sz: 0.25, Convex: true}}
	knobs := trainer.Config{Reg: regularizers.L2(0.01), Eta: 0.01, Passes: 2, Seed: 1}
	for _, tc := range []struct {
		name   string
		lossOf func(z, y *gorgonia.Node) *gorgonia.Node
		want   string // "" for a release
	}{
		{"bump", bumpBetweenPoints(320), "|l'(0.01, 1)| = 2.2 > Lz = 1 at a margin of the run; release refused"},
		{"no bump", bumpBetweenPoints(0), ""},
	} {
		m, z := linearGraph(1, tc.lossOf)
		tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: decl, Knobs: knobs})
		if err != nil {
			t.Fatalf("%s: NewTrainer: %v", tc.name, err)
		}
		fit, err := tr.Train(context.Background(), X, y)
		if err != nil {
			t.Fatalf("%s: Train: %v", tc.name, err)
		}
		_, _, err = fit.Release(perturb.Gamma, 1, 0, perturb.Seeded(1))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Release: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrDeclared) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Release: %v, want ErrDeclared saying %q", tc.name, err, tc.want)
		}
		if tc.want != "" {
			if _, err := fit.Reveal(); err != nil {
				t.Errorf("%s: Reveal after a refused Release: %v", tc.name, err)
			}
		}
	}
}

// TestWatchBeyondRange checks the watch's other breach, a margin beyond
// the checked range, and that unwatch ends the watch.
func TestWatchBeyondRange(t *testing.T) {
	m, z := linearGraph(2, userSoftplus)
	l, err := newGLMLoss(m, z, "softplus", losses.Binary, logisticDeclared.Constants)
	if err != nil {
		t.Fatal(err)
	}
	l.watch(10)
	l.eval(10, 1)
	if err := l.unwatch(); err != nil {
		t.Errorf("margin 10 of the range [-10, 10]: %v", err)
	}
	l.watch(10)
	l.eval(-10.5, 1)
	if err := l.unwatch(); !errors.Is(err, ErrDeclared) || !strings.Contains(err.Error(), "reached margin -10.5, beyond the checked ±10") {
		t.Errorf("margin -10.5: %v, want ErrDeclared naming it", err)
	}
	l.eval(20, 1)
	if err := l.unwatch(); err != nil {
		t.Errorf("after unwatch: %v", err)
	}
}

// TestTrainerNoReach: knobs whose steps bound no norm of the weights
// (eta mu > 2, no radius) leave a declared loss's run without a bound: it
// trains and reveals, its Release is refused with ErrNoBound naming the
// remedy; with a radius it releases, and the certificate states the grid
// (the base grid for margins within 5, a wider one for 50).
func TestTrainerNoReach(t *testing.T) {
	const d = 3
	X, y := benchdata.Synth(60, d, 0, 5)
	for _, radius := range []float64{0, 5, 50} {
		k := trainer.Config{Reg: regularizers.L2(0.01), Passes: 2, Seed: 1, Radius: radius} // 1/lambda = 100
		if radius == 0 {
			k.Reg, k.Eta = regularizers.L2(0.1), 30
		}
		m, z := linearGraph(d, builtinLoss(losses.Logistic{}))
		tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: logisticDeclared, Knobs: k})
		if err != nil {
			t.Fatal(err)
		}
		fit, err := tr.Train(context.Background(), X, y)
		if err != nil {
			t.Fatalf("radius %g: %v", radius, err)
		}
		_, cert, err := fit.Release(perturb.Gamma, 1, 0, perturb.Seeded(1))
		if radius == 0 {
			if !errors.Is(err, ErrNoBound) || !strings.Contains(err.Error(), "bound no ||w||") || !strings.Contains(err.Error(), "set Radius") {
				t.Errorf("no radius: %v, want ErrNoBound naming the remedy", err)
			}
			if _, err := fit.Reveal(); err != nil {
				t.Errorf("no radius: Reveal: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("radius %g: %v", radius, err)
		}
		want := "checked on a grid of 1025 margins in [-16, 16] (spacing 1/32), not proved between grid points"
		if radius == 50 {
			want = "checked on a grid of 1537 margins in [-50, 50] (spacing 1/32 in [-16, 16], ratio 1.004 beyond), not proved between grid points"
		}
		if notes := strings.Join(cert.Assumptions, "\n"); !strings.Contains(notes, want) {
			t.Errorf("radius %g: the certificate's notes %q do not say %q", radius, notes, want)
		}
	}
}

// TestMarginReach checks the bound on the margins for each case of
// release.TrainedBound, a custom schedule read step by step, and that it
// is kappa times release.TrainedBound of the record of the run itself.
func TestMarginReach(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    trainer.Config
		n    int
		want float64
	}{
		{"radius", trainer.Config{Reg: regularizers.L2(0.01), Eta: 4, Radius: 3, Kappa: 2}, 10, 6},
		{"L/mu", trainer.Config{Reg: regularizers.L2(0.01), Eta: 4}, 10, 100},
		// mu = 0: 3 passes of ceil(10/4) = 3 steps of 0.5; L = 2.
		{"L sum", trainer.Config{Eta: 0.5, Passes: 3, Batch: 4, Kappa: 2}, 10, 2 * 2 * 4.5},
		{"eta mu > 2", trainer.Config{Reg: regularizers.L2(0.1), Eta: 30}, 10, math.Inf(1)},
		// Steps 1, 5 | 1, 1: the largest of each pass, not its first.
		{"custom", trainer.Config{Schedule: trainer.Custom, Passes: 2, StepFunc: func(t int) float64 { return map[bool]float64{true: 5, false: 1}[t == 2] }}, 2, 12},
	} {
		got, err := marginReach(tc.k, 1, 0.25, tc.n)
		if err != nil || got != tc.want {
			t.Errorf("%s: reach %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
	X, y := benchdata.Synth(50, 3, 0, 2)
	for _, k := range []trainer.Config{
		privateKnobs,
		{Reg: regularizers.L2(1e-3), Passes: 3, Batch: 8, Kappa: 0.5},
		{Reg: regularizers.ElasticNet{Lambda: 0.1, L1Ratio: 1}, Eta: 0.3, Passes: 2},
		{Reg: regularizers.L2(0.2), Schedule: trainer.InverseT, Passes: 3, Radius: 4},
	} {
		k.Loss = losses.Logistic{}
		tr, err := trainer.New(k)
		if err != nil {
			t.Fatal(err)
		}
		_, run, err := tr.Train(context.Background(), X, y)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marginReach(k, 1, 0.25, 50)
		if want := run.Kappa * release.TrainedBound(run); err != nil || got != want {
			t.Errorf("%+v: reach %v (%v), kappa times the run's bound %v", k.Reg, got, err, want)
		}
	}
}

// TestNewGrid checks the grid's points (increasing, the base grid exact,
// the ends exact) and the cost of checking a declared loss on it: the
// graph of the softplus at 2 x 1,537 margins takes about 10 ms.
func TestNewGrid(t *testing.T) {
	for _, reach := range []float64{0, 16, 25, 1e6} {
		g := newGrid(reach)
		n := baseN + 1
		if reach > baseZ {
			n += 2 * tailN
		}
		if len(g.z) != n || g.z[0] != -g.end || g.z[n-1] != g.end || g.end != math.Max(reach, baseZ) {
			t.Errorf("reach %g: %d points from %g to %g, want %d from -%g", reach, len(g.z), g.z[0], g.z[len(g.z)-1], n, math.Max(reach, baseZ))
		}
		for i := 1; i < n; i++ {
			if !(g.z[i] > g.z[i-1]) {
				t.Fatalf("reach %g: points %d, %d: %g, %g, not increasing", reach, i-1, i, g.z[i-1], g.z[i])
			}
		}
		if lo := (n - baseN - 1) / 2; g.z[lo+baseN/2] != 0 || g.z[lo+baseN/2+1] != 1.0/32 {
			t.Errorf("reach %g: the base grid's points 0 and 1/32 are %g, %g", reach, g.z[lo+baseN/2], g.z[lo+baseN/2+1])
		}
	}
	m, z := linearGraph(3, userSoftplus)
	l, err := newGLMLoss(m, z, "softplus", losses.Binary, logisticDeclared.Constants)
	if err != nil {
		t.Fatal(err)
	}
	g := newGrid(500)
	start := time.Now()
	if err := checkLoss(l, nil, []float64{-1, 1}, g); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, 2 labels: %v", g, time.Since(start))
}
