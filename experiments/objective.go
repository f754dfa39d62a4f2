package experiments

import (
	"context"
	"slices"
	"time"

	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// The training-time mechanisms in a sweep.
//
// Objective perturbation and AMP (package objpert) draw their noise before
// training, so a sweep cannot train once and release per eps: the job of a
// (split, lambda) of the lambda family trains once per eps and mechanism,
// by private.SimulateObjective with seeded noise (a reproducible release
// whose certificate says it is not private), on the split's training rows.
// The knobs (clipping, dropout, L1 share, batches, passes, averaging) do not
// apply: the objective is ridge-regularized and minimized exactly, and the
// row's Setting says so (l1 ratio 0, no clip, passes 0 for "exact").
//
// Lambda below the floor. The sweep applies the extra-ridge step of
// Chaudhuri, Monteleoni & Sarwate's Algorithm 2 (objpert.RaiseToFloor): a
// grid lambda below the floor of (mechanism, eps) runs at the floor, and
// its row reports the floor as its lambda. Only the largest grid lambda
// below the floor runs, so each effective lambda appears once per (split,
// eps): several identical settings with independent noise would inflate
// the best-of-grid figure.

// objectiveSetting is the setting of a training-time release at lambda.
func objectiveSetting(lambda float64) Setting { return Setting{Lambda: lambda, Dropout: 1} }

// objectiveRow releases f's split by the training-time mechanism mech at
// (eps, delta) with seeded noise, at lambda max(f.lambda, floor). ok is
// false when the job does not run this eps (a lower grid lambda whose
// floor another job runs). nonPrivate caches the noise-free accuracy per
// effective lambda within the job.
func (g *grid) objectiveRow(ctx context.Context, f *fit, mech perturb.Mechanism, eps, delta float64, seed uint64, nonPrivate map[float64]float64) (Result, bool, error) {
	n, d := f.train.X.Dims()
	loss := g.proto.Loss()
	pr := objpert.Problem{Loss: loss, N: n, D: d, K: loss.Outputs(g.proto.Classes()), Kappa: 1, Lambda: f.lambda}
	raised, extra, err := objpert.RaiseToFloor(mech, eps, delta, pr)
	if err != nil {
		return Result{}, false, err
	}
	if extra > 0 {
		i, _ := slices.BinarySearch(g.lambdas, f.lambda)
		if i+1 < len(g.lambdas) && g.lambdas[i+1] <= raised.Lambda {
			return Result{}, false, nil
		}
	}
	cfg := trainer.Config{Loss: loss, Classes: g.proto.Classes(), Reg: regularizers.ElasticNet{Lambda: raised.Lambda}, Kappa: 1, Seed: g.seed + uint64(f.split)}
	start := time.Now()
	m, cert, err := private.SimulateObjective(ctx, f.train.X, f.train.Y, cfg, mech, eps, delta, seed, f.train.Notes)
	if err != nil {
		return Result{}, false, err
	}
	took := time.Since(start)
	acc, ok := nonPrivate[raised.Lambda]
	if !ok {
		exact, err := private.MinimizeObjective(ctx, f.train.X, f.train.Y, cfg, mech)
		if err != nil {
			return Result{}, false, err
		}
		acc = exact.Accuracy(f.test.X, f.test.Y)
		nonPrivate[raised.Lambda] = acc
	}
	route := "objective perturbation"
	if extra > 0 {
		route += " (lambda raised to the floor)"
	}
	return Result{
		Dataset: g.proto.Name(), Mode: Calibrated, Split: f.split, Lambda: raised.Lambda, Setting: objectiveSetting(raised.Lambda),
		Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism),
		Route: route, Sensitivity: cert.L2Sensitivity,
		NoiseScaleName: cert.NoiseScaleName, NoiseScale: cert.NoiseScale,
		AccPrivate: m.Accuracy(f.test.X, f.test.Y), AccNonPrivate: acc,
		TrainTime: took, NoiseSource: cert.Source,
	}, true, nil
}
