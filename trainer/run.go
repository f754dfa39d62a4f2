package trainer

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// SamplingPermutation is the Run.Sampling of every run: how examples are
// visited.
const SamplingPermutation = "a fresh seeded permutation each pass; minibatch sums divided by b"

// Run is the record of a training run, split along the privacy boundary.
// Its own fields are the constants of the run: the settings and the public
// sizes (n, d, K) that a stability bound reads and a certificate publishes;
// none of them depends on the values of the training rows. Stats holds what
// the run measured on the data (objective, gradient norm, clipped rows,
// passes done, time): statistics of the data that no certificate or model
// file may carry. Stats is never serialized (json:"-").
type Run struct {
	Loss string `json:"loss"`
	Task string `json:"task"`
	// N, D and K are the numbers of examples, features and outputs.
	N int `json:"n"`
	D int `json:"d"`
	K int `json:"k_outputs"`

	// Kappa is the enforced row bound ||x|| <= Kappa.
	Kappa float64 `json:"kappa"`

	// Lz and Sz are the loss constants in the margin; L = Lz*Kappa and
	// BetaS = Sz*Kappa^2 are the Lipschitz and smoothness constants of the
	// loss in the weights, before clipping and dropout. Convex reports
	// whether the loss is convex.
	Lz     float64 `json:"lz"`
	Sz     float64 `json:"sz"`
	L      float64 `json:"lipschitz"`
	BetaS  float64 `json:"smoothness"`
	Convex bool    `json:"convex"`

	// Lambda and L1Ratio are the elastic-net settings; Mu = Lambda*(1-L1Ratio)
	// is the strong convexity of the objective.
	Lambda     float64 `json:"lambda"`
	LabelBound float64 `json:"label_bound"`
	L1Ratio    float64 `json:"l1_ratio"`
	Mu         float64 `json:"mu"`

	// Schedule names the step schedule; Eta is the constant step (Constant
	// schedule) or the first step. PassMaxStep and PassMinStep hold the
	// largest and smallest step of each pass done; StepsPerPass = ceil(N/Batch).
	// The steps follow from the schedule and the constants alone; only
	// their count depends on the data, when a Tolerance stops the run early.
	Schedule     string    `json:"schedule"`
	Eta          float64   `json:"eta"`
	PassMaxStep  []float64 `json:"pass_max_step"`
	PassMinStep  []float64 `json:"pass_min_step"`
	StepsPerPass int       `json:"steps_per_pass"`

	// Passes is the number of passes asked for (k); Stats.PassesDone the
	// number run.
	Passes int `json:"passes"`
	// Batch is the minibatch size b.
	Batch int `json:"batch"`
	// Clip is the per-example clipping norm G (0: none); Dropout is s
	// (1: none); Radius is the projection radius R (0: none).
	Clip    float64 `json:"clip"`
	Dropout float64 `json:"dropout"`
	Radius  float64 `json:"radius"`
	// Average reports whether the average of the iterates was returned.
	Average bool `json:"average"`
	// Sampling describes how examples are visited.
	Sampling string `json:"sampling"`

	// Tolerance is the stopping tolerance fixed in advance (0: none).
	Tolerance float64 `json:"tolerance"`

	Seed   uint64 `json:"seed"`
	Engine string `json:"engine"`
	// UserModel reports a user-supplied graph: such runs are outside the
	// class the stability package certifies.
	UserModel bool `json:"user_model"`
	// DPSGD holds the constants of a DP-SGD run (Trainer.TrainDPSGD); nil,
	// and absent from the JSON, for every other run.
	DPSGD *DPSGDRecord `json:"dp_sgd,omitempty"`

	// Stats are the statistics of the data measured by the run. They are
	// not constants of the run and never leave the process in a model file
	// or a certificate.
	Stats Stats `json:"-"`
}

// Stats are what a run measured on its training data. Each is a statistic
// of the data, outside every privacy claim: for diagnostics only.
type Stats struct {
	// ClippedRows counts the rows that were scaled down to norm Kappa.
	ClippedRows int
	// PassesDone is the number of passes run: Passes, or fewer when a
	// Tolerance stopped the run.
	PassesDone int
	// GradNorm is the norm of the minimum-norm subgradient of the objective
	// at the returned weights, and Converged reports GradNorm <= Tolerance
	// for a positive Tolerance.
	GradNorm  float64
	Converged bool
	// Objective is F_S at the returned weights.
	Objective float64
	// Evaluated reports whether Objective and GradNorm were computed:
	// false when Config.SkipObjective skipped the objective pass, and then
	// both are zero.
	Evaluated bool
	// Duration is the wall time of the run.
	Duration time.Duration
}

