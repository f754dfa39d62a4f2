package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// readRows reads a CSV file with a header into maps.
func readRows(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			continue // a line cut by an interrupted run
		}
		m := map[string]string{}
		for j, h := range recs[0] {
			m[h] = rec[j]
		}
		out = append(out, m)
	}
	return out, nil
}

func fnum(r map[string]string, k string) float64 {
	v, _ := strconv.ParseFloat(r[k], 64)
	return v
}

// stat is a mean and a standard deviation over seeds.
type stat struct {
	mean, sd float64
	n        int
}

func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{mean: math.NaN()}
	}
	var s, ss float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	sd := 0.0
	if len(xs) > 1 {
		sd = math.Sqrt(ss / float64(len(xs)-1))
	}
	return stat{m, sd, len(xs)}
}

func (s stat) String() string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f ± %.4f", s.mean, s.sd)
}

// pureMech reports whether a grid mechanism spends a pure budget.
func pureMech(m string) bool { return m == "objective" || m == "gamma" || m == "laplace" }

// writeTable writes table.md under out from grid.csv and defaults.csv:
// the defaults against the test-selected best fixed setting and the
// majority class, and the fit of the automatic rules.
func writeTable(out string, dss []dataSet, seeds int) error {
	grid, err := readRows(filepath.Join(out, "grid.csv"))
	if err != nil {
		return err
	}
	defs, err := readRows(filepath.Join(out, "defaults.csv"))
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Mean ± standard deviation of the test accuracy over %d seeds (the seed of the split by position and of the noise). The command is `stabpriv train --data F --label L --classes ... --epsilon E [--delta D]` with only the flags a data set needs to be read: `--standardize none` for the CSVs prepared by the paper's protocol (their rows are already scaled into the unit ball), `--schema` for raw Adult, `--bounds-all 0,16` for gene_all (its 102 training rows cannot pay for a private estimate of 12,625 ranges). Test-selected: the best fixed setting of the grid (every mechanism the budget allows at 13 lambdas from 1e-6 to 1 and clipping norms none and 0.1, chosen on the test accuracy: optimistic and not private). diffprivlib's default was not run beside (diffprivlib is not installed here; issue 18 reports 0.8456 on Adult at eps = 1, 0.749 at eps = 0.5, 0.786 on raw Adult, 0.600 on gene_all, 0.860 on breast cancer).\n\n", seeds)
	head := []string{"data", "budget", "default: the rule (= `--mechanism objective`/`amp`, automatic lambda)", "holdout selection", "random stopping", "test-selected (setting)", "diffprivlib default", "majority"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, ds := range dss {
		for _, bud := range budgets(ds.name) {
			eps, delta := bud[0], bud[1]
			var maj []float64
			byVariant := map[string][]float64{}
			for _, r := range defs {
				if r["dataset"] != ds.name || fnum(r, "epsilon") != eps || fnum(r, "delta") != delta {
					continue
				}
				byVariant[r["variant"]] = append(byVariant[r["variant"]], fnum(r, "accuracy"))
				if r["variant"] == variants[0].name {
					maj = append(maj, fnum(r, "majority"))
				}
			}
			best, bestName := stat{mean: math.NaN()}, ""
			bySetting := map[string][]float64{}
			for _, r := range grid {
				if r["dataset"] != ds.name || fnum(r, "epsilon") != eps || (delta == 0 && !pureMech(r["mechanism"])) {
					continue
				}
				key := fmt.Sprintf("%s, lambda %s", r["mechanism"], r["lambda"])
				if c := fnum(r, "clip"); c > 0 {
					key += fmt.Sprintf(", G %g", c)
				}
				bySetting[key] = append(bySetting[key], fnum(r, "accuracy"))
			}
			for k, xs := range bySetting {
				if s := statOf(xs); len(xs) >= seeds && (math.IsNaN(best.mean) || s.mean > best.mean) {
					best, bestName = s, k
				}
			}
			budget := fmt.Sprintf("eps = %g", eps)
			if delta > 0 {
				budget += fmt.Sprintf(", delta = %g", delta)
			}
			cells := []string{ds.name, budget}
			for _, v := range variants {
				cells = append(cells, statOf(byVariant[v.name]).String())
			}
			tb := "-"
			if bestName != "" {
				tb = fmt.Sprintf("%s (%s)", best, bestName)
			}
			cells = append(cells, tb, "not run", fmt.Sprintf("%.3f", statOf(maj).mean))
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	b.WriteString("\n" + targets(defs) + "\n" + majorityCheck(defs, dss) + "\n" + fitTable(grid, dss))
	return os.WriteFile(filepath.Join(out, "table.md"), []byte(b.String()), 0o644)
}

// fitTable compares the automatic lambda of each family with the best
// fixed lambda of the grid.
func fitTable(grid []map[string]string, dss []dataSet) string {
	var b strings.Builder
	b.WriteString("The fit of the automatic rules: the best fixed lambda of the grid (mean test accuracy over the seeds) against the rule's lambda for the same n, d, K and budget (release.Method.Auto), and the accuracy of the grid lambda nearest to the rule's. Output perturbation with the rule's clipping norm (0.1 for two classes, none for more).\n\n")
	head := []string{"data", "n, d, K", "eps", "mechanism", "best lambda (accuracy)", "rule's lambda", "rule / best", "accuracy at the rule"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, ds := range dss {
		var n, dim, k int
		for _, r := range grid {
			if r["dataset"] == ds.name {
				n, dim, k = int(fnum(r, "n")), int(fnum(r, "dim")), int(fnum(r, "classes"))
				break
			}
		}
		if n == 0 {
			continue
		}
		if dim-1 > n {
			// The grid's fits of a wide data set run projected (k by the
			// automatic rule, per eps), so the rule's lambda at the
			// unprojected dim does not describe them.
			fmt.Fprintf(&b, "| %s | %d, %d, %d | - | - | left out: its fits run projected by the automatic rule (--project auto), not at d = %d | - | - | - |\n", ds.name, n, dim, k, dim)
			continue
		}
		clip := 0.1
		if k > 2 {
			clip = 0
		}
		for _, eps := range gridEpsilons(ds.name) {
			for _, m := range []string{"objective", "gamma"} {
				acc := map[float64][]float64{}
				for _, r := range grid {
					if r["dataset"] == ds.name && fnum(r, "epsilon") == eps && r["mechanism"] == m && (m != "gamma" || fnum(r, "clip") == clip) {
						acc[fnum(r, "lambda")] = append(acc[fnum(r, "lambda")], fnum(r, "accuracy"))
					}
				}
				if len(acc) == 0 {
					continue
				}
				var lambdas []float64
				for l := range acc {
					lambdas = append(lambdas, l)
				}
				slices.Sort(lambdas)
				bestL := lambdas[0]
				for _, l := range lambdas {
					if statOf(acc[l]).mean > statOf(acc[bestL]).mean {
						bestL = l
					}
				}
				rule, err := ruleLambda(perturb.Mechanism(m), n, dim, k, eps)
				if err != nil {
					continue
				}
				near := lambdas[0]
				for _, l := range lambdas {
					if math.Abs(math.Log(l/rule)) < math.Abs(math.Log(near/rule)) {
						near = l
					}
				}
				fmt.Fprintf(&b, "| %s | %d, %d, %d | %g | %s | %.2g (%.4f) | %.2g | %.2g | %.4f |\n", ds.name, n, dim, k, eps, m,
					bestL, statOf(acc[bestL]).mean, rule, rule/bestL, statOf(acc[near]).mean)
			}
		}
	}
	return b.String()
}

// ruleLambda returns the automatic lambda of mechanism m.
func ruleLambda(m perturb.Mechanism, n, dim, k int, eps float64) (float64, error) {
	meth, err := release.Lookup(m)
	if err != nil {
		return 0, err
	}
	var loss losses.Loss = losses.Logistic{}
	if k > 2 {
		loss = losses.Softmax{}
	}
	cfg, _, err := meth.Auto(trainer.Config{Loss: loss, Classes: k, Kappa: 1}, n, dim, dp.Budget{Epsilon: eps})
	if err != nil {
		return 0, err
	}
	return cfg.Reg.Lambda, nil
}

// targets lists issue 18's targets for the default (the rule) and the
// holdout selection.
func targets(defs []map[string]string) string {
	var b strings.Builder
	b.WriteString("Issue 18's targets (mean over the seeds; a margin below the standard error, about a third of the standard deviation, is noise):\n\n")
	for _, t := range []struct {
		set       string
		eps, want float64
		what      string
	}{
		{"adult", 1, 0.845, ">= 0.845"}, {"adult", 0.5, 0.835, ">= 0.835"}, {"adult", 0.1, 0.78, ">= 0.78"},
		{"adult_raw", 1, 0.83, ">= 0.83"}, {"breast_cancer", 1, 0.94, ">= 0.94"}, {"gene_all", 1, 0.738, "above the majority class (0.738; by more than two standard errors)"},
	} {
		var parts []string
		for _, v := range []string{variants[0].name, variants[1].name} {
			var xs, maj []float64
			for _, r := range defs {
				if r["dataset"] == t.set && fnum(r, "epsilon") == t.eps && fnum(r, "delta") == 0 && r["variant"] == v {
					xs = append(xs, fnum(r, "accuracy"))
					maj = append(maj, fnum(r, "majority"))
				}
			}
			s := statOf(xs)
			if s.n == 0 {
				parts = append(parts, v+": not run")
				continue
			}
			verdict := "not met"
			switch {
			case t.set == "gene_all":
				// Above the majority class: by more than two standard
				// errors over the test rows' majority share (a release
				// that predicts the majority class equals it).
				if s.mean > statOf(maj).mean+2*s.sd/math.Sqrt(float64(s.n)) {
					verdict = "met"
				}
			case s.mean >= t.want:
				verdict = "met"
			}
			parts = append(parts, fmt.Sprintf("%s %.4f (%s)", v, s.mean, verdict))
		}
		fmt.Fprintf(&b, "- %s, eps = %g, target %s: %s.\n", t.set, t.eps, t.what, strings.Join(parts, "; "))
	}
	return b.String()
}

// majorityCheck says, for the default (the rule) on every
// data set and budget, whether its mean is below the majority class by
// more than noise: more than two standard errors of the mean over the
// seeds.
func majorityCheck(defs []map[string]string, dss []dataSet) string {
	var b strings.Builder
	b.WriteString("Never below the majority class by more than noise (the default's mean against the test rows' majority share, noise = two standard errors of the mean over the seeds):\n\n")
	var below []string
	count := 0
	for _, ds := range dss {
		for _, bud := range budgets(ds.name) {
			var acc, maj []float64
			for _, r := range defs {
				if r["dataset"] == ds.name && fnum(r, "epsilon") == bud[0] && fnum(r, "delta") == bud[1] && r["variant"] == variants[0].name {
					acc = append(acc, fnum(r, "accuracy"))
					maj = append(maj, fnum(r, "majority"))
				}
			}
			if len(acc) == 0 {
				continue
			}
			count++
			s, m := statOf(acc), statOf(maj).mean
			if se := s.sd / math.Sqrt(float64(s.n)); s.mean < m-2*se {
				below = append(below, fmt.Sprintf("%s at eps = %g, delta = %g: %.4f against %.4f (two standard errors %.4f)", ds.name, bud[0], bud[1], s.mean, m, 2*se))
			}
		}
	}
	if len(below) == 0 {
		fmt.Fprintf(&b, "- met on all %d data sets and budgets.\n", count)
		return b.String()
	}
	fmt.Fprintf(&b, "- not met on %d of %d:\n", len(below), count)
	for _, l := range below {
		fmt.Fprintf(&b, "  - %s\n", l)
	}
	return b.String()
}
