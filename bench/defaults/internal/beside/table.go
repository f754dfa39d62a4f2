// Package beside writes the tables of the defaults bench's beside task
// (beside.csv: the rule, DP-SGD, AMP and the analytic Gaussian at their
// automatic knobs on every data set, and the accuracy against eps on the
// data sets of EpsSets): beside.md and beside_<set>.md.
package beside

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/loo"
	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/perturb"
)

// adultDPSGDTarget is issue 31's target for DP-SGD on Adult prepared by
// the paper's protocol at eps = 1, delta = b.delta.
const adultDPSGDTarget = 0.82

// None is the run name of the non-private reference in beside.csv.
const None = "none"

// EpsSets are the data sets of the accuracy-vs-eps table.
var EpsSets = []string{"adult"}

// besideKey is a data set at a budget of beside.csv.
type besideKey struct {
	set        string
	eps, delta float64
}

// besideSet is beside.csv read: each budget's runs by name, the seeds'
// rows of each (errors left out and counted), and the budgets in the
// order of the file.
type besideSet struct {
	delta  float64 // the delta of the runs at (eps, delta)
	keys   []besideKey
	runs   map[besideKey]map[string][]map[string]string
	errors map[besideKey]map[string]int
}

func readBeside(rows []map[string]string, delta float64) besideSet {
	b := besideSet{delta: delta, runs: map[besideKey]map[string][]map[string]string{}, errors: map[besideKey]map[string]int{}}
	for _, r := range rows {
		k := besideKey{r["dataset"], results.Num(r, "epsilon"), results.Num(r, "delta")}
		if b.runs[k] == nil {
			b.keys = append(b.keys, k)
			b.runs[k], b.errors[k] = map[string][]map[string]string{}, map[string]int{}
		}
		if r["error"] != "" {
			b.errors[k][r["run"]]++
			continue
		}
		b.runs[k][r["run"]] = append(b.runs[k][r["run"]], r)
	}
	return b
}

// none returns the non-private reference's rows of a data set.
func (b besideSet) none(set string) []map[string]string {
	return b.runs[besideKey{set: set}][None]
}

// cell is a run's cell: mean ± standard deviation of the test accuracy
// over the seeds and the mean CPU seconds per fit; "-" when it was not
// run, and the refusals counted.
func (b besideSet) cell(k besideKey, run string) string {
	rows := b.runs[k][run]
	s := "-"
	if len(rows) > 0 {
		s = fmt.Sprintf("%s (%s)", results.StatOf(results.Column(rows, "accuracy")), cpuText(rows))
	}
	if e := b.errors[k][run]; e > 0 {
		s += fmt.Sprintf(", %d refused", e)
	}
	return s
}

// cpuText is the mean CPU time per fit of rows, in ms below a second.
func cpuText(rows []map[string]string) string {
	s := results.StatOf(results.Column(rows, "cpu_seconds")).Mean
	if s < 1 {
		return fmt.Sprintf("%.3g ms", 1000*s)
	}
	return fmt.Sprintf("%.3g s", s)
}

