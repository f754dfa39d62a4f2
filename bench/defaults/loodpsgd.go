package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stabpriv/stabpriv/perturb"
)

// dpsgdRuns are the runs of dpsgd.csv at each (eps, delta) budget: the
// rule's release (no --mechanism), DP-SGD at its automatic knobs, and,
// for more than two classes, AMP at its automatic lambda: the linear
// family the rule releases for a multiclass model with a delta
// (selection.ObjectiveSetting), which stands for the rule's release where
// the rule itself released DP-SGD (selection.DPSGDFirst).
var dpsgdRuns = []string{looRule, string(perturb.DPSGD), string(perturb.AMP)}

// runDPSGD writes dpsgd.csv: on every data set, at each budget of the grid
// with delta gridDelta and each seed, the test accuracy of dpsgdRuns, with
// the released mechanism and the data set's shape (training rows, model
// inputs without a projection, classes): the data of the leave-one-out of
// selection.DPSGDFirstFactor.
func runDPSGD(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	f, err := os.Create(filepath.Join(out, "dpsgd.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "n", "dim", "classes", "epsilon", "delta", "run", "seed", "accuracy", "mechanism", "release_epsilon", "error"})
	for _, ds := range dss {
		n, dim, err := shape(ds)
		if err != nil {
			return err
		}
		classes := max(len(ds.classes), 2)
		var jobs []job
		for _, eps := range gridEpsilons(ds.name) {
			for _, m := range dpsgdRuns {
				if m == string(perturb.AMP) && classes <= 2 {
					continue
				}
				for seed := 1; seed <= seeds; seed++ {
					a := budgetArgs(eps, gridDelta, seed)
					if m != looRule {
						a = append(a, "--mechanism", m)
					}
					jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, s: setting{mech: m, delta: gridDelta}, args: a})
				}
			}
		}
		logf("%s: %d fits of DP-SGD beside the rule (n = %d, dim = %d)", ds.name, len(jobs), n, dim)
		runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
			row := []string{ds.name, strconv.Itoa(n), strconv.Itoa(dim), strconv.Itoa(classes), fmt.Sprint(j.eps), fmt.Sprint(j.s.delta), j.s.mech, strconv.Itoa(j.seed)}
			if err != nil {
				logf("%s: %v", ds.name, err)
				w.Write(append(row, "", "", "", err.Error()))
				return
			}
			relEps := ""
			if c := o.rel.Certificate; c != nil {
				relEps = fmt.Sprint(c.Epsilon)
			}
			w.Write(append(row, fmt.Sprint(o.released), o.mechanism, relEps, ""))
		})
		w.Flush()
	}
	return w.Error()
}
