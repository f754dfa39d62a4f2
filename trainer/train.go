package trainer

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	gfloats "gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/hugepage"
	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
)

// Trainer trains linear models by private-ready SGD. It is safe to call Train
// from several goroutines at once.
type Trainer struct {
	cfg Config
}

// New validates cfg and returns a Trainer. Errors wrap ErrConfig.
func New(cfg Config) (*Trainer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Trainer{cfg: cfg.withDefaults()}, nil
}

// problem is one validated training problem shared by the engines.
type problem struct {
	cfg  Config
	loss losses.Loss
	n, d int
	k    int       // outputs
	x    []float64 // n x d row-major, rows clipped to Kappa; read only (see setRows)
	norm []float64 // row norms after clipping
	y    []float64
	mu   float64
	beta float64 // smoothness of the per-example objective, S_z*Kappa^2 + mu
	sgd  Step    // the update of a step
	run  *Run
	log  logrus.FieldLogger
	obs  *observer      // test-only per-step hook; nil in production
	obj  *glm.Objective // the objective pass (objective.go), made at its first use
}

// Train runs SGD on the rows of X with labels y and returns the model and the
// Run record. X is not modified, and must not be modified until Train
// returns: when X is a *mat.Dense (any mat.RawMatrixer) with contiguous rows
// (Stride = d), all of them within Kappa, and Config.Model is nil, Train
// reads the rows in place instead of copying them (no engine writes them).
// It returns an error wrapping ErrData for
// bad data (empty, NaN or Inf, a label the loss cannot use, b > n), one
// wrapping ErrConfig for a run of more than MaxSteps steps (the steps the
// stability analysis evaluates), and the context's error if ctx is done
// before training ends.
func (t *Trainer) Train(ctx context.Context, X mat.Matrix, y []float64) (*Model, *Run, error) {
	start := time.Now()
	p, err := t.newProblem(X, y)
	if err != nil {
		return nil, nil, err
	}
	w, err := runPasses(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	p.run.Stats.Duration = time.Since(start)
	// D = len(w)/K is d for the built-in losses, and the number of
	// parameters of a user model (K = 1; see UserModel).
	m := &Model{Loss: p.run.Loss, K: p.k, D: len(w) / p.k, W: w}
	if p.loss != nil {
		m.Task = p.loss.Task()
	}
	return m, p.run, nil
}

// newProblem validates the data, clips the rows and fills the Run constants.
func (t *Trainer) newProblem(X mat.Matrix, y []float64) (*problem, error) {
	cfg := t.cfg
	if X == nil {
		return nil, fmt.Errorf("%w: nil matrix", ErrData)
	}
	n, d := X.Dims()
	if n == 0 || d == 0 {
		return nil, fmt.Errorf("%w: empty data (%d x %d)", ErrData, n, d)
	}
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d rows but %d labels", ErrData, n, len(y))
	}
	if cfg.Batch > n {
		return nil, fmt.Errorf("%w: batch size %d exceeds %d examples", ErrData, cfg.Batch, n)
	}
	if b := max(cfg.Batch, 1); cfg.Passes > 0 && uint64(cfg.Passes)*uint64((n+b-1)/b) > MaxSteps {
		return nil, fmt.Errorf("%w: %d passes of %d steps (%d rows, batch %d) exceed MaxSteps = %d: raise --batch, lower the passes or use --partitions", ErrConfig, cfg.Passes, (n+b-1)/b, n, b, uint64(MaxSteps))
	}
	p := &problem{cfg: cfg, loss: cfg.Loss, n: n, d: d, k: 1, y: hugepage.Make(n), log: cfg.Logger}
	if p.log == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		p.log = l
	}
	copy(p.y, y)
	run := &Run{
		N: n, D: d, K: 1, Kappa: cfg.Kappa,
		Lambda: cfg.Reg.Lambda, LabelBound: cfg.LabelBound, L1Ratio: cfg.Reg.L1Ratio, Mu: cfg.Reg.StrongConvexity(),
		Schedule: cfg.Schedule.String(), Passes: cfg.Passes, Batch: cfg.Batch,
		Clip: cfg.Clip, Dropout: cfg.Dropout, Radius: cfg.Radius, Average: cfg.Average,
		Sampling:  SamplingPermutation,
		Tolerance: cfg.Tolerance, Seed: cfg.Seed, Engine: cfg.Engine.String(),
		UserModel:    cfg.Model != nil,
		StepsPerPass: (n + cfg.Batch - 1) / cfg.Batch,
	}
	p.run, p.mu = run, run.Mu
	if cfg.Loss != nil {
		run.Loss, run.Task = cfg.Loss.Name(), cfg.Loss.Task().String()
		p.k = cfg.Loss.Outputs(cfg.Classes)
		run.K = p.k
		for i, v := range y {
			if err := cfg.Loss.CheckLabel(v, cfg.Classes); err != nil {
				return nil, fmt.Errorf("%w: label %d: %w", ErrData, i, err)
			}
			if cfg.LabelBound > 0 && math.Abs(v) > cfg.LabelBound {
				return nil, fmt.Errorf("%w: label %d = %v exceeds the label bound %v", ErrData, i, v, cfg.LabelBound)
			}
		}
		cons, err := cfg.Loss.Constants(losses.Domain{Kappa: cfg.Kappa, Radius: cfg.Radius, LabelBound: cfg.LabelBound})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		run.Lz, run.Sz, run.Convex = cons.Lz, cons.Sz, cons.Convex
		run.L, run.BetaS = cons.Lz*cfg.Kappa, cons.Sz*cfg.Kappa*cfg.Kappa
	} else {
		run.Loss, run.Task = "user-graph", "user"
		if i := check.FirstNonFinite(y); i >= 0 {
			return nil, fmt.Errorf("%w: label %d is %v", ErrData, i, y[i])
		}
	}
	p.beta = run.BetaS + p.mu
	if err := p.setRows(X); err != nil {
		return nil, err
	}
	var err error
	if p.sgd, err = newStep(cfg, p.beta); err != nil {
		return nil, err
	}
	eta, err := p.sgd.Eta(1)
	if err != nil {
		return nil, err
	}
	run.Eta = eta
	return p, nil
}

