package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// withX returns a copy of X with X[i,j] = v.
func withX(X *mat.Dense, i, j int, v float64) *mat.Dense {
	c := mat.DenseCopyOf(X)
	c.Set(i, j, v)
	return c
}

// withY returns a copy of y with y[i] = v.
func withY(y []float64, i int, v float64) []float64 {
	c := append([]float64(nil), y...)
	c[i] = v
	return c
}

func TestTrainBadInput(t *testing.T) {
	X, y := synthData(20, 3, 0, 1)
	Xm, ym := synthData(20, 3, 3, 1)
	logit := func(c Config) Config { c.Loss = losses.Logistic{}; return c }
	soft := func(c Config) Config { c.Loss, c.Classes = testSoftmax{}, 3; return c }
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		cfg  Config
		X    mat.Matrix
		y    []float64
		want error
	}{
		{"nil loss", Config{}, X, y, ErrConfig},
		{"model with native engine", Config{Model: fakeModel{}}, X, y, ErrConfig},
		{"NaN in X", logit(Config{}), withX(X, 3, 1, nan), y, ErrData},
		{"Inf in X", logit(Config{}), withX(X, 0, 2, -inf), y, ErrData},
		{"NaN label", logit(Config{}), X, withY(y, 5, nan), ErrData},
		{"Inf label", logit(Config{}), X, withY(y, 5, inf), ErrData},
		{"nil matrix", logit(Config{}), nil, y, ErrData},
		{"empty data", logit(Config{}), &mat.Dense{}, nil, ErrData},
		{"ragged labels", logit(Config{}), X, y[:19], ErrData},
		{"batch > n", logit(Config{Batch: 21}), X, y, ErrData},
		{"dropout > 1", logit(Config{Dropout: 1.5}), X, y, ErrConfig},
		{"dropout < 0", logit(Config{Dropout: -0.1}), X, y, ErrConfig},
		{"dropout NaN", logit(Config{Dropout: nan}), X, y, ErrConfig},
		{"negative eta", logit(Config{Eta: -1}), X, y, ErrConfig},
		{"infinite eta", logit(Config{Eta: inf}), X, y, ErrConfig},
		{"negative clip", logit(Config{Clip: -1}), X, y, ErrConfig},
		{"negative kappa", logit(Config{Kappa: -1}), X, y, ErrConfig},
		{"negative radius", logit(Config{Radius: -1}), X, y, ErrConfig},
		{"negative tolerance", logit(Config{Tolerance: -1}), X, y, ErrConfig},
		{"negative passes", logit(Config{Passes: -1}), X, y, ErrConfig},
		{"negative batch", logit(Config{Batch: -1}), X, y, ErrConfig},
		{"negative lambda", logit(Config{Reg: regularizers.L2(-1)}), X, y, ErrConfig},
		{"l1 ratio > 1", logit(Config{Reg: regularizers.ElasticNet{Lambda: 1, L1Ratio: 2}}), X, y, ErrConfig},
		{"inverse-t without mu", logit(Config{Schedule: InverseT}), X, y, ErrConfig},
		{"custom without func", logit(Config{Schedule: Custom}), X, y, ErrConfig},
		{"custom NaN step", logit(Config{Schedule: Custom, StepFunc: func(t int) float64 {
			if t == 7 {
				return nan
			}
			return 0.1
		}}), X, y, ErrConfig},
		{"unknown schedule", logit(Config{Schedule: Schedule(9)}), X, y, ErrConfig},
		{"unknown engine", logit(Config{Engine: Engine(9)}), X, y, ErrConfig},
		{"diverging step", logit(Config{Eta: 1e308}), X, y, ErrConfig},
		{"logistic label 0", logit(Config{}), X, withY(y, 2, 0), ErrData},
		{"softmax classes 1", Config{Loss: testSoftmax{}, Classes: 1}, Xm, ym, ErrConfig},
		{"softmax classes 0", Config{Loss: testSoftmax{}}, Xm, ym, ErrConfig},
		{"softmax label K", soft(Config{}), Xm, withY(ym, 4, 3), ErrData},
		{"softmax label fraction", soft(Config{}), Xm, withY(ym, 4, 0.5), ErrData},
		{"softmax label -1", soft(Config{}), Xm, withY(ym, 4, -1), ErrData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(tc.cfg)
			if err == nil {
				var m *Model
				m, _, err = tr.Train(context.Background(), tc.X, tc.y)
				if err == nil {
					t.Fatalf("trained a model %v, want an error wrapping %v", m.W, tc.want)
				}
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q, want one wrapping %q", err, tc.want)
			}
		})
	}
}

