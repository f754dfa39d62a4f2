package graph

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/internal/benchdata"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// linearGraph is a program's graph of a linear model: weights w (zero),
// input x, label y, margin z = Mul(x, w), and the loss that lossOf builds
// from the margin and the label.
func linearGraph(d int, lossOf func(z, y *gorgonia.Node) *gorgonia.Node) (*Model, *gorgonia.Node) {
	graphBuild.Lock()
	defer graphBuild.Unlock()
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	z := gorgonia.Must(gorgonia.Mul(x, w))
	return &Model{Graph: g, Params: []*gorgonia.Node{w}, Input: x, Label: y, Loss: lossOf(z, y)}, z
}

// userSoftplus is the logistic loss log(1 + exp(-y z)) written with
// Gorgonia's own operations, as a program would.
func userSoftplus(z, y *gorgonia.Node) *gorgonia.Node {
	m := gorgonia.Must
	return m(gorgonia.Log1p(m(gorgonia.Exp(m(gorgonia.Neg(m(gorgonia.HadamardProd(y, z))))))))
}

// builtinLoss returns a lossOf of the built-in loss l's expression.
func builtinLoss(l losses.Loss) func(z, y *gorgonia.Node) *gorgonia.Node {
	return func(z, y *gorgonia.Node) *gorgonia.Node { return gorgonia.Must(Expr(l, z, y)) }
}

// logisticDeclared declares the logistic loss's constants.
var logisticDeclared = &Declared{Name: "my-logistic", Constants: losses.Constants{Lz: 1, Sz: 0.25, Convex: true, Smooth: true}}

// privateKnobs are knobs of a certified run: clipping, dropout, the
// elastic net, minibatches and averaging.
var privateKnobs = trainer.Config{
	Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.2}, Schedule: trainer.BoundedInverseT,
	Passes: 4, Batch: 4, Clip: 0.5, Dropout: 0.8, Average: true, Seed: 3,
}

