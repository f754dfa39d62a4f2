package experiments

import (
	"context"
	"slices"
	"time"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
	"gonum.org/v1/gonum/mat"
)

// The training-time mechanisms in a sweep.
//
// Objective perturbation and AMP (package objpert) draw their noise before
// training, so a sweep cannot train once and release per eps: the job of a
// (split, lambda) of the lambda family trains once per eps and mechanism,
// by the release method of the mechanism with seeded noise (a reproducible release
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
func (g *grid) objectiveRow(ctx context.Context, f *fit, mech dp.Mechanism, eps, delta float64, seed uint64, nonPrivate map[float64]float64) (Result, bool, error) {
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
	rel, err := simulate(ctx, mech, release.Rows{X: f.train.X, Y: f.train.Y, Config: cfg, Notes: f.train.Notes}, dp.Budget{Epsilon: eps, Delta: delta}, seed)
	if err != nil {
		return Result{}, false, err
	}
	m, cert := rel.Model, rel.Certificate
	took := time.Since(start)
	acc, ok := nonPrivate[raised.Lambda]
	if !ok {
		exact, err := minimizeExact(ctx, f.train.X, f.train.Y, raised)
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
		Dataset: g.proto.Name(), DataFile: g.proto.DataFile(), Mode: Calibrated, Split: f.split, Lambda: raised.Lambda, Setting: objectiveSetting(raised.Lambda),
		Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism),
		Route: route, Sensitivity: cert.L2Sensitivity,
		NoiseScaleName: cert.NoiseScaleName, NoiseScale: cert.NoiseScale,
		AccPrivate: m.Accuracy(f.test.X, f.test.Y), AccNonPrivate: acc, Majority: f.majority,
		TrainTime: took, NoiseSource: cert.Source,
	}, true, nil
}

// simulate releases rows by the method of mech at budget b with noise
// seeded by seed: a reproducible release whose certificate says it is not
// private.
func simulate(ctx context.Context, mech dp.Mechanism, rows release.Rows, b dp.Budget, seed uint64) (*release.Outcome, error) {
	m, err := release.Lookup(mech)
	if err != nil {
		return nil, err
	}
	p, err := m.Prepare(ctx, rows, b)
	if err != nil {
		return nil, err
	}
	return p.Release(ctx, perturb.Seeded(seed))
}

// minimizeExact returns the noise-free minimizer of the objective of pr on
// the rows (no floor applies): the non-private baseline of a training-time
// release.
func minimizeExact(ctx context.Context, X *mat.Dense, y []float64, pr objpert.Problem) (*trainer.Model, error) {
	w, _, err := objpert.MinimizeExact(ctx, X, y, pr)
	if err != nil {
		return nil, err
	}
	return &trainer.Model{Loss: pr.Loss.Name(), Task: pr.Loss.Task(), K: pr.K, D: pr.D, W: w}, nil
}