// Model is a trained linear model: K rows of D weights. For K = 1 the
// prediction is the margin <w, x> (regression) or its sign (binary); for
// K > 1 it is the index of the largest margin.
type Model struct {
	Loss string      `json:"loss"`
	Task losses.Task `json:"task"`
	K    int         `json:"k"`
	D    int         `json:"d"`
	// W holds the weights row-major: W[k*D+j] is weight j of output k.
	W []float64 `json:"w"`
}

// Margins writes the K margins W x into dst. It panics on a length mismatch.
func (m *Model) Margins(dst, x []float64) {
	if len(x) != m.D || len(dst) != m.K {
		panic(fmt.Sprintf("trainer: margins of %d features into %d outputs, model is %dx%d", len(x), len(dst), m.K, m.D))
	}
	for k := range dst {
		row := m.W[k*m.D : (k+1)*m.D]
		var s float64
		for j, v := range row {
			s += v * x[j]
		}
		dst[k] = s
	}
}

// Predict returns the prediction for x: a label in {-1, +1} (binary), a class
// index (multiclass) or a real value (regression).
func (m *Model) Predict(x []float64) float64 {
	if m.K == 1 {
		var z [1]float64
		m.Margins(z[:], x)
		if m.Task == losses.Binary {
			if z[0] >= 0 {
				return 1
			}
			return -1
		}
		return z[0]
	}
	z := make([]float64, m.K)
	m.Margins(z, x)
	best := 0
	for k, v := range z {
		if v > z[best] {
			best = k
		}
	}
	return float64(best)
}

// Accuracy returns the share of rows of X whose prediction equals y. For
// regression it is the share of exact matches, which is rarely useful.
// It panics on a shape mismatch.
func (m *Model) Accuracy(X mat.Matrix, y []float64) float64 {
	r, c := X.Dims()
	if r != len(y) || c != m.D {
		panic(fmt.Sprintf("trainer: accuracy of %dx%d data with %d labels, model has %d features", r, c, len(y), m.D))
	}
	if r == 0 {
		return 0
	}
	x := make([]float64, c)
	hit := 0
	for i := 0; i < r; i++ {
		mat.Row(x, i, X)
		if m.Predict(x) == y[i] {
			hit++
		}
	}
	return float64(hit) / float64(r)
}

// OnRows returns the record of a run with r's settings on n rows with the
// trainer seed seed: the step records recomputed for ceil(n/b) steps per
// pass by the schedule, and no statistics. A partitioned fit publishes the
// record of its settings on all its rows, and its verification recomputes
// every part's record, with it. Only the constant, inverse-t and bounded
// inverse-t schedules can be recomputed.
func (r Run) OnRows(n int, seed uint64) (Run, error) {
	r.Stats = Stats{}
	r.N, r.Seed = n, seed
	if n < 1 || r.Batch < 1 || r.Batch > n || r.Passes < 1 || r.Passes > MaxPasses {
		return r, fmt.Errorf("%w: a run of %d rows in batches of %d, %d passes (at most %d)", ErrConfig, n, r.Batch, r.Passes, MaxPasses)
	}
	m := (n + r.Batch - 1) / r.Batch
	r.StepsPerPass = m
	step := func(t int) float64 {
		switch r.Schedule {
		case InverseT.String():
			return 1 / (r.Mu * float64(t))
		case BoundedInverseT.String():
			eta := 1 / (r.Mu * float64(t))
			if beta := r.BetaS + r.Mu; beta > 0 {
				eta = math.Min(eta, 1/beta)
			}
			return eta
		}
		return r.Eta
	}
	switch r.Schedule {
	case Constant.String(), InverseT.String(), BoundedInverseT.String():
	default:
		return r, fmt.Errorf("%w: schedule %s: the run record on %d rows cannot be recomputed", ErrConfig, r.Schedule, n)
	}
	r.PassMaxStep, r.PassMinStep = make([]float64, r.Passes), make([]float64, r.Passes)
	for j := range r.Passes {
		// The schedules are non-increasing in t.
		r.PassMaxStep[j], r.PassMinStep[j] = step(j*m+1), step((j+1)*m)
	}
	return r, nil
}
