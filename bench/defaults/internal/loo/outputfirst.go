package loo

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// seedAcc is one seed of a data set at a budget: both families' test
// accuracy and the ratio r = lambda dim / S_z of the objective release's
// automatic lambda to the curvature scale, which selection.OutputFirst
// compares with selection.OutputFirstFactor.
type seedAcc struct {
	obj, gamma, ratio float64
}

// unit is a data set at a pure budget: its seeds, and why the factor
// does not matter there (empty when it does).
type unit struct {
	set   string
	eps   float64
	seeds []seedAcc
	fixed string
}

// acc returns the unit's mean test accuracy when the rule's factor is f:
// gamma on the seeds whose ratio is above f, objective perturbation on
// the others.
func (u unit) acc(f float64) float64 {
	s := 0.0
	for _, x := range u.seeds {
		if x.ratio > f {
			s += x.gamma
		} else {
			s += x.obj
		}
	}
	return s / float64(len(u.seeds))
}

// family names what the rule releases at factor f: gamma, objective, or
// the split over the seeds.
func (u unit) family(f float64) string {
	k := 0
	for _, x := range u.seeds {
		if x.ratio > f {
			k++
		}
	}
	switch k {
	case 0:
		return "objective"
	case len(u.seeds):
		return "gamma"
	}
	return fmt.Sprintf("gamma %d of %d", k, len(u.seeds))
}

// factors are the candidate factors of the leave-one-out: 2^(k/2) from
// 1/256 to 16, which holds the current selection.OutputFirstFactor (1/4).
func factors() []float64 {
	var out []float64
	for k := -16; k <= 8; k++ {
		out = append(out, math.Pow(2, float64(k)/2))
	}
	return out
}

// readUnits reads loo.csv into the units of the leave-one-out. A unit's
// factor does not matter (fixed) when its features are on the public log
// map (the rule keeps objective perturbation's family there), when the
// rule released a stump, or when the objective family is over
// selection.MaxObjectiveInputs weights. It also counts the seeds where the
// rule's release matches selection.OutputFirst recomputed at the current
// factor: its mechanism, and its accuracy equal to the named family's.
func readUnits(loo []map[string]string, sets []string) (units []unit, matched, compared int) {
	cons, _ := losses.Logistic{}.Constants(losses.Domain{Kappa: 1})
	for _, set := range sets {
		// The budgets of loo.csv (the loo task's, which may differ from a
		// later table task's -epsilons).
		var epsilons []float64
		for _, r := range loo {
			if e := results.Num(r, "epsilon"); r["dataset"] == set && !slices.Contains(epsilons, e) {
				epsilons = append(epsilons, e)
			}
		}
		slices.Sort(epsilons)
		for _, eps := range epsilons {
			byRun := map[string]map[int]map[string]string{}
			for _, r := range loo {
				if r["dataset"] == set && results.Num(r, "epsilon") == eps && r["error"] == "" {
					if byRun[r["run"]] == nil {
						byRun[r["run"]] = map[int]map[string]string{}
					}
					byRun[r["run"]][int(results.Num(r, "seed"))] = r
				}
			}
			u := unit{set: set, eps: eps}
			for _, seed := range slices.Sorted(maps.Keys(byRun[string(perturb.Objective)])) {
				o, g, rule := byRun[string(perturb.Objective)][seed], byRun[string(perturb.Gamma)][seed], byRun[Rule][seed]
				if g == nil {
					continue
				}
				dim := results.Num(o, "dim")
				x := seedAcc{obj: results.Num(o, "accuracy"), gamma: results.Num(g, "accuracy"), ratio: results.Num(o, "lambda") * dim / cons.Sz}
				want, acc := perturb.Objective, x.obj
				switch {
				case rule != nil && rule["mechanism"] == string(perturb.Stump):
					u.fixed = "the rule's stump (selection.StumpFirst or StumpUseful)"
				case o["public_map"] == "true":
					u.fixed = "public log map: objective perturbation's family"
				case int(dim) > selection.MaxObjectiveInputs:
					u.fixed = "over selection.MaxObjectiveInputs: gamma"
					want, acc = perturb.Gamma, x.gamma
				case x.ratio > selection.OutputFirstFactor:
					want, acc = perturb.Gamma, x.gamma
				}
				if rule != nil && rule["mechanism"] != string(perturb.Stump) {
					compared++
					if rule["mechanism"] == string(want) && results.Num(rule, "accuracy") == acc {
						matched++
					}
				}
				u.seeds = append(u.seeds, x)
			}
			if len(u.seeds) > 0 {
				units = append(units, u)
			}
		}
	}
	return units, matched, compared
}