// train trains cfg on X, y and fails the test on an error.
func train(t *testing.T, cfg Config, X mat.Matrix, y []float64) (*Model, *Run) {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, run, err := tr.Train(context.Background(), X, y)
	if err != nil {
		t.Fatal(err)
	}
	return m, run
}

func TestTrainDeterministic(t *testing.T) {
	for _, tc := range knobConfigs() {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(50, 4, classesOf(tc.cfg), 2)
			cfg := tc.cfg
			cfg.Seed = 11
			a, _ := train(t, cfg, X, y)
			b, _ := train(t, cfg, X, y)
			for i := range a.W {
				if a.W[i] != b.W[i] {
					t.Fatalf("same seed: w[%d] = %v and %v", i, a.W[i], b.W[i])
				}
			}
			cfg.Seed = 12
			c, _ := train(t, cfg, X, y)
			if maxAbsDiff(a.W, c.W) == 0 {
				t.Errorf("seeds 11 and 12 gave the same weights %v", a.W)
			}
		})
	}
}

// TestTrainClipsRows checks that rows longer than Kappa are scaled to norm
// Kappa, counted, and that the caller's matrix is left alone: training on X
// equals training on the rows scaled by hand.
func TestTrainClipsRows(t *testing.T) {
	X, y := synthData(30, 4, 0, 3)
	const kappa = 0.5
	long := []int{0, 7, 29}
	for _, i := range long {
		row := X.RawRowView(i)
		for j := range row {
			row[j] *= 5 / math.Sqrt(sqNorm(row)) // norm 5 > kappa
		}
	}
	scaled := mat.DenseCopyOf(X)
	wantClipped := 0
	for i := 0; i < 30; i++ {
		row := scaled.RawRowView(i)
		if n := math.Sqrt(sqNorm(row)); n > kappa {
			wantClipped++
			for j := range row {
				row[j] *= kappa / n
			}
		}
	}
	before := mat.DenseCopyOf(X)
	cfg := Config{Loss: losses.Logistic{}, Kappa: kappa, Reg: regularizers.L2(0.01), Passes: 2, Seed: 4}
	m, run := train(t, cfg, X, y)
	if !mat.Equal(X, before) {
		t.Error("Train modified the caller's matrix")
	}
	if run.Stats.ClippedRows != wantClipped || wantClipped < len(long) {
		t.Errorf("ClippedRows = %d, want %d (>= %d)", run.Stats.ClippedRows, wantClipped, len(long))
	}
	ms, _ := train(t, cfg, scaled, y)
	if d := maxAbsDiff(m.W, ms.W); d > 1e-12 {
		t.Errorf("training on X and on X scaled by hand differ by %g", d)
	}
}

