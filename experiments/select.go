package experiments

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
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
// selection: a pure output-perturbation mechanism (private.Select releases
// trained models; the training-time mechanisms are not candidates).
func selectable(m perturb.Mechanism) bool { return m.Pure() && !trainingTime(m) }

func (g *grid) selectSplit(ctx context.Context, fs []*fit, mechs []perturb.Mechanism, epsilons []float64, sc SelectConfig) ([]Result, error) {
	var cands []private.Candidate
	var of []*fit
	for _, m := range mechs {
		for _, f := range fs {
			cands = append(cands, private.Candidate{Name: f.setting.String() + " " + string(m), Trained: f.candidate, Mechanism: m})
			of = append(of, f)
		}
	}
	val := fs[0].val
	var rows []Result
	for ei, eps := range epsilons {
		seed := noiseSeed(g.seed, fs[0].split, -2, ei)
		sel, err := private.Select(ctx, cands, val.X, val.Y, private.Budget{Epsilon: eps},
			private.SelectOptions{Eta: sc.Eta, MeanRuns: sc.MeanRuns, Noise: perturb.Seeded(seed), NoiseSeed: seed})
		if err != nil {
			return nil, err
		}
		f, cert := of[sel.Index], sel.Certificate
		r := Result{
			Dataset: g.proto.Name(), Mode: Selected, Split: f.split, Lambda: f.lambda, Setting: f.setting,
			Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism),
			Route: cert.SensitivityRoute, Sensitivity: cert.L2Sensitivity, Beta: cert.Beta,
			NoiseScaleName: cert.NoiseScaleName, NoiseScale: cert.NoiseScale,
			AccPrivate: sel.Model.Accuracy(f.test.X, f.test.Y), AccNonPrivate: f.accNonPrivate,
			TrainTime: f.run.Stats.Duration, NoiseSource: cert.Source,
		}
		if len(cert.Ledger) == 2 {
			r.EpsSelect, r.EpsRelease = cert.Ledger[0].Epsilon, cert.Ledger[1].Epsilon
		}
		rows = append(rows, r)
	}
	g.log.WithField("split", fs[0].split).Debug("private selection done")
	return rows, nil
}