// TestTrainerDeclaredLoss checks that a program's graph of the logistic loss
// with its constants declared trains as the built-in logistic loss (the same
// weights to 1e-10, the same run constants and stability report), and that
// its release is certified at that report's Delta and sets the weight node.
func TestTrainerDeclaredLoss(t *testing.T) {
	const d = 5
	X, y := benchdata.Synth(120, d, 0, 7)
	ctx := context.Background()

	ref := privateKnobs
	ref.Loss = losses.Logistic{}
	want, err := release.TrainRows(ctx, X, y, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantW, err := want.Reveal()
	if err != nil {
		t.Fatal(err)
	}

	m, z := linearGraph(d, userSoftplus)
	tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: logisticDeclared, Knobs: privateKnobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.NoBound(); err != nil {
		t.Fatalf("NoBound: %v", err)
	}
	got, err := tr.Train(ctx, X, y)
	if err != nil {
		t.Fatal(err)
	}
	run, wrun := got.Run(), want.Run()
	if run.Loss != "my-logistic" || run.UserModel || run.Lz != 1 || run.Sz != 0.25 || !run.Convex {
		t.Fatalf("run: loss %q, user model %v, Lz %v, Sz %v, convex %v", run.Loss, run.UserModel, run.Lz, run.Sz, run.Convex)
	}
	rep := got.Report()
	if rep == nil || rep.Chosen == 0 || rep.Delta != want.Report().Delta || rep.Beta != want.Report().Beta {
		t.Fatalf("report %+v, built-in logistic %+v", rep, want.Report())
	}
	if run.Eta != wrun.Eta || len(run.PassMaxStep) != len(wrun.PassMaxStep) {
		t.Errorf("eta %v, %d passes; built-in %v, %d", run.Eta, len(run.PassMaxStep), wrun.Eta, len(wrun.PassMaxStep))
	}
	if o, wo := run.Stats.Objective, wrun.Stats.Objective; !(math.Abs(o-wo) <= 1e-9) {
		t.Errorf("objective %v, built-in %v", o, wo)
	}

	// The weights, revealed from a second run (a release's are noised).
	tr2, err := NewTrainer(Config{Model: m, Margin: z, Declared: logisticDeclared, Knobs: privateKnobs})
	if err != nil {
		t.Fatal(err)
	}
	again, err := tr2.Train(ctx, X, y)
	if err != nil {
		t.Fatal(err)
	}
	gotW, err := again.Reveal()
	if err != nil {
		t.Fatal(err)
	}
	for j := range wantW.W {
		if math.Abs(gotW.W[j]-wantW.W[j]) > 1e-10 {
			t.Fatalf("w[%d] = %v, built-in logistic %v", j, gotW.W[j], wantW.W[j])
		}
	}
	if _, _, err := again.Release(perturb.Gamma, 1, 0, perturb.Seeded(1)); !errors.Is(err, release.ErrReleased) {
		t.Errorf("release after Reveal: %v, want ErrReleased", err)
	}

	priv, cert, err := got.Release(perturb.Gamma, 1, 0, perturb.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if cert.Epsilon != 1 || cert.L2Sensitivity != rep.Delta || cert.Run == nil || cert.Run.Loss != "my-logistic" {
		t.Fatalf("certificate eps %v, Delta %v (report %v), run %+v", cert.Epsilon, cert.L2Sensitivity, rep.Delta, cert.Run)
	}
	if !strings.Contains(strings.Join(cert.Assumptions, "\n"), "declared by the program") {
		t.Errorf("the certificate does not say the constants are declared: %q", cert.Assumptions)
	}
	node, _ := floats(m.Params[0].Value())
	for j := range priv.W {
		if node[j] != priv.W[j] {
			t.Fatalf("weight node %v, released %v", node, priv.W)
		}
	}
	if _, _, err := got.Release(perturb.Gamma, 1, 0, perturb.Seeded(2)); !errors.Is(err, release.ErrReleased) {
		t.Errorf("second release: %v, want ErrReleased", err)
	}
}

// TestTrainerBuiltinLoss checks a graph whose loss is a built-in loss's
// expression: its certificate is one the method's Rebuild (what `stabpriv
// certify` runs) gives back, which it cannot for a declared loss.
func TestTrainerBuiltinLoss(t *testing.T) {
	const d = 4
	X, y := benchdata.Synth(100, d, 0, 5)
	ctx := context.Background()
	for _, declared := range []bool{false, true} {
		cfg := Config{Knobs: privateKnobs}
		if declared {
			cfg.Model, cfg.Margin = linearGraph(d, userSoftplus)
			cfg.Declared = logisticDeclared
		} else {
			cfg.Model, cfg.Margin = linearGraph(d, builtinLoss(losses.Logistic{}))
			cfg.Knobs.Loss = losses.Logistic{}
		}
		tr, err := NewTrainer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.Train(ctx, X, y)
		if err != nil {
			t.Fatal(err)
		}
		_, cert, err := got.Release(perturb.Gamma, 1, 0, perturb.Seeded(1))
		if err != nil {
			t.Fatal(err)
		}
		method, err := release.LookupVerifier(perturb.Gamma)
		if err != nil {
			t.Fatal(err)
		}
		re, _, err := method.Rebuild(cert, release.Public{K: 1, D: d})
		if declared {
			if err == nil || !strings.Contains(err.Error(), "my-logistic") {
				t.Errorf("rebuild of a declared loss's certificate: %v, want an error naming the loss", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if re.L2Sensitivity != cert.L2Sensitivity || re.NoiseScale != cert.NoiseScale || re.Run.Loss != "logistic" {
			t.Errorf("rebuilt Delta %v, scale %v, loss %q; released %v, %v", re.L2Sensitivity, re.NoiseScale, re.Run.Loss, cert.L2Sensitivity, cert.NoiseScale)
		}
	}
}

// nonConvex is the sigmoid loss 1/(1 + exp(y z)): 1/4-Lipschitz, smooth,
// not convex.
func nonConvex(z, y *gorgonia.Node) *gorgonia.Node {
	m := gorgonia.Must
	return m(gorgonia.Sigmoid(m(gorgonia.Neg(m(gorgonia.HadamardProd(y, z))))))
}

// TestTrainerNoBound checks the graphs without a proven bound: the reason
// wraps ErrNoBound, they train (not privately), Release is refused with
// that reason, and Reveal gives the weights.
func TestTrainerNoBound(t *testing.T) {
	const d = 3
	X, y := benchdata.Synth(60, d, 0, 2)
	knobs := trainer.Config{Eta: 0.5, Passes: 2, Seed: 1}
	cases := []struct {
		name string
		cfg  func() Config
		want string
	}{
		{"no margin", func() Config {
			m, _ := linearGraph(d, userSoftplus)
			return Config{Model: m, Declared: logisticDeclared}
		}, "no Margin node"},
		{"nothing declared", func() Config {
			m, z := linearGraph(d, userSoftplus)
			return Config{Model: m, Margin: z}
		}, "nothing is declared of the loss"},
		{"declared non-convex", func() Config {
			m, z := linearGraph(d, nonConvex)
			return Config{Model: m, Margin: z, Declared: &Declared{Constants: losses.Constants{Lz: 0.25, Sz: 0.1}}}
		}, "declared non-convex"},
		{"bias parameter", func() Config {
			m := userAffine(d)
			return Config{Model: m, Margin: m.Loss, Declared: logisticDeclared}
		}, "2 parameter nodes"},
		{"margin not a product", func() Config {
			m, _ := linearGraph(d, userSoftplus)
			return Config{Model: m, Margin: m.Loss, Declared: logisticDeclared}
		}, "is not gorgonia.Mul(input, weights)"},
		{"loss reads the weights", func() Config {
			var w *gorgonia.Node
			m, z := linearGraph(d, func(z, y *gorgonia.Node) *gorgonia.Node {
				w = z.Graph().ByName("w")[0]
				g := gorgonia.Must
				return g(gorgonia.Add(userSoftplus(z, y), g(gorgonia.Mul(constant(0.01), g(gorgonia.Sum(g(gorgonia.Square(w))))))))
			})
			return Config{Model: m, Margin: z, Declared: logisticDeclared}
		}, "uses w other than through the Margin node"},
		{"margin of another input", func() Config {
			m, _ := linearGraph(d, userSoftplus)
			graphBuild.Lock()
			v := gorgonia.NewVector(m.Graph, tensor.Float64, gorgonia.WithShape(d), gorgonia.WithName("v"), gorgonia.WithInit(gorgonia.Ones()))
			z := gorgonia.Must(gorgonia.Mul(v, m.Params[0]))
			graphBuild.Unlock()
			return Config{Model: m, Margin: z, Declared: logisticDeclared}
		}, "is not the product of input x and weights w"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			cfg.Knobs = knobs
			tr, err := NewTrainer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			why := tr.NoBound()
			if !errors.Is(why, ErrNoBound) || !strings.Contains(why.Error(), tc.want) || len(why.Error()) > 120 {
				t.Fatalf("NoBound: %v, want ErrNoBound saying %q in at most 120 characters", why, tc.want)
			}
			got, err := tr.Train(context.Background(), X, y)
			if err != nil {
				t.Fatal(err)
			}
			if got.Report() != nil {
				t.Errorf("a report without a bound")
			}
			if _, _, err := got.Release(perturb.Gamma, 1, 0, perturb.Seeded(1)); !errors.Is(err, ErrNoBound) || err.Error() != why.Error() {
				t.Errorf("Release: %v, want %v", err, why)
			}
			m, err := got.Reveal()
			if err != nil || len(m.W) < d {
				t.Fatalf("Reveal: %v, %v", m, err)
			}
			if acc := accuracy(m.W[:d], X, y); acc < 0.7 {
				t.Errorf("accuracy %v of the non-private fit, want >= 0.7", acc)
			}
		})
	}
}

// accuracy returns the share of rows whose margin <w, x> has the sign of
// their label.
func accuracy(w []float64, X *mat.Dense, y []float64) float64 {
	hit := 0
	for i := range y {
		if (dot(w, X.RawRowView(i)) >= 0) == (y[i] > 0) {
			hit++
		}
	}
	return float64(hit) / float64(len(y))
}

// TestTrainerDeclaredWrong checks that a declaration the loss contradicts
// on the grid is an error wrapping ErrDeclared.
func TestTrainerDeclaredWrong(t *testing.T) {
	const d = 3
	cases := []struct {
		name    string
		lossOf  func(z, y *gorgonia.Node) *gorgonia.Node
		cons    losses.Constants
		builtin losses.Loss
		want    string
	}{
		{"Lz too small", userSoftplus, losses.Constants{Lz: 0.5, Sz: 0.25, Convex: true}, nil, "> Lz = 0.5"},
		{"Sz too small", userSoftplus, losses.Constants{Lz: 1, Sz: 0.1, Convex: true}, nil, "more than Sz = 0.1"},
		{"not convex", nonConvex, losses.Constants{Lz: 0.25, Sz: 0.1, Convex: true}, nil, "not convex"},
		{"another built-in", userSoftplus, losses.Constants{}, losses.HuberHinge{H: 0.5}, "huber-hinge gives"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, z := linearGraph(d, tc.lossOf)
			cfg := Config{Model: m, Margin: z, Knobs: trainer.Config{Loss: tc.builtin}}
			if tc.builtin == nil {
				cfg.Declared = &Declared{Constants: tc.cons}
			}
			_, err := NewTrainer(cfg)
			if !errors.Is(err, ErrDeclared) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrDeclared saying %q", err, tc.want)
			}
		})
	}
}

// TestTrainerConfigErrors checks the settings NewTrainer refuses.
func TestTrainerConfigErrors(t *testing.T) {
	const d = 3
	cases := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"no model", func(c *Config) { c.Model = nil }, "no Model"},
		{"knobs model", func(c *Config) { c.Knobs.Model = c.Model }, "Knobs.Model is set"},
		{"declared and built-in", func(c *Config) { c.Knobs.Loss = losses.Logistic{} }, "not both"},
		{"built-in name", func(c *Config) { c.Declared = &Declared{Name: "logistic", Constants: logisticDeclared.Constants} }, "is a built-in loss's"},
		{"zero Lz", func(c *Config) { c.Declared = &Declared{Constants: losses.Constants{Sz: 1, Convex: true}} }, "Lz > 0"},
		{"NaN Sz", func(c *Config) { c.Declared = &Declared{Constants: losses.Constants{Lz: 1, Sz: math.NaN()}} }, "Sz >= 0"},
		{"multiclass task", func(c *Config) {
			c.Declared = &Declared{Task: losses.Multiclass, Constants: logisticDeclared.Constants}
		}, "binary or regression"},
		{"graph engine", func(c *Config) { c.Knobs.Engine = trainer.Graph }, "want native"},
		{"nonzero start", func(c *Config) { c.Model.Params[0].Value().(*tensor.Dense).Float64s()[1] = 0.5 }, "start nonzero"},
		{"built-in loss without a bound", func(c *Config) { c.Declared, c.Margin, c.Knobs.Loss = nil, nil, losses.Logistic{} }, "no Margin node"},
		{"softmax", func(c *Config) { c.Declared, c.Knobs.Loss, c.Knobs.Classes = nil, losses.Softmax{}, 3 }, "several margins"},
		{"nil label", func(c *Config) { c.Model.Label = nil }, "label node is nil"},
		{"vector loss", func(c *Config) {
			c.Model.Loss = gorgonia.Must(gorgonia.HadamardProd(c.Model.Params[0], c.Model.Input))
		}, "want a scalar"},
		{"vector label", func(c *Config) {
			c.Model.Label = gorgonia.NewVector(c.Model.Graph, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("y2"))
		}, "want a scalar"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, z := linearGraph(d, userSoftplus)
			cfg := Config{Model: m, Margin: z, Declared: logisticDeclared}
			tc.edit(&cfg)
			_, err := NewTrainer(cfg)
			if !errors.Is(err, trainer.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
}

// TestTrainerMalformedGraph checks that a graph that does not fit the data
// or fails inside Gorgonia gives an error, never a panic.
func TestTrainerMalformedGraph(t *testing.T) {
	const d = 3
	X, y := benchdata.Synth(40, d+1, 0, 4)
	ctx := context.Background()
	m, z := linearGraph(d, userSoftplus)
	tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: logisticDeclared, Knobs: privateKnobs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(ctx, X, y); !errors.Is(err, trainer.ErrData) || !strings.Contains(err.Error(), "4 columns") {
		t.Errorf("rows of 4 columns for an input of 3: %v, want ErrData", err)
	}
	if _, err := tr.Train(ctx, nil, y); !errors.Is(err, trainer.ErrData) {
		t.Errorf("nil rows: %v, want ErrData", err)
	}
	// Without a bound the graph is trained as a Model, whose input must
	// fit the rows too.
	m, _ = linearGraph(d, userSoftplus)
	tr, err = NewTrainer(Config{Model: m, Knobs: trainer.Config{Eta: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(ctx, X, y); err == nil {
		t.Errorf("a graph without a bound on rows that do not fit: no error")
	}

	// An operation that panics inside the loss, at the grid check, and an
	// operation that starts failing during training.
	m, z = linearGraph(d, func(z, y *gorgonia.Node) *gorgonia.Node {
		return gorgonia.Must(gorgonia.ApplyOp(panicOp{softplusOp}, userSoftplus(z, y)))
	})
	if _, err := NewTrainer(Config{Model: m, Margin: z, Declared: logisticDeclared}); !errors.Is(err, ErrGraph) || !strings.Contains(err.Error(), "an operation that panics") {
		t.Errorf("a panicking operation: %v, want the recovered panic wrapping ErrGraph", err)
	}
	// The check of NewTrainer (the base grid) and that of Train (the
	// margins of privateKnobs reach 25, beyond it), for two labels each.
	calls, checks := 0, 2*(baseN+1)+2*(baseN+1+2*tailN)
	m, z = linearGraph(d, func(z, y *gorgonia.Node) *gorgonia.Node {
		return gorgonia.Must(gorgonia.ApplyOp(laterPanicOp{softplusOp, &calls, checks + 10}, userSoftplus(z, y)))
	})
	tr, err = NewTrainer(Config{Model: m, Margin: z, Declared: &Declared{Constants: losses.Constants{Lz: 1, Sz: 1, Convex: true}}, Knobs: privateKnobs})
	if err != nil {
		t.Fatal(err)
	}
	X, y = benchdata.Synth(40, d, 0, 4)
	for try := 0; try < 2; try++ { // the failure stays with the Trainer
		if _, err := tr.Train(ctx, X, y); !errors.Is(err, ErrGraph) || !strings.Contains(err.Error(), "fails late") {
			t.Errorf("try %d: an operation failing during training: %v, want the recovered panic wrapping ErrGraph", try, err)
		}
	}
}

// laterPanicOp is softplus that panics from its (after+1)-th run on.
type laterPanicOp struct {
	logisticOp
	calls *int
	after int
}

func (op laterPanicOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	if *op.calls++; *op.calls > op.after {
		panic("an operation that fails late")
	}
	return op.logisticOp.Do(in...)
}

func (op laterPanicOp) UsePreallocDo(v gorgonia.Value, in ...gorgonia.Value) (gorgonia.Value, error) {
	return op.Do(in...)
}

// TestTrainerRegression checks a declared regression loss (the Huber loss
// of the built-in package written with Gorgonia's operations, through
// Expr) and its label check.
func TestTrainerRegression(t *testing.T) {
	const d = 3
	X, _ := benchdata.Synth(50, d, 0, 6)
	y := make([]float64, 50)
	for i := range y {
		y[i] = X.At(i, 0) - X.At(i, 1)
	}
	m, z := linearGraph(d, builtinLoss(losses.Huber{Delta: 1}))
	tr, err := NewTrainer(Config{Model: m, Margin: z, Declared: &Declared{Name: "my-huber", Task: losses.Regression, Constants: losses.Constants{Lz: 1, Sz: 1, Convex: true}},
		Knobs: trainer.Config{Reg: regularizers.L2(0.01), Schedule: trainer.BoundedInverseT, Passes: 5, LabelBound: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.Train(context.Background(), X, y)
	if err != nil {
		t.Fatal(err)
	}
	if got.Run().Task != "regression" || got.Report().Chosen == 0 {
		t.Errorf("task %q, chosen route %v", got.Run().Task, got.Report().Chosen)
	}
	y[3] = math.NaN()
	if _, err := tr.Train(context.Background(), X, y); !errors.Is(err, losses.ErrLabel) {
		t.Errorf("a NaN label: %v, want ErrLabel", err)
	}
}
