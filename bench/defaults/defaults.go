package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// variant is one way to run train with the budget flags only: the
// default (the public rule, selection.Rule: the mechanism of
// selection.RuleSetting with its automatic lambda, which is --mechanism
// objective or amp, or gamma or gaussian-analytic above
// selection.MaxObjectiveInputs weights or when selection.OutputFirst says
// so, bit for bit, chosen from the widths train sees: after --project
// auto), a holdout selection, or random stopping.
type variant struct {
	name string
	args func() []string
}

var variants = []variant{
	{"rule (default)", func() []string { return nil }},
	{"holdout selection", func() []string { return []string{"--select", "holdout"} }},
	{"random stopping", func() []string { return []string{"--select", "random-stopping"} }},
}

// budgets returns the budgets of the defaults table of a data set: the
// grid's epsilons, pure, and eps = 1 with delta.
func budgets(name string) [][2]float64 {
	var out [][2]float64
	for _, e := range gridEpsilons(name) {
		out = append(out, [2]float64{e, 0})
	}
	return append(out, [2]float64{1, gridDelta})
}

// runDefaults writes defaults.csv: train with the budget flags only, for
// each variant.
func runDefaults(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	f, err := os.Create(filepath.Join(out, "defaults.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "epsilon", "delta", "variant", "seed", "accuracy", "majority", "mechanism", "lambda"})
	for _, ds := range dss {
		var jobs []job
		for _, b := range budgets(ds.name) {
			for _, v := range variants {
				for seed := 1; seed <= seeds; seed++ {
					a := append(budgetArgs(b[0], b[1], seed), v.args()...)
					jobs = append(jobs, job{ds: ds, eps: b[0], seed: seed, s: setting{mech: v.name, delta: b[1]}, args: a})
				}
			}
		}
		logf("%s: %d default fits", ds.name, len(jobs))
		runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
			if err != nil {
				logf("%s: %v", ds.name, err)
				return
			}
			w.Write([]string{ds.name, fmt.Sprint(j.eps), fmt.Sprint(j.s.delta), j.s.mech, strconv.Itoa(j.seed),
				fmt.Sprint(o.released), fmt.Sprint(o.majority), o.mechanism, fmt.Sprint(o.lambda)})
		})
		w.Flush()
	}
	return w.Error()
}

// outputs returns the number of outputs of the data set's model: 1 for two
// classes (logistic), K for more (softmax).
func outputs(ds dataSet) int { return modelOutputs(len(ds.classes)) }
