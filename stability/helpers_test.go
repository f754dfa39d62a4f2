package stability

import (
	"math"

	"github.com/stabpriv/stabpriv/trainer"
)

// handRun returns a hand-built record of a logistic-regression run:
// n = 100, d = 4, kappa = 1 (L = 1, beta_s = 1/4), b = 1, 5 passes of the
// constant step 0.5, no regularization. Fields are then set by the caller
// and the per-pass steps recomputed by fillSteps.
func handRun() *trainer.Run {
	r := &trainer.Run{
		Loss: "logistic", Task: "binary", N: 100, D: 4, K: 1,
		Kappa: 1, Lz: 1, Sz: 0.25, L: 1, BetaS: 0.25, Convex: true,
		Schedule: trainer.Constant.String(), Eta: 0.5,
		Passes: 5, Batch: 1, Dropout: 1,
	}
	return fillSteps(r)
}

// fillSteps recomputes StepsPerPass, PassMaxStep and PassMinStep for the
// Passes asked for from the schedule, as the trainer does (t counts
// minibatch steps from 1).
func fillSteps(r *trainer.Run) *trainer.Run {
	r.Mu = r.Lambda * (1 - r.L1Ratio)
	r.StepsPerPass = (r.N + r.Batch - 1) / r.Batch
	eta := func(t int) float64 {
		switch r.Schedule {
		case trainer.InverseT.String():
			return 1 / (r.Mu * float64(t))
		case trainer.BoundedInverseT.String():
			return math.Min(1/(r.BetaS+r.Mu), 1/(r.Mu*float64(t)))
		}
		return r.Eta
	}
	r.Eta = eta(1)
	r.PassMaxStep = make([]float64, r.Passes)
	r.PassMinStep = make([]float64, r.Passes)
	for j := range r.PassMaxStep {
		r.PassMaxStep[j] = eta(j*r.StepsPerPass + 1)
		r.PassMinStep[j] = eta((j + 1) * r.StepsPerPass)
	}
	return r
}

func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// fullBatch turns r into a full-batch (b = n) run of passes passes with the
// constant default step 1/(beta_s + mu), the setting of RouteERM.
func fullBatch(r *trainer.Run, passes int) *trainer.Run {
	r.Batch, r.Passes, r.Schedule = r.N, passes, trainer.Constant.String()
	r.Mu = r.Lambda * (1 - r.L1Ratio)
	r.Eta = 1 / (r.BetaS + r.Mu)
	return fillSteps(r)
}
