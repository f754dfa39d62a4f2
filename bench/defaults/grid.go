package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stump"
)

// gridLambdas are the fixed lambdas of the grid: 10^-6 to 1 in half
// decades, those in [lo, hi] (lambdaRange, the flag -lambda-range).
func gridLambdas() []float64 {
	var out []float64
	for e := -12; e <= 0; e++ {
		if l := math.Pow(10, float64(e)/2); l >= lambdaRange[0]*(1-1e-9) && l <= lambdaRange[1]*(1+1e-9) {
			out = append(out, l)
		}
	}
	return out
}

// fullGridLambdas is the number of lambdas of the full grid.
const fullGridLambdas = 13

// lambdaRange bounds the grid's lambdas (the flag -lambda-range: a shorter
// run of a large data set).
var lambdaRange = [2]float64{1e-6, 1}

// gridEpsilons are the budgets of the grid and of the defaults table, per
// data set: those in onlyEpsilons when it is set (flag -epsilons).
func gridEpsilons(name string) []float64 {
	all := []float64{0.5, 1, 2}
	if name == "adult" {
		all = []float64{0.1, 0.5, 1, 2}
	}
	if len(onlyEpsilons) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(e float64) bool { return !slices.Contains(onlyEpsilons, e) })
}

// onlyEpsilons, when not empty, keeps only these epsilons of every task
// (flag -epsilons): a shorter run.
var onlyEpsilons []float64

// gridDelta is the delta of the (eps, delta) mechanisms.
const gridDelta = 1e-5

// setting is one fixed setting of the grid.
type setting struct {
	mech   string
	delta  float64
	clip   float64 // output perturbation only; 0: none
	lambda float64
}

func (s setting) args() []string {
	switch s.mech {
	case string(perturb.Stump):
		return []string{"--mechanism", s.mech} // no knobs
	case string(perturb.DPSGD):
		// Its automatic knobs (release's dp-sgd rule), lambda 0.
		return []string{"--mechanism", s.mech, "--delta", strconv.FormatFloat(s.delta, 'g', -1, 64)}
	}
	a := []string{"--mechanism", s.mech, "--lambda", strconv.FormatFloat(s.lambda, 'g', -1, 64)}
	if s.delta > 0 {
		a = append(a, "--delta", strconv.FormatFloat(s.delta, 'g', -1, 64))
	}
	if s.mech == "gamma" || s.mech == "gaussian-analytic" {
		a = append(a, "--clip", strconv.FormatFloat(s.clip, 'g', -1, 64), "--l1-ratio", "0")
	}
	return a
}

// gridSettings returns the settings of a data set: objective perturbation
// and AMP are skipped above maxObjectiveDim model inputs (their solver
// forms the d x d Hessian), clipping with more than two classes (a clipped
// multiclass step has no sensitivity route: train refuses it). A data set
// of at most stump.MaxClasses classes read with bounds (not --standardize
// none) also has the decision stump (binary or multiclass), which has no
// lambda: one entry; every data set has DP-SGD at its automatic knobs
// (lambda 0): one entry.
func gridSettings(ds dataSet, dim int) []setting {
	clips := []float64{0, 0.1}
	if len(ds.classes) > 2 {
		clips = clips[:1]
	}
	var out []setting
	if len(ds.classes) <= stump.MaxClasses && !slices.Contains(ds.flags, "--standardize") {
		out = append(out, setting{mech: string(perturb.Stump)})
	}
	out = append(out, setting{mech: string(perturb.DPSGD), delta: gridDelta})
	for _, l := range gridLambdas() {
		if dim <= maxObjectiveDim {
			out = append(out, setting{mech: "objective", lambda: l}, setting{mech: "amp", delta: gridDelta, lambda: l})
		}
		for _, g := range clips {
			out = append(out, setting{mech: "gamma", clip: g, lambda: l}, setting{mech: "gaussian-analytic", delta: gridDelta, clip: g, lambda: l})
		}
	}
	return out
}

// gridMechanisms, when not empty, keeps only the grid's settings of these
// mechanisms (flag -mechanisms).
var gridMechanisms []string

// maxObjectiveDim bounds the model inputs of the objective-perturbation
// settings of the grid.
const maxObjectiveDim = 2000

// job is one fit of a table; certify asks for the release's model file
// to be verified (outcome.certified).
type job struct {
	ds      dataSet
	eps     float64
	seed    int
	s       setting
	args    []string
	certify bool
}

// runJobs runs the jobs on workers goroutines and calls done with each
// result, in no particular order, under a lock.
func runJobs(ctx context.Context, jobs []job, workers int, done func(job, outcome, error)) {
	ch := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				o, err := fitArgs(ctx, j.ds, j.args)
				if err == nil && j.certify {
					o.certified = certify(o.rel)
				}
				mu.Lock()
				done(j, o, err)
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

func budgetArgs(eps, delta float64, seed int) []string {
	a := []string{"--epsilon", strconv.FormatFloat(eps, 'g', -1, 64), "--seed", strconv.Itoa(seed),
		"--noise", "seeded", "--noise-seed", strconv.Itoa(seed)}
	if delta > 0 {
		a = append(a, "--delta", strconv.FormatFloat(delta, 'g', -1, 64))
	}
	return a
}

// runGrid writes grid.csv: the test accuracy of every fixed setting.
func runGrid(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	f, err := os.Create(filepath.Join(out, "grid.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "n", "dim", "classes", "epsilon", "delta", "mechanism", "clip", "lambda", "seed", "accuracy", "trained", "majority", "released_lambda"})
	for _, ds := range dss {
		n, dim, err := shape(ds)
		if err != nil {
			return err
		}
		var jobs []job
		for _, eps := range gridEpsilons(ds.name) {
			// The fits run at --project auto, as train does: the solver
			// limit applies to the projected width.
			pdim := dim
			if k, err := preprocess.AutoProjectDim(n, dim-1, outputs(ds), eps); err == nil && k > 0 {
				pdim = k + 1
			}
			for _, s := range gridSettings(ds, pdim) {
				if len(gridMechanisms) > 0 && !slices.Contains(gridMechanisms, s.mech) {
					continue
				}
				for seed := 1; seed <= seeds; seed++ {
					a := append(budgetArgs(eps, 0, seed), s.args()...)
					jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, s: s, args: a})
				}
			}
		}
		logf("%s: grid of %d fits (n = %d, dim = %d)", ds.name, len(jobs), n, dim)
		count := 0
		runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
			count++
			if err != nil {
				logf("%s: %v", ds.name, err)
				return
			}
			w.Write([]string{ds.name, strconv.Itoa(n), strconv.Itoa(dim), strconv.Itoa(max(len(ds.classes), 2)), fmt.Sprint(j.eps), fmt.Sprint(j.s.delta), j.s.mech, fmt.Sprint(j.s.clip),
				fmt.Sprint(j.s.lambda), strconv.Itoa(j.seed), fmt.Sprint(o.released), fmt.Sprint(o.trained), fmt.Sprint(o.majority), fmt.Sprint(o.lambda)})
			if count%200 == 0 {
				w.Flush()
				logf("%s: %d of %d", ds.name, count, len(jobs))
			}
		})
		w.Flush()
	}
	return w.Error()
}

// shape returns the number of training rows and model inputs of a data
// set's fit without a projection.
func shape(ds dataSet) (n, dim int, err error) {
	o, err := fitArgs(context.Background(), ds, []string{"--mechanism", "none", "--passes", "1", "--project", "0"})
	if err != nil {
		return 0, 0, err
	}
	return o.rel.Split.TrainRows, o.rel.Model.D, nil
}
