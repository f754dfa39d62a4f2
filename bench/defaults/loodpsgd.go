package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
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
// the released mechanism, the release's eps (the certificate's: what the
// feature scales leave, the eps selection.DPSGDFirst reads) and the data
// set's shape (training rows, model inputs without a projection, classes):
// the data of the leave-one-out of selection.DPSGDFirstRows (dpsgdTable).
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

// dpsgdUnit is a data set at a budget of dpsgd.csv: the test accuracy of
// DP-SGD and of the rule's alternative (the rule's release where that is
// not DP-SGD, else AMP's run: the linear family the rule releases for a
// multiclass model with a delta), n eps, and whether the rule's stump
// decides the unit before DPSGDFirst.
type dpsgdUnit struct {
	set        string
	classes, n int
	eps        float64
	x          float64 // n times the release's eps
	dpsgd, alt stat
	amp        stat // AMP's run (n = 0 when not run)
	altMech    string
	stump      bool
	// matched of compared seeds: the rule released DP-SGD exactly where
	// selection.DPSGDFirst says so (the stump's seeds left out).
	matched, compared int
}

// acc returns the unit's mean accuracy when the threshold on n eps is c:
// DP-SGD where the model is multiclass, x >= c and the stump does not
// decide first; the alternative elsewhere.
func (u dpsgdUnit) acc(c float64) float64 {
	if u.takes(c) {
		return u.dpsgd.mean
	}
	return u.alt.mean
}

// takes reports whether a threshold c gives DP-SGD on the unit.
func (u dpsgdUnit) takes(c float64) bool { return !u.stump && u.classes > 2 && u.x >= c }

// choice names what a threshold c releases on the unit, with its mean.
func (u dpsgdUnit) choice(c float64) string {
	if u.takes(c) {
		return fmt.Sprintf("dp-sgd %.4f", u.dpsgd.mean)
	}
	return fmt.Sprintf("%s %.4f", u.altMech, u.alt.mean)
}

// dpsgdUnits reads dpsgd.csv into its units, in the order of the file.
func dpsgdUnits(rows []map[string]string) []dpsgdUnit {
	type key struct {
		set string
		eps float64
	}
	var keys []key
	by := map[key]map[string][]map[string]string{}
	for _, r := range rows {
		if r["error"] != "" {
			continue
		}
		k := key{r["dataset"], fnum(r, "epsilon")}
		if by[k] == nil {
			keys = append(keys, k)
			by[k] = map[string][]map[string]string{}
		}
		by[k][r["run"]] = append(by[k][r["run"]], r)
	}
	var units []dpsgdUnit
	for _, k := range keys {
		sgd, rule, amp := by[k][string(perturb.DPSGD)], by[k][looRule], by[k][string(perturb.AMP)]
		if len(sgd) == 0 || len(rule) == 0 {
			continue
		}
		u := dpsgdUnit{set: k.set, eps: k.eps, classes: int(fnum(sgd[0], "classes")), n: int(fnum(sgd[0], "n")), dpsgd: statOf(column(sgd, "accuracy"))}
		if len(amp) > 0 {
			u.amp = statOf(column(amp, "accuracy"))
		}
		u.x = float64(u.n) * fnum(sgd[0], "release_epsilon")
		alt := rule
		for _, r := range rule {
			switch r["mechanism"] {
			case string(perturb.Stump):
				u.stump = true
				continue
			case string(perturb.DPSGD):
				alt = amp
			}
			b := dp.Budget{Epsilon: fnum(r, "release_epsilon"), Delta: fnum(r, "delta")}
			want := selection.DPSGDFirst(b, modelOutputs(u.classes), u.n)
			u.compared++
			if want == (r["mechanism"] == string(perturb.DPSGD)) {
				u.matched++
			}
		}
		if len(alt) == 0 {
			continue // the rule released DP-SGD and AMP was not run
		}
		u.alt, u.altMech = statOf(column(alt, "accuracy")), alt[0]["mechanism"]
		units = append(units, u)
	}
	return units
}

