package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// Issue 27's targets for the default at eps = 1: each binary data set
// closes at least gapBinary of the gap from the majority class to
// non-private regression (pure eps), each multiclass one gapMulti (with
// delta = gridDelta); within nearBest of the best test-selected setting
// on at least nearWanted of nearOf data sets; no refusal on a table of at
// least minRows rows; every release certifies.
const (
	gapBinary  = 0.5
	gapMulti   = 0.4
	nearBest   = 0.01
	nearWanted = 9
	nearOf     = 12
	minRows    = 500
)

// targets27 returns targets.md: issue 27's targets per data set at eps =
// 1, from every row of defaults.csv (refusals included) and grid.csv.
func targets27(all, grid []map[string]string, dss []dataSet, seeds int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Issue 27's targets for the default (`--data --label --classes --epsilon [--delta]` only), at eps = 1: two classes judged at pure eps (target: at least %.0f%% of the gap from the majority class to non-private regression), more at delta = %g (at least %.0f%%); within %g of the best test-selected setting of the grid at the same budget (on at least %d of %d data sets); no refusal on a table of at least %d rows; every release (each variant, budget and seed of the table above) certifies: its model file, written and read back, passes `modelfile.Verify`, the check of `stabpriv certify` (a seeded release verifies as consistent and not private: its noise seed is published).\n\n",
		100*gapBinary, gridDelta, 100*gapMulti, nearBest, nearWanted, nearOf, minRows)
	head := []string{"data", "rows", "classes", "budget", "majority", "non-private", "default", "gap closed", "test-selected best", "within 0.01", "refusals (default)", "certified"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	var gapMet, gapAll, near, nearAll, certOK, certAll int
	var refusedBig []string
	defs := slices.DeleteFunc(slices.Clone(all), func(r map[string]string) bool { return r["error"] != "" })
	for _, ds := range dss {
		rows, refused, cert, runs := 0, 0, 0, 0
		for _, r := range all {
			if r["dataset"] != ds.name {
				continue
			}
			rows = int(results.Num(r, "rows"))
			switch {
			case r["variant"] == nonPrivate:
			case r["error"] != "":
				if r["variant"] == variants[0].name {
					refused++
				}
			default:
				runs++
				if r["certified"] == "ok" {
					cert++
				}
			}
		}
		certOK, certAll = certOK+cert, certAll+runs
		if refused > 0 && rows >= minRows {
			refusedBig = append(refusedBig, fmt.Sprintf("%s (%d rows): %d", ds.name, rows, refused))
		}
		eps, delta, want := 1.0, 0.0, gapBinary
		if len(ds.classes) > 2 {
			delta, want = gridDelta, gapMulti
		}
		if !slices.Contains(budgets(ds.name), [2]float64{eps, delta}) {
			continue
		}
		def := variantStat(defs, ds.name, eps, delta, variants[0].name)
		np := variantStat(defs, ds.name, 0, 0, nonPrivate)
		maj := results.StatOf(results.Column(variantRows(defs, ds.name, eps, delta, variants[0].name), "majority")).Mean
		budget := fmt.Sprintf("eps = %g", eps)
		if delta > 0 {
			budget += fmt.Sprintf(", delta = %g", delta)
		}
		g := gap(def.Mean, maj, np.Mean)
		gcell := gapCell(def.Mean, maj, np.Mean)
		if !math.IsNaN(g) && def.N > 0 {
			gapAll++
			if g >= want {
				gapMet++
				gcell += " (met)"
			} else {
				if math.Round(100*g) >= 100*want {
					// Rounded, it would read as the target: one decimal.
					gcell = fmt.Sprintf("%.1f%%", 100*g)
				}
				gcell += fmt.Sprintf(" (not met: target %.0f%%)", 100*want)
			}
		}
		best, name := bestSetting(grid, ds.name, eps, delta, seeds)
		bcell, ncell := "not run", "-"
		if name != "" && def.N > 0 {
			bcell = fmt.Sprintf("%.4f (%s)", best.Mean, name)
			nearAll++
			ncell = fmt.Sprintf("no (%+.4f)", def.Mean-best.Mean)
			if def.Mean >= best.Mean-nearBest {
				near++
				ncell = fmt.Sprintf("yes (%+.4f)", def.Mean-best.Mean)
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %.3f | %s | %s | %s | %s | %s | %d | %d of %d |\n", ds.name, rows, max(len(ds.classes), 2), budget,
			maj, np, def, gcell, bcell, ncell, refused, cert, runs)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Gap closed: met on %d of %d data sets.\n", gapMet, gapAll)
	fmt.Fprintf(&b, "- Within %g of the best test-selected setting: %d of %d data sets with a grid (target: at least %d of %d).\n", nearBest, near, nearAll, nearWanted, nearOf)
	if len(refusedBig) == 0 {
		fmt.Fprintf(&b, "- No refusal of the default on a table of at least %d rows: met.\n", minRows)
	} else {
		fmt.Fprintf(&b, "- No refusal of the default on a table of at least %d rows: not met (%s).\n", minRows, strings.Join(refusedBig, "; "))
	}
	fmt.Fprintf(&b, "- Every release certifies: %d of %d.\n", certOK, certAll)
	return b.String()
}

// gridNote names the data sets whose grid ran on fewer lambdas than the
// full grid (-lambda-range), with their range.
func gridNote(grid []map[string]string) string {
	lams := map[string]map[float64]bool{}
	var order []string
	for _, r := range grid {
		if lams[r["dataset"]] == nil {
			lams[r["dataset"]] = map[float64]bool{}
			order = append(order, r["dataset"])
		}
		if r["mechanism"] != string(perturb.Stump) { // no lambda
			lams[r["dataset"]][results.Num(r, "lambda")] = true
		}
	}
	var parts []string
	for _, set := range order {
		if len(lams[set]) >= fullGridLambdas {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for l := range lams[set] {
			lo, hi = math.Min(lo, l), math.Max(hi, l)
		}
		parts = append(parts, fmt.Sprintf("%s's grid ran the %d lambdas from %.2g to %.2g only", set, len(lams[set]), lo, hi))
	}
	if len(parts) == 0 {
		return ""
	}
	return "A shorter run: " + strings.Join(parts, "; ") + " (`-lambda-range`), which held its best settings in an earlier run of the full grid.\n\n"
}

// dplAccuracies returns diffprivlib's test accuracies of a data set at eps
// (over the seeds).
func dplAccuracies(dpl []map[string]string, set string, eps float64) []float64 {
	var xs []float64
	for _, r := range dpl {
		if r["dataset"] == set && results.Num(r, "epsilon") == eps {
			xs = append(xs, results.Num(r, "accuracy"))
		}
	}
	return xs
}

// dplCell is the diffprivlib column's cell of a data set at eps.
func dplCell(dpl []map[string]string, set string, eps float64) string {
	if len(dpl) == 0 {
		return "not run"
	}
	return results.StatOf(dplAccuracies(dpl, set, eps)).String()
}

// fitTable compares the automatic lambda of each family with the best
// fixed lambda of the grid.
func fitTable(grid []map[string]string, dss []dataSet) string {
	var b strings.Builder
	b.WriteString("The fit of the automatic rules: the best fixed lambda of the grid (mean test accuracy over the seeds) against the rule's lambda for the same n, d, K and budget (release.Method.Auto; AMP with delta = 1e-5 beside each eps), and the accuracy of the grid lambda nearest to the rule's. Output perturbation with the rule's clipping norm (0.1 for two classes, none for more).\n\n")
	head := []string{"data", "n, d, K", "eps", "mechanism", "best lambda (accuracy)", "rule's lambda", "rule / best", "accuracy at the rule"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, ds := range dss {
		var n, dim, k int
		for _, r := range grid {
			if r["dataset"] == ds.name {
				n, dim, k = int(results.Num(r, "n")), int(results.Num(r, "dim")), int(results.Num(r, "classes"))
				break
			}
		}
		if n == 0 {
			continue
		}
		clip := 0.1
		if k > 2 {
			clip = 0
		}
		for _, eps := range gridEpsilons(ds.name) {
			for _, m := range []string{"objective", "amp", "gamma"} {
				acc := map[float64][]float64{}
				for _, r := range grid {
					if r["dataset"] == ds.name && results.Num(r, "epsilon") == eps && r["mechanism"] == m && (m != "gamma" || results.Num(r, "clip") == clip) {
						acc[results.Num(r, "lambda")] = append(acc[results.Num(r, "lambda")], results.Num(r, "accuracy"))
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
					if results.StatOf(acc[l]).Mean > results.StatOf(acc[bestL]).Mean {
						bestL = l
					}
				}
				delta := 0.0
				if m == "amp" {
					delta = gridDelta
				}
				// A wide data set's fits run projected (--project auto):
				// the rule sees the projected width.
				pdim := dim
				shape := fmt.Sprintf("%d, %d, %d", n, dim, k)
				if kp, err := preprocess.AutoProjectDim(n, dim-1, modelOutputs(k), eps); err == nil && kp > 0 {
					pdim = kp + 1
					shape = fmt.Sprintf("%d, %d projected to %d, %d", n, dim, pdim, k)
				}
				rule, err := ruleLambda(dp.Mechanism(m), n, pdim, k, dp.Budget{Epsilon: eps, Delta: delta})
				if err != nil {
					continue
				}
				near := lambdas[0]
				for _, l := range lambdas {
					if math.Abs(math.Log(l/rule)) < math.Abs(math.Log(near/rule)) {
						near = l
					}
				}
				fmt.Fprintf(&b, "| %s | %s | %g | %s | %.2g (%.4f) | %.2g | %.2g | %.4f |\n", ds.name, shape, eps, m,
					bestL, results.StatOf(acc[bestL]).Mean, rule, rule/bestL, results.StatOf(acc[near]).Mean)
			}
		}
	}
	return b.String()
}

// modelOutputs returns the outputs of a model of k classes: 1 for two
// (logistic), k for more (softmax).
func modelOutputs(k int) int {
	if k > 2 {
		return k
	}
	return 1
}

// ruleLambda returns the automatic lambda of mechanism m.
func ruleLambda(m dp.Mechanism, n, dim, k int, b dp.Budget) (float64, error) {
	meth, err := release.LookupTuner(m)
	if err != nil {
		return 0, err
	}
	var loss losses.Loss = losses.Logistic{}
	if k > 2 {
		loss = losses.Softmax{}
	}
	cfg, _, err := meth.Auto(trainer.Config{Loss: loss, Classes: k, Kappa: 1}, n, dim, b)
	if err != nil {
		return 0, err
	}
	return cfg.Reg.Lambda, nil
}

// targets lists issue 18's targets for the default (the rule) and the
// holdout selection.
func targets(defs, dpl []map[string]string) string {
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
				if r["dataset"] == t.set && results.Num(r, "epsilon") == t.eps && results.Num(r, "delta") == 0 && r["variant"] == v {
					xs = append(xs, results.Num(r, "accuracy"))
					maj = append(maj, results.Num(r, "majority"))
				}
			}
			s := results.StatOf(xs)
			if s.N == 0 {
				parts = append(parts, v+": not run")
				continue
			}
			verdict := "not met"
			switch {
			case t.set == "gene_all":
				// Above the majority class: by more than two standard
				// errors over the test rows' majority share (a release
				// that predicts the majority class equals it).
				if s.Mean > results.StatOf(maj).Mean+2*s.SD/math.Sqrt(float64(s.N)) {
					verdict = "met"
				}
			case s.Mean >= t.want:
				verdict = "met"
			}
			parts = append(parts, fmt.Sprintf("%s %.4f (%s)", v, s.Mean, verdict))
		}
		fmt.Fprintf(&b, "- %s, eps = %g, target %s: %s.\n", t.set, t.eps, t.what, strings.Join(parts, "; "))
	}
	b.WriteString(digitsTarget(defs, dpl))
	return b.String()
}

// digitsTarget states issue 18's target on the digits: with delta, the
// default clearly above diffprivlib's default, by more than two standard
// errors of the difference of the means (the two means over the seeds,
// independent noise).
func digitsTarget(defs, dpl []map[string]string) string {
	const set, eps = "digits", 1.0
	var xs []float64
	for _, r := range defs {
		if r["dataset"] == set && results.Num(r, "epsilon") == eps && results.Num(r, "delta") == gridDelta && r["variant"] == variants[0].name {
			xs = append(xs, results.Num(r, "accuracy"))
		}
	}
	s, d := results.StatOf(xs), results.StatOf(dplAccuracies(dpl, set, eps))
	head := fmt.Sprintf("- %s, eps = %g, delta = %g, target clearly above diffprivlib's default", set, eps, gridDelta)
	switch {
	case s.N == 0:
		return head + ": not run.\n"
	case d.N == 0:
		return fmt.Sprintf("%s: %s %.4f; diffprivlib's default not run.\n", head, variants[0].name, s.Mean)
	}
	se := math.Sqrt(s.SD*s.SD/float64(s.N) + d.SD*d.SD/float64(d.N))
	verdict := "not met"
	if s.Mean-d.Mean > 2*se {
		verdict = "met"
	}
	return fmt.Sprintf("%s (by more than two standard errors of the difference): %s %.4f against %.4f, difference %.4f, two standard errors %.4f (%s).\n",
		head, variants[0].name, s.Mean, d.Mean, s.Mean-d.Mean, 2*se, verdict)
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
				if r["dataset"] == ds.name && results.Num(r, "epsilon") == bud[0] && results.Num(r, "delta") == bud[1] && r["variant"] == variants[0].name {
					acc = append(acc, results.Num(r, "accuracy"))
					maj = append(maj, results.Num(r, "majority"))
				}
			}
			if len(acc) == 0 {
				continue
			}
			count++
			s, m := results.StatOf(acc), results.StatOf(maj).Mean
			if se := s.SD / math.Sqrt(float64(s.N)); s.Mean < m-2*se {
				below = append(below, fmt.Sprintf("%s at eps = %g, delta = %g: %.4f against %.4f (two standard errors %.4f)", ds.name, bud[0], bud[1], s.Mean, m, 2*se))
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
