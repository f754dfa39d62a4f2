package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
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
	header := []string{"dataset", "epsilon", "seed", "grid", "accuracy"}
	keep := func(ds dataSet) bool { return len(ds.classes) == 2 }
	rows, err := runStumpRefits(ctx, dss, filepath.Join(out, "stumpgrid.csv"), header, keep, seeds, workers, stumpAtGrids)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "stumpgrid.md"), []byte(loo.StumpGrid(rows, stump.DefaultGrid)), 0o644)
}

// stumpAtGrids refits the rule's stump at every grid on the rows r and
// writes a row per grid to w.
func stumpAtGrids(j job, r *stumpRows, w *csv.Writer) error {
	for _, T := range loo.StumpGrids {
		s, err := stump.Fit(r.Z, r.y, r.null, stump.Config{Epsilon: r.eps, Grid: T}, perturb.Seeded(uint64(j.seed)))
		if err != nil {
			return err
		}
		acc := stumpAccuracy(func(z []float64) float64 { return s.Predict(z, T) }, r.Xte, r.yte, r.nullTest)
		w.Write([]string{j.ds.name, fmt.Sprint(j.eps), strconv.Itoa(j.seed), strconv.Itoa(T), fmt.Sprint(acc)})
	}
	return nil
}
