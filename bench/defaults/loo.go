package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
)

// looMechanisms are the two families between which selection.OutputFirst
// chooses for a pure budget, each at its automatic knobs (--mechanism and
// no --lambda): objective perturbation, and output perturbation with the
// gamma noise and the rule's clipping norm.
var looMechanisms = []dp.Mechanism{perturb.Objective, perturb.Gamma}

// runLOO writes loo.csv: on every binary data set, at each pure budget of
// the grid and each seed, the test accuracy of both families of
// looMechanisms and of the rule (no --mechanism), with the released
// mechanism, its lambda, the model width and whether the features were
// read on the public log map (where the rule keeps objective perturbation
// whatever OutputFirst says).
func runLOO(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	f, err := os.Create(filepath.Join(out, "loo.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "epsilon", "run", "seed", "accuracy", "mechanism", "lambda", "dim", "public_map", "error"})
	for _, ds := range dss {
		if len(ds.classes) > 2 {
			continue // OutputFirst is for a scalar loss
		}
		var jobs []job
		for _, eps := range gridEpsilons(ds.name) {
			for _, m := range append(slices.Clone(looMechanisms), loo.Rule) {
				for seed := 1; seed <= seeds; seed++ {
					a := budgetArgs(eps, 0, seed)
					if m != loo.Rule {
						a = append(a, "--mechanism", string(m))
					}
					jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, s: setting{mech: string(m)}, args: a})
				}
			}
		}
		logf("%s: %d fits of the leave-one-out", ds.name, len(jobs))
		runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
			row := []string{ds.name, fmt.Sprint(j.eps), j.s.mech, strconv.Itoa(j.seed)}
			if err != nil {
				logf("%s: %v", ds.name, err)
				w.Write(append(row, "", "", "", "", "", err.Error()))
				return
			}
			p := o.rel.Preprocessing
			public := p != nil && !p.Estimated && p.Log == privbounds.PublicHalfWidth
			w.Write(append(row, fmt.Sprint(o.released), o.mechanism, fmt.Sprint(o.lambda), strconv.Itoa(o.rel.Model.D), strconv.FormatBool(public), ""))
		})
		w.Flush()
	}
	return w.Error()
}