func TestTrainRunRecord(t *testing.T) {
	X, y := synthData(25, 3, 0, 5)
	const mu, b, passes = 0.5, 4, 3
	cfg := Config{Loss: losses.Logistic{}, Reg: regularizers.L2(mu), Schedule: InverseT, Batch: b, Passes: passes}
	m, run := train(t, cfg, X, y)
	spp := (25 + b - 1) / b
	if run.StepsPerPass != spp || run.Stats.PassesDone != passes || len(run.PassMaxStep) != passes || len(run.PassMinStep) != passes {
		t.Fatalf("steps per pass %d, passes done %d, %d max and %d min steps; want %d, %d", run.StepsPerPass, run.Stats.PassesDone, len(run.PassMaxStep), len(run.PassMinStep), spp, passes)
	}
	for j := 0; j < passes; j++ {
		hi, lo := 1/(mu*float64(j*spp+1)), 1/(mu*float64((j+1)*spp))
		if math.Abs(run.PassMaxStep[j]-hi) > 1e-15 || math.Abs(run.PassMinStep[j]-lo) > 1e-15 {
			t.Errorf("pass %d: steps [%v, %v], want [%v, %v]", j, run.PassMinStep[j], run.PassMaxStep[j], lo, hi)
		}
	}
	if run.Eta != 1/mu || run.K != 1 || run.N != 25 || run.D != 3 || m.K != 1 || m.D != 3 || run.Engine != "native" {
		t.Errorf("record %+v", run)
	}
	f, _ := newTestProblem(t, cfg, X, y).objective(m.W, make([]float64, 3), make([]float64, 1), make([]float64, 1))
	if math.Abs(run.Stats.Objective-f) > 1e-15 || run.Stats.GradNorm <= 0 {
		t.Errorf("objective %v, grad norm %v; want %v and > 0", run.Stats.Objective, run.Stats.GradNorm, f)
	}
	// The default step is 1/beta, beta = S_z kappa^2 + mu.
	_, run = train(t, Config{Loss: losses.Logistic{}, Reg: regularizers.L2(mu), Kappa: 2, Passes: 1}, X, y)
	if want := 1 / (0.25*4 + mu); run.Eta != want || run.PassMaxStep[0] != want || run.PassMinStep[0] != want {
		t.Errorf("default step %v (pass %v..%v), want 1/beta = %v", run.Eta, run.PassMinStep[0], run.PassMaxStep[0], want)
	}
}

func TestTrainTolerance(t *testing.T) {
	X, y := synthData(40, 3, 0, 6)
	for _, tc := range []struct {
		name     string
		batch    int
		tol      float64
		converge bool
	}{
		{"reached", 40, 1e-6, true},
		{"unreachable", 1, 1e-300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.2, L1Ratio: 0.3}, Batch: tc.batch, Passes: 500, Tolerance: tc.tol}
			_, run := train(t, cfg, X, y)
			if run.Stats.Converged != tc.converge {
				t.Fatalf("converged = %v after %d passes (grad norm %v), want %v", run.Stats.Converged, run.Stats.PassesDone, run.Stats.GradNorm, tc.converge)
			}
			if tc.converge && (run.Stats.GradNorm > tc.tol || run.Stats.PassesDone >= cfg.Passes) {
				t.Errorf("grad norm %v after %d passes, want <= %v before %d", run.Stats.GradNorm, run.Stats.PassesDone, tc.tol, cfg.Passes)
			}
			if !tc.converge && run.Stats.PassesDone != cfg.Passes {
				t.Errorf("%d passes done, want %d", run.Stats.PassesDone, cfg.Passes)
			}
		})
	}
}

func TestTrainContext(t *testing.T) {
	X, y := synthData(500, 4, 0, 7)
	// A long run (MaxPasses passes of 250 steps, under MaxSteps) that
	// only a context stops.
	cfg := Config{Loss: losses.Logistic{}, Passes: MaxPasses, Batch: 2}
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := tr.Train(ctx, X, y); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v, want context.Canceled", err)
	}
	// A deadline already past when the run starts.
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, _, err := tr.Train(ctx, X, y); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past deadline: error %v, want context.DeadlineExceeded", err)
	}
	// A deadline that passes in the middle of the run, at the trainer's
	// fifth look at ctx (a point of the run, not of the clock, so that the
	// machine's load cannot move it): the run stops there, after at most
	// five passes (it looks at ctx before each pass), and does not look
	// again.
	const trip = 5
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	cfg.Logger = log
	if tr, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	dl := &tripContext{Context: context.Background(), trip: trip, done: make(chan struct{})}
	if _, _, err := tr.Train(dl, X, y); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: error %v, want context.DeadlineExceeded", err)
	}
	passes := 0
	for _, e := range hook.AllEntries() {
		if e.Message == "trainer: pass done" {
			passes++
		}
	}
	if passes > trip || dl.looks() != trip {
		t.Errorf("after a deadline at the %dth look at ctx: %d passes done and %d looks, want at most %d and %d", trip, passes, dl.looks(), trip, trip)
	}
}

// tripContext is a context whose deadline passes at the trip-th call of
// its Err method.
type tripContext struct {
	context.Context
	trip int
	done chan struct{}

	mu    sync.Mutex
	calls int
}

func (c *tripContext) Done() <-chan struct{} { return c.done }

