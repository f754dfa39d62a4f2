package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// pureMech reports whether a grid mechanism spends a pure budget.
func pureMech(m string) bool {
	return m == "objective" || m == "gamma" || m == "laplace" || m == string(perturb.Stump)
}

// writeTable writes table.md under out from grid.csv and defaults.csv:
// the defaults against the majority class, non-private regression and
// the test-selected best fixed setting, and the fit of the automatic
// rules; targets.md, issue 27's targets per data set; dpsgd.md from
// dpsgd.csv and loo.md from loo.csv when their tasks ran. A missing grid.csv leaves the
// test-selected column empty.
func writeTable(out string, dss []dataSet, seeds int) error {
	grid, err := results.Read(filepath.Join(out, "grid.csv"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	all, err := results.Read(filepath.Join(out, "defaults.csv"))
	if err != nil {
		return err
	}
	// The refusals are rows with an error and no accuracy: counted by
	// targets27, kept out of every mean.
	defs := slices.DeleteFunc(slices.Clone(all), func(r map[string]string) bool { return r["error"] != "" })
	var b strings.Builder
	dpl, err := results.Read(filepath.Join(out, "diffprivlib.csv"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	fmt.Fprintf(&b, "Mean ± standard deviation of the test accuracy over %d seeds (the seed of the split by position and of the noise). The command is `stabpriv train --data F --label L --classes ... --epsilon E [--delta D]` with only the flags a data set needs to be read: `--standardize none` for the CSVs prepared by the paper's protocol (their rows are already scaled into the unit ball), `--schema` for raw Adult, `--bounds-all 0,16` for gene_all (its 102 training rows cannot pay for a private estimate of 12,625 ranges) and `--bounds-all 0,16` for digits (a pixel's public range), `--ignore` for the ID column of a public table (named in its description); the public tables are read raw, text and missing cells as their source has them. Non-private: `--mechanism none` (logistic or softmax regression, train's non-private defaults) on the same split; gap closed: (default - majority) / (non-private - majority). Test-selected: the best fixed setting of the grid (every mechanism the budget allows at 13 lambdas from 1e-6 to 1 and clipping norms none and 0.1, none only for more than two classes; the decision stump, no lambda, for up to ten classes read with bounds; DP-SGD at its automatic knobs where there is a delta; chosen on the test accuracy: optimistic and not private). ", seeds)
	if len(dpl) > 0 {
		ver := "diffprivlib"
		if v := dpl[0]["version"]; v != "" {
			ver += " " + v
		}
		b.WriteString("diffprivlib's default: IBM " + ver + "'s `LogisticRegression(epsilon=E)` and nothing else (bench/diffprivlib_side.py, task defaults; `make paper DIFFPRIVLIB=DIR`; with the script's mean-loss patch where the installed scikit-learn sums the loss (before 1.4; without it the noise is n times too small)), on the same rows (as train reads them, categorical columns one-hot), splits and seeds: with no `data_norm` it takes the largest row norm of the training rows, a data-dependent choice outside its guarantee, and says so (PrivacyLeakWarning); C = 1, an intercept, one-vs-rest with eps/K per class. It is pure eps: the delta rows repeat its eps = 1 figure. A table with an undeclared text column or missing cells shows -: diffprivlib takes numbers only, and a user would encode or impute them first.\n\n")
	} else {
		b.WriteString("diffprivlib's default was not run (set DIFFPRIVLIB to a diffprivlib source checkout to run it).\n\n")
	}
	b.WriteString(gridNote(grid))
	head := []string{"data", "budget", fmt.Sprintf("default: the rule (objective perturbation, or AMP with delta, at the automatic lambda; gamma or the analytic Gaussian above 4096 weights and, for two classes, above the curvature scale: `selection.OutputFirst`; the decision stump, marked, for two to ten classes with at least as many features as rows or for three to ten at a pure budget, `selection.StumpFirst`, or on the public log map where it is useful, `selection.StumpUseful`; DP-SGD, marked, for more than two classes with a delta and n eps >= %g, `selection.DPSGDFirst`)", selection.DPSGDFirstRows), "holdout selection", "random stopping", "test-selected (setting)", "diffprivlib default", "majority", "non-private", "gap closed by the default"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, ds := range dss {
		np := variantStat(defs, ds.name, 0, 0, nonPrivate)
		for _, bud := range budgets(ds.name) {
			eps, delta := bud[0], bud[1]
			budget := fmt.Sprintf("eps = %g", eps)
			if delta > 0 {
				budget += fmt.Sprintf(", delta = %g", delta)
			}
			cells := []string{ds.name, budget}
			for _, v := range variants {
				xs := variantRows(defs, ds.name, eps, delta, v.name)
				cell := results.StatOf(results.Column(xs, "accuracy")).String()
				// The rule chose the decision stump (selection.StumpFirst
				// or StumpUseful) or DP-SGD (selection.DPSGDFirst).
				for _, m := range []dp.Mechanism{perturb.Stump, perturb.DPSGD} {
					k := 0
					for _, r := range xs {
						if r["mechanism"] == string(m) {
							k++
						}
					}
					if k > 0 {
						cell += fmt.Sprintf(" (%s, %d of %d)", m, k, len(xs))
					}
				}
				cells = append(cells, cell)
			}
			tb := "-"
			if best, name := bestSetting(grid, ds.name, eps, delta, seeds); name != "" {
				tb = fmt.Sprintf("%s (%s)", best, name)
			}
			maj := results.StatOf(results.Column(variantRows(defs, ds.name, eps, delta, variants[0].name), "majority")).Mean
			def := variantStat(defs, ds.name, eps, delta, variants[0].name)
			cells = append(cells, tb, dplCell(dpl, ds.name, eps), fmt.Sprintf("%.3f", maj), np.String(), gapCell(def.Mean, maj, np.Mean))
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	b.WriteString("\n" + targets(defs, dpl) + "\n" + majorityCheck(defs, dss) + "\n" + fitTable(grid, dss))
	if err := os.WriteFile(filepath.Join(out, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "targets.md"), []byte(targets27(all, grid, dss, seeds)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "sets.md"), []byte(setsList(all, dss)), 0o644); err != nil {
		return err
	}
	if err := writeDPSGDTable(out); err != nil {
		return err
	}
	looRows, err := results.Read(filepath.Join(out, "loo.csv"))
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	}
	var binary []string // OutputFirst is for a scalar loss
	for _, ds := range dss {
		if len(ds.classes) <= 2 {
			binary = append(binary, ds.name)
		}
	}
	return os.WriteFile(filepath.Join(out, "loo.md"), []byte(loo.OutputFirst(looRows, binary)), 0o644)
}

// setsList returns sets.md: each data set, its rows (defaults.csv's),
// classes, the flags beside the budget and how its file was made.
func setsList(all []map[string]string, dss []dataSet) string {
	var b strings.Builder
	b.WriteString("The data sets:\n\n")
	for _, ds := range dss {
		rows := ds.rows
		for _, r := range all {
			if r["dataset"] == ds.name {
				rows = int(results.Num(r, "rows"))
				break
			}
		}
		flags := "none"
		if len(ds.flags) > 0 {
			// A file the bench wrote (a schema) by its name, not its path.
			fl := slices.Clone(ds.flags)
			for i, f := range fl {
				if strings.Contains(f, string(filepath.Separator)) {
					fl[i] = filepath.Base(f)
				}
			}
			flags = "`" + strings.Join(fl, " ") + "`"
		}
		made := ds.made
		if made == "" {
			made = "-"
		}
		fmt.Fprintf(&b, "- %s (%d rows, %d classes; flags beside the budget: %s): %s.\n", ds.name, rows, max(len(ds.classes), 2), flags, strings.TrimSuffix(made, "."))
	}
	return b.String()
}

// variantRows returns the rows of defaults.csv of a data set, budget and
// variant (the non-private reference: epsilon and delta 0).
func variantRows(defs []map[string]string, set string, eps, delta float64, variant string) []map[string]string {
	var out []map[string]string
	for _, r := range defs {
		if r["dataset"] == set && results.Num(r, "epsilon") == eps && results.Num(r, "delta") == delta && r["variant"] == variant {
			out = append(out, r)
		}
	}
	return out
}

// variantStat is the test accuracy over the seeds of a variant's rows.
func variantStat(defs []map[string]string, set string, eps, delta float64, variant string) results.Stat {
	return results.StatOf(results.Column(variantRows(defs, set, eps, delta, variant), "accuracy"))
}

// gap returns the share of the gap from the majority class to the
// non-private accuracy that acc closes, NaN when the non-private fit is
// not above the majority class (no gap to close).
func gap(acc, maj, np float64) float64 {
	if !(np > maj) {
		return math.NaN()
	}
	return (acc - maj) / (np - maj)
}

func gapCell(acc, maj, np float64) string {
	g := gap(acc, maj, np)
	if math.IsNaN(g) {
		return "- (non-private not above the majority)"
	}
	return fmt.Sprintf("%.0f%%", 100*g)
}

// bestSetting returns the best fixed setting of the grid for a data set
// and budget (mean test accuracy over at least seeds seeds; pure
// mechanisms only without delta) and its name, or "" when the grid has
// none.
func bestSetting(grid []map[string]string, set string, eps, delta float64, seeds int) (results.Stat, string) {
	best, bestName := results.Stat{Mean: math.NaN()}, ""
	bySetting := map[string][]float64{}
	for _, r := range grid {
		if r["dataset"] != set || results.Num(r, "epsilon") != eps || (delta == 0 && !pureMech(r["mechanism"])) {
			continue
		}
		key := fmt.Sprintf("%s, lambda %.2g", r["mechanism"], results.Num(r, "lambda"))
		if r["mechanism"] == string(perturb.Stump) {
			key = r["mechanism"] // no lambda
		}
		if c := results.Num(r, "clip"); c > 0 {
			key += fmt.Sprintf(", G %g", c)
		}
		bySetting[key] = append(bySetting[key], results.Num(r, "accuracy"))
	}
	// In the settings' name order, so that a tie keeps the same setting
	// at every regeneration (a map's order is random).
	for _, k := range slices.Sorted(maps.Keys(bySetting)) {
		xs := bySetting[k]
		if s := results.StatOf(xs); len(xs) >= seeds && (math.IsNaN(best.Mean) || results.Above(s.Mean, best.Mean)) {
			best, bestName = s, k
		}
	}
	return best, bestName
}
