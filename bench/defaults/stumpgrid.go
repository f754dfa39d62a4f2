package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stump"
)

// runStumpGrid writes stumpgrid.csv and stumpgrid.md: for every binary
// data set, pure budget of the grid and seed where the rule releases a
// stump, the stump refitted at each grid of loo.StumpGrids (stump.Fit,
// seeded, at the release's eps) on the rows the rule's stump saw (the
// same split, the same stump map), and its test accuracy (null test rows
// count as errors, as in the diagnostics); then the leave-one-data-set-out
// judgement of stump.DefaultGrid (loo.StumpGrid).
func runStumpGrid(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	path := filepath.Join(out, "stumpgrid.csv")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "epsilon", "seed", "grid", "accuracy"})
	var jobs []job
	for _, ds := range dss {
		if len(ds.classes) != 2 {
			continue
		}
		for _, eps := range gridEpsilons(ds.name) {
			for seed := 1; seed <= seeds; seed++ {
				jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, args: budgetArgs(eps, 0, seed)})
			}
		}
	}
	var firstErr error
	runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
		if err == nil {
			err = stumpAtGrids(j, o, w)
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s eps %g seed %d: %w", j.ds.name, j.eps, j.seed, err)
		}
	})
	if firstErr != nil {
		return firstErr
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	rows, err := results.Read(path)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "stumpgrid.md"), []byte(loo.StumpGrid(rows, stump.DefaultGrid)), 0o644)
}

// stumpAtGrids refits the rule's stump of the job's outcome at every grid
// and writes a row per grid to w; nothing when the rule released another
// mechanism.
func stumpAtGrids(j job, o outcome, w *csv.Writer) error {
	rel := o.rel
	if rel == nil || rel.Certificate == nil || rel.Certificate.Mechanism != perturb.Stump || rel.Preprocessing == nil {
		return nil
	}
	eps, err := strconv.ParseFloat(releaseEpsilon(rel), 64)
	if err != nil {
		return err
	}
	run, t, err := parseRun(j.ds, j.args)
	if err != nil {
		return err
	}
	// The released schema (with any column the fit typed categorical) and
	// a text cell in a numeric column missing, as the fit read them.
	enc, err := t.EncodeText(rel.Schema, losses.Binary, datasets.TextMissing)
	if err != nil {
		return err
	}
	train, test, err := enc.Split(run.Options.TestFrac, run.Options.Seed, false)
	if err != nil {
		return err
	}
	Xtr, ytr, ntr, err := rel.Preprocessing.Rows(enc, train)
	if err != nil {
		return err
	}
	Xte, yte, nte, err := rel.Preprocessing.Rows(enc, test)
	if err != nil {
		return err
	}
	n, d := Xtr.Dims()
	Z := Xtr.Slice(0, n, 0, d-1) // the stump map's rows [z, 1]
	for _, T := range loo.StumpGrids {
		s, err := stump.Fit(Z, ytr, ntr, stump.Config{Epsilon: eps, Grid: T}, perturb.Seeded(uint64(j.seed)))
		if err != nil {
			return err
		}
		w.Write([]string{j.ds.name, fmt.Sprint(j.eps), strconv.Itoa(j.seed), strconv.Itoa(T), fmt.Sprint(accuracy(s, T, Xte, yte, nte))})
	}
	return nil
}

// accuracy is the share of the rows of X (the stump map's [z, 1]) that s
// on the grid of T classifies as y, a null row counting as an error.
func accuracy(s stump.Stump, T int, X *mat.Dense, y []float64, null []bool) float64 {
	n, d := X.Dims()
	right := 0
	for i := range n {
		if !null[i] && s.Predict(X.RawRowView(i)[:d-1], T) == y[i] {
			right++
		}
	}
	return float64(right) / float64(max(n, 1))
}