// setRows sets p.x to the rows of X clipped to norm Kappa, and p.norm to
// their norms. It checks every entry for NaN and Inf. The rows are X's own
// storage, read in place, when X has contiguous rows (a mat.RawMatrixer with
// Stride = d), none of them longer than Kappa, and no user model's kernel
// will see them (an ExampleKernel may write its row): no engine writes p.x,
// so the caller's matrix is left as it was. Otherwise p.x is a copy, clipped.
//
// A row's norm is the square root of its sum of squares accumulated in
// column order (kernel.SeqSquares4 gives those bits four rows at a time);
// when the sum overflows, the scaled norm of gonum's floats.Norm.
func (p *problem) setRows(X mat.Matrix) error {
	n, d, kappa := p.n, p.d, p.cfg.Kappa
	owned := true
	if rm, ok := X.(mat.RawMatrixer); ok && rm.RawMatrix().Stride == d && p.cfg.Model == nil {
		p.x, owned = rm.RawMatrix().Data[:n*d], false
	} else {
		p.x = hugepage.Make(n * d) // advised before it is filled (hugepage.Advise)
		for i := 0; i < n; i++ {
			mat.Row(p.x[i*d:(i+1)*d], i, X) // a copy for *mat.Dense, At calls otherwise
		}
	}
	p.norm = hugepage.Make(n)
	squaredNorms(p.norm, p.x, d)
	for i, sq := range p.norm {
		// The common case first: a finite row within kappa (NaN and +Inf
		// fail the comparison and take the checks below).
		if nrm := math.Sqrt(sq); nrm <= kappa {
			p.norm[i] = nrm
			continue
		}
		row := p.x[i*d : (i+1)*d]
		if !check.Finite(sq) {
			if j := check.FirstNonFinite(row); j >= 0 {
				return fmt.Errorf("%w: X[%d,%d] = %v", ErrData, i, j, row[j])
			}
		}
		nrm := math.Sqrt(sq)
		if math.IsInf(sq, 0) {
			// Entries above about 1e154 overflow the sum of squares; the
			// scaled (slower) norm keeps the row from being zeroed.
			nrm = gfloats.Norm(row, 2)
		}
		p.norm[i] = nrm
		if nrm <= kappa {
			continue
		}
		if !owned {
			p.x, owned = append([]float64(nil), p.x...), true
			row = p.x[i*d : (i+1)*d]
		}
		s := kappa / nrm
		for j := range row {
			row[j] *= s
		}
		p.norm[i] = kappa
		p.run.Stats.ClippedRows++
	}
	if p.run.Stats.ClippedRows > 0 {
		p.log.WithFields(logrus.Fields{"rows": p.run.Stats.ClippedRows, "kappa": kappa}).Info("trainer: rows scaled to norm kappa")
	}
	return nil
}

// squaredNorms sets dst[i] to the sum of squares of row i of the n x d
// row-major x (n = len(dst)), accumulated in column order
// (kernel.SquaredNorms, eight rows at a time). From
// normSplitElems elements on, the two halves of the rows are summed on two
// goroutines: each row's sum is its own, so the bits do not change.
func squaredNorms(dst, x []float64, d int) {
	n := len(dst)
	if n >= 8 && n*d >= normSplitElems {
		h := n / 2 &^ 3
		var wg sync.WaitGroup
		wg.Go(func() { kernel.SquaredNorms(dst[h:], x[h*d:], d) })
		kernel.SquaredNorms(dst[:h], x, d)
		wg.Wait()
		return
	}
	kernel.SquaredNorms(dst, x, d)
}

// normSplitElems is the size of X from which squaredNorms runs in two
// parts.
const normSplitElems = 1 << 20
