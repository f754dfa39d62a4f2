package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
)

// runDPSGD writes dpsgd.csv: on every data set, at each budget of the grid
// with delta gridDelta and each seed, the test accuracy of loo.DPSGDRuns, with
// the released mechanism, the release's eps (the certificate's: what the
// feature scales leave, the eps selection.DPSGDFirst reads) and the data
// set's shape (training rows, model inputs without a projection, classes):
// the data of the leave-one-out of selection.DPSGDFirstRows (loo.DPSGDFirst).
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
			for _, m := range loo.DPSGDRuns {
				if m == string(perturb.AMP) && classes <= 2 {
					continue
				}
				for seed := 1; seed <= seeds; seed++ {
					a := budgetArgs(eps, gridDelta, seed)
					if m != loo.Rule {
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
			w.Write(append(row, fmt.Sprint(o.released), o.mechanism, releaseEpsilon(o.rel), ""))
		})
		w.Flush()
	}
	return w.Error()
}

// releaseEpsilon returns the eps of the release's own step: the sum of
// the last run of its mechanism's entries in the certificate's ledger (the
// feature scales are charged before it; AMP charges its objective and
// output parts and its iteration budget as three entries), or the claim's
// eps without such an entry; "" without a certificate.
func releaseEpsilon(rel *modelfile.Released) string {
	c := rel.Certificate
	if c == nil {
		return ""
	}
	i := len(c.Ledger) - 1
	for i >= 0 && string(c.Ledger[i].Mechanism) != string(c.Mechanism) {
		i--
	}
	if i < 0 {
		return fmt.Sprint(c.Epsilon)
	}
	eps := 0.0
	for ; i >= 0 && string(c.Ledger[i].Mechanism) == string(c.Mechanism); i-- {
		eps += c.Ledger[i].Epsilon
	}
	return fmt.Sprint(eps)
}

// writeDPSGDTable writes dpsgd.md under out from dpsgd.csv, when the
// dpsgd task ran (nothing otherwise).
func writeDPSGDTable(out string) error {
	rows, err := results.Read(filepath.Join(out, "dpsgd.csv"))
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	}
	return os.WriteFile(filepath.Join(out, "dpsgd.md"), []byte(loo.DPSGDFirst(rows)), 0o644)
}