func (c *tripContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	switch {
	case c.calls < c.trip:
		return nil
	case c.calls == c.trip:
		close(c.done)
	}
	return context.DeadlineExceeded
}

// looks returns how many times Err was called.
func (c *tripContext) looks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func TestTrainLogging(t *testing.T) {
	X, y := synthData(30, 3, 0, 8)
	for _, tc := range []struct {
		level       logrus.Level
		info, debug int
	}{
		{logrus.WarnLevel, 0, 0},
		{logrus.InfoLevel, 4, 0},
		{logrus.DebugLevel, 4, 4},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			log, hook := logtest.NewNullLogger()
			log.SetLevel(tc.level)
			train(t, Config{Loss: losses.Logistic{}, Passes: 4, Logger: log}, X, y)
			var info, debug int
			for _, e := range hook.AllEntries() {
				switch {
				case e.Level == logrus.InfoLevel && e.Message == "trainer: pass done":
					info++
				case e.Level == logrus.DebugLevel && e.Message == "trainer: objective":
					debug++
					if _, ok := e.Data["objective"]; !ok {
						t.Error("debug entry without the objective")
					}
				}
			}
			if info != tc.info || debug != tc.debug {
				t.Errorf("%d info and %d debug entries, want %d and %d", info, debug, tc.info, tc.debug)
			}
		})
	}
}

// TestNewRejectsAmbiguousUserModel checks the settings New itself refuses for
// a user graph, before any graph is looked at: a Loss beside the Model (the
// Run record would carry constants of a loss that is not trained) and a
// default step size (a user graph has no known smoothness).
func TestNewRejectsAmbiguousUserModel(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"model and loss", Config{Model: fakeModel{}, Loss: losses.Logistic{}, Engine: Graph, Eta: 0.1}},
		{"model without eta", Config{Model: fakeModel{}, Engine: Graph}},
	} {
		if _, err := New(c.cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: New error = %v, want ErrConfig", c.name, err)
		}
	}
	if _, err := New(Config{Model: fakeModel{}, Engine: Graph, Eta: 0.1}); err != nil {
		t.Errorf("model with eta: New error = %v, want nil", err)
	}
}

// TestNewChecksLimitsAndLoss checks what New refuses before any data is
// seen: more than MaxPasses passes, and a loss whose own settings or domain
// are invalid (a zero Huber width, a squared loss without radius and label
// bound).
func TestNewChecksLimitsAndLoss(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"too many passes", Config{Loss: losses.Logistic{}, Passes: MaxPasses + 1}},
		{"huber without delta", Config{Loss: losses.Huber{}}},
		{"huber hinge without width", Config{Loss: losses.HuberHinge{}}},
		{"squared without domain", Config{Loss: losses.Squared{}}},
	} {
		if _, err := New(c.cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: New error = %v, want ErrConfig", c.name, err)
		}
	}
	if _, err := New(Config{Loss: losses.Squared{}, Radius: 1, LabelBound: 1}); err != nil {
		t.Errorf("squared with its domain: %v", err)
	}
}

// TestHugeRowsScaled checks that rows whose squared norm overflows float64
// are still scaled to norm kappa, not zeroed.
func TestHugeRowsScaled(t *testing.T) {
	X := mat.NewDense(2, 2, []float64{1e160, 1e160, -1e160, 1e160})
	tr, err := New(Config{Loss: losses.Logistic{}, Passes: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tr.newProblem(X, []float64{1, -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		row := p.x[i*2 : i*2+2]
		if n := math.Hypot(row[0], row[1]); math.Abs(n-1) > 1e-12 || p.norm[i] != 1 {
			t.Errorf("row %d = %v (norm %v, recorded %v), want norm 1", i, row, n, p.norm[i])
		}
	}
	if p.run.Stats.ClippedRows != 2 {
		t.Errorf("clipped rows %d, want 2", p.run.Stats.ClippedRows)
	}
}

// fakeModel is a UserModel New accepts and no run can train: New looks only
// at whether a model is set.
type fakeModel struct{}

func (fakeModel) Kernel(int) (ExampleKernel, error) {
	return nil, fmt.Errorf("%w: fakeModel cannot be trained", ErrConfig)
}