// choose returns the factor of factors with the highest mean accuracy
// over the units (each data set and budget one unit), ties broken towards
// the current selection.OutputFirstFactor (the nearest in log scale): the
// constant moves only when the data sets say so.
func choose(units []unit) float64 {
	best, bestAcc := selection.OutputFirstFactor, math.Inf(-1)
	for _, f := range factors() {
		s := 0.0
		for _, u := range units {
			s += u.acc(f)
		}
		s /= float64(len(units))
		tie := math.Abs(s-bestAcc) <= 1e-12
		if s > bestAcc+1e-12 || tie && math.Abs(math.Log(f/selection.OutputFirstFactor)) < math.Abs(math.Log(best/selection.OutputFirstFactor)) {
			best, bestAcc = f, s
		}
	}
	return best
}

// OutputFirst returns loo.md, the judgement of selection.OutputFirstFactor
// on the rows of loo.csv: for each of the binary data sets sets held out,
// in their order, the factor chosen on the others and the held-out
// accuracy under it against the current factor's, with both families' and
// the ratio per budget.
func OutputFirst(loo []map[string]string, sets []string) string {
	units, matched, compared := readUnits(loo, sets)
	var free []unit
	var b strings.Builder
	for _, u := range units {
		if u.fixed == "" {
			free = append(free, u)
		}
	}
	fmt.Fprintf(&b, "selection.OutputFirst releases gamma instead of objective perturbation, for two classes and a pure budget, when the ratio r = lambda dim / S_z of objective perturbation's automatic lambda to the curvature scale is above OutputFirstFactor = %g. Each binary data set at each pure budget was run with both families at their automatic knobs (`--mechanism objective` and `--mechanism gamma`, seeds as the defaults table); a factor f then gives gamma where r > f. Leave-one-data-set-out: for each data set, f is the factor of 2^(k/2), 1/256 to 16, with the best mean accuracy over the other data sets' budgets (ties towards %g), and the held-out data set's accuracy under it is set against the current rule's. ", selection.OutputFirstFactor, selection.OutputFirstFactor)
	fmt.Fprintf(&b, "The rule's own release (no `--mechanism`, same seeds) is the family OutputFirst gives at the current factor, recomputed from r, with the same accuracy, on %d of %d seeds (the stump's seeds left out).\n\n", matched, compared)
	if len(free) == 0 {
		b.WriteString("No data set where the factor matters was run.\n")
		return b.String()
	}
	all := choose(free)
	fmt.Fprintf(&b, "On all of them the best factor is %g.\n\n", all)
	head := []string{"held out", "eps", "r (mean over seeds)", "objective", "gamma", "current rule (f = 0.25)", "f chosen on the others", "held out under it", "difference"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	worse, better := 0, 0
	heldOut(free, func(u unit) string { return u.set }, func(set string, others []unit) {
		f := selection.OutputFirstFactor
		if len(others) > 0 {
			f = choose(others)
		}
		for _, u := range free {
			if u.set != set {
				continue
			}
			r := 0.0
			var obj, gam []float64
			for _, x := range u.seeds {
				r += x.ratio / float64(len(u.seeds))
				obj, gam = append(obj, x.obj), append(gam, x.gamma)
			}
			cur, held := u.acc(selection.OutputFirstFactor), u.acc(f)
			switch {
			case held > cur+1e-12:
				better++
			case held < cur-1e-12:
				worse++
			}
			fmt.Fprintf(&b, "| %s | %g | %.3g | %s | %s | %.4f (%s) | %g | %.4f (%s) | %+.4f |\n", set, u.eps, r, results.StatOf(obj), results.StatOf(gam),
				cur, u.family(selection.OutputFirstFactor), f, held, u.family(f), held-cur)
		}
	})
	fmt.Fprintf(&b, "\nThe held-out accuracy under the factor chosen without the data set is above the current rule's on %d and below it on %d of %d data sets and budgets.", better, worse, len(free))
	var fixed []string
	for _, u := range units {
		if u.fixed != "" {
			fixed = append(fixed, fmt.Sprintf("%s at eps = %g (%s)", u.set, u.eps, u.fixed))
		}
	}
	if len(fixed) > 0 {
		b.WriteString(" Where the factor does not matter (left out): " + strings.Join(fixed, "; ") + ".")
	}
	b.WriteString("\n")
	return b.String()
}

// heldOut calls f for each data set of units (setOf names a unit's), in
// the order of their first unit, with the units of the other data sets:
// the loop of a leave-one-data-set-out judgement.
func heldOut[U any](units []U, setOf func(U) string, f func(set string, others []U)) {
	var sets []string
	for _, u := range units {
		if s := setOf(u); !slices.Contains(sets, s) {
			sets = append(sets, s)
		}
	}
	for _, set := range sets {
		var others []U
		for _, u := range units {
			if setOf(u) != set {
				others = append(others, u)
			}
		}
		f(set, others)
	}
}
