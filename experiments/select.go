package experiments

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// selectRows runs the private selection of every split and eps
// (private.Select, seeded): the candidates are the split's fits trained on
// the training part of its validation split, one per knob setting and pure
// mechanism. Each selection spends the whole eps; its row reports the
// chosen setting and mechanism and the test accuracy of its release. The
// rows come in (split, eps) order.
func (g *grid) selectRows(ctx context.Context, fits []*fit, set sweepSettings, sc SelectConfig) ([]Result, error) {
	bySplit := make([][]*fit, g.splits)
	for _, f := range fits {
		bySplit[f.split] = append(bySplit[f.split], f)
	}
	var pure []perturb.Mechanism
	for _, m := range set.mechs {
		if selectable(m) {
			pure = append(pure, m)
		}
	}
	out := make([][]Result, g.splits)
	errs := make([]error, g.splits)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for s, fs := range bySplit {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[s], errs[s] = g.selectSplit(ctx, fs, pure, set.epsilons, sc)
		}()
	}
	wg.Wait()
	var rows []Result
	for s := range out {
		if errs[s] != nil {
			return nil, fmt.Errorf("split %d: private selection: %w", s, errs[s])
		}
		rows = append(rows, out[s]...)
	}
	return rows, nil
}

// selectable reports whether m is a candidate mechanism of the private
// selection: a pure mechanism (private.Select accounts for pure runs): an
// output-perturbation one, whose candidates are the trained settings, or
// objective perturbation, whose candidates train at each run.
func selectable(m perturb.Mechanism) bool { return m.Pure() }

func (g *grid) selectSplit(ctx context.Context, fs []*fit, mechs []perturb.Mechanism, epsilons []float64, sc SelectConfig) ([]Result, error) {
	var trained []private.Candidate
	var of []*fit
	objective := false
	for _, m := range mechs {
		if trainingTime(m) {
			objective = true
			continue
		}
		for _, f := range fs {
			if f.candidate == nil {
				continue
			}
			trained = append(trained, private.Candidate{Name: f.setting.String() + " " + string(m), Trained: f.candidate, Mechanism: m})
			of = append(of, f)
		}
	}
	val := fs[0].val
	var rows []Result
	for ei, eps := range epsilons {
		cands, cof := trained, of
		if objective {
			oc, ofs, err := g.objectiveCandidates(fs, eps/(2+sc.Eta))
			if err != nil {
				return nil, err
			}
			cands = append(slices.Clone(trained), oc...)
			cof = append(slices.Clone(of), ofs...)
		}
		seed := noiseSeed(g.seed, fs[0].split, -2, ei)
		sel, err := private.Select(ctx, cands, val.X, val.Y, private.Budget{Epsilon: eps},
			private.SelectOptions{Eta: sc.Eta, MeanRuns: sc.MeanRuns, Noise: perturb.Seeded(seed), NoiseSeed: seed})
		if err != nil {
			return nil, err
		}
		f, cert, c := cof[sel.Index], sel.Certificate, cands[sel.Index]
		r := Result{
			Dataset: g.proto.Name(), Mode: Selected, Split: f.split, Lambda: f.lambda, Setting: f.setting,
			Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism),
			Route: cert.SensitivityRoute, Sensitivity: cert.L2Sensitivity, Beta: cert.Beta,
			NoiseScaleName: cert.NoiseScaleName, NoiseScale: cert.NoiseScale,
			AccPrivate: sel.Model.Accuracy(f.test.X, f.test.Y), AccNonPrivate: f.accNonPrivate,
			TrainTime: f.run.Stats.Duration, NoiseSource: cert.Source,
		}
		if c.Rows != nil {
			lambda := c.Rows.Config.Reg.Lambda
			r.Lambda, r.Setting, r.Route, r.TrainTime = lambda, objectiveSetting(lambda), "objective perturbation", 0
			if lambda != f.lambda {
				r.Route += " (lambda raised to the floor)"
			}
			// The noise-free counterpart of the release: the minimizer of
			// the same objective on the same rows.
			exact, err := private.MinimizeObjective(ctx, c.Rows.X, c.Rows.Y, c.Rows.Config, c.Mechanism)
			if err != nil {
				return nil, err
			}
			r.AccNonPrivate = exact.Accuracy(f.test.X, f.test.Y)
		}
		if len(cert.Ledger) == 2 {
			r.EpsSelect, r.EpsRelease = cert.Ledger[0].Epsilon, cert.Ledger[1].Epsilon
		}
		rows = append(rows, r)
	}
	g.log.WithField("split", fs[0].split).Debug("private selection done")
	return rows, nil
}

// objectiveCandidates returns the objective-perturbation candidates of a
// split's selection at eps_run: one per lambda of the grid, on the
// training part of the validation split, a lambda below the floor at
// eps_run raised to it (Chaudhuri et al.'s extra-ridge step) and, as in
// the sweep's objective rows, only the largest such lambda kept, so that
// no setting is a candidate twice. It also returns the fit of each
// candidate (the lambda family's fit of its grid lambda).
func (g *grid) objectiveCandidates(fs []*fit, epsRun float64) ([]private.Candidate, []*fit, error) {
	var family []*fit
	for _, f := range fs {
		if f.part != nil {
			family = append(family, f)
		}
	}
	slices.SortFunc(family, func(a, b *fit) int { return cmp.Compare(b.lambda, a.lambda) }) // decreasing
	var cands []private.Candidate
	var of []*fit
	raisedOnce := false
	for _, f := range family {
		n, d := f.part.X.Dims()
		loss := g.proto.Loss()
		pr := objpert.Problem{Loss: loss, N: n, D: d, K: loss.Outputs(g.proto.Classes()), Kappa: 1, Lambda: f.lambda}
		raised, extra, err := objpert.RaiseToFloor(perturb.Objective, epsRun, 0, pr)
		if err != nil {
			return nil, nil, err
		}
		if extra > 0 {
			if raisedOnce {
				continue
			}
			raisedOnce = true
		}
		cfg := trainer.Config{Loss: loss, Classes: g.proto.Classes(), Reg: regularizers.ElasticNet{Lambda: raised.Lambda}, Kappa: 1, Seed: g.seed + uint64(f.split)}
		cands = append(cands, private.Candidate{Name: fmt.Sprintf("%s %s", objectiveSetting(raised.Lambda), perturb.Objective), Mechanism: perturb.Objective,
			Rows: &private.TrainingRows{X: f.part.X, Y: f.part.Y, Config: cfg, Notes: f.part.Notes}})
		of = append(of, f)
	}
	return cands, of, nil
}