// released counts the mechanisms the rows released, most first (ties by
// name): "amp" when all are one, else "dp-sgd 3, amp 2".
func released(rows []map[string]string) string {
	counts := map[string]int{}
	for _, r := range rows {
		counts[r["mechanism"]]++
	}
	names := make([]string, 0, len(counts))
	for m := range counts {
		names = append(names, m)
	}
	slices.SortFunc(names, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	if len(names) == 1 {
		return names[0]
	}
	parts := make([]string, len(names))
	for i, m := range names {
		parts[i] = fmt.Sprintf("%s %d", m, counts[m])
	}
	return strings.Join(parts, ", ")
}

// paired is the mean over the seeds both runs have of the accuracy of a
// minus that of b, and twice its standard error: a difference beyond it
// is more than noise. n is the number of seeds paired.
type paired struct {
	diff, twoSE float64
	n           int
}

func pairedDiff(a, b []map[string]string) paired {
	acc := map[string]float64{}
	for _, r := range b {
		acc[r["seed"]] = results.Num(r, "accuracy")
	}
	var d []float64
	for _, r := range a {
		if v, ok := acc[r["seed"]]; ok {
			d = append(d, results.Num(r, "accuracy")-v)
		}
	}
	s := results.StatOf(d)
	if s.N == 0 {
		return paired{diff: math.NaN()}
	}
	return paired{diff: s.Mean, twoSE: 2 * s.SD / math.Sqrt(float64(s.N)), n: s.N}
}

// verdict says whether the difference is more than noise: "ahead",
// "behind" or "within noise" (one seed: within noise); "-" without a
// seed paired.
func (p paired) verdict() string {
	switch {
	case p.n == 0:
		return "-"
	case p.n < 2 || math.Abs(p.diff) <= p.twoSE:
		return "within noise"
	case p.diff > 0:
		return "ahead"
	}
	return "behind"
}

func (p paired) String() string {
	if p.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.4f ± %.4f: %s", p.diff, p.twoSE, p.verdict())
}

// bestOther returns the name of the run of others with the higher mean
// accuracy at k ("" when none ran).
func (b besideSet) bestOther(k besideKey, others ...string) string {
	best, bestMean := "", math.Inf(-1)
	for _, o := range others {
		if rows := b.runs[k][o]; len(rows) > 0 {
			if m := results.StatOf(results.Column(rows, "accuracy")).Mean; m > bestMean {
				best, bestMean = o, m
			}
		}
	}
	return best
}

// besideTable returns beside.md: on every data set at each budget with
// delta, DP-SGD beside AMP, the analytic Gaussian and the rule, each at
// its automatic knobs, with the CPU seconds per fit; DP-SGD against the
// better of AMP and the analytic Gaussian, paired over the seeds; where
// the rule takes DP-SGD, whether DP-SGD is ahead of AMP (the rule's
// alternative there) by more than noise (issue 31's target), and where it
// does not, whether DP-SGD is ahead of the rule's release.
func besideTable(b besideSet) string {
	dpsgd, amp, ga := string(perturb.DPSGD), string(perturb.AMP), string(perturb.AnalyticGaussian)
	var t strings.Builder
	fmt.Fprintf(&t, "At each budget of the grid with delta = %g: DP-SGD (`--mechanism dp-sgd`: its clipping norm, noise multiplier, sample rate and steps from n, d, eps and delta), AMP (`--mechanism amp`) and output perturbation with the analytic Gaussian (`--mechanism gaussian-analytic`, the rule's clipping norm), each at its automatic knobs, and the rule (no `--mechanism`: what train releases, named). "+
		"Each cell: mean ± standard deviation of the test accuracy over the seeds, and the CPU time per fit (user and system, the fit alone as train runs it, one fit at a time, mean over the seeds; seeded noise). "+
		"The last column: DP-SGD minus the better of AMP and the analytic Gaussian, paired over the seeds, ± two standard errors of the paired difference (beyond it: ahead or behind).\n\n", b.delta)
	head := []string{"data", "K", "n", "eps", "majority", "non-private", "dp-sgd", "amp", "analytic Gaussian", "the rule (released)", "dp-sgd against the better other"}
	fmt.Fprintf(&t, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	var ahead, behind, within, taken, takenWins []string
	var missed []string
	var ratioAMP, ratioNone []float64
	for _, k := range b.keys {
		if k.delta == 0 {
			continue
		}
		runs := b.runs[k]
		sgd := runs[dpsgd]
		if len(sgd) == 0 {
			continue
		}
		r0 := sgd[0]
		maj := results.StatOf(results.Column(sgd, "majority")).Mean
		np := b.none(k.set)
		npCell := "-"
		if len(np) > 0 {
			npCell = fmt.Sprintf("%s (%s)", results.StatOf(results.Column(np, "accuracy")), cpuText(np))
		}
		rule := b.cell(k, loo.Rule)
		if rows := runs[loo.Rule]; len(rows) > 0 {
			rule = fmt.Sprintf("%s (%s; %s)", results.StatOf(results.Column(rows, "accuracy")), cpuText(rows), released(rows))
		}
		other := b.bestOther(k, amp, ga)
		p := pairedDiff(sgd, runs[other])
		vs := "-"
		if other != "" {
			vs = fmt.Sprintf("%s (%s)", p, other)
		}
		unit := fmt.Sprintf("%s at eps = %g", k.set, k.eps)
		switch p.verdict() {
		case "-":
		case "ahead":
			ahead = append(ahead, unit)
		case "behind":
			behind = append(behind, unit)
		default:
			within = append(within, unit)
		}
		sgdCPU := results.StatOf(results.Column(sgd, "cpu_seconds")).Mean
		if a := runs[amp]; len(a) > 0 {
			ratioAMP = append(ratioAMP, sgdCPU/results.StatOf(results.Column(a, "cpu_seconds")).Mean)
		}
		if len(np) > 0 {
			ratioNone = append(ratioNone, sgdCPU/results.StatOf(results.Column(np, "cpu_seconds")).Mean)
		}
		// Issue 31's target: the rule takes DP-SGD only where it wins.
		// Where it takes it, DP-SGD against AMP, the rule's linear family
		// there; elsewhere against the rule's own release.
		ruleRows := runs[loo.Rule]
		takes := slices.ContainsFunc(ruleRows, func(r map[string]string) bool { return r["mechanism"] == dpsgd })
		switch {
		case takes:
			q := pairedDiff(sgd, runs[amp])
			taken = append(taken, fmt.Sprintf("%s (%s; against amp %s)", unit, released(ruleRows), q))
			if q.verdict() == "ahead" {
				takenWins = append(takenWins, unit)
			}
		case len(ruleRows) > 0:
			if q := pairedDiff(sgd, ruleRows); q.verdict() == "ahead" {
				missed = append(missed, fmt.Sprintf("%s (against the rule's %s: %s)", unit, released(ruleRows), q))
			}
		}
		fmt.Fprintf(&t, "| %s | %s | %s | %g | %.3f | %s | %s | %s | %s | %s | %s |\n", k.set, r0["classes"], r0["n"], k.eps, maj, npCell,
			b.cell(k, dpsgd), b.cell(k, amp), b.cell(k, ga), rule, vs)
	}
	all := len(ahead) + len(behind) + len(within)
	t.WriteString("\n")
	fmt.Fprintf(&t, "- DP-SGD against the better of AMP and the analytic Gaussian: ahead by more than noise on %d of %d data sets and budgets%s, behind on %d, within noise on %d.\n",
		len(ahead), all, listed(ahead), len(behind), len(within))
	for _, r := range []struct {
		xs   []float64
		over string
	}{{ratioAMP, "AMP"}, {ratioNone, "the non-private fit (train's SGD, 10 passes with b = 1)"}} {
		if len(r.xs) > 0 {
			slices.Sort(r.xs)
			fmt.Fprintf(&t, "- CPU per fit, DP-SGD over %s: median %.3g, from %.3g to %.3g.\n", r.over, median(r.xs), r.xs[0], r.xs[len(r.xs)-1])
		}
	}
	switch {
	case len(taken) == 0:
		t.WriteString("- The rule releases DP-SGD on no data set and budget here.\n")
	default:
		verdict := "met"
		if len(takenWins) < len(taken) {
			verdict = "not met"
		}
		fmt.Fprintf(&t, "- Issue 31's target, DP-SGD chosen by the rule only where it measurably wins (ahead of AMP, the rule's linear family there, by more than noise): %s, on %d of the %d data sets and budgets where the rule releases it: %s.\n",
			verdict, len(takenWins), len(taken), strings.Join(taken, "; "))
	}
	if len(missed) > 0 {
		fmt.Fprintf(&t, "- DP-SGD ahead of the rule's release by more than noise where the rule does not take it: %s.\n", strings.Join(missed, "; "))
	} else {
		t.WriteString("- Where the rule does not take DP-SGD, DP-SGD is nowhere ahead of the rule's release by more than noise.\n")
	}
	t.WriteString(certifiedLine(b))
	return t.String()
}

// listed is " (a; b)" for a non-empty list, "" otherwise.
func listed(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return " (" + strings.Join(xs, "; ") + ")"
}

// median returns the median of sorted xs.
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// certifiedLine counts the releases of beside.csv whose model file
// certifies, DP-SGD's apart.
func certifiedLine(b besideSet) string {
	var ok, all, sgdOK, sgdAll int
	for _, k := range b.keys {
		for run, rows := range b.runs[k] {
			if run == None {
				continue
			}
			for _, r := range rows {
				all++
				good := r["certified"] == "ok"
				if good {
					ok++
				}
				if r["mechanism"] == string(perturb.DPSGD) {
					sgdAll++
					if good {
						sgdOK++
					}
				}
			}
		}
	}
	return fmt.Sprintf("- Every release certifies (its model file, written and read back, passes `modelfile.Verify`): %d of %d; DP-SGD's: %d of %d.\n", ok, all, sgdOK, sgdAll)
}

// besideEpsRuns are the columns of the accuracy-vs-eps table: a run and
// whether it spends delta.
var besideEpsRuns = []struct {
	run, label string
	delta      bool
}{
	{string(perturb.DPSGD), "dp-sgd", true},
	{string(perturb.AMP), "amp", true},
	{string(perturb.Objective), "objective (pure)", false},
	{string(perturb.AnalyticGaussian), "analytic Gaussian", true},
	{string(perturb.Gamma), "gamma (pure)", false},
	{loo.Rule, "the rule", true},
	{loo.Rule, "the rule (pure)", false},
}

// besideEpsTable returns the accuracy-vs-eps table of a data set of
// EpsSets: a row per eps, each run's cell (delta = b.delta where
// the run spends it), the non-private reference and, on Adult, issue 31's
// target for DP-SGD at eps = 1.
func besideEpsTable(b besideSet, set string) string {
	var t strings.Builder
	head := []string{"eps"}
	for _, c := range besideEpsRuns {
		h := c.label
		if c.delta {
			h += fmt.Sprintf(" (delta %g)", b.delta)
		}
		head = append(head, h)
	}
	fmt.Fprintf(&t, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	rows := 0
	for _, k := range b.keys {
		if k.set != set || k.delta == 0 || k.eps == 0 {
			continue
		}
		cells := []string{fmt.Sprintf("%g", k.eps)}
		for _, c := range besideEpsRuns {
			kk := k
			if !c.delta {
				kk.delta = 0
			}
			cell := b.cell(kk, c.run)
			if c.run == loo.Rule && len(b.runs[kk][c.run]) > 0 {
				cell += ", " + released(b.runs[kk][c.run])
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(&t, "| %s |\n", strings.Join(cells, " | "))
		rows++
	}
	if rows == 0 {
		return fmt.Sprintf("*Not run: beside.csv has no rows of %s.*\n", set)
	}
	if np := b.none(set); len(np) > 0 {
		fmt.Fprintf(&t, "\nNon-private (`--mechanism none`): %s (%s).\n", results.StatOf(results.Column(np, "accuracy")), cpuText(np))
	}
	if set == "adult" {
		k := besideKey{set, 1, b.delta}
		sgd := b.runs[k][string(perturb.DPSGD)]
		switch s := results.StatOf(results.Column(sgd, "accuracy")); {
		case s.N == 0:
			fmt.Fprintf(&t, "\nIssue 31's target, DP-SGD >= %g at eps = 1, delta = %g: not run.\n", adultDPSGDTarget, b.delta)
		default:
			verdict := "not met"
			if s.Mean >= adultDPSGDTarget {
				verdict = "met"
			}
			fmt.Fprintf(&t, "\nIssue 31's target, DP-SGD >= %g at eps = 1, delta = %g: %.4f (%s).\n", adultDPSGDTarget, b.delta, s.Mean, verdict)
		}
	}
	return t.String()
}

// WriteTables writes beside.md and, for each data set of
// EpsSets, beside_<set>.md under out from beside.csv, when the
// beside task ran (nothing otherwise).
func WriteTables(out string, delta float64) error {
	rows, err := results.Read(filepath.Join(out, "beside.csv"))
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	}
	b := readBeside(rows, delta)
	if err := os.WriteFile(filepath.Join(out, "beside.md"), []byte(besideTable(b)), 0o644); err != nil {
		return err
	}
	for _, set := range EpsSets {
		if err := os.WriteFile(filepath.Join(out, "beside_"+set+".md"), []byte(besideEpsTable(b, set)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
