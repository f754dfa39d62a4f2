package experiments

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// selectRows runs the private selection of every split and eps
// (selection.Select, seeded): the candidates are the split's fits trained on
// the training part of its validation split, one per knob setting and pure
// mechanism. Each selection spends the whole eps; its row reports the
// chosen setting and mechanism and the test accuracy of its release. The
// rows come in (split, eps) order.
func (g *grid) selectRows(ctx context.Context, fits []*fit, set sweepSettings, sc SelectConfig) ([]Result, error) {
	bySplit := make([][]*fit, g.splits)
	for _, f := range fits {
		bySplit[f.split] = append(bySplit[f.split], f)
	}
	var pure []dp.Mechanism
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
// selection: a pure mechanism (selection.Select accounts for pure runs): an
// output-perturbation one, whose candidates are the trained settings, or
// objective perturbation, whose candidates train at each run.
func selectable(m dp.Mechanism) bool { return m.Pure() }

func (g *grid) selectSplit(ctx context.Context, fs []*fit, mechs []dp.Mechanism, epsilons []float64, sc SelectConfig) ([]Result, error) {
	val := fs[0].val
	var rows []Result
	for ei, eps := range epsilons {
		var cands []selection.Candidate
		var cof []*fit
		var objRows []*release.Rows // the objective candidates' rows, nil for trained ones
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
				cands = append(cands, selection.FromTrained(f.setting.String()+" "+string(m), f.candidate, m))
				cof, objRows = append(cof, f), append(objRows, nil)
			}
		}
		if objective {
			// The objective candidates come after the trained ones.
			oc, ofs, rs, err := g.objectiveCandidates(fs, selection.RunEpsilon(eps, sc.Eta))
			if err != nil {
				return nil, err
			}
			cands, cof, objRows = append(cands, oc...), append(cof, ofs...), append(objRows, rs...)
		}
		seed := noiseSeed(g.seed, fs[0].split, -2, ei)
		sel, err := selection.Select(ctx, cands, val.X, val.Y, dp.Budget{Epsilon: eps},
			selection.SelectOptions{Eta: sc.Eta, MeanRuns: sc.MeanRuns, Noise: perturb.Seeded(seed)})
		if err != nil {
			return nil, err
		}
		f, cert, rows0 := cof[sel.Index], sel.Certificate, objRows[sel.Index]
		r := Result{
			Dataset: g.proto.Name(), DataFile: g.proto.DataFile(), Mode: Selected, Split: f.split, Lambda: f.lambda, Setting: f.setting,
			Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism),
			Route: cert.SensitivityRoute, Sensitivity: cert.L2Sensitivity, Beta: cert.Beta,
			NoiseScaleName: cert.NoiseScaleName, NoiseScale: cert.NoiseScale,
			AccPrivate: sel.Model.Accuracy(f.test.X, f.test.Y), AccNonPrivate: f.accNonPrivate, Majority: f.majority,
			TrainTime: f.run.Stats.Duration, NoiseSource: cert.Source,
		}
		if rows0 != nil {
			lambda := rows0.Config.Reg.Lambda
			r.Lambda, r.Setting, r.Route, r.TrainTime = lambda, objectiveSetting(lambda), "objective perturbation", 0
			if lambda != f.lambda {
				r.Route += " (lambda raised to the floor)"
			}
			// The noise-free counterpart of the release: the minimizer of
			// the same objective on the same rows.
			n, d := rows0.X.Dims()
			pr := objpert.Problem{Loss: rows0.Config.Loss, N: n, D: d, K: rows0.Config.Loss.Outputs(rows0.Config.Classes), Kappa: 1, Lambda: lambda}
			exact, err := minimizeExact(ctx, rows0.X, rows0.Y, pr)
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
// candidate (the lambda family's fit of its grid lambda) and its rows.
func (g *grid) objectiveCandidates(fs []*fit, epsRun float64) ([]selection.Candidate, []*fit, []*release.Rows, error) {
	var family []*fit
	for _, f := range fs {
		if f.part != nil {
			family = append(family, f)
		}
	}
	slices.SortFunc(family, func(a, b *fit) int { return cmp.Compare(b.lambda, a.lambda) }) // decreasing
	var cands []selection.Candidate
	var of []*fit
	var rows []*release.Rows
	raisedOnce := false
	for _, f := range family {
		n, d := f.part.X.Dims()
		loss := g.proto.Loss()
		pr := objpert.Problem{Loss: loss, N: n, D: d, K: loss.Outputs(g.proto.Classes()), Kappa: 1, Lambda: f.lambda}
		raised, extra, err := objpert.RaiseToFloor(perturb.Objective, epsRun, 0, pr)
		if err != nil {
			return nil, nil, nil, err
		}
		if extra > 0 {
			if raisedOnce {
				continue
			}
			raisedOnce = true
		}
		cfg := trainer.Config{Loss: loss, Classes: g.proto.Classes(), Reg: regularizers.ElasticNet{Lambda: raised.Lambda}, Kappa: 1, Seed: g.seed + uint64(f.split)}
		r := &release.Rows{X: f.part.X, Y: f.part.Y, Config: cfg, Notes: f.part.Notes}
		cands = append(cands, selection.FromRows(fmt.Sprintf("%s %s", objectiveSetting(raised.Lambda), perturb.Objective), perturb.Objective, *r))
		of, rows = append(of, f), append(rows, r)
	}
	return cands, of, rows, nil
}