// dpsgdFit returns the threshold on n eps with the best mean accuracy over
// the units where it matters (more than two classes, no stump), among the
// geometric midpoints of their consecutive n eps values and half the
// smallest and twice the largest; ties go to the widest margin in log
// scale (the farthest from every unit's n eps). Without such a unit it
// returns selection.DPSGDFirstRows.
func dpsgdFit(units []dpsgdUnit) float64 {
	var us []dpsgdUnit
	var xs []float64
	for _, u := range units {
		if u.classes > 2 && !u.stump {
			us = append(us, u)
			xs = append(xs, u.x)
		}
	}
	if len(us) == 0 {
		return selection.DPSGDFirstRows
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	cands := []float64{xs[0] / 2, 2 * xs[len(xs)-1]}
	for i := 1; i < len(xs); i++ {
		cands = append(cands, math.Sqrt(xs[i-1]*xs[i]))
	}
	best, bestAcc, bestMargin := 0.0, math.Inf(-1), 0.0
	for _, c := range cands {
		acc, margin := 0.0, math.Inf(1)
		for _, u := range us {
			acc += u.acc(c)
			margin = min(margin, math.Abs(math.Log(u.x/c)))
		}
		if acc > bestAcc+1e-12 || math.Abs(acc-bestAcc) <= 1e-12 && margin > bestMargin {
			best, bestAcc, bestMargin = c, acc, margin
		}
	}
	return best
}

// dpsgdTable returns dpsgd.md: the threshold of DPSGDFirst fitted on all
// the multiclass tables of dpsgd.csv and, for each held out, the threshold
// fitted on the others and the held-out choice against the better of
// DP-SGD and the rule's alternative, within seed noise when the shortfall
// is at most the larger of their two standard deviations over seeds.
func dpsgdTable(rows []map[string]string) string {
	units := dpsgdUnits(rows)
	var b strings.Builder
	matched, compared := 0, 0
	for _, u := range units {
		matched, compared = matched+u.matched, compared+u.compared
	}
	fmt.Fprintf(&b, "selection.DPSGDFirst releases DP-SGD at its automatic knobs for more than two classes with a delta below 1/n when n eps >= DPSGDFirstRows = %g (n training rows, eps the release's); the rule's decision stump is decided first. "+
		"Each data set at each budget was run as the rule (no `--mechanism`), `--mechanism dp-sgd` and, for more than two classes, `--mechanism amp` (the rule's linear family there, which stands for the rule's release where the rule itself released DP-SGD). "+
		"The threshold is fitted as the geometric midpoint of consecutive n eps values with the best mean accuracy over the multiclass units the stump does not decide (ties to the widest margin). "+
		"Leave-one-data-set-out: the threshold fitted without a data set, and its choice on the held-out data set against the better of the two (within seed noise: a shortfall of at most the larger of their standard deviations over seeds). "+
		"The rule's own release is DP-SGD exactly where DPSGDFirst says so on %d of %d seeds (the stump's seeds left out).\n\n", selection.DPSGDFirstRows, matched, compared)
	fmt.Fprintf(&b, "On all of them the fitted threshold is %.4g.\n\n", dpsgdFit(units))
	head := []string{"held out", "K", "n", "eps", "n eps", "dp-sgd", "rule's alternative", fmt.Sprintf("current rule (%g)", selection.DPSGDFirstRows), "threshold on the others", "held out under it", "better of the two", "within noise"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	ok, all := 0, 0
	heldOut(units, func(u dpsgdUnit) string { return u.set }, func(set string, others []dpsgdUnit) {
		c := dpsgdFit(others)
		for _, u := range units {
			if u.set != set {
				continue
			}
			alt := fmt.Sprintf("%s (%s)", u.alt, u.altMech)
			if u.stump {
				alt += ", decided first"
			}
			bestMean := max(u.dpsgd.mean, u.alt.mean)
			within := bestMean-u.acc(c) <= max(u.dpsgd.sd, u.alt.sd)+1e-12
			all++
			if within {
				ok++
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %g | %.4g | %s | %s | %s | %.4g | %s | %.4f | %v |\n", u.set, u.classes, u.n, u.eps, u.x, u.dpsgd, alt,
				u.choice(selection.DPSGDFirstRows), c, u.choice(c), bestMean, within)
		}
	})
	fmt.Fprintf(&b, "\nThe held-out choice is within seed noise of the better of the two on %d of %d data sets and budgets (two classes: the rule never takes DP-SGD).", ok, all)
	// Where the stump decides first, the threshold alone (declared bounds
	// on a wider table could leave the stump out) against AMP.
	var notes []string
	for _, u := range units {
		if u.stump && u.amp.n > 0 && u.x >= selection.DPSGDFirstRows {
			within := u.amp.mean-u.dpsgd.mean <= max(u.dpsgd.sd, u.amp.sd)+1e-12
			notes = append(notes, fmt.Sprintf("%s at eps = %g: dp-sgd %.4f, amp %.4f (within noise: %v)", u.set, u.eps, u.dpsgd.mean, u.amp.mean, within))
		}
	}
	if len(notes) > 0 {
		b.WriteString(" Where the stump decides first but n eps passes the threshold, DP-SGD against AMP (the threshold's choice without the stump): " + strings.Join(notes, "; ") + ".")
	}
	b.WriteString("\n")
	return b.String()
}

// writeDPSGDTable writes dpsgd.md under out from dpsgd.csv, when the
// dpsgd task ran (nothing otherwise).
func writeDPSGDTable(out string) error {
	rows, err := readRows(filepath.Join(out, "dpsgd.csv"))
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	}
	return os.WriteFile(filepath.Join(out, "dpsgd.md"), []byte(dpsgdTable(rows)), 0o644)
}
